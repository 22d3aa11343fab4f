package io.buslane.engine.persist;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.partition.Partition;
import io.buslane.journal.Journal;
import io.buslane.journal.JournalException;

import java.util.Set;
import java.util.function.BiFunction;

/** A shard's journal and the log that writes partition records to it. Confined to the shard thread. */
public final class ShardJournal {

    private final String name;
    private final Journal journal;
    private final JournalPartitionLog log;
    private long lastSyncedCount;

    ShardJournal(String name, Journal journal) {
        this.name = name;
        this.journal = journal;
        this.log = new JournalPartitionLog(journal);
    }

    public JournalPartitionLog log() {
        return log;
    }

    /** Replays the journal into the partitions found by {@code lookup}; returns those that had a record. */
    public Set<Partition> replay(BiFunction<Long, Integer, Partition> lookup) {
        return new ShardReplayer(name, journal, log, lookup).replay();
    }

    /** True when records were appended since the last sync. */
    public boolean hasUnsynced() {
        return journal.appendedCount() != lastSyncedCount;
    }

    /**
     * Makes the appended records durable (with the shard's checkpoint).
     *
     * @throws BrokerException QUOTA_EXCEEDED when the disk is full, INTERNAL for other storage failures
     */
    public void sync() {
        try {
            log.checkpointShard();
            journal.sync();
        } catch (JournalException e) {
            throw new BrokerException(e.diskFull() ? ErrorKind.QUOTA_EXCEEDED : ErrorKind.INTERNAL,
                    e.diskFull() ? "The broker's disk is full; the operation was not stored. Free disk space and "
                            + "retry." : "The broker could not store the operation: " + e.getMessage(), e);
        } finally {
            lastSyncedCount = journal.appendedCount();
        }
    }

    public void close() {
        journal.close();
    }
}
