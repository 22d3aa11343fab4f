package io.buslane.engine.persist;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.dedup.DedupRunStore;
import io.buslane.engine.message.Message;
import io.buslane.engine.partition.MessageBodies;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.persist.record.EntryStateRecord;
import io.buslane.engine.persist.record.QueueMessageRecord;
import io.buslane.engine.persist.record.ScheduledRecord;
import io.buslane.engine.persist.record.SessionStateRecord;
import io.buslane.engine.persist.record.TopicBodyRecord;
import io.buslane.journal.Journal;
import io.buslane.journal.JournalException;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;

import java.util.Set;
import java.util.function.BiFunction;

/**
 * A shard's journal, the log that writes partition records to it, and the shard's resident messages, which read
 * evicted messages back from it. Confined to the shard thread.
 */
public final class ShardJournal {

    private final String name;
    private final Journal journal;
    private final MessageBodies bodies;
    private final JournalPartitionLog log;
    private final Runnable onDiskFull;
    private long lastSyncedCount;

    /**
     * @param residentBudgetBytes message bytes the shard keeps in the heap before evicting the newest; see
     *                            {@link MessageBodies}
     */
    ShardJournal(String name, Journal journal, long residentBudgetBytes) {
        this(name, journal, residentBudgetBytes, DedupRunStore.inHeap(), () -> { });
    }

    /**
     * @param dedupRuns  where duplicate-detection windows move keys beyond their heap budget
     * @param onDiskFull run when a sync fails for lack of space (the storage reads the free space again)
     */
    ShardJournal(String name, Journal journal, long residentBudgetBytes,
                 DedupRunStore dedupRuns, Runnable onDiskFull) {
        this.name = name;
        this.journal = journal;
        this.onDiskFull = onDiskFull;
        this.bodies = new MessageBodies(residentBudgetBytes, MessageBodies.defaultCacheBytes(residentBudgetBytes),
                this::readMessage);
        this.log = new JournalPartitionLog(journal, bodies, dedupRuns);
    }

    public JournalPartitionLog log() {
        return log;
    }

    public MessageBodies bodies() {
        return bodies;
    }

    /** Replays the journal into the partitions found by {@code lookup}; returns those that had a record. */
    public Set<Partition> replay(BiFunction<Long, Integer, Partition> lookup) {
        return new ShardReplayer(name, journal, log, bodies, lookup).replay();
    }

    /** See {@link io.buslane.journal.Journal#leaseHeld}. */
    public boolean leaseHeld() {
        return journal.leaseHeld();
    }

    /** See {@link io.buslane.journal.Journal#keepsFailedBatch}: asked after {@link #sync} threw. */
    public boolean keepsFailedBatch() {
        return journal.keepsFailedBatch();
    }

    /** True when records were appended since the last sync. */
    public boolean hasUnsynced() {
        return journal.appendedCount() != lastSyncedCount || journal.needsSync();
    }

    /**
     * Makes the appended records durable (with the shard's checkpoint, which stores {@code nowMs}, the cycle's time,
     * as the earliest time the shard's next owner may stamp).
     *
     * @throws BrokerException QUOTA_EXCEEDED when the disk is full, SERVER_BUSY (retriable) when the database is
     *                         unreachable or another node took the shard over, INTERNAL for other storage failures
     */
    public void sync(long nowMs) {
        try {
            log.checkpointShard(nowMs);
            journal.sync();
        } catch (JournalException e) {
            if (e.diskFull()) {
                onDiskFull.run();
            }
            throw switch (e.reason()) {
                case DISK_FULL -> new BrokerException(ErrorKind.QUOTA_EXCEEDED, "The broker's disk is full; the "
                        + "operation was not stored. Free disk space and retry.", e);
                case UNAVAILABLE, FENCED -> new BrokerException(ErrorKind.SERVER_BUSY, "The broker could not store "
                        + "the operation: " + e.getMessage() + " Retry later.", e);
                default -> new BrokerException(ErrorKind.INTERNAL, "The broker could not store the operation: "
                        + e.getMessage(), e);
            };
        } finally {
            lastSyncedCount = journal.appendedCount();
        }
    }

    /**
     * Lets the journal free space (compaction) while the shard has nothing to sync, so that what consumers deleted
     * is reclaimed even when nothing more is written. Does nothing while records wait for a sync.
     *
     * @return true when more can be done at once
     */
    public boolean maintain() {
        return !hasUnsynced() && journal.maintain();
    }

    /**
     * Reads an evicted message back: from the ADD record it arrived in, or from the entry's latest UPDATE when its
     * properties were modified.
     *
     * @throws BrokerException INTERNAL when the record cannot be read or is not there
     */
    Message readMessage(long recordId, boolean modified) {
        RecordKind kind = modified ? RecordKind.UPDATE : RecordKind.ADD;
        JournalRecord record;
        try {
            record = journal.read(recordId, kind);
        } catch (JournalException e) {
            boolean retriable = e.reason() == JournalException.Reason.UNAVAILABLE;
            throw new BrokerException(retriable ? ErrorKind.SERVER_BUSY : ErrorKind.INTERNAL, "The broker could not "
                    + "read a stored message back: " + e.getMessage() + (retriable ? " Retry later." : ""), e);
        }
        if (record == null) {
            throw new BrokerException(ErrorKind.INTERNAL, "The broker could not read a stored message back: journal "
                    + name + " holds no live " + kind + " of record " + recordId + ".");
        }
        return messageOf(record);
    }

    /**
     * Reads an evicted session state back from its SESSION_STATE record (the live UPDATE, else the ADD).
     *
     * @throws BrokerException SERVER_BUSY when the storage cannot be read now, INTERNAL when the record is missing
     */
    public byte[] readSessionState(long recordId) {
        JournalRecord record;
        try {
            record = journal.read(recordId, RecordKind.UPDATE);
            if (record == null) {
                record = journal.read(recordId, RecordKind.ADD);
            }
        } catch (JournalException e) {
            boolean retriable = e.reason() == JournalException.Reason.UNAVAILABLE;
            throw new BrokerException(retriable ? ErrorKind.SERVER_BUSY : ErrorKind.INTERNAL, "The broker could not "
                    + "read a session state back: " + e.getMessage() + (retriable ? " Retry later." : ""), e);
        }
        if (record == null || record.type() != SessionStateRecord.TYPE) {
            throw new BrokerException(ErrorKind.INTERNAL, "The broker could not read a session state back: journal "
                    + name + " holds no live session state record " + recordId + ".");
        }
        return SessionStateRecord.stateOf(new RecordReader(record.payload()));
    }

    /** The message in a QUEUE_MSG, TOPIC_BODY or SCHEDULED record, or in an ENTRY_STATE with a modified message. */
    static Message messageOf(JournalRecord record) {
        RecordReader in = new RecordReader(record.payload());
        switch (record.type()) {
            case QueueMessageRecord.TYPE -> QueueMessageRecord.skipToMessage(in);
            case TopicBodyRecord.TYPE -> TopicBodyRecord.skipToMessage(in);
            case ScheduledRecord.TYPE -> ScheduledRecord.skipToMessage(in);
            case EntryStateRecord.TYPE -> {
                if (!EntryStateRecord.skipToMessage(in)) {
                    throw new IllegalStateException("record " + record.id() + " holds no modified message");
                }
            }
            default -> throw new IllegalStateException("record " + record.id() + " of type " + record.type()
                    + " holds no message");
        }
        return MessageCodec.read(in);
    }

    public void close() {
        journal.close();
    }
}
