package io.buslane.journal.file;

/**
 * Told about every successful {@link FileJournal#sync()} that wrote records (a metrics hook; no metrics library in
 * the journal). Called on the journal's owner thread, right after the batch is durable: it must be cheap and must
 * not throw.
 */
@FunctionalInterface
public interface SyncListener {

    SyncListener NONE = (records, nanos) -> { };

    /**
     * @param records the records the sync made durable
     * @param nanos   how long writing and forcing them took
     */
    void onSync(int records, long nanos);
}
