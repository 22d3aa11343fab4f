package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.filter.RuleSet;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One receivable queue of one partition: a queue's or a subscription's main queue, dead-letter queue or
 * transfer dead-letter queue. Holds the messages (in sequence order, with their counts) and applies the Service Bus
 * rules through four sections: this class (entries and counts: arrival, removal, browsing, deletion), its
 * {@link #deliveries()} (consumers, hand-out, session locks), its {@link #settlements()} (message locks,
 * settlement, expiry, dead-lettering) and its {@link #sessions()} (availability, session locks, state); callers use
 * the section an operation belongs to (this class forwards none of them). Confined to its shard thread.
 *
 * <p>Every state change that must survive a restart is reported to the {@link PartitionLog}; locks are not
 * (they do not survive a restart).
 */
public final class SubQueueState {

    static final String LOCK_LOST_TEXT = "The lock supplied is invalid. Either the lock expired, or the message "
            + "has already been removed from the queue, or was received by a different receiver instance.";
    /** What a lost session lock says (the service's text). */
    public static final String SESSION_LOCK_LOST_TEXT = SessionTable.SESSION_LOCK_LOST_TEXT;
    /**
     * Why a delivery, a lock or a session accept is refused (SERVER_BUSY, retried by the SDKs) while the shard's
     * lease may have passed to another node (cluster mode: see {@link PartitionContext#leaseHeld}).
     */
    public static final String LEASE_NOT_HELD_TEXT = "This node could not confirm in time that it still serves the "
            + "entity's partition (it may be moving to another node). Retry.";

    /** Refuses, changing nothing, while the shard's lease may have passed to another node. */
    void requireLease() {
        if (!partition.ctx.leaseHeld()) {
            throw new BrokerException(ErrorKind.SERVER_BUSY, LEASE_NOT_HELD_TEXT);
        }
    }

    /** Why a message of a dead-letter queue cannot be dead-lettered (the service's text is not known). */
    public static final String DEAD_LETTER_TWICE_TEXT = "The message is in a dead-letter queue already: it cannot be "
            + "dead-lettered again. Complete, abandon or defer it.";

    final Partition partition;
    final SubQueue kind;
    final long entityId;
    QueueSettings settings;
    /** For a main queue, its dead-letter and transfer dead-letter queues; null otherwise. */
    final SubQueueState deadLetter;
    final SubQueueState transferDeadLetter;

    private final SeqIndex<Entry> bySeq = new SeqIndex<>();
    /** The non-session entries ready for delivery (a session's are in its own ready queue). */
    final ReadyQueue ready = new ReadyQueue();
    final SessionTable sessions;
    final SubQueueDeliveries deliveries = new SubQueueDeliveries(this);
    final SubQueueSettlements settlements = new SubQueueSettlements(this);
    private long messageCount;
    private long sizeBytes;
    private RuleSet rules = RuleSet.EMPTY;
    /** Auto-forwarding of a main queue (null: none); set by the engine on the shard thread. */
    String forwardTo;
    String forwardDeadLetteredMessagesTo;
    /** Messages waiting to be forwarded (TransferMessageCount) and their bytes. */
    long transferCount;
    long transferBytes;

    SubQueueState(Partition partition, SubQueue kind, long entityId, QueueSettings settings) {
        this.partition = partition;
        this.kind = kind;
        this.entityId = entityId;
        this.settings = settings;
        this.sessions = new SessionTable(this, partition.ctx);
        if (kind == SubQueue.MAIN) {
            this.deadLetter = new SubQueueState(partition, SubQueue.DEAD_LETTER, entityId, settings);
            this.transferDeadLetter = new SubQueueState(partition, SubQueue.TRANSFER_DEAD_LETTER, entityId,
                    settings);
        } else {
            this.deadLetter = null;
            this.transferDeadLetter = null;
        }
    }

    // ------------------------------------------------------------------------------------------------ accessors

    /** Its deliveries: consumers, hand-out of ready messages, session accepts. */
    public SubQueueDeliveries deliveries() {
        return deliveries;
    }

    /** Its settlements: message locks, complete, abandon, defer, dead-letter, deferred receives, expiry. */
    public SubQueueSettlements settlements() {
        return settlements;
    }

    /** Its sessions (a sessionful main queue's): session locks, state, listing. */
    public SessionTable sessions() {
        return sessions;
    }

    public Partition partition() {
        return partition;
    }

    public SubQueue kind() {
        return kind;
    }

    public long entityId() {
        return entityId;
    }

    public QueueSettings settings() {
        return settings;
    }

    /** The sub-queue of this receivable entity with the given kind (this one for MAIN). */
    public SubQueueState subQueue(SubQueue q) {
        switch (q) {
            case MAIN: return this;
            case DEAD_LETTER: return deadLetter;
            default: return transferDeadLetter;
        }
    }

    void updateSettings(QueueSettings newSettings) {
        if (kind == SubQueue.MAIN && settings.status().canReceive() && !newSettings.status().canReceive()) {
            // receivers attached before the entity was disabled are detached with the service's error
            BrokerException error = newSettings.status().error(newSettings.entityPath(), false);
            deliveries.closeConsumers(error);
            deadLetter.deliveries.closeConsumers(error);
            transferDeadLetter.deliveries.closeConsumers(error);
        }
        this.settings = newSettings;
        if (deadLetter != null) {
            deadLetter.settings = newSettings;
            transferDeadLetter.settings = newSettings;
        }
    }

    /** Sets where this main queue auto-forwards its messages and its dead-lettered messages (null: nowhere). */
    public void setForwarding(String to, String deadLetteredTo) {
        this.forwardTo = to;
        this.forwardDeadLetteredMessagesTo = deadLetteredTo;
    }

    public String forwardTo() {
        return forwardTo;
    }

    public String forwardDeadLetteredMessagesTo() {
        return forwardDeadLetteredMessagesTo;
    }

    /** Compiles the subscription's rules (once per change, not per message). */
    void setRules(List<RuleProperties> newRules) {
        this.rules = RuleSet.compile(newRules);
    }

    RuleSet rules() {
        return rules;
    }

    boolean sessionful() {
        return kind == SubQueue.MAIN && settings.requiresSession();
    }

    private PartitionContext ctx() {
        return partition.ctx;
    }

    private PartitionLog log() {
        return partition.ctx.log();
    }

    private MessageBodies bodies() {
        return partition.ctx.bodies();
    }

    // ------------------------------------------------------------------------------------------------ arrival

    /** Accepts a new entry (already logged by the caller) and delivers what it can. */
    void add(Entry e, long nowMs) {
        insert(e, true);
        if (e.expiresAtMs != Long.MAX_VALUE && kind == SubQueue.MAIN && !e.deferred()) {
            scheduleTtl(e);
        }
        if (e.session != null) {
            sessions.touch(e.session, nowMs);
        }
        afterArrival(e);
    }

    /** Restores an entry from the journal (no logging, no delivery yet). */
    void restore(Entry e) {
        insert(e, true);
        if (e.expiresAtMs != Long.MAX_VALUE && kind == SubQueue.MAIN && !e.deferred()) {
            scheduleTtl(e);
        }
        if (e.session != null) {
            // the session's update time is not journaled: rebuild it from its messages' arrival times
            sessions.touch(e.session, e.enqueuedTimeMs);
        }
    }

    void insert(Entry e, boolean fresh) {
        e.owner = this;
        bySeq.put(e.seq, e);
        messageCount++;
        sizeBytes += e.sizeBytes();
        if (sessionful()) {
            SessionEntry s = sessions.getOrCreate(bodies().of(e).sessionId());
            e.session = s;
            sessions.added(s, e, fresh);
        } else {
            e.session = null;
            if (!e.deferred()) {
                if (fresh) {
                    ready.addNew(e);
                } else {
                    ready.addReturned(e);
                }
            }
        }
    }

    private void afterArrival(Entry e) {
        if (e.session != null) {
            if (e.session.holder != null) {
                deliveries.pumpSession(e.session);
            } else {
                deliveries.serveWaiters();
            }
        } else {
            deliveries.pump();
        }
    }

    private void scheduleTtl(Entry e) {
        if (e.ttlTimer == null) {
            e.ttlTimer = new Entry.TtlTimer(e);
        }
        ctx().schedule(e.ttlTimer, e.expiresAtMs);
    }

    /** Moves an (unlocked) entry of this main queue to the dead-letter queue, keeping its sequence number. */
    void moveToDeadLetter(Entry e, String reason, String description, Map<String, Object> propertiesToModify) {
        settlements.moveToDeadLetter(e, reason, description, propertiesToModify);
    }

    // ------------------------------------------------------------------------------------------------ removal

    /** Takes an entry out of this sub-queue's structures without logging. */
    void detach(Entry e) {
        settlements.forget(e);
        bySeq.remove(e.seq);
        messageCount--;
        sizeBytes -= e.sizeBytes();
        if (e.isScheduled()) {
            ctx().cancel(e);
        }
        if (e.ttlTimer != null && e.ttlTimer.isScheduled()) {
            ctx().cancel(e.ttlTimer);
        }
        SessionEntry s = e.session;
        if (s != null) {
            e.session = null;
            sessions.removed(s, e);
        } else {
            ready.remove(e);
        }
        e.owner = null;
    }

    /** Forgets a session's state whose DELETE record was replayed. */
    public void clearSessionStateForReplay(String sessionId) {
        sessions.clearStateForReplay(sessionId);
    }

    /** Takes an entry out without logging, so replay can re-insert it with its updated state. */
    public void removeForReplay(Entry e) {
        detach(e);
    }

    /** Removes an entry for good (completed, received-and-deleted, expired, purged). */
    void remove(Entry e) {
        detach(e);
        drop(e);
    }

    /** Logs the removal of a detached entry and releases its message. */
    void drop(Entry e) {
        e.status = Entry.REMOVED;
        log().entryRemoved(e);
        bodies().release(e);
        TopicBody body = e.body;
        if (body != null && --body.references == 0) {
            log().topicBodyRemoved(body);
            bodies().release(body);
        }
    }

    // ------------------------------------------------------------------------------------------------ browse

    /** Up to {@code max} messages with sequence number >= {@code fromSeq}, in order, without locking. */
    public List<ReceivedMessage> peek(long fromSeq, int max, String sessionId) {
        List<ReceivedMessage> out = new ArrayList<>(Math.min(max, 64));
        for (Entry e : bySeq.from(fromSeq)) {
            if (out.size() >= max) {
                break;
            }
            if (sessionId != null && (e.session == null || !sessionId.equals(e.session.id))) {
                continue;
            }
            out.add(peekView(e));
        }
        return out;
    }

    private ReceivedMessage peekView(Entry e) {
        ReceivedMessage v = e.view(bodies().of(e), partition.index);
        return new ReceivedMessage(v.message(), v.sequenceNumber(), v.enqueuedTimeMs(), v.deliveryCount(), null,
                v.lockedUntilMs(), v.state(), v.expiresAtMs(), null, v.deadLetterSource(), v.partitionIndex());
    }

    /** The entry with this sequence number, or null. */
    Entry entry(long seq) {
        return bySeq.get(seq);
    }

    /** Entries with sequence number >= fromSeq, for merging with scheduled messages. */
    Iterable<Entry> entriesFrom(long fromSeq) {
        return bySeq.from(fromSeq);
    }

    ReceivedMessage browse(Entry e) {
        return peekView(e);
    }

    // ------------------------------------------------------------------------------------------------ deletion

    /** Deletes up to {@code max} unlocked messages enqueued before {@code beforeMs}; returns how many. */
    public int deleteMessages(int max, long beforeMs) {
        return deleteMessages(max, beforeMs, null);
    }

    /**
     * Deletes up to {@code max} unlocked messages enqueued before {@code beforeMs}, of one session when
     * {@code sessionId} is not null; returns how many.
     */
    public int deleteMessages(int max, long beforeMs, String sessionId) {
        int deleted = 0;
        Iterator<Entry> it = bySeq.snapshot().iterator();
        while (it.hasNext() && deleted < max) {
            Entry e = it.next();
            if (!e.locked() && e.enqueuedTimeMs < beforeMs
                    && (sessionId == null || e.session != null && sessionId.equals(e.session.id))) {
                remove(e);
                deleted++;
            }
        }
        return deleted;
    }

    /** Deletes every message of this sub-queue, locked or not; returns how many. */
    public int purge() {
        int n = 0;
        for (Entry e : bySeq.snapshot()) {
            remove(e);
            n++;
        }
        return n;
    }

    /** Drops all state without logging (the partition is being dropped and its records deleted). */
    void forEachEntry(Consumer<Entry> action) {
        for (Entry e : bySeq.snapshot()) {
            action.accept(e);
        }
    }

    // ------------------------------------------------------------------------------------------------ sessions

    /** Refuses, changing nothing, unless this is a main queue that requires sessions. */
    public void requireSessionful() {
        if (!sessionful()) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "A sessionful message receiver cannot be "
                    + "created on an entity that does not require sessions. Ensure RequiresSession is set to "
                    + "true when creating a Queue or Subscription to enable sessionful behavior.");
        }
    }

    // ------------------------------------------------------------------------------------------------ counts

    public long messageCount() {
        return messageCount;
    }

    /** Bytes of the messages and session states of this sub-queue. */
    public long sizeBytes() {
        return sizeBytes + sessions.stateBytes();
    }

    /** Counts of this main queue and its dead-letter queues. */
    RuntimeCounts counts() {
        if (kind != SubQueue.MAIN) {
            return new RuntimeCounts(0, messageCount, 0, 0, 0, sizeBytes());
        }
        return new RuntimeCounts(messageCount, deadLetter.messageCount, 0, transferCount,
                transferDeadLetter.messageCount,
                sizeBytes() + deadLetter.sizeBytes() + transferDeadLetter.sizeBytes() + transferBytes);
    }

    /** Whether a receiver (or a session receiver) is attached. */
    public boolean hasConsumers() {
        return deliveries.hasConsumers();
    }

    /** Number of messages currently locked (for tests and metrics). */
    public int lockedCount() {
        return settlements.lockedCount();
    }

    /**
     * Creates an entry for a message (used by the partition for arrivals and by replay).
     *
     * @param message   the message, or null for a subscription's copy (which reads its body's)
     * @param sizeBytes the message's encoded size
     */
    Entry newEntry(long seq, long recordId, long enqueuedTimeMs, long expiresAtMs, Message message, int sizeBytes) {
        return new Entry(seq, recordId, enqueuedTimeMs, expiresAtMs, message, sizeBytes);
    }
}
