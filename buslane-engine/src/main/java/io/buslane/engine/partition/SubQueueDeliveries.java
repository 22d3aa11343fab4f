package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;

/**
 * The deliveries section of one {@link SubQueueState}: its consumers (receivers and session receivers), the
 * round-robin hand-out of ready messages to those with credit, and the session locks consumers take (accept named
 * or next, expiry, release). A delivery's message is handed over after the sync that made it durable. Confined to
 * the shard thread, as its sub-queue.
 */
public final class SubQueueDeliveries {

    private static final Logger LOG = LoggerFactory.getLogger(SubQueueState.class);

    /** How soon deliveries held back while the shard's lease was not confirmed are tried again. */
    static final long LEASE_RETRY_MS = 100;

    private final SubQueueState q;
    private final ArrayList<ConsumerSlot> consumers = new ArrayList<>();
    private int nextConsumer;
    /** Tries the deliveries again once the lease is confirmed (armed while they are held back). */
    private final EngineTimer leaseRetry = new EngineTimer() {
        @Override
        public void onTimer(long nowMs) {
            pump();
        }
    };

    SubQueueDeliveries(SubQueueState q) {
        this.q = q;
    }

    /** Why an accept-next is answered retriably when its granted session's lock ran out before it was answered. */
    static final String GRANT_LAPSED_TEXT = "The session granted to this accept was released before the accept could "
            + "be answered (the broker's storage was slow to confirm). Retry.";

    private PartitionContext ctx() {
        return q.partition.ctx;
    }

    /**
     * Whether deliveries may go on: not while the shard's lease may have passed to another node (cluster mode: its
     * renewals did not get through, or this process was paused), so that no message is delivered by two nodes, and
     * not while the shard holds the answers of a kept batch ({@link PartitionContext#answersHeld}); they are tried
     * again shortly (and at the next arrival, credit or settlement).
     */
    private boolean leaseHeld() {
        if (ctx().leaseHeld() && !ctx().answersHeld()) {
            return true;
        }
        if (!leaseRetry.isScheduled() && (!consumers.isEmpty() || q.sessions.hasWaiters())) {
            ctx().schedule(leaseRetry, ctx().nowMs() + LEASE_RETRY_MS);
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------------ delivery

    public void pump() {
        if (!leaseHeld()) {
            return;
        }
        if (q.sessionful()) {
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
        while (progress && n > 0 && !q.ready.isEmpty()) {
            progress = false;
            for (int i = 0; i < n && !q.ready.isEmpty(); i++) {
                ConsumerSlot slot = consumers.get(nextConsumer++ % n);
                if (nextConsumer >= n) {
                    nextConsumer = 0;
                }
                if (!slot.consumer.tryAcquireCredit()) {
                    continue;
                }
                Entry e = nextReady(q.ready, nowMs);
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

    void pumpSession(SessionEntry s) {
        ConsumerSlot slot = s.holder;
        if (slot == null || !leaseHeld()) {
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
            if (q.kind == SubQueue.MAIN && e.expiresAtMs <= nowMs) {
                q.settlements.expire(e);
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
            m = q.partition.ctx.bodies().of(e);
        } catch (RuntimeException failure) {
            q.settlements.returnToReady(e);
            slot.consumer.releaseCredit();
            LOG.error("Cannot deliver message {} of '{}': its body could not be read back; delivery of the queue "
                    + "stops at it until it can", e.seq, q.settings.entityPath(), failure);
            return false;
        }
        slot.consumer.taking(e.sizeBytes());
        ReceivedMessage view;
        if (slot.consumer.mode() == ReceiveMode.PEEK_LOCK) {
            q.settlements.lock(e, nowMs);
            view = e.view(m, q.partition.index);
        } else {
            view = e.view(m, q.partition.index);
            q.remove(e);
        }
        if (e.session != null && e.session.holder == null) {
            q.sessions.reindex(e.session);
        }
        ConsumerHandle consumer = slot.consumer;
        if (view.lockToken() == null) {
            ctx().afterSync(() -> consumer.deliver(view)); // received and deleted: its removal is durable now
        } else {
            ctx().afterSync(() -> handOverLocked(consumer, view, e));
        }
        return true;
    }

    /**
     * Hands a locked message to its consumer, unless its lock is not current any more (the hand-over ran late: the
     * lock ran out, or the message was settled or taken again meanwhile; the credit is returned), or the shard's
     * lease may have passed to another node since it was locked (the process was paused in between): then it is
     * held back, its lock let go without counting a delivery and the credit returned, and it is delivered once the
     * lease is confirmed.
     */
    private void handOverLocked(ConsumerHandle consumer, ReceivedMessage view, Entry e) {
        boolean current = e.owner == q && view.lockToken().equals(e.lockToken) && e.locked()
                && e.effectiveLockedUntilMs() > ctx().nowMs();
        if (!current) {
            // handed over late (its cycle's answers were held) and its lock is gone meanwhile: the message was
            // settled, or is available or delivered again; this receiver must not get it with a dead lock
            consumer.releaseCredit();
            return;
        }
        if (ctx().leaseHeld()) {
            consumer.deliver(view);
            return;
        }
        consumer.releaseCredit();
        try {
            q.settlements.release(e.lockToken, ctx().nowMs());
        } catch (BrokerException lost) {
            // its session's lock ran out meanwhile: the message is available again already
        }
        leaseHeld(); // arms the retry
    }

    // ------------------------------------------------------------------------------------------------ consumers

    public ConsumerSlot addConsumer(ConsumerHandle consumer) {
        ConsumerSlot slot = new ConsumerSlot(consumer, q);
        consumers.add(slot);
        return slot;
    }

    public void removeConsumer(ConsumerSlot slot) {
        if (slot.closed) {
            return;
        }
        slot.closed = true;
        forget(slot);
        SessionEntry s = slot.session;
        if (s != null && s.holder == slot) {
            releaseSession(s, false);
        }
    }

    private void forget(ConsumerSlot slot) {
        consumers.remove(slot);
        if (nextConsumer >= consumers.size()) {
            nextConsumer = 0;
        }
    }

    boolean hasConsumers() {
        return !consumers.isEmpty();
    }

    /** Closes every consumer of this sub-queue (the entity is gone). */
    void closeConsumers(BrokerException error) {
        for (ConsumerSlot slot : new ArrayList<>(consumers)) {
            slot.closed = true;
            ConsumerHandle c = slot.consumer;
            ctx().afterSync(() -> c.closedByEngine(error));
        }
        consumers.clear();
        q.sessions.clearWaiters();
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
        q.sessions.failWaiters(error);
    }

    // ------------------------------------------------------------------------------------------------ sessions

    public ConsumerSlot acceptSession(String sessionId, ConsumerHandle consumer, long nowMs) {
        q.requireSessionful();
        q.requireLease();
        SessionEntry s = q.sessions.forAccept(sessionId, nowMs);
        if (s.holder != null) {
            expireSessionLock(s); // held, but its lock ran out
        }
        ConsumerSlot slot = addConsumer(consumer);
        q.sessions.lock(s, slot, nowMs, q.settings.lockDurationMs());
        return slot;
    }

    public void acceptNextSession(SessionWaiter waiter) {
        q.requireSessionful();
        q.sessions.addWaiter(waiter);
        serveWaiters();
    }

    void serveWaiters() {
        if (!leaseHeld()) {
            return;
        }
        SessionTable.Acceptance a;
        while ((a = q.sessions.nextAcceptance()) != null) {
            SessionWaiter w = a.waiter();
            ConsumerSlot slot = addConsumer(w.consumer());
            long lockedUntilMs = q.sessions.lock(a.session(), slot, ctx().nowMs(), q.settings.lockDurationMs());
            String id = a.session().id;
            ctx().afterSync(() -> handOverSession(w, slot, id, lockedUntilMs));
        }
    }

    /**
     * Answers an accept-next waiter with the session it was granted, unless the shard's lease may have passed to
     * another node since (as {@link #handOverLocked} does for a message): then the session is let go again and the
     * accept fails retriably (SERVER_BUSY: the SDKs accept again), as a named accept on that lease would.
     */
    private void handOverSession(SessionWaiter w, ConsumerSlot slot, String id, long lockedUntilMs) {
        if (slot.session == null || slot.session.holder != slot || !slot.session.lockedAt(ctx().nowMs())) {
            // handed over late and the grant is gone meanwhile (its lock ran out, or it was released)
            if (!slot.closed) {
                removeConsumer(slot);
            }
            w.onGrantWithdrawn(new BrokerException(ErrorKind.SERVER_BUSY, GRANT_LAPSED_TEXT));
            return;
        }
        if (ctx().leaseHeld()) {
            w.onAccepted(slot, id, lockedUntilMs);
            return;
        }
        removeConsumer(slot); // the session is released, no delivery counted
        w.onGrantWithdrawn(new BrokerException(ErrorKind.SERVER_BUSY, SubQueueState.LEASE_NOT_HELD_TEXT));
    }

    public void pumpSessionOf(ConsumerSlot slot) {
        if (slot.session != null && slot.session.holder == slot) {
            pumpSession(slot.session);
        }
    }

    void onSessionLockTimer(SessionEntry s, long nowMs) {
        if (q.sessions.lockRanOut(s, nowMs)) {
            expireSessionLock(s);
        }
    }

    private void expireSessionLock(SessionEntry s) {
        ConsumerSlot slot = s.holder;
        releaseSession(s, true);
        if (slot != null && !slot.closed) {
            slot.closed = true;
            forget(slot);
            ConsumerHandle consumer = slot.consumer;
            BrokerException error = new BrokerException(ErrorKind.SESSION_LOCK_LOST,
                    SubQueueState.SESSION_LOCK_LOST_TEXT);
            ctx().afterSync(() -> consumer.closedByEngine(error));
        }
    }

    /** Frees a session; its locked messages return, counting a failed delivery when the lock expired. */
    private void releaseSession(SessionEntry s, boolean lockExpired) {
        q.sessions.unlock(s);
        long nowMs = ctx().nowMs();
        for (Entry e : q.settlements.lockedOf(s)) {
            q.settlements.unlock(e);
            q.settlements.fail(e, nowMs, lockExpired && q.kind == SubQueue.MAIN, false);
        }
        q.sessions.reindex(s);
        serveWaiters();
        q.sessions.dropIfEmpty(s);
    }
}
