package io.buslane.engine.persist;

import io.buslane.engine.api.SubQueue;
import io.buslane.engine.dedup.DedupWindow;
import io.buslane.engine.message.Message;
import io.buslane.engine.partition.Entry;
import io.buslane.engine.partition.MessageBodies;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.ScheduledEntry;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.partition.TopicBody;
import io.buslane.journal.Journal;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
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
    private final Set<Long> orphanRecords = new java.util.LinkedHashSet<>();
    private final Map<Long, Partition> transferPartition = new HashMap<>();
    private final Map<Long, KeyBlock> keyBlocks = new java.util.LinkedHashMap<>();
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
            case RecordTypes.SHARD_META -> {
                metaSeen = true;
                metaNextRecordId = in.readVarLong();
                if (in.remaining() >= Long.BYTES) {
                    log.restoreClockFloor(in.readLong());
                }
            }
            case RecordTypes.PARTITION -> applyPartition(r, in);
            case RecordTypes.QUEUE_MSG -> applyQueueMessage(r, in);
            case RecordTypes.TOPIC_BODY -> applyTopicBody(r, in);
            case RecordTypes.SUB_REF -> applySubRef(r, in);
            case RecordTypes.ENTRY_STATE -> applyEntryState(r, in);
            case RecordTypes.SCHEDULED -> applyScheduled(r, in);
            case RecordTypes.SESSION_STATE -> applySessionState(r, in);
            case RecordTypes.TRANSFER -> applyTransfer(r, in);
            case RecordTypes.KEY_BLOCK, RecordTypes.KEY_BLOCK_V2 -> applyKeyBlock(r, in);
            default -> throw new IllegalStateException("journal " + journalName + ": unknown record type "
                    + r.type() + " (id " + r.id() + ")");
        }
    }

    private void applyPartition(JournalRecord r, RecordReader in) {
        long entityId = in.readVarLong();
        int index = in.readVarInt();
        long nextCounter = in.readLong();
        Partition p = partitionLookup.apply(entityId, index);
        if (p == null) {
            orphanPartitions.add(r.id());
            return;
        }
        p.setRecordId(r.id());
        p.sequence().setNextCounter(nextCounter);
        partitionsByRecord.put(r.id(), p);
    }

    private Partition partition(long partitionRecordId, long recordId) {
        Partition p = partitionsByRecord.get(partitionRecordId);
        if (p == null) {
            orphanRecords.add(recordId);
        }
        return p;
    }

    private void applyQueueMessage(JournalRecord r, RecordReader in) {
        Partition p = partition(in.readVarLong(), r.id());
        if (p == null) {
            return;
        }
        SubQueue q = SubQueue.values()[in.readByte()];
        long seq = in.readLong();
        long enqueuedTimeMs = in.readLong();
        long expiresAtMs = in.readLong();
        Message m = MessageCodec.read(in);
        p.sequence().advancePast(seq);
        if (p.queue() == null) {
            orphanRecords.add(r.id());
            return;
        }
        entries.put(r.id(), p.restoreEntry(p.queue().subQueue(q), seq, r.id(), enqueuedTimeMs, expiresAtMs, m,
                null));
    }

    private void applyTopicBody(JournalRecord r, RecordReader in) {
        Partition p = partition(in.readVarLong(), r.id());
        if (p == null) {
            return;
        }
        long seq = in.readLong();
        long enqueuedTimeMs = in.readLong();
        Message m = MessageCodec.read(in);
        p.sequence().advancePast(seq);
        topicBodies.put(r.id(), p.restoreTopicBody(r.id(), seq, enqueuedTimeMs, m));
        bodyPartition.put(r.id(), p);
    }

    private void applySubRef(JournalRecord r, RecordReader in) {
        Partition p = partition(in.readVarLong(), r.id());
        if (p == null) {
            return;
        }
        long subscriptionEntityId = in.readVarLong();
        long bodyId = in.readVarLong();
        SubQueue q = SubQueue.values()[in.readByte()];
        long expiresAtMs = in.readLong();
        SubQueueState sub = p.subscriptionByEntityId(subscriptionEntityId);
        TopicBody body = topicBodies.get(bodyId);
        if (sub == null || body == null) {
            orphanRecords.add(r.id());
            return;
        }
        entries.put(r.id(), p.restoreEntry(sub.subQueue(q), body.sequenceNumber(), r.id(), body.enqueuedTimeMs(),
                expiresAtMs, null, body));
    }

    private void applyEntryState(JournalRecord r, RecordReader in) {
        Entry e = entries.get(r.id());
        if (e == null) {
            return;
        }
        SubQueue q = SubQueue.values()[in.readByte()];
        int deliveryCount = in.readVarInt();
        boolean deferred = in.readBoolean();
        boolean modified = in.readBoolean();
        Message m = modified ? MessageCodec.read(in) : null;
        String deadLetterSource = in.readString();
        SubQueueState main = e.owner().subQueue(SubQueue.MAIN);
        if (e.owner().kind() != SubQueue.MAIN) {
            main = mainOf(e.owner());
        }
        e.owner().partition().restoreEntryState(e, deliveryCount, deferred, main.subQueue(q), m, deadLetterSource);
    }

    private static SubQueueState mainOf(SubQueueState dlq) {
        Partition p = dlq.partition();
        if (p.queue() != null) {
            return p.queue();
        }
        return p.subscriptionByEntityId(dlq.entityId());
    }

    private void applyScheduled(JournalRecord r, RecordReader in) {
        Partition p = partition(in.readVarLong(), r.id());
        if (p == null) {
            return;
        }
        long seq = in.readLong();
        long enqueuedTimeMs = in.readLong();
        long scheduledTimeMs = in.readLong();
        Message m = MessageCodec.read(in);
        p.sequence().advancePast(seq);
        p.restoreScheduled(new ScheduledEntry(seq, r.id(), enqueuedTimeMs, scheduledTimeMs, m));
        scheduled.put(r.id(), new long[] {seq});
        scheduledPartition.put(r.id(), p);
    }

    private void applySessionState(JournalRecord r, RecordReader in) {
        Partition p = partition(in.readVarLong(), r.id());
        if (p == null) {
            return;
        }
        long ownerEntityId = in.readVarLong();
        String sessionId = in.readString();
        long lastUpdatedMs = in.readLong();
        byte[] state = in.readBytes();
        SubQueueState q = p.queue() != null ? p.queue() : p.subscriptionByEntityId(ownerEntityId);
        if (q == null) {
            orphanRecords.add(r.id());
            return;
        }
        q.restoreSessionState(sessionId, state, r.id(), lastUpdatedMs);
        sessionStates.put(r.id(), new SessionRef(q, sessionId));
    }

    private void applyTransfer(JournalRecord r, RecordReader in) {
        Partition p = partition(in.readVarLong(), r.id());
        if (p == null) {
            return;
        }
        long ownerEntityId = in.readVarLong();
        boolean fromDeadLetter = in.readBoolean();
        long seq = in.readLong();
        long enqueuedTimeMs = in.readLong();
        Message m = MessageCodec.read(in);
        String viaDestination = in.hasRemaining() ? in.readString() : null;
        long reservedSeq = viaDestination != null && in.hasRemaining() ? in.readLong() : -1;
        if (seq >= 0) {
            p.sequence().advancePast(seq);
        }
        if (!p.restoreTransfer(ownerEntityId, r.id(), seq, enqueuedTimeMs, fromDeadLetter, m, viaDestination,
                reservedSeq)) {
            orphanRecords.add(r.id());
            return;
        }
        transferPartition.put(r.id(), p);
    }

    private void applyKeyBlock(JournalRecord r, RecordReader in) {
        Partition p = partition(in.readVarLong(), r.id());
        if (p == null) {
            return;
        }
        keyBlocks.put(r.id(), new KeyBlock(p, in.readByte()));
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
        boolean legacy = record.type() == RecordTypes.KEY_BLOCK;
        RecordReader in = new RecordReader(record.payload());
        in.readVarLong();
        in.readByte();
        int n = in.readVarInt();
        long[] keys = new long[n * 3];
        for (int i = 0; i < keys.length; i += 3) {
            keys[i] = in.readLong();
            long low = in.readLong();
            keys[i + 1] = legacy ? DedupWindow.legacyTagged(low) : low;
            keys[i + 2] = in.readLong();
        }
        return keys;
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
