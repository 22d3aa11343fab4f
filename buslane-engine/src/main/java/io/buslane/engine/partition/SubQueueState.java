package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One receivable queue of one partition: a queue's or a subscription's main queue, dead-letter queue or
 * transfer dead-letter queue. Holds the messages, their locks and consumers, and applies the Service Bus rules for
 * delivery and settlement; its sessions (availability, session locks, state) are kept by its {@link SessionTable}.
 * Confined to its shard thread.
 *
 * <p>Every state change that must survive a restart is reported to the {@link PartitionLog}; locks are not
 * (they do not survive a restart).
 */
public final class SubQueueState {

    private static final Logger LOG = LoggerFactory.getLogger(SubQueueState.class);

    static final String LOCK_LOST_TEXT = "The lock supplied is invalid. Either the lock expired, or the message "
            + "has already been removed from the queue, or was received by a different receiver instance.";
    /** What a lost session lock says (the service's text). */
    public static final String SESSION_LOCK_LOST_TEXT = SessionTable.SESSION_LOCK_LOST_TEXT;

    final Partition partition;
    final SubQueue kind;
    final long entityId;
    QueueSettings settings;
    /** For a main queue, its dead-letter and transfer dead-letter queues; null otherwise. */
    final SubQueueState deadLetter;
    final SubQueueState transferDeadLetter;

    private final SeqIndex<Entry> bySeq = new SeqIndex<>();
    private final ReadyQueue ready = new ReadyQueue();
    private final LockTable locks = new LockTable();
    /**
     * Message locks that ran out while their messages wait, untaken, to be delivered again: the service still renews
     * such a lock (a late renew succeeds as long as no other receiver has taken the message; a late settlement does
     * not), so the token stays renewable until the message is locked again or leaves the sub-queue.
     */
    private final java.util.HashMap<UUID, Entry> lapsed = new java.util.HashMap<>();
    private final ArrayList<ConsumerSlot> consumers = new ArrayList<>();
    private int nextConsumer;
    private final SessionTable sessions;
    private long messageCount;
    private long sizeBytes;
    private io.buslane.engine.filter.RuleSet rules = io.buslane.engine.filter.RuleSet.EMPTY;
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
            closeConsumers(error);
            deadLetter.closeConsumers(error);
            transferDeadLetter.closeConsumers(error);
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
    void setRules(List<io.buslane.engine.entity.RuleProperties> newRules) {
        this.rules = io.buslane.engine.filter.RuleSet.compile(newRules);
    }

    io.buslane.engine.filter.RuleSet rules() {
        return rules;
    }

    private boolean sessionful() {
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

    private void insert(Entry e, boolean fresh) {
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
                pumpSession(e.session);
            } else {
                serveWaiters();
            }
        } else {
            pump();
        }
    }

    private void scheduleTtl(Entry e) {
        if (e.ttlTimer == null) {
            e.ttlTimer = new Entry.TtlTimer(e);
        }
        ctx().schedule(e.ttlTimer, e.expiresAtMs);
    }

    // ------------------------------------------------------------------------------------------------ delivery

    /** Delivers ready non-session messages to consumers with credit, round-robin. */
    public void pump() {
        if (sessionful()) {
            for (ConsumerSlot slot : consumers) {
                if (slot.session != null) {
                    pumpSession(slot.session);
                }
            }
            serveWaiters();
            return;
        }
        long nowMs = ctx().nowMs();
        int n = consumers.size();
        boolean progress = true;
        while (progress && n > 0 && !ready.isEmpty()) {
            progress = false;
            for (int i = 0; i < n && !ready.isEmpty(); i++) {
                ConsumerSlot slot = consumers.get(nextConsumer++ % n);
                if (nextConsumer >= n) {
                    nextConsumer = 0;
                }
                if (!slot.consumer.tryAcquireCredit()) {
                    continue;
                }
                Entry e = nextReady(ready, nowMs);
                if (e == null) {
                    slot.consumer.releaseCredit();
                    return;
                }
                if (!deliver(slot, e, nowMs)) {
                    return;
                }
                progress = true;
            }
        }
    }

    private void pumpSession(SessionEntry s) {
        ConsumerSlot slot = s.holder;
        if (slot == null) {
            return;
        }
        long nowMs = ctx().nowMs();
        while (!s.ready.isEmpty() && slot.consumer.tryAcquireCredit()) {
            Entry e = nextReady(s.ready, nowMs);
            if (e == null) {
                slot.consumer.releaseCredit();
                return;
            }
            if (!deliver(slot, e, nowMs)) {
                return;
            }
        }
    }

    /** Takes the next ready entry, expiring the ones whose time-to-live has passed. */
    private Entry nextReady(ReadyQueue queue, long nowMs) {
        Entry e;
        while ((e = queue.poll()) != null) {
            if (kind == SubQueue.MAIN && e.expiresAtMs <= nowMs) {
                expire(e);
                continue;
            }
            return e;
        }
        return null;
    }

    /**
     * Hands a ready entry (taken from its ready queue, with a unit of credit) to the consumer. Returns false, with
     * the entry back in its ready queue and the credit returned, when its message cannot be read back from storage:
     * delivery stops there (the failure is logged) rather than skipping or losing the message.
     */
    private boolean deliver(ConsumerSlot slot, Entry e, long nowMs) {
        Message m;
        try {
            m = bodies().of(e);
        } catch (RuntimeException failure) {
            returnToReady(e);
            slot.consumer.releaseCredit();
            LOG.error("Cannot deliver message {} of '{}': its body could not be read back; delivery of the queue "
                    + "stops at it until it can", e.seq, settings.entityPath(), failure);
            return false;
        }
        ReceivedMessage view;
        if (slot.consumer.mode() == ReceiveMode.PEEK_LOCK) {
            lock(e, nowMs);
            view = e.view(m, partition.index);
        } else {
            view = e.view(m, partition.index);
            remove(e);
        }
        if (e.session != null && e.session.holder == null) {
            sessions.reindex(e.session);
        }
        ConsumerHandle consumer = slot.consumer;
        ctx().afterSync(() -> consumer.deliver(view));
        return true;
    }

    private void lock(Entry e, long nowMs) {
        lockAs(e, ctx().newLockToken(partition.index), nowMs);
    }

    /** Locks an unlocked entry under {@code token} for a lock duration (a session's lock governs its entries). */
    private void lockAs(Entry e, UUID token, long nowMs) {
        forgetLapsedLock(e);
        e.status = e.deferred() ? Entry.DEFERRED_LOCKED : Entry.LOCKED;
        if (e.lockToken != null) {
            // never expected (only unlocked entries are locked), but the lock table finds an entry by its current
            // token, so a token is never replaced while the entry is in it
            locks.remove(e.lockToken);
        }
        e.lockToken = token;
        locks.put(e);
        if (e.session == null) {
            e.lockedUntilMs = saturatedAdd(nowMs, settings.lockDurationMs());
            ctx().schedule(e, e.lockedUntilMs);
        }
    }

    // ------------------------------------------------------------------------------------------------ consumers

    /** Registers a (non-session) consumer and delivers what it can. */
    public ConsumerSlot addConsumer(ConsumerHandle consumer) {
        ConsumerSlot slot = new ConsumerSlot(consumer, this);
        consumers.add(slot);
        return slot;
    }

    /** Removes a consumer; a session it held is released without counting a delivery. */
    public void removeConsumer(ConsumerSlot slot) {
        if (slot.closed) {
            return;
        }
        slot.closed = true;
        consumers.remove(slot);
        if (nextConsumer >= consumers.size()) {
            nextConsumer = 0;
        }
        SessionEntry s = slot.session;
        if (s != null && s.holder == slot) {
            releaseSession(s, false);
        }
    }

    // ------------------------------------------------------------------------------------------------ settlement

    /**
     * The message this lock token holds now, or fails as a lost lock. A lock that ran out while nobody took the
     * message again is taken back only by a renewal ({@code mayReclaim}): as on the service, a late renew succeeds
     * (the Java SDK renews a buffered message when it hands it over, possibly after its lock ran out) while a late
     * settlement is refused with MessageLockLost (the JavaScript SDK's live tests complete 1 s after the lock ran
     * out and expect that), the message staying available for the next receiver.
     */
    private Entry lockedEntry(UUID lockToken, long nowMs, boolean mayReclaim) {
        Entry e = lockToken == null ? null : locks.get(lockToken);
        if (e == null && lockToken != null && mayReclaim) {
            e = reclaimLapsedLock(lockToken, nowMs);
        }
        if (e == null) {
            throw new BrokerException(sessionful() ? ErrorKind.SESSION_LOCK_LOST : ErrorKind.MESSAGE_LOCK_LOST,
                    sessionful() ? SESSION_LOCK_LOST_TEXT : LOCK_LOST_TEXT);
        }
        if (e.session != null) {
            if (!e.session.lockedAt(nowMs)) {
                throw new BrokerException(ErrorKind.SESSION_LOCK_LOST, SESSION_LOCK_LOST_TEXT);
            }
        } else if (e.lockedUntilMs <= nowMs) {
            onLockExpired(e); // its timer has not fired yet: the lock runs out now, then is reclaimed if untaken
            Entry reclaimed = mayReclaim ? reclaimLapsedLock(lockToken, nowMs) : null;
            if (reclaimed == null) {
                throw new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, LOCK_LOST_TEXT);
            }
            return reclaimed;
        }
        return e;
    }

    private Entry lockedEntry(UUID lockToken, long nowMs) {
        return lockedEntry(lockToken, nowMs, false);
    }

    /** Completes (removes) a locked message. */
    public void complete(UUID lockToken, long nowMs) {
        Entry e = lockedEntry(lockToken, nowMs);
        unlock(e);
        remove(e);
    }

    /** Abandons a locked message: it becomes available again with one more failed delivery. */
    public void abandon(UUID lockToken, Map<String, Object> propertiesToModify, long nowMs) {
        Entry e = lockedEntry(lockToken, nowMs);
        unlock(e);
        boolean modified = modify(e, propertiesToModify);
        fail(e, nowMs, kind == SubQueue.MAIN, modified);
    }

    /**
     * Releases a locked message without counting a failed delivery (AMQP {@code released}, or a delivery that
     * could not be handed to a receiver that had already gone).
     */
    public void release(UUID lockToken, long nowMs) {
        Entry held = lockToken == null ? null : locks.get(lockToken);
        if (held == null && lapsedLock(lockToken) != null) {
            return; // its lock ran out: the message is available again already, counted as a failed delivery
        }
        if (held != null && held.session == null && held.lockedUntilMs <= nowMs) {
            onLockExpired(held); // runs out now (its timer has not fired yet): the same as above
            return;
        }
        Entry e = lockedEntry(lockToken, nowMs);
        unlock(e);
        fail(e, nowMs, false, false);
    }

    /** Defers a locked message: from now on it can only be received by sequence number. */
    public void defer(UUID lockToken, Map<String, Object> propertiesToModify, long nowMs) {
        Entry e = lockedEntry(lockToken, nowMs);
        unlock(e);
        modify(e, propertiesToModify);
        if (!e.deferred() && e.ttlTimer != null) {
            ctx().cancel(e.ttlTimer);
        }
        e.status = Entry.DEFERRED;
        // the delivery that deferred it counts, as on the service: received by sequence number it reports one more
        // (never dead-lettered here: MaxDeliveryCount applies when a delivery is abandoned or its lock runs out)
        e.deliveryCount++;
        log().entryUpdated(e);
    }

    /** Moves a locked message to the dead-letter queue with the given reason and description. */
    public void deadLetter(UUID lockToken, String reason, String description,
                           Map<String, Object> propertiesToModify, long nowMs) {
        Entry e = lockedEntry(lockToken, nowMs);
        if (kind != SubQueue.MAIN) {
            // the service refuses it (amqp:not-allowed; the JavaScript SDK's tests expect the refusal), and the
            // message stays locked by its receiver
            throw new BrokerException(ErrorKind.INVALID_OPERATION, DEAD_LETTER_TWICE_TEXT);
        }
        unlock(e);
        moveToDeadLetter(e, reason, description, propertiesToModify);
    }

    /** Why a message of a dead-letter queue cannot be dead-lettered (the service's text is not known). */
    public static final String DEAD_LETTER_TWICE_TEXT = "The message is in a dead-letter queue already: it cannot be "
            + "dead-lettered again. Complete, abandon or defer it.";

    /** Renews a message lock; returns the new locked-until time. */
    public long renewLock(UUID lockToken, long nowMs) {
        Entry e = lockedEntry(lockToken, nowMs, true);
        if (e.session != null) {
            return e.session.lockedUntilMs;
        }
        e.lockedUntilMs = saturatedAdd(nowMs, settings.lockDurationMs());
        ctx().schedule(e, e.lockedUntilMs);
        return e.lockedUntilMs;
    }

    /** The locked-until time of a held lock, or fails as a lost lock. */
    public boolean holdsLock(UUID lockToken) {
        return locks.containsKey(lockToken);
    }

    /**
     * Fails exactly as a settlement with this lock token would fail now (lost or expired message lock, lost
     * session lock), changing nothing: lets a transaction commit check all its settlements before applying any.
     */
    public void requireLock(UUID lockToken, long nowMs) {
        Entry e = lockToken == null ? null : locks.get(lockToken);
        if (e == null) {
            throw new BrokerException(sessionful() ? ErrorKind.SESSION_LOCK_LOST : ErrorKind.MESSAGE_LOCK_LOST,
                    sessionful() ? SESSION_LOCK_LOST_TEXT : LOCK_LOST_TEXT);
        }
        if (e.session != null ? !e.session.lockedAt(nowMs) : e.lockedUntilMs <= nowMs) {
            throw new BrokerException(e.session != null ? ErrorKind.SESSION_LOCK_LOST : ErrorKind.MESSAGE_LOCK_LOST,
                    e.session != null ? SESSION_LOCK_LOST_TEXT : LOCK_LOST_TEXT);
        }
    }

    private void unlock(Entry e) {
        locks.remove(e.lockToken);
        if (e.isScheduled()) {
            ctx().cancel(e);
        }
        e.lockToken = null;
        e.lockedUntilMs = 0;
        e.status = e.status == Entry.DEFERRED_LOCKED ? Entry.DEFERRED : Entry.AVAILABLE;
    }

    /**
     * Returns an unlocked entry after a failed or released delivery: a failed one (abandon, lock expiry) is counted
     * and dead-lettered, expired or returned.
     *
     * @param count   whether the delivery counts as failed (abandon, lock expiry)
     * @param changed whether the message's properties were modified; with neither, nothing that is persisted
     *                changed (locks are not), so no record is written
     */
    private void fail(Entry e, long nowMs, boolean count, boolean changed) {
        boolean persist = count || changed;
        if (count) {
            e.deliveryCount++;
            if (e.deliveryCount >= settings.maxDeliveryCount()) {
                moveToDeadLetter(e, DeadLetterReasons.MAX_DELIVERY_COUNT_EXCEEDED,
                        DeadLetterReasons.maxDeliveryCountDescription(settings.maxDeliveryCount()), null);
                return;
            }
        }
        if (e.deferred()) {
            if (persist) {
                log().entryUpdated(e);
            }
            return;
        }
        if (kind == SubQueue.MAIN && e.expiresAtMs <= nowMs) {
            expire(e);
            return;
        }
        returnToReady(e);
        if (persist) {
            log().entryUpdated(e);
        }
        if (e.session != null) {
            if (e.session.holder != null) {
                pumpSession(e.session);
            } else {
                sessions.reindex(e.session);
                serveWaiters();
            }
        } else {
            pump();
        }
    }

    private void returnToReady(Entry e) {
        if (e.session != null) {
            e.session.ready.addReturned(e);
        } else {
            ready.addReturned(e);
        }
    }

    /** Applies properties-to-modify; returns whether the message changed. */
    private boolean modify(Entry e, Map<String, Object> propertiesToModify) {
        if (propertiesToModify != null && !propertiesToModify.isEmpty()) {
            bodies().modified(e, bodies().of(e).withApplicationProperties(propertiesToModify));
            return true;
        }
        return false;
    }

    void onLockTimer(Entry e, long nowMs) {
        if (!e.locked() || e.session != null) {
            return;
        }
        if (e.lockedUntilMs > nowMs) {
            ctx().schedule(e, e.lockedUntilMs);
            return;
        }
        onLockExpired(e);
    }

    private void onLockExpired(Entry e) {
        long nowMs = ctx().nowMs();
        UUID token = e.lockToken;
        unlock(e);
        partition.lockExpired();
        fail(e, nowMs, kind == SubQueue.MAIN, false);
        if (e.owner == this && e.status == Entry.AVAILABLE && e.session == null) {
            e.lapsedToken = token; // not taken again at once (no receiver waiting): the old lock stays renewable
            lapsed.put(token, e);
        }
    }

    /** The waiting message whose lapsed lock this token was, or null. */
    private Entry lapsedLock(UUID token) {
        Entry e = token == null ? null : lapsed.get(token);
        return e != null && e.owner == this && e.status == Entry.AVAILABLE && token.equals(e.lapsedToken) ? e : null;
    }

    /**
     * Takes a message back under a lock that ran out while nobody took the message (a late renew or settlement): it
     * leaves the ready queue, locked again with the same token for a full lock duration, and the failed delivery
     * its lapse counted is taken back, as if the lock had never run out. Null when the token is no such lock.
     */
    private Entry reclaimLapsedLock(UUID token, long nowMs) {
        Entry e = lapsedLock(token);
        if (e == null) {
            return null;
        }
        ready.remove(e);
        lockAs(e, token, nowMs);
        if (kind == SubQueue.MAIN && e.deliveryCount > 0) {
            e.deliveryCount--;
            log().entryUpdated(e);
        }
        return e;
    }

    private void forgetLapsedLock(Entry e) {
        if (e.lapsedToken != null) {
            lapsed.remove(e.lapsedToken);
            e.lapsedToken = null;
        }
    }

    void onTtlTimer(Entry e, long nowMs) {
        if (e.status == Entry.AVAILABLE && kind == SubQueue.MAIN && e.expiresAtMs <= nowMs) {
            expire(e);
        }
        // locked messages are checked when their lock ends; deferred messages never expire
    }

    private void expire(Entry e) {
        if (settings.deadLetterOnExpiry()) {
            moveToDeadLetter(e, DeadLetterReasons.TTL_EXPIRED, DeadLetterReasons.TTL_EXPIRED_DESCRIPTION, null);
        } else {
            remove(e);
        }
    }

    /** Moves an (unlocked) entry of this main queue to the dead-letter queue, keeping its sequence number. */
    void moveToDeadLetter(Entry e, String reason, String description, Map<String, Object> propertiesToModify) {
        detach(e);
        Map<String, Object> props = new LinkedHashMap<>();
        if (propertiesToModify != null) {
            props.putAll(propertiesToModify);
        }
        putIfNotNull(props, DeadLetterReasons.DEAD_LETTER_REASON, reason);
        putIfNotNull(props, DeadLetterReasons.DEAD_LETTER_DESCRIPTION, description);
        modify(e, props);
        e.status = Entry.AVAILABLE;
        e.expiresAtMs = Long.MAX_VALUE;
        if (forwardDeadLetteredMessagesTo != null) {
            // the dead-lettered message goes on to ForwardDeadLetteredMessagesTo: journal the transfer, then drop it
            partition.transferOut(this, bodies().of(e), e.seq, e.enqueuedTimeMs, true);
            drop(e);
            return;
        }
        deadLetter.insert(e, true);
        log().entryUpdated(e);
        deadLetter.pump();
    }

    private static void putIfNotNull(Map<String, Object> map, String key, String value) {
        if (value != null) {
            map.put(key, value);
        }
    }

    /** Takes an entry out of this sub-queue's structures without logging. */
    private void detach(Entry e) {
        forgetLapsedLock(e);
        bySeq.remove(e.seq);
        messageCount--;
        sizeBytes -= e.sizeBytes();
        if (e.lockToken != null) {
            locks.remove(e.lockToken);
            e.lockToken = null;
        }
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
    private void drop(Entry e) {
        e.status = Entry.REMOVED;
        log().entryRemoved(e);
        bodies().release(e);
        TopicBody body = e.body;
        if (body != null && --body.references == 0) {
            log().topicBodyRemoved(body);
            bodies().release(body);
        }
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }

    // ------------------------------------------------------------------------------------------------ deferred

    /**
     * Receives deferred messages by sequence number (locking them in peek-lock mode); a session's message only while
     * its session is locked, by {@code by} when it is given.
     */
    public List<ReceivedMessage> receiveDeferred(long[] sequenceNumbers, ReceiveMode mode, String sessionId,
                                                 ConsumerHandle by, long nowMs) {
        List<Entry> found = new ArrayList<>(sequenceNumbers.length);
        for (long seq : sequenceNumbers) {
            Entry e = bySeq.get(seq);
            if (e == null || e.status != Entry.DEFERRED
                    || (sessionId != null && (e.session == null || !sessionId.equals(e.session.id)))) {
                throw new BrokerException(ErrorKind.MESSAGE_NOT_FOUND, "Failed to lock one or more specified "
                        + "messages. Either the message is already locked or does not exist. Sequence number: "
                        + seq + ".");
            }
            if (e.session != null && (!e.session.lockedAt(nowMs) || !e.session.heldBy(by))) {
                throw new BrokerException(ErrorKind.SESSION_LOCK_LOST, SESSION_LOCK_LOST_TEXT);
            }
            if (!found.contains(e)) { // a repeated number must not lock (and leak a lock on) the entry twice
                found.add(e);
            }
        }
        List<Message> messages = new ArrayList<>(found.size());
        for (Entry e : found) {
            messages.add(bodies().of(e)); // all read before any is locked or removed
        }
        List<ReceivedMessage> out = new ArrayList<>(found.size());
        for (int i = 0; i < found.size(); i++) {
            Entry e = found.get(i);
            if (mode == ReceiveMode.PEEK_LOCK) {
                lock(e, nowMs);
                out.add(e.view(messages.get(i), partition.index));
            } else {
                out.add(e.view(messages.get(i), partition.index));
                remove(e);
            }
        }
        return out;
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

    /** Closes every consumer of this sub-queue (the entity is gone). */
    void closeConsumers(BrokerException error) {
        for (ConsumerSlot slot : new ArrayList<>(consumers)) {
            slot.closed = true;
            ConsumerHandle c = slot.consumer;
            ctx().afterSync(() -> c.closedByEngine(error));
        }
        consumers.clear();
        sessions.clearWaiters();
    }

    /**
     * This node stops serving the partition (cluster mode: it moved to another node, or this node lost it): every
     * consumer and every waiting session accept is told at once (not after a sync: the journal may be gone).
     */
    void stopServing(BrokerException error) {
        for (ConsumerSlot slot : new ArrayList<>(consumers)) {
            slot.closed = true;
            slot.consumer.closedByEngine(error);
        }
        consumers.clear();
        sessions.failWaiters(error);
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
    void forEachEntry(java.util.function.Consumer<Entry> action) {
        for (Entry e : bySeq.snapshot()) {
            action.accept(e);
        }
    }

    // ------------------------------------------------------------------------------------------------ sessions

    /** Locks a named session for a new consumer slot. */
    public ConsumerSlot acceptSession(String sessionId, ConsumerHandle consumer, long nowMs) {
        requireSessionful();
        SessionEntry s = sessions.forAccept(sessionId, nowMs);
        if (s.holder != null) {
            expireSessionLock(s); // held, but its lock ran out
        }
        ConsumerSlot slot = addConsumer(consumer);
        sessions.lock(s, slot, nowMs, settings.lockDurationMs());
        return slot;
    }

    /** Locks the oldest free session with messages for the waiter, or queues the waiter. */
    public void acceptNextSession(SessionWaiter waiter) {
        requireSessionful();
        sessions.addWaiter(waiter);
        serveWaiters();
    }

    private void serveWaiters() {
        SessionTable.Acceptance a;
        while ((a = sessions.nextAcceptance()) != null) {
            SessionWaiter w = a.waiter();
            ConsumerSlot slot = addConsumer(w.consumer());
            long lockedUntilMs = sessions.lock(a.session(), slot, ctx().nowMs(), settings.lockDurationMs());
            String id = a.session().id;
            ctx().afterSync(() -> w.onAccepted(slot, id, lockedUntilMs));
        }
    }

    /** Starts delivering to a session receiver (after its attach was answered). */
    public void pumpSessionOf(ConsumerSlot slot) {
        if (slot.session != null && slot.session.holder == slot) {
            pumpSession(slot.session);
        }
    }

    /** Renews a session lock held by anyone; returns the new locked-until time. */
    public long renewSessionLock(String sessionId, long nowMs, ConsumerHandle by) {
        requireSessionful();
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

    void onSessionLockTimer(SessionEntry s, long nowMs) {
        if (sessions.lockRanOut(s, nowMs)) {
            expireSessionLock(s);
        }
    }

    private void expireSessionLock(SessionEntry s) {
        ConsumerSlot slot = s.holder;
        releaseSession(s, true);
        if (slot != null && !slot.closed) {
            slot.closed = true;
            consumers.remove(slot);
            if (nextConsumer >= consumers.size()) {
                nextConsumer = 0;
            }
            ConsumerHandle consumer = slot.consumer;
            BrokerException error = new BrokerException(ErrorKind.SESSION_LOCK_LOST, SESSION_LOCK_LOST_TEXT);
            ctx().afterSync(() -> consumer.closedByEngine(error));
        }
    }

    /** Frees a session; its locked messages return, counting a failed delivery when the lock expired. */
    private void releaseSession(SessionEntry s, boolean lockExpired) {
        sessions.unlock(s);
        long nowMs = ctx().nowMs();
        List<Entry> held = new ArrayList<>();
        locks.forEach(e -> {
            if (e.session == s) {
                held.add(e);
            }
        });
        held.sort((a, b) -> Long.compare(a.seq, b.seq));
        for (Entry e : held) {
            unlock(e);
            fail(e, nowMs, lockExpired && kind == SubQueue.MAIN, false);
        }
        sessions.reindex(s);
        serveWaiters();
        sessions.dropIfEmpty(s);
    }

    private void requireSessionful() {
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
    void forEachSession(java.util.function.Consumer<SessionEntry> action) {
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
        return !consumers.isEmpty();
    }

    /** Number of messages currently locked (for tests and metrics). */
    public int lockedCount() {
        return locks.size();
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
