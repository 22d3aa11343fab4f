package io.buslane.journal;

import java.util.Arrays;
import java.util.Objects;

/**
 * An append-only log of records for one single writer (a shard, or the namespace metadata).
 *
 * <p>Confined to its writer thread: {@link #append}, {@link #sync}, {@link #replay} and {@link #read} are called
 * by one thread at a time. The protocol is: {@link #replay} once after opening, then any number of append batches
 * each followed by one {@link #sync} (group commit). A record is durable once a {@code sync} that started after its
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
     * As {@link #append(JournalRecord)} for a record whose payload is {@code length} bytes of {@code payload} from
     * {@code offset}, read during the call only: the caller may reuse the array as soon as it returns. An
     * implementation that writes the bytes out at once (the file journal) needs no copy of its own; the default
     * copies them into a {@link JournalRecord}.
     *
     * @throws JournalException when the record cannot be written (e.g. the disk is full)
     */
    default void append(RecordKind kind, long id, byte type, byte[] payload, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, payload.length);
        append(new JournalRecord(kind, id, type, Arrays.copyOfRange(payload, offset, offset + length)));
    }

    /**
     * Makes every record appended so far durable (one disk sync for the whole batch).
     *
     * @throws JournalException when the data cannot be made durable; none of the batch may be assumed durable
     */
    void sync();

    /**
     * Reads back the stored live record of {@code id} of the given kind, so that an owner need not keep every
     * payload in memory: for {@link RecordKind#ADD} the live ADD (the latest, should several be live), for
     * {@link RecordKind#UPDATE} the live UPDATE (the latest, when no DELETE follows it). Call on the writer thread,
     * once {@link #replay} has started: inside the replay handler, the records delivered before the current one are
     * readable.
     *
     * <p>The answer reflects the records stored as of the last successful {@link #sync}: a record appended since
     * is not visible yet, and a record deleted by an unsynced DELETE still is.
     *
     * @param kind ADD or UPDATE
     * @return the record, or {@code null} when no live record of that kind and id is stored (never appended,
     *         deleted, superseded, or not yet synced)
     * @throws JournalException         when the storage cannot be read or the stored bytes fail verification
     * @throws IllegalArgumentException for {@link RecordKind#DELETE}
     */
    JournalRecord read(long id, RecordKind kind);

    /**
     * The payload of the live ADD record of {@code id}, or {@code null} when there is none; see
     * {@link #read(long, RecordKind)}.
     */
    default byte[] read(long id) {
        JournalRecord record = read(id, RecordKind.ADD);
        return record == null ? null : record.payload();
    }

    /**
     * Does one bounded step of upkeep that frees storage (the file journal: compaction), for an owner that has
     * nothing to write now: space that deletes made reclaimable is reclaimed even when no further record is ever
     * appended (a drained queue on a full disk, a restarted broker). Call on the writer thread, between batches, when
     * every appended record is synced; a step takes about as long as one after a sync. Storage failures are logged,
     * not thrown.
     *
     * @return true when more upkeep can run at once (call again soon); false when there is none, or it waits on
     *         something else
     */
    default boolean maintain() {
        return false;
    }

    /**
     * True when records wait for a {@link #sync} although none was appended since the last one: a journal that
     * keeps a batch whose sync failed (the PostgreSQL journal, while its database is unreachable) and writes it with
     * the next sync. The owner then syncs again even when it has nothing new to write.
     */
    default boolean needsSync() {
        return false;
    }

    /**
     * Asked after {@link #sync} threw: true when this journal keeps the batch to write it with a later sync (the
     * PostgreSQL journal whatever the failure: the database did not answer, a statement timed out), so that the
     * fate of the batch's operations is not
     * decided yet: they may still become durable (or may already be, when a commit's answer was lost). The owner
     * then holds their answers until a later sync stores the batch or fails for good, since answering "failed" for an
     * operation that is stored afterwards makes a client's retry store it twice. False for a journal that discards a
     * failed batch (files), a fenced one and a shared one: the batch's operations failed.
     */
    default boolean keepsFailedBatch() {
        return false;
    }

    /**
     * Whether this journal's owner may still act on what it holds only in memory: deliver a message, grant or renew
     * a lock, accept a session. A journal only this process writes always may. A leased journal (PostgreSQL) may
     * while it was not fenced and its lease, measured on this process's monotonic clock from when the last statement
     * that extended it was sent, has a safety margin left ({@code PostgresOptions#SAFE_LEASE_PERCENT}): no other node
     * can take the journal over before the lease has run out, so nothing is delivered by two nodes at once, also not
     * after this process was paused or its database went silent. Cheap: asked before each delivery.
     */
    default boolean leaseHeld() {
        return true;
    }

    /** Number of records appended since opening (a cheap progress counter for metrics and tests). */
    long appendedCount();

    @Override
    void close();
}
