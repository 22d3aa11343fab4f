package io.buslane.engine.partition;

/**
 * The records a partition's state changes produce. Every method appends to the shard's journal (the records are
 * durable once the cycle's sync completes); replaying those records rebuilds the partition. Implemented in
 * {@code io.buslane.engine.persist}, the only engine package that knows the journal.
 */
public interface PartitionLog {

    long nextRecordId();

    void partitionCreated(Partition partition);

    void partitionDropped(Partition partition);

    /** The sequence counter (and anything else per partition) moved; written once per cycle per partition. */
    void checkpoint(Partition partition);

    void topicBodyAdded(Partition partition, TopicBody body);

    void topicBodyRemoved(TopicBody body);

    /** A new entry (a queue's message, or a subscription's reference to a topic body). */
    void entryAdded(Entry entry);

    /** The entry's mutable state changed (delivery count, deferral, sub-queue, modified properties). */
    void entryUpdated(Entry entry);

    void entryRemoved(Entry entry);

    void scheduledAdded(Partition partition, ScheduledEntry entry);

    void scheduledRemoved(ScheduledEntry entry);

    /** The session's state was set (non-null) for the first time or changed. */
    void sessionStateWritten(SessionEntry session);

    void sessionStateCleared(SessionEntry session);

    /** A message waits to be auto-forwarded. */
    void transferAdded(Partition partition, Transfer transfer);

    /** The transfer is over (forwarded, dead-lettered or put back). */
    void transferRemoved(Transfer transfer);

    /** Deletes a record by id (e.g. a block of remembered duplicate-detection keys). */
    void recordDropped(long recordId);
}
