package io.buslane.journal;

/**
 * A journal several nodes write (cluster mode's namespace metadata). Each node holds its own instance; a
 * {@link #sync} stores the batch only if no other node stored anything since this instance last read the journal
 * ({@link #replay}) or synced, and otherwise stores nothing and fails with {@link JournalException.Reason#CONFLICT}:
 * the writer reads the journal again, re-checks its change against what it finds, and retries. {@link #replay} may
 * be called any number of times; each call delivers every stored record.
 */
public interface SharedJournal extends Journal {

    /** Whether another node stored records since this instance last read or synced (asks the storage). */
    boolean changedElsewhere();
}
