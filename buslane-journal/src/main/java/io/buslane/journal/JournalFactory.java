package io.buslane.journal;

/** Opens the journals of one broker by name ({@code meta}, {@code shard-0}, ...). Thread-safe. */
public interface JournalFactory extends AutoCloseable {

    /** Opens (creating if needed) the journal with this name. A name is opened at most once at a time. */
    Journal open(String name);

    /** Releases resources held for all journals (e.g. the data directory lock). */
    @Override
    void close();
}
