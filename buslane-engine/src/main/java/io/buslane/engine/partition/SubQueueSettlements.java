package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The settlements section of one {@link SubQueueState}: its message locks (taken when a message is delivered in
 * peek-lock mode or received by sequence number, renewed, lost when they run out), and what a settlement, a lapsed
 * lock or a passed time-to-live does to a message (complete, abandon, release, defer, dead-letter, expire). Every
 * settlement checks its lock before it changes anything: a refused settlement leaves the message as it was.
 * Confined to the shard thread, as its sub-queue.
 */
public final class SubQueueSettlements {

    private final SubQueueState q;
    private final LockTable locks = new LockTable();
    /**
     * Message locks that ran out while their messages wait, untaken, to be delivered again: the service still renews
     * such a lock (a late renew succeeds as long as no other receiver has taken the message; a late settlement does
     * not), so the token stays renewable until the message is locked again or leaves the sub-queue.
     */
    private final HashMap<UUID, Entry> lapsed = new HashMap<>();

    SubQueueSettlements(SubQueueState q) {
        this.q = q;
    }

    private PartitionContext ctx() {
        return q.partition.ctx;
    }

    private PartitionLog log() {
        return q.partition.ctx.log();
    }

    private MessageBodies bodies() {
        return q.partition.ctx.bodies();
    }

    private boolean main() {
        return q.kind == SubQueue.MAIN;
    }

    // ------------------------------------------------------------------------------------------------ locks

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
            throw lost();
        }
        if (e.session != null) {
            if (!e.session.lockedAt(nowMs)) {
                throw new BrokerException(ErrorKind.SESSION_LOCK_LOST, SubQueueState.SESSION_LOCK_LOST_TEXT);
            }
        } else if (e.lockedUntilMs <= nowMs) {
            onLockExpired(e); // its timer has not fired yet: the lock runs out now, then is reclaimed if untaken
            Entry reclaimed = mayReclaim ? reclaimLapsedLock(lockToken, nowMs) : null;
            if (reclaimed == null) {
                throw new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, SubQueueState.LOCK_LOST_TEXT);
            }
            return reclaimed;
        }
        return e;
    }

    private Entry lockedEntry(UUID lockToken, long nowMs) {
        return lockedEntry(lockToken, nowMs, false);
    }

    /** A lost lock: of the session on a sessionful queue, of the message otherwise. */
    private BrokerException lost() {
        return q.sessionful()
                ? new BrokerException(ErrorKind.SESSION_LOCK_LOST, SubQueueState.SESSION_LOCK_LOST_TEXT)
                : new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, SubQueueState.LOCK_LOST_TEXT);
    }

    void lock(Entry e, long nowMs) {
        lockAs(e, ctx().newLockToken(q.partition.index), nowMs);
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
            e.lockedUntilMs = saturatedAdd(nowMs, q.settings.lockDurationMs());
            ctx().schedule(e, e.lockedUntilMs);
        }
    }

    public long renewLock(UUID lockToken, long nowMs) {
        q.requireLease();
        Entry e = lockedEntry(lockToken, nowMs, true);
        if (e.session != null) {
            return e.session.lockedUntilMs;
        }
        e.lockedUntilMs = saturatedAdd(nowMs, q.settings.lockDurationMs());
        ctx().schedule(e, e.lockedUntilMs);
        return e.lockedUntilMs;
    }

    public boolean holdsLock(UUID lockToken) {
        return locks.containsKey(lockToken);
    }

    public void requireLock(UUID lockToken, long nowMs) {
        Entry e = lockToken == null ? null : locks.get(lockToken);
        if (e == null) {
            throw lost();
        }
        if (e.session != null ? !e.session.lockedAt(nowMs) : e.lockedUntilMs <= nowMs) {
            throw e.session != null
                    ? new BrokerException(ErrorKind.SESSION_LOCK_LOST, SubQueueState.SESSION_LOCK_LOST_TEXT)
                    : new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, SubQueueState.LOCK_LOST_TEXT);
        }
    }

    int lockedCount() {
        return locks.size();
    }

    /** The entries locked under a session's lock, in sequence order. */
    List<Entry> lockedOf(SessionEntry s) {
        List<Entry> held = new ArrayList<>();
        locks.forEach(e -> {
            if (e.session == s) {
                held.add(e);
            }
        });
        held.sort((a, b) -> Long.compare(a.seq, b.seq));
        return held;
    }

    void unlock(Entry e) {
        locks.remove(e.lockToken);
        if (e.isScheduled()) {
            ctx().cancel(e);
        }
        e.lockToken = null;
        e.lockedUntilMs = 0;
        e.status = e.status == Entry.DEFERRED_LOCKED ? Entry.DEFERRED : Entry.AVAILABLE;
    }

    /** Forgets an entry's lock, held or lapsed, as the entry leaves the sub-queue (nothing logged). */
    void forget(Entry e) {
        forgetLapsedLock(e);
        if (e.lockToken != null) {
            locks.remove(e.lockToken);
            e.lockToken = null;
        }
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
        q.partition.lockExpired();
        fail(e, nowMs, main(), false);
        if (e.owner == q && e.status == Entry.AVAILABLE && e.session == null) {
            e.lapsedToken = token; // not taken again at once (no receiver waiting): the old lock stays renewable
            lapsed.put(token, e);
        }
    }

    /** The waiting message whose lapsed lock this token was, or null. */
    private Entry lapsedLock(UUID token) {
        Entry e = token == null ? null : lapsed.get(token);
        return e != null && e.owner == q && e.status == Entry.AVAILABLE && token.equals(e.lapsedToken) ? e : null;
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
        q.ready.remove(e);
        lockAs(e, token, nowMs);
        if (main() && e.deliveryCount > 0) {
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

    // ------------------------------------------------------------------------------------------------ settlement

    public void complete(UUID lockToken, long nowMs) {
        Entry e = lockedEntry(lockToken, nowMs);
        unlock(e);
        q.remove(e);
    }

    public void abandon(UUID lockToken, Map<String, Object> propertiesToModify, long nowMs) {
        Entry e = lockedEntry(lockToken, nowMs);
        unlock(e);
        boolean modified = modify(e, propertiesToModify);
        fail(e, nowMs, main(), modified);
    }

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

    public void deadLetter(UUID lockToken, String reason, String description, Map<String, Object> propertiesToModify,
                    long nowMs) {
        Entry e = lockedEntry(lockToken, nowMs);
        if (!main()) {
            // the service refuses it (amqp:not-allowed; the JavaScript SDK's tests expect the refusal), and the
            // message stays locked by its receiver
            throw new BrokerException(ErrorKind.INVALID_OPERATION, SubQueueState.DEAD_LETTER_TWICE_TEXT);
        }
        unlock(e);
        moveToDeadLetter(e, reason, description, propertiesToModify);
    }

    /**
     * Returns an unlocked entry after a failed or released delivery: a failed one (abandon, lock expiry) is counted
     * and dead-lettered, expired or returned.
     *
     * @param count   whether the delivery counts as failed (abandon, lock expiry)
     * @param changed whether the message's properties were modified; with neither, nothing that is persisted
     *                changed (locks are not), so no record is written
     */
    void fail(Entry e, long nowMs, boolean count, boolean changed) {
        boolean persist = count || changed;
        if (count) {
            e.deliveryCount++;
            if (e.deliveryCount >= q.settings.maxDeliveryCount()) {
                moveToDeadLetter(e, DeadLetterReasons.MAX_DELIVERY_COUNT_EXCEEDED,
                        DeadLetterReasons.maxDeliveryCountDescription(q.settings.maxDeliveryCount()), null);
                return;
            }
        }
        if (e.deferred()) {
            if (persist) {
                log().entryUpdated(e);
            }
            return;
        }
        if (main() && e.expiresAtMs <= nowMs) {
            expire(e);
            return;
        }
        returnToReady(e);
        if (persist) {
            log().entryUpdated(e);
        }
        if (e.session != null) {
            if (e.session.holder != null) {
                q.deliveries.pumpSession(e.session);
            } else {
                q.sessions.reindex(e.session);
                q.deliveries.serveWaiters();
            }
        } else {
            q.deliveries.pump();
        }
    }

    void returnToReady(Entry e) {
        if (e.session != null) {
            e.session.ready.addReturned(e);
        } else {
            q.ready.addReturned(e);
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

    void onTtlTimer(Entry e, long nowMs) {
        if (e.status == Entry.AVAILABLE && main() && e.expiresAtMs <= nowMs) {
            expire(e);
        }
        // locked messages are checked when their lock ends; deferred messages never expire
    }

    void expire(Entry e) {
        if (q.settings.deadLetterOnExpiry()) {
            moveToDeadLetter(e, DeadLetterReasons.TTL_EXPIRED, DeadLetterReasons.TTL_EXPIRED_DESCRIPTION, null);
        } else {
            q.remove(e);
        }
    }

    /** Moves an (unlocked) entry of this main queue to the dead-letter queue, keeping its sequence number. */
    void moveToDeadLetter(Entry e, String reason, String description, Map<String, Object> propertiesToModify) {
        q.detach(e);
        Map<String, Object> props = new LinkedHashMap<>();
        if (propertiesToModify != null) {
            props.putAll(propertiesToModify);
        }
        putIfNotNull(props, DeadLetterReasons.DEAD_LETTER_REASON, reason);
        putIfNotNull(props, DeadLetterReasons.DEAD_LETTER_DESCRIPTION, description);
        modify(e, props);
        e.status = Entry.AVAILABLE;
        e.expiresAtMs = Long.MAX_VALUE;
        if (q.forwardDeadLetteredMessagesTo != null) {
            // the dead-lettered message goes on to ForwardDeadLetteredMessagesTo: journal the transfer, then drop it
            q.partition.transferOut(q, bodies().of(e), e.seq, e.enqueuedTimeMs, true);
            q.drop(e);
            return;
        }
        q.deadLetter.insert(e, true);
        log().entryUpdated(e);
        q.deadLetter.deliveries.pump();
    }

    private static void putIfNotNull(Map<String, Object> map, String key, String value) {
        if (value != null) {
            map.put(key, value);
        }
    }

    // ------------------------------------------------------------------------------------------------ deferred

    public List<ReceivedMessage> receiveDeferred(long[] sequenceNumbers, ReceiveMode mode, String sessionId,
                                          ConsumerHandle by, long nowMs) {
        q.requireLease();
        List<Entry> found = new ArrayList<>(sequenceNumbers.length);
        for (long seq : sequenceNumbers) {
            Entry e = q.entry(seq);
            if (e == null || e.status != Entry.DEFERRED
                    || (sessionId != null && (e.session == null || !sessionId.equals(e.session.id)))) {
                throw new BrokerException(ErrorKind.MESSAGE_NOT_FOUND, "Failed to lock one or more specified "
                        + "messages. Either the message is already locked or does not exist. Sequence number: "
                        + seq + ".");
            }
            if (e.session != null && (!e.session.lockedAt(nowMs) || !e.session.heldBy(by))) {
                throw new BrokerException(ErrorKind.SESSION_LOCK_LOST, SubQueueState.SESSION_LOCK_LOST_TEXT);
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
                out.add(e.view(messages.get(i), q.partition.index));
            } else {
                out.add(e.view(messages.get(i), q.partition.index));
                q.remove(e);
            }
        }
        return out;
    }

    static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
