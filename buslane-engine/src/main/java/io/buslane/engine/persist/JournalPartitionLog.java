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

import java.io.UncheckedIOException;

/**
 * Turns a shard's partition state changes into records of the shard's journal (one class per record type, in
 * {@code engine.persist.record}).
 * Confined to its shard thread.
 */
public final class JournalPartitionLog implements PartitionLog {

    private final Journal journal;
    private final MessageBodies bodies;
    private static final Logger LOG = LoggerFactory.getLogger(JournalPartitionLog.class);

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
        ShardMetaRecord.write(w, nextRecordId, clockFloorMs);
        appendWritten(metaWritten ? RecordKind.UPDATE : RecordKind.ADD, RecordTypes.META_RECORD_ID,
                ShardMetaRecord.TYPE);
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
            KeyBlockRecord.writeHead(w, p.recordId(), window.kind(), n);
            long newest = window.drainPending((hi, lo, t) -> KeyBlockRecord.writeKey(w, hi, lo, t));
            long id = nextRecordId();
            appendWritten(RecordKind.ADD, id, KeyBlockRecord.TYPE);
            window.blockWritten(id, newest);
        }
        try {
            spill(p, window);
            dedupRunsFailing = false;
        } catch (UncheckedIOException e) {
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
                    KeyBlockRecord.writeHead(w, p.recordId(), window.kind(), count);
                    for (int i = 0; i < count; i++) {
                        KeyBlockRecord.writeKey(w, hi[i], lo[i], t[i]);
                    }
                    id = nextRecordId();
                    appendWritten(RecordKind.ADD, id, KeyBlockRecord.TYPE);
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
        // a message parked by a transaction names the via entity (a topic's holding subscription may change)
        TransferRecord.write(w, partition.recordId(),
                t.viaDestination() != null ? partition.entityId() : t.owner().entityId(), t.fromDeadLetter(),
                t.sequenceNumber(), t.enqueuedTimeMs(), t.message(), t.viaDestination(), t.reservedSequenceNumber());
        appendWritten(RecordKind.ADD, t.recordId(), TransferRecord.TYPE);
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
        PartitionRecord.write(w, p.entityId(), p.index(), p.sequence().nextCounter());
        appendWritten(add ? RecordKind.ADD : RecordKind.UPDATE, p.recordId(), PartitionRecord.TYPE);
    }

    @Override
    public void topicBodyAdded(Partition partition, TopicBody body) {
        w.reset();
        TopicBodyRecord.write(w, partition.recordId(), body.sequenceNumber(), body.enqueuedTimeMs(), bodies.of(body));
        appendWritten(RecordKind.ADD, body.recordId(), TopicBodyRecord.TYPE);
    }

    @Override
    public void topicBodyRemoved(TopicBody body) {
        journal.append(JournalRecord.delete(body.recordId()));
    }

    @Override
    public void entryAdded(Entry e) {
        SubQueueState owner = e.owner();
        w.reset();
        if (e.body() == null) {
            QueueMessageRecord.write(w, owner.partition().recordId(), owner.kind(), e.sequenceNumber(),
                    e.enqueuedTimeMs(), e.expiresAtMs(), bodies.of(e));
            appendWritten(RecordKind.ADD, e.recordId(), QueueMessageRecord.TYPE);
        } else {
            SubscriptionRefRecord.write(w, owner.partition().recordId(), owner.entityId(), e.body().recordId(),
                    owner.kind(), e.expiresAtMs());
            appendWritten(RecordKind.ADD, e.recordId(), SubscriptionRefRecord.TYPE);
        }
    }

    @Override
    public void entryUpdated(Entry e) {
        SubQueueState owner = e.owner();
        w.reset();
        // a modified message is read back from the previous UPDATE if evicted
        EntryStateRecord.write(w, owner == null ? SubQueue.MAIN : owner.kind(), e.deliveryCount(), e.deferred(),
                e.messageModified() ? bodies.of(e) : null, e.deadLetterSource());
        appendWritten(RecordKind.UPDATE, e.recordId(), EntryStateRecord.TYPE);
    }

    @Override
    public void entryRemoved(Entry e) {
        journal.append(JournalRecord.delete(e.recordId()));
    }

    @Override
    public void scheduledAdded(Partition partition, ScheduledEntry s) {
        w.reset();
        ScheduledRecord.write(w, partition.recordId(), s.sequenceNumber(), s.enqueuedTimeMs(), s.scheduledTimeMs(),
                bodies.of(s));
        appendWritten(RecordKind.ADD, s.recordId(), ScheduledRecord.TYPE);
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
        SessionStateRecord.write(w, q.partition().recordId(), q.entityId(), s.id(), s.lastUpdatedMs(), s.state());
        appendWritten(add ? RecordKind.ADD : RecordKind.UPDATE, s.stateRecordId(), SessionStateRecord.TYPE);
    }

    @Override
    public void sessionStateCleared(SessionEntry s) {
        if (s.stateRecordId() != 0) {
            journal.append(JournalRecord.delete(s.stateRecordId()));
        }
    }
}
