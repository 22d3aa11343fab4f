package io.buslane.engine.persist;

import io.buslane.engine.api.SubQueue;
import io.buslane.engine.dedup.DedupRunStore;
import io.buslane.engine.dedup.DedupWindow;
import io.buslane.engine.partition.Entry;
import io.buslane.engine.partition.MessageBodies;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.PartitionLog;
import io.buslane.engine.partition.ScheduledEntry;
import io.buslane.engine.partition.SessionEntry;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.partition.TopicBody;
import io.buslane.engine.partition.Transfer;
import io.buslane.journal.Journal;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;

/**
 * Turns a shard's partition state changes into records of the shard's journal (format in {@link RecordTypes}).
 * Confined to its shard thread.
 */
public final class JournalPartitionLog implements PartitionLog {

    private final Journal journal;
    private final MessageBodies bodies;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(JournalPartitionLog.class);

    private final DedupRunStore dedupRuns;
    private boolean dedupRunsFailing;
    private final RecordWriter w = new RecordWriter(512);
    private long nextRecordId = RecordTypes.FIRST_RECORD_ID;
    private boolean metaWritten;
    private long lastCheckpointedRecordId = -1;
    private long clockFloorMs;

    /**
     * @param journal the shard's journal
     * @param bodies  the shard's resident messages, through which the messages to write are read
     */
    public JournalPartitionLog(Journal journal, MessageBodies bodies) {
        this(journal, bodies, DedupRunStore.inHeap());
    }

    /**
     * @param dedupRuns where duplicate-detection windows move keys beyond their heap budget
     */
    public JournalPartitionLog(Journal journal, MessageBodies bodies, DedupRunStore dedupRuns) {
        this.journal = journal;
        this.bodies = bodies;
        this.dedupRuns = dedupRuns;
    }

    /** Moves replayed keys beyond the heap budget of the partition's windows into runs (block records unchanged). */
    void spillReplayedKeys(Partition p) {
        for (DedupWindow window : new DedupWindow[] {p.duplicates(), p.hasTransferKeys() ? p.transferKeys() : null}) {
            if (window != null && window.needsSpill()) {
                window.spill(dedupRuns, null);
            }
            if (window != null) {
                window.maintain(dedupRuns, true);
            }
        }
    }

    /** Restores the id counter after replay so that no record id is ever reused. */
    void restoreNextRecordId(long next, boolean metaExists) {
        this.nextRecordId = Math.max(this.nextRecordId, next);
        this.metaWritten = metaExists;
        this.lastCheckpointedRecordId = metaExists ? next : -1;
    }

    @Override
    public long nextRecordId() {
        return nextRecordId++;
    }

    /**
     * The latest cycle time a checkpoint of this shard stored (0: none, or a journal written before it was stored):
     * no enqueued time stamped on the shard is later, so a node that takes the shard over starts its clock there.
     */
    public long clockFloorMs() {
        return clockFloorMs;
    }

    void restoreClockFloor(long floorMs) {
        clockFloorMs = Math.max(clockFloorMs, floorMs);
    }

    /**
     * Appends the shard's meta record if the id counter moved since the last one; called once per cycle.
     *
     * @param nowMs the cycle's time: every time the cycle stamped (enqueued times) is at most this; stored so that
     *              the shard's next owner never stamps an earlier one, whatever its clock says
     */
    public void checkpointShard(long nowMs) {
        if (lastCheckpointedRecordId == nextRecordId) {
            return;
        }
        clockFloorMs = Math.max(clockFloorMs, nowMs);
        w.reset();
        w.writeVarLong(nextRecordId);
        w.writeLong(clockFloorMs); // added after the first format: readers of that format ignore it
        appendWritten(metaWritten ? RecordKind.UPDATE : RecordKind.ADD, RecordTypes.META_RECORD_ID,
                RecordTypes.SHARD_META);
        metaWritten = true;
        lastCheckpointedRecordId = nextRecordId;
    }

    /** Appends the record just written to {@link #w}; the journal reads the bytes during the call (no copy). */
    private void appendWritten(RecordKind kind, long id, byte type) {
        journal.append(kind, id, type, w.buffer(), 0, w.size());
    }

    @Override
    public void partitionCreated(Partition partition) {
        partition.setRecordId(nextRecordId());
        writePartition(partition, true);
    }

    @Override
    public void partitionDropped(Partition partition) {
        journal.append(JournalRecord.delete(partition.recordId()));
    }

    @Override
    public void checkpoint(Partition partition) {
        writePartition(partition, false);
        writeKeys(partition, partition.duplicates());
        if (partition.hasTransferKeys()) {
            writeKeys(partition, partition.transferKeys());
        }
    }

    /**
     * Appends the keys remembered since the last checkpoint as one block, deletes expired blocks, and moves the
     * oldest keys out of the heap when the window's budget requires it (replacing their blocks by one).
     */
    private void writeKeys(Partition p, DedupWindow window) {
        if (window == null) {
            return;
        }
        long now = p.ctxNowMs();
        window.expire(now);
        window.expiredBlocks(now, id -> journal.append(JournalRecord.delete(id)));
        int n = window.pendingCount();
        if (n > 0) {
            w.reset();
            w.writeVarLong(p.recordId());
            w.writeByte(window.kind());
            w.writeVarInt(n);
            long newest = window.drainPending((hi, lo, t) -> {
                w.writeLong(hi);
                w.writeLong(lo);
                w.writeLong(t);
            });
            long id = nextRecordId();
            appendWritten(RecordKind.ADD, id, RecordTypes.KEY_BLOCK_V2);
            window.blockWritten(id, newest);
        }
        try {
            spill(p, window);
            dedupRunsFailing = false;
        } catch (java.io.UncheckedIOException e) {
            // the keys stay in the heap (beyond the budget) until the store works again; nothing is lost
            if (!dedupRunsFailing) {
                LOG.warn("Cannot move remembered message ids out of the heap: {}", e.getMessage());
            }
            dedupRunsFailing = true;
        }
    }

    private void spill(Partition p, DedupWindow window) {
        if (window.needsSpill()) {
            window.spill(dedupRuns, (replaced, hi, lo, t, count) -> {
                long id = -1;
                if (count > 0) {
                    // the replacement is appended before the deletions: replayed alone or together with the
                    // blocks it replaces (a crash in between), it restores the same live keys
                    w.reset();
                    w.writeVarLong(p.recordId());
                    w.writeByte(window.kind());
                    w.writeVarInt(count);
                    for (int i = 0; i < count; i++) {
                        w.writeLong(hi[i]);
                        w.writeLong(lo[i]);
                        w.writeLong(t[i]);
                    }
                    id = nextRecordId();
                    appendWritten(RecordKind.ADD, id, RecordTypes.KEY_BLOCK_V2);
                }
                for (long r : replaced) {
                    journal.append(JournalRecord.delete(r));
                }
                return id;
            });
        }
        window.maintain(dedupRuns, false);
    }

    @Override
    public void transferAdded(Partition partition, Transfer t) {
        w.reset();
        w.writeVarLong(partition.recordId());
        // a message parked by a transaction names the via entity (a topic's holding subscription may change)
        w.writeVarLong(t.viaDestination() != null ? partition.entityId() : t.owner().entityId());
        w.writeBoolean(t.fromDeadLetter());
        w.writeLong(t.sequenceNumber());
        w.writeLong(t.enqueuedTimeMs());
        MessageCodec.write(w, t.message());
        if (t.viaDestination() != null) {
            w.writeString(t.viaDestination()); // appended: transfers of the first format have none
            if (t.reservedSequenceNumber() >= 0) {
                w.writeLong(t.reservedSequenceNumber()); // appended: a message scheduled through a via entity
            }
        }
        appendWritten(RecordKind.ADD, t.recordId(), RecordTypes.TRANSFER);
    }

    @Override
    public void transferRemoved(Transfer t) {
        journal.append(JournalRecord.delete(t.recordId()));
    }

    @Override
    public void recordDropped(long recordId) {
        journal.append(JournalRecord.delete(recordId));
    }

    private void writePartition(Partition p, boolean add) {
        w.reset();
        w.writeVarLong(p.entityId());
        w.writeVarInt(p.index());
        w.writeLong(p.sequence().nextCounter());
        appendWritten(add ? RecordKind.ADD : RecordKind.UPDATE, p.recordId(), RecordTypes.PARTITION);
    }

    @Override
    public void topicBodyAdded(Partition partition, TopicBody body) {
        w.reset();
        w.writeVarLong(partition.recordId());
        w.writeLong(body.sequenceNumber());
        w.writeLong(body.enqueuedTimeMs());
        MessageCodec.write(w, bodies.of(body));
        appendWritten(RecordKind.ADD, body.recordId(), RecordTypes.TOPIC_BODY);
    }

    @Override
    public void topicBodyRemoved(TopicBody body) {
        journal.append(JournalRecord.delete(body.recordId()));
    }

    @Override
    public void entryAdded(Entry e) {
        SubQueueState owner = e.owner();
        w.reset();
        w.writeVarLong(owner.partition().recordId());
        if (e.body() == null) {
            w.writeByte(owner.kind().ordinal());
            w.writeLong(e.sequenceNumber());
            w.writeLong(e.enqueuedTimeMs());
            w.writeLong(e.expiresAtMs());
            MessageCodec.write(w, bodies.of(e));
            appendWritten(RecordKind.ADD, e.recordId(), RecordTypes.QUEUE_MSG);
        } else {
            w.writeVarLong(owner.entityId());
            w.writeVarLong(e.body().recordId());
            w.writeByte(owner.kind().ordinal());
            w.writeLong(e.expiresAtMs());
            appendWritten(RecordKind.ADD, e.recordId(), RecordTypes.SUB_REF);
        }
    }

    @Override
    public void entryUpdated(Entry e) {
        SubQueueState owner = e.owner();
        w.reset();
        w.writeByte(owner == null ? SubQueue.MAIN.ordinal() : owner.kind().ordinal());
        w.writeVarInt(e.deliveryCount());
        w.writeBoolean(e.deferred());
        w.writeBoolean(e.messageModified());
        if (e.messageModified()) {
            MessageCodec.write(w, bodies.of(e)); // read back from the previous UPDATE if evicted
        }
        w.writeString(e.deadLetterSource());
        appendWritten(RecordKind.UPDATE, e.recordId(), RecordTypes.ENTRY_STATE);
    }

    @Override
    public void entryRemoved(Entry e) {
        journal.append(JournalRecord.delete(e.recordId()));
    }

    @Override
    public void scheduledAdded(Partition partition, ScheduledEntry s) {
        w.reset();
        w.writeVarLong(partition.recordId());
        w.writeLong(s.sequenceNumber());
        w.writeLong(s.enqueuedTimeMs());
        w.writeLong(s.scheduledTimeMs());
        MessageCodec.write(w, bodies.of(s));
        appendWritten(RecordKind.ADD, s.recordId(), RecordTypes.SCHEDULED);
    }

    @Override
    public void scheduledRemoved(ScheduledEntry s) {
        journal.append(JournalRecord.delete(s.recordId()));
    }

    @Override
    public void sessionStateWritten(SessionEntry s) {
        SubQueueState q = s.queue();
        boolean add = s.stateRecordId() == 0;
        if (add) {
            s.assignStateRecordId(nextRecordId());
        }
        w.reset();
        w.writeVarLong(q.partition().recordId());
        w.writeVarLong(q.entityId());
        w.writeString(s.id());
        w.writeLong(s.lastUpdatedMs());
        w.writeBytes(s.state());
        appendWritten(add ? RecordKind.ADD : RecordKind.UPDATE, s.stateRecordId(), RecordTypes.SESSION_STATE);
    }

    @Override
    public void sessionStateCleared(SessionEntry s) {
        if (s.stateRecordId() != 0) {
            journal.append(JournalRecord.delete(s.stateRecordId()));
        }
    }
}
