package io.buslane.journal;

/** Opens the journals of one broker by name ({@code meta}, {@code shard-0}, ...). Thread-safe. */
public interface JournalFactory extends AutoCloseable {

    /** Opens (creating if needed) the journal with this name. A name is opened at most once at a time. */
    Journal open(String name);

    /**
     * Bytes still free for the journals (the data directory's file system), or {@code Long.MAX_VALUE} when the
     * journals are not limited by a disk. Cheap enough to call often, but callers may cache it briefly.
     */
    default long usableSpaceBytes() {
        return Long.MAX_VALUE;
    }

    /** Releases resources held for all journals (e.g. the data directory lock). */
    @Override
    void close();
}
