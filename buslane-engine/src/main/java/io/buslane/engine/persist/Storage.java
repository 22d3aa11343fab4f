package io.buslane.engine.persist;

import io.buslane.journal.JournalFactory;

import java.util.Objects;

/**
 * The engine's storage: the namespace journal and one journal per shard, opened from a {@link JournalFactory}.
 * This package is the only one in the engine that knows the journal API. Thread-safe.
 */
public final class Storage implements AutoCloseable {

    private final JournalFactory journals;

    private Storage(JournalFactory journals) {
        this.journals = Objects.requireNonNull(journals, "journals");
    }

    public static Storage of(JournalFactory journals) {
        return new Storage(journals);
    }

    public MetaJournal openMeta() {
        return new MetaJournal(journals.open("meta"));
    }

    /** Opens shard {@code index}'s journal with the default resident budget. */
    public ShardJournal openShard(int index) {
        return openShard(index, io.buslane.engine.partition.MessageBodies.DEFAULT_BUDGET_BYTES);
    }

    /**
     * Opens shard {@code index}'s journal.
     *
     * @param residentBudgetBytes message bytes the shard keeps in the heap before evicting the newest
     */
    public ShardJournal openShard(int index, long residentBudgetBytes) {
        return new ShardJournal("shard-" + index, journals.open("shard-" + index), residentBudgetBytes);
    }

    @Override
    public void close() {
        journals.close();
    }
}
