package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.ReceiveMode;
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
import java.util.UUID;
import java.util.function.Consumer;

/**
 * One receivable queue of one partition: a queue's or a subscription's main queue, dead-letter queue or
 * transfer dead-letter queue. Holds the messages (in sequence order, with their counts) and applies the Service Bus
 * rules through three sections: this class (entries and counts: arrival, removal, browsing, deletion), its
 * {@link SubQueueDeliveries} (consumers, hand-out, session locks) and its {@link SubQueueSettlements} (message
 * locks, settlement, expiry, dead-lettering); its sessions (availability, session locks, state) are kept by its
 * {@link SessionTable}. Confined to its shard thread.
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

    // ------------------------------------------------------------------------------- deliveries and settlements

    /** Delivers ready messages to consumers with credit, round-robin (a session's to its holder). */
    public void pump() {
        deliveries.pump();
    }

    /** Registers a (non-session) consumer; {@link #pump} delivers to it. */
    public ConsumerSlot addConsumer(ConsumerHandle consumer) {
        return deliveries.addConsumer(consumer);
    }

    /** Removes a consumer; a session it held is released without counting a delivery. */
    public void removeConsumer(ConsumerSlot slot) {
        deliveries.removeConsumer(slot);
    }

    /** Completes (removes) a locked message. */
    public void complete(UUID lockToken, long nowMs) {
        settlements.complete(lockToken, nowMs);
    }

    /** Abandons a locked message: it becomes available again with one more failed delivery. */
    public void abandon(UUID lockToken, Map<String, Object> propertiesToModify, long nowMs) {
        settlements.abandon(lockToken, propertiesToModify, nowMs);
    }

    /**
     * Releases a locked message without counting a failed delivery (AMQP {@code released}, or a delivery that
     * could not be handed to a receiver that had already gone).
     */
    public void release(UUID lockToken, long nowMs) {
        settlements.release(lockToken, nowMs);
    }

    /** Defers a locked message: from now on it can only be received by sequence number. */
    public void defer(UUID lockToken, Map<String, Object> propertiesToModify, long nowMs) {
        settlements.defer(lockToken, propertiesToModify, nowMs);
    }

    /** Moves a locked message to the dead-letter queue with the given reason and description. */
    public void deadLetter(UUID lockToken, String reason, String description,
                           Map<String, Object> propertiesToModify, long nowMs) {
        settlements.deadLetter(lockToken, reason, description, propertiesToModify, nowMs);
    }

    /** Renews a message lock; returns the new locked-until time. */
    public long renewLock(UUID lockToken, long nowMs) {
        return settlements.renewLock(lockToken, nowMs);
    }

    /** Whether this lock token is a held message lock. */
    public boolean holdsLock(UUID lockToken) {
        return settlements.holdsLock(lockToken);
    }

    /**
     * Fails exactly as a settlement with this lock token would fail now (lost or expired message lock, lost
     * session lock), changing nothing: lets a transaction commit check all its settlements before applying any.
     */
    public void requireLock(UUID lockToken, long nowMs) {
        settlements.requireLock(lockToken, nowMs);
    }

    /**
     * Receives deferred messages by sequence number (locking them in peek-lock mode); a session's message only while
     * its session is locked, by {@code by} when it is given.
     */
    public List<ReceivedMessage> receiveDeferred(long[] sequenceNumbers, ReceiveMode mode, String sessionId,
                                                 ConsumerHandle by, long nowMs) {
        return settlements.receiveDeferred(sequenceNumbers, mode, sessionId, by, nowMs);
    }

    /** Locks a named session for a new consumer slot. */
    public ConsumerSlot acceptSession(String sessionId, ConsumerHandle consumer, long nowMs) {
        return deliveries.acceptSession(sessionId, consumer, nowMs);
    }

    /** Locks the oldest free session with messages for the waiter, or queues the waiter. */
    public void acceptNextSession(SessionWaiter waiter) {
        deliveries.acceptNextSession(waiter);
    }

    /** Starts delivering to a session receiver (after its attach was answered). */
    public void pumpSessionOf(ConsumerSlot slot) {
        deliveries.pumpSessionOf(slot);
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

    /** Renews a session lock held by anyone; returns the new locked-until time. */
    public long renewSessionLock(String sessionId, long nowMs, ConsumerHandle by) {
        requireSessionful();
        requireLease();
        return sessions.renew(sessionId, nowMs, settings.lockDurationMs(), by);
    }

    /**
     * The locked-until time of a session lock, or fails as lost.
     *
     * @param by the receiver that must hold the lock, or null when any holder will do
     */
    public long sessionLockedUntil(String sessionId, long nowMs, ConsumerHandle by) {
        return sessions.lockedUntil(sessionId, nowMs, by);
    }

    void requireSessionful() {
        if (!sessionful()) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "A sessionful message receiver cannot be "
                    + "created on an entity that does not require sessions. Ensure RequiresSession is set to "
                    + "true when creating a Queue or Subscription to enable sessionful behavior.");
        }
    }

    /** The session's state, or null. */
    public byte[] getSessionState(String sessionId) {
        return sessions.state(sessionId);
    }

    /** Sets (or, with null, clears) the session's state. */
    public void setSessionState(String sessionId, byte[] state, long nowMs) {
        requireSessionful();
        sessions.setState(sessionId, state, nowMs);
    }

    public void restoreSessionState(String sessionId, byte[] state, long recordId, long lastUpdatedMs) {
        sessions.restoreState(sessionId, state, recordId, lastUpdatedMs);
    }

    /**
     * At most {@code limit} ids of sessions in id order after {@code afterId} (null: from the first): all with
     * messages or state for {@link Long#MIN_VALUE}, else those whose state was written at or after the time.
     */
    public List<String> sessionIds(long stateUpdatedSinceMs, String afterId, int limit) {
        return sessions.ids(stateUpdatedSinceMs, afterId, limit);
    }

    /** A session entry's lock owner check for settlement by session id. */
    public boolean sessionLocked(String sessionId, long nowMs) {
        return sessions.lockedAt(sessionId, nowMs);
    }

    /** Reports the records of every session state (used when a partition's records are rewritten). */
    void forEachSession(Consumer<SessionEntry> action) {
        sessions.forEach(action);
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
