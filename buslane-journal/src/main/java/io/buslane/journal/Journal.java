package io.buslane.journal;

/**
 * An append-only log of records for one single writer (a shard, or the namespace metadata).
 *
 * <p>Confined to its writer thread: {@link #append}, {@link #sync} and {@link #replay} are called by one thread
 * at a time. The protocol is: {@link #replay} once after opening, then any number of append batches each followed
 * by one {@link #sync} (group commit). A record is durable once a {@code sync} that started after its
 * {@code append} has returned.
 *
 * <p>The API is about records, not files: nothing outside an implementation knows about segments, so a later
 * implementation can keep a partition's records in a database instead.
 */
public interface Journal extends AutoCloseable {

    /** Delivers every stored record in append order. Must be called once, before the first append. */
    void replay(ReplayHandler handler);

    /**
     * Buffers one record for writing. Not durable until the next {@link #sync()} returns.
     *
     * @throws JournalException when the record cannot be written (e.g. the disk is full)
     */
    void append(JournalRecord record);

    /**
     * Makes every record appended so far durable (one disk sync for the whole batch).
     *
     * @throws JournalException when the data cannot be made durable; none of the batch may be assumed durable
     */
    void sync();

    /** Number of records appended since opening (a cheap progress counter for metrics and tests). */
    long appendedCount();

    @Override
    void close();
}
