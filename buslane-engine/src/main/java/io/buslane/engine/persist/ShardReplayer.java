package io.buslane.engine.persist;

import io.buslane.engine.api.SubQueue;
import io.buslane.engine.partition.Entry;
import io.buslane.engine.partition.MessageBodies;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.ScheduledEntry;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.partition.TopicBody;
import io.buslane.engine.persist.record.EntryStateRecord;
import io.buslane.engine.persist.record.KeyBlockRecord;
import io.buslane.engine.persist.record.PartitionRecord;
import io.buslane.engine.persist.record.QueueMessageRecord;
import io.buslane.engine.persist.record.ScheduledRecord;
import io.buslane.engine.persist.record.SessionStateRecord;
import io.buslane.engine.persist.record.ShardMetaRecord;
import io.buslane.engine.persist.record.SubscriptionRefRecord;
import io.buslane.engine.persist.record.TopicBodyRecord;
import io.buslane.engine.persist.record.TransferRecord;
import io.buslane.journal.Journal;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * Rebuilds a shard's partitions from its journal: sequence counters, active, deferred, dead-lettered and
 * scheduled messages, topic bodies and subscription copies, and session state. Records that belong to entities
 * that no longer exist are deleted. Locks are not restored (they do not survive a restart). Confined to the shard
 * thread during start-up.
 *
 * <p>Replay holds no more messages than the shard's resident budget: after each record the newest resident
 * messages beyond the budget are evicted ({@link MessageBodies#afterSync}), so the oldest messages that fit stay
 * in the heap and the rest are read back from the journal when needed.
 */
public final class ShardReplayer {

    private static final Logger LOG = LoggerFactory.getLogger(ShardReplayer.class);

    private final String journalName;
    private final Journal journal;
    private final JournalPartitionLog log;
    private final MessageBodies bodies;
    private final BiFunction<Long, Integer, Partition> partitionLookup;

    private final Map<Long, Partition> partitionsByRecord = new HashMap<>();
    private final Set<Long> orphanPartitions = new HashSet<>();
    private final Map<Long, Entry> entries = new HashMap<>();
    private final Map<Long, TopicBody> topicBodies = new HashMap<>();
    private final Map<Long, Partition> bodyPartition = new HashMap<>();
    private final Map<Long, long[]> scheduled = new HashMap<>();
    private final Map<Long, Partition> scheduledPartition = new HashMap<>();
    private final Map<Long, SessionRef> sessionStates = new HashMap<>();
    private final Set<Long> orphanRecords = new LinkedHashSet<>();
    private final Map<Long, Partition> transferPartition = new HashMap<>();
    private final Map<Long, KeyBlock> keyBlocks = new LinkedHashMap<>();
    private long maxRecordId;
    private long metaNextRecordId;
    private boolean metaSeen;
    private long records;

    /** A replayed block of remembered keys; its keys are read back after the replay (bounded memory). */
    private record KeyBlock(Partition partition, byte kind) {
    }

    private record SessionRef(SubQueueState queue, String sessionId) {
    }

    /**
     * @param partitionLookup finds the partition of an existing entity by (entity id, partition index), or null
     */
    public ShardReplayer(String journalName, Journal journal, JournalPartitionLog log, MessageBodies bodies,
                         BiFunction<Long, Integer, Partition> partitionLookup) {
        this.journalName = journalName;
        this.journal = journal;
        this.log = log;
        this.bodies = bodies;
        this.partitionLookup = partitionLookup;
    }

    /**
     * Replays the journal into the partitions; returns the partitions that had a record (the others are new and
     * must be logged as created by the caller).
     */
    public Set<Partition> replay() {
        journal.replay(record -> {
            apply(record);
            bodies.afterSync(true); // replayed records are durable: evict beyond the budget as we go
        });
        for (Map.Entry<Long, KeyBlock> b : keyBlocks.entrySet()) {
            KeyBlock k = b.getValue();
            long[] keys = readKeys(b.getKey());
            if (keys == null || !k.partition().restoreKeyBlock(k.kind(), b.getKey(), keys)) {
                orphanRecords.add(b.getKey());
            } else {
                log.spillReplayedKeys(k.partition());
            }
        }
        // entries whose topic body never arrived or whose owner vanished are dropped
        for (Map.Entry<Long, TopicBody> b : topicBodies.entrySet()) {
            if (b.getValue().references() == 0) {
                orphanRecords.add(b.getKey());
                bodyPartition.get(b.getKey()).forgetTopicBodyForReplay(b.getValue());
            }
        }
        log.restoreNextRecordId(Math.max(maxRecordId + 1, metaNextRecordId), metaSeen);
        for (long id : orphanRecords) {
            journal.append(JournalRecord.delete(id));
        }
        for (long id : orphanPartitions) {
            journal.append(JournalRecord.delete(id));
        }
        LOG.info("Recovered journal {}: {} records, {} partitions, {} messages, {} scheduled, {} session states, "
                        + "{} pending transfers, {} blocks of remembered keys; "
                        + "{} records of deleted entities dropped; {} message bytes kept in memory (budget {})",
                journalName, records, partitionsByRecord.size(), entries.size(), scheduled.size(),
                sessionStates.size(), transferPartition.size(), keyBlocks.size(),
                orphanRecords.size() + orphanPartitions.size(), bodies.residentBytes(),
                bodies.budgetBytes());
        return new HashSet<>(partitionsByRecord.values());
    }

    private void apply(JournalRecord r) {
        records++;
        if (r.id() > maxRecordId && r.id() != RecordTypes.META_RECORD_ID) {
            maxRecordId = r.id();
        }
        if (r.kind() == RecordKind.DELETE) {
            applyDelete(r.id());
            return;
        }
        RecordReader in = new RecordReader(r.payload());
        switch (r.type()) {
            case ShardMetaRecord.TYPE -> {
                ShardMetaRecord meta = ShardMetaRecord.read(in);
                metaSeen = true;
                metaNextRecordId = meta.nextRecordId();
                if (meta.clockFloorMs() >= 0) {
                    log.restoreClockFloor(meta.clockFloorMs());
                }
            }
            case PartitionRecord.TYPE -> applyPartition(r, PartitionRecord.read(in));
            // a record of a partition that is gone (its entity deleted) is noted as an orphan before its message is
            // decoded: it is only deleted, so it costs no decoding and cannot fail the replay
            case QueueMessageRecord.TYPE -> {
                if (partitionKnown(r)) {
                    applyQueueMessage(r, QueueMessageRecord.read(in));
                }
            }
            case TopicBodyRecord.TYPE -> {
                if (partitionKnown(r)) {
                    applyTopicBody(r, TopicBodyRecord.read(in));
                }
            }
            case SubscriptionRefRecord.TYPE -> {
                if (partitionKnown(r)) {
                    applySubRef(r, SubscriptionRefRecord.read(in));
                }
            }
            case EntryStateRecord.TYPE -> {
                if (entries.containsKey(r.id())) {
                    applyEntryState(r, EntryStateRecord.read(in));
                }
            }
            case ScheduledRecord.TYPE -> {
                if (partitionKnown(r)) {
                    applyScheduled(r, ScheduledRecord.read(in));
                }
            }
            case SessionStateRecord.TYPE -> {
                if (partitionKnown(r)) {
                    applySessionState(r, SessionStateRecord.read(in));
                }
            }
            case TransferRecord.TYPE -> {
                if (partitionKnown(r)) {
                    applyTransfer(r, TransferRecord.read(in));
                }
            }
            case KeyBlockRecord.TYPE_LEGACY, KeyBlockRecord.TYPE -> {
                if (partitionKnown(r)) {
                    applyKeyBlock(r, KeyBlockRecord.readHead(in));
                }
            }
            default -> throw new IllegalStateException("journal " + journalName + ": unknown record type "
                    + r.type() + " (id " + r.id() + ")");
        }
    }

    private void applyPartition(JournalRecord r, PartitionRecord rec) {
        Partition p = partitionLookup.apply(rec.entityId(), rec.index());
        if (p == null) {
            orphanPartitions.add(r.id());
            return;
        }
        p.setRecordId(r.id());
        p.sequence().setNextCounter(rec.nextCounter());
        partitionsByRecord.put(r.id(), p);
    }

    /**
     * Whether the partition a record names in its first field (every record type but PARTITION, SHARD_META and
     * ENTRY_STATE) is known; an unknown one makes the record an orphan.
     */
    private boolean partitionKnown(JournalRecord r) {
        return partition(new RecordReader(r.payload()).readVarLong(), r.id()) != null;
    }

    private Partition partition(long partitionRecordId, long recordId) {
        Partition p = partitionsByRecord.get(partitionRecordId);
        if (p == null) {
            orphanRecords.add(recordId);
        }
        return p;
    }

    private void applyQueueMessage(JournalRecord r, QueueMessageRecord rec) {
        Partition p = partition(rec.partitionRecordId(), r.id());
        if (p == null) {
            return;
        }
        p.sequence().advancePast(rec.seq());
        if (p.queue() == null) {
            orphanRecords.add(r.id());
            return;
        }
        entries.put(r.id(), p.restoreEntry(p.queue().subQueue(rec.subQueue()), rec.seq(), r.id(),
                rec.enqueuedTimeMs(), rec.expiresAtMs(), rec.message(), null));
    }

    private void applyTopicBody(JournalRecord r, TopicBodyRecord rec) {
        Partition p = partition(rec.partitionRecordId(), r.id());
        if (p == null) {
            return;
        }
        p.sequence().advancePast(rec.seq());
        topicBodies.put(r.id(), p.restoreTopicBody(r.id(), rec.seq(), rec.enqueuedTimeMs(), rec.message()));
        bodyPartition.put(r.id(), p);
    }

    private void applySubRef(JournalRecord r, SubscriptionRefRecord rec) {
        Partition p = partition(rec.partitionRecordId(), r.id());
        if (p == null) {
            return;
        }
        SubQueueState sub = p.subscriptionByEntityId(rec.subscriptionEntityId());
        TopicBody body = topicBodies.get(rec.bodyRecordId());
        if (sub == null || body == null) {
            orphanRecords.add(r.id());
            return;
        }
        entries.put(r.id(), p.restoreEntry(sub.subQueue(rec.subQueue()), body.sequenceNumber(), r.id(),
                body.enqueuedTimeMs(), rec.expiresAtMs(), null, body));
    }

    private void applyEntryState(JournalRecord r, EntryStateRecord rec) {
        Entry e = entries.get(r.id());
        if (e == null) {
            return;
        }
        SubQueueState main = e.owner().subQueue(SubQueue.MAIN);
        if (e.owner().kind() != SubQueue.MAIN) {
            main = mainOf(e.owner());
        }
        e.owner().partition().restoreEntryState(e, rec.deliveryCount(), rec.deferred(), main.subQueue(rec.subQueue()),
                rec.modifiedMessage(), rec.deadLetterSource());
    }

    private static SubQueueState mainOf(SubQueueState dlq) {
        Partition p = dlq.partition();
        if (p.queue() != null) {
            return p.queue();
        }
        return p.subscriptionByEntityId(dlq.entityId());
    }

    private void applyScheduled(JournalRecord r, ScheduledRecord rec) {
        Partition p = partition(rec.partitionRecordId(), r.id());
        if (p == null) {
            return;
        }
        p.sequence().advancePast(rec.seq());
        p.restoreScheduled(new ScheduledEntry(rec.seq(), r.id(), rec.enqueuedTimeMs(), rec.scheduledTimeMs(),
                rec.message()));
        scheduled.put(r.id(), new long[] {rec.seq()});
        scheduledPartition.put(r.id(), p);
    }

    private void applySessionState(JournalRecord r, SessionStateRecord rec) {
        Partition p = partition(rec.partitionRecordId(), r.id());
        if (p == null) {
            return;
        }
        SubQueueState q = p.queue() != null ? p.queue() : p.subscriptionByEntityId(rec.ownerEntityId());
        if (q == null) {
            orphanRecords.add(r.id());
            return;
        }
        q.sessions().restoreState(rec.sessionId(), rec.state(), r.id(), rec.lastUpdatedMs());
        sessionStates.put(r.id(), new SessionRef(q, rec.sessionId()));
    }

    private void applyTransfer(JournalRecord r, TransferRecord rec) {
        Partition p = partition(rec.partitionRecordId(), r.id());
        if (p == null) {
            return;
        }
        if (rec.seq() >= 0) {
            p.sequence().advancePast(rec.seq());
        }
        if (!p.restoreTransfer(rec.ownerEntityId(), r.id(), rec.seq(), rec.enqueuedTimeMs(), rec.fromDeadLetter(),
                rec.message(), rec.viaDestination(), rec.reservedSeq())) {
            orphanRecords.add(r.id());
            return;
        }
        transferPartition.put(r.id(), p);
    }

    private void applyKeyBlock(JournalRecord r, KeyBlockRecord head) {
        Partition p = partition(head.partitionRecordId(), r.id());
        if (p == null) {
            return;
        }
        keyBlocks.put(r.id(), new KeyBlock(p, head.kind()));
    }

    /**
     * Reads a live key block back from the journal: (hash high, hash low, time) triples; null if it is gone. The
     * hashes of a first-format block are tagged as legacy, so that lookups recognise them by the old hash.
     */
    private long[] readKeys(long recordId) {
        JournalRecord record = journal.read(recordId, RecordKind.ADD);
        if (record == null) {
            return null;
        }
        return KeyBlockRecord.readKeys(new RecordReader(record.payload()), record.type());
    }

    private void applyDelete(long id) {
        Partition tp = transferPartition.remove(id);
        if (tp != null) {
            tp.forgetTransferForReplay(id);
            return;
        }
        if (keyBlocks.remove(id) != null) {
            return;
        }
        Entry e = entries.remove(id);
        if (e != null) {
            if (e.owner() != null) {
                e.owner().partition().forgetEntryForReplay(e);
            }
            return;
        }
        TopicBody body = topicBodies.remove(id);
        if (body != null) {
            bodyPartition.remove(id).forgetTopicBodyForReplay(body);
            return;
        }
        long[] seq = scheduled.remove(id);
        if (seq != null) {
            scheduledPartition.remove(id).removeScheduledForReplay(seq[0]);
            return;
        }
        SessionRef s = sessionStates.remove(id);
        if (s != null) {
            s.queue().clearSessionStateForReplay(s.sessionId());
            return;
        }
        Partition p = partitionsByRecord.remove(id);
        if (p != null) {
            // the partition was dropped; its entity has since been recreated under a new partition record
            orphanPartitions.remove(id);
        }
        orphanPartitions.remove(id);
        orphanRecords.remove(id);
    }
}
