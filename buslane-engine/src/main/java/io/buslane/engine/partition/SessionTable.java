package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The session state machine of one sub-queue: the sessions it knows (those with messages, state or a lock),
 * which are available and which are locked by which receiver, session locks and their expiry, the receivers
 * waiting for the next available session, and each session's state bytes and last-updated time.
 *
 * <p>Available sessions (no holder, at least one ready message) are offered in the order of their oldest ready
 * message's sequence number. The messages themselves (delivery, message locks, settlement) are
 * {@link SubQueueState}'s; when a session is released, the sub-queue returns its locked messages. Confined to its
 * shard thread; takes {@code nowMs} from its caller and reports state records through the context's
 * {@link PartitionLog}.
 */
public final class SessionTable {

    static final String SESSION_LOCK_LOST_TEXT =
            "The session lock has expired on the MessageSession. Accept a new MessageSession.";

    /** A waiter that claimed an available session: the sub-queue registers its receiver and locks the session. */
    record Acceptance(SessionWaiter waiter, SessionEntry session) {
    }

    /** The sub-queue whose sessions these are (each session's lock timer calls back into it). */
    private final SubQueueState owner;
    private final PartitionContext ctx;
    private final HashMap<String, SessionEntry> sessions = new HashMap<>();
    /** The same sessions in id order: listing them pages from an id without sorting them all (issue #23). */
    private final TreeMap<String, SessionEntry> byId = new TreeMap<>();
    /** Available sessions by the sequence number of their oldest ready message. */
    private final TreeMap<Long, SessionEntry> available = new TreeMap<>();
    private final ArrayDeque<SessionWaiter> waiters = new ArrayDeque<>();
    /** Bytes of the sessions' states (counted in the sub-queue's size). */
    private long stateBytes;

    SessionTable(SubQueueState owner, PartitionContext ctx) {
        this.owner = owner;
        this.ctx = ctx;
    }

    // ------------------------------------------------------------------------------------------------ sessions

    /** The known session with this id, or null. */
    SessionEntry get(String sessionId) {
        return sessions.get(sessionId);
    }

    /** The session with this id, created (unlocked, empty) if unknown. */
    SessionEntry getOrCreate(String sessionId) {
        SessionEntry s = sessions.get(sessionId);
        if (s == null) {
            s = new SessionEntry(sessionId, owner);
            sessions.put(sessionId, s);
            byId.put(sessionId, s);
        }
        return s;
    }

    /** Records activity on the session at {@code atMs} (its last-updated time never goes back). */
    void touch(SessionEntry s, long atMs) {
        s.lastUpdatedMs = Math.max(s.lastUpdatedMs, atMs);
    }

    /**
     * A message of the session arrived (or, with {@code fresh} false, was restored in place): counted, and
     * unless deferred it is ready and may make the session available.
     */
    void added(SessionEntry s, Entry e, boolean fresh) {
        s.messageCount++;
        if (!e.deferred()) {
            if (fresh) {
                s.ready.addNew(e);
            } else {
                s.ready.addReturned(e);
            }
            if (s.holder == null) {
                reindex(s);
            }
        }
    }

    /** A message of the session left the sub-queue; a session with nothing left is forgotten. */
    void removed(SessionEntry s, Entry e) {
        s.ready.remove(e);
        s.messageCount--;
        if (s.holder == null) {
            reindex(s);
        }
        dropIfEmpty(s);
    }

    /** Puts the session where it belongs in the index of available sessions (or takes it out). */
    void reindex(SessionEntry s) {
        if (s.indexedSeq != null) {
            SessionEntry current = available.get(s.indexedSeq);
            if (current == s) {
                available.remove(s.indexedSeq);
            }
            s.indexedSeq = null;
        }
        if (s.holder == null) {
            Entry head = s.ready.peek();
            if (head != null) {
                Long key = head.seq; // one box shared by the index and the session
                available.put(key, s);
                s.indexedSeq = key;
            }
        }
    }

    /** The available session whose oldest ready message is the oldest, or null. */
    SessionEntry firstAvailable() {
        while (!available.isEmpty()) {
            Map.Entry<Long, SessionEntry> first = available.firstEntry();
            SessionEntry s = first.getValue();
            if (s.holder == null && !s.ready.isEmpty() && s.ready.peek() != null) {
                return s;
            }
            available.pollFirstEntry();
            s.indexedSeq = null;
            if (s.holder == null) {
                reindex(s);
            }
        }
        return null;
    }

    /** Forgets a session with no messages, no state and no holder. */
    void dropIfEmpty(SessionEntry s) {
        if (s.messageCount == 0 && !s.hasState() && s.holder == null) {
            if (s.indexedSeq != null) {
                available.remove(s.indexedSeq);
                s.indexedSeq = null;
            }
            sessions.remove(s.id);
            byId.remove(s.id);
        }
    }

    /** Every known session (a copy: the action may change the table). */
    void forEach(Consumer<SessionEntry> action) {
        for (SessionEntry s : new ArrayList<>(sessions.values())) {
            action.accept(s);
        }
    }

    /** Number of known sessions (with messages, state or a lock). */
    int size() {
        return sessions.size();
    }

    // ------------------------------------------------------------------------------------------------ locks

    /**
     * The session to accept by name, created if unknown; fails if another receiver holds an unexpired lock on it.
     * The caller expires a lock that is still held but has run out before locking it again.
     */
    SessionEntry forAccept(String sessionId, long nowMs) {
        SessionEntry s = getOrCreate(sessionId);
        if (s.holder != null && s.lockedAt(nowMs)) {
            dropIfEmpty(s);
            throw new BrokerException(ErrorKind.SESSION_CANNOT_BE_LOCKED, "The requested session '"
                    + sessionId + "' cannot be accepted. It may be locked by another receiver.");
        }
        return s;
    }

    /** Locks the session for the receiver's slot until {@code nowMs + durationMs}; returns that time. */
    long lock(SessionEntry s, ConsumerSlot slot, long nowMs, long durationMs) {
        s.holder = slot;
        slot.session = s;
        s.lockedUntilMs = saturatedAdd(nowMs, durationMs);
        ctx.schedule(s, s.lockedUntilMs);
        reindex(s);
        return s.lockedUntilMs;
    }

    /** Renews a session lock held by anyone; returns the new locked-until time, or fails as lost. */
    long renew(String sessionId, long nowMs, long durationMs, ConsumerHandle by) {
        SessionEntry s = held(sessionId, nowMs, by);
        s.lockedUntilMs = saturatedAdd(nowMs, durationMs);
        ctx.schedule(s, s.lockedUntilMs);
        return s.lockedUntilMs;
    }

    /**
     * Renews a session's lock for its sub-queue's lock duration; returns the new locked-until time, or fails as lost
     * (or as not sessionful, or while the shard's lease may have passed to another node), changing nothing then.
     *
     * @param by the receiver that must hold the lock, or null when any holder will do
     */
    public long renewLock(String sessionId, long nowMs, ConsumerHandle by) {
        owner.requireSessionful();
        owner.requireLease();
        return renew(sessionId, nowMs, owner.settings.lockDurationMs(), by);
    }

    /**
     * The locked-until time of a session lock, or fails as lost.
     *
     * @param by the receiver that must hold the lock, or null when any holder will do
     */
    public long lockedUntil(String sessionId, long nowMs, ConsumerHandle by) {
        return held(sessionId, nowMs, by).lockedUntilMs;
    }

    /**
     * The session, when it is locked at {@code nowMs} and, if {@code by} is given, locked by that receiver (the
     * link a request names as its {@code associated-link-name}); otherwise its lock is lost for the caller.
     */
    private SessionEntry held(String sessionId, long nowMs, ConsumerHandle by) {
        SessionEntry s = sessions.get(sessionId);
        if (s == null || !s.lockedAt(nowMs) || !s.heldBy(by)) {
            throw new BrokerException(ErrorKind.SESSION_LOCK_LOST, SESSION_LOCK_LOST_TEXT);
        }
        return s;
    }

    /** Whether the session is locked at {@code nowMs}. */
    public boolean lockedAt(String sessionId, long nowMs) {
        SessionEntry s = sessions.get(sessionId);
        return s != null && s.lockedAt(nowMs);
    }

    /**
     * The session's lock timer fired: true when its lock has run out (the caller releases it); false when it is
     * not held any more, or was renewed (the timer is armed again for the new time).
     */
    boolean lockRanOut(SessionEntry s, long nowMs) {
        if (s.holder == null) {
            return false;
        }
        if (s.lockedUntilMs > nowMs) {
            ctx.schedule(s, s.lockedUntilMs);
            return false;
        }
        return true;
    }

    /**
     * Takes the session's lock away from its holder (its timer cancelled). The caller then returns the session's
     * locked messages, {@link #reindex reindexes} it, serves waiters and {@link #dropIfEmpty drops} it if empty.
     */
    void unlock(SessionEntry s) {
        if (s.isScheduled()) {
            ctx.cancel(s);
        }
        if (s.holder != null) {
            s.holder.session = null;
        }
        s.holder = null;
        s.lockedUntilMs = 0;
    }

    // ------------------------------------------------------------------------------------------------ waiters

    /** Whether a receiver waits for the next available session. */
    boolean hasWaiters() {
        return !waiters.isEmpty();
    }

    /** Queues a receiver waiting for the next available session. */
    void addWaiter(SessionWaiter waiter) {
        waiters.addLast(waiter);
    }

    /**
     * The first waiter still unclaimed paired with the first available session, the waiter claimed and taken off
     * the queue; null when no waiter or no session is left. The caller locks the session for the waiter.
     */
    Acceptance nextAcceptance() {
        while (!waiters.isEmpty()) {
            SessionWaiter w = waiters.peekFirst();
            if (w.isClaimed()) {
                waiters.pollFirst();
                continue;
            }
            SessionEntry s = firstAvailable();
            if (s == null) {
                return null;
            }
            waiters.pollFirst();
            if (!w.tryClaim()) {
                continue;
            }
            return new Acceptance(w, s);
        }
        return null;
    }

    /** Drops every waiting receiver (the sub-queue's consumers are closed). */
    void clearWaiters() {
        waiters.clear();
    }

    /** Fails every waiting accept (this node stops serving the partition). */
    void failWaiters(BrokerException error) {
        for (SessionWaiter w : new ArrayList<>(waiters)) {
            w.onFailed(error);
        }
        waiters.clear();
    }

    // ------------------------------------------------------------------------------------------------ state

    /** The session's state, or null (read back from the journal when it was evicted). */
    public byte[] state(String sessionId) {
        SessionEntry s = sessions.get(sessionId);
        return s == null || !s.hasState() ? null : ctx.sessionStates().get(s);
    }

    /**
     * Sets (or, with null, clears) the session's state, journaling the change. The caller has checked that the
     * sub-queue is sessionful ({@link SubQueueState#requireSessionful}).
     */
    public void setState(String sessionId, byte[] state, long nowMs) {
        SessionEntry s = getOrCreate(sessionId);
        if (s.hasState()) {
            stateBytes -= s.stateLength;
            ctx.sessionStates().forget(s);
        }
        s.lastUpdatedMs = nowMs;
        s.stateUpdatedMs = nowMs;
        if (state == null) {
            if (s.hasState()) {
                s.state = null;
                s.stateLength = -1;
                ctx.log().sessionStateCleared(s);
                s.stateRecordId = 0;
            }
            dropIfEmpty(s);
            return;
        }
        s.state = state;
        s.stateLength = state.length;
        stateBytes += state.length;
        ctx.log().sessionStateWritten(s);
        ctx.sessionStates().admit(s);
    }

    /** Restores a session's state from its record (replay). */
    public void restoreState(String sessionId, byte[] state, long recordId, long lastUpdatedMs) {
        SessionEntry s = getOrCreate(sessionId);
        if (s.hasState()) {
            stateBytes -= s.stateLength;
            ctx.sessionStates().forget(s);
        }
        s.state = state;
        s.stateLength = state.length;
        s.stateRecordId = recordId;
        s.lastUpdatedMs = Math.max(s.lastUpdatedMs, lastUpdatedMs);
        s.stateUpdatedMs = lastUpdatedMs; // the record is written when the state is, with that time
        stateBytes += state.length;
        ctx.sessionStates().admitDurable(s); // replay holds none: each is read back from its record when needed
    }

    /** Forgets a session's state whose DELETE record was replayed. */
    public void clearStateForReplay(String sessionId) {
        SessionEntry s = sessions.get(sessionId);
        if (s != null && s.hasState()) {
            stateBytes -= s.stateLength;
            ctx.sessionStates().forget(s);
            s.state = null;
            s.stateLength = -1;
            s.stateRecordId = 0;
            dropIfEmpty(s);
        }
    }

    /** Bytes held by the sessions' states. */
    long stateBytes() {
        return stateBytes;
    }

    /**
     * Ids of sessions in id order, at most {@code limit}, after {@code afterId} (null: from the first): with
     * {@code stateUpdatedSinceMs} {@link Long#MIN_VALUE}, every session with messages or state (the service's
     * answer to {@code DateTime.MaxValue}); otherwise the sessions whose state was written at or after that time
     * (message arrivals do not count), as the service lists them. Walks the id index from {@code afterId}: a page
     * costs its own size, not the number of sessions.
     */
    public List<String> ids(long stateUpdatedSinceMs, String afterId, int limit) {
        List<String> ids = new ArrayList<>(Math.min(limit, 1024));
        boolean all = stateUpdatedSinceMs == Long.MIN_VALUE;
        Collection<SessionEntry> from = afterId == null ? byId.values()
                : byId.tailMap(afterId, false).values();
        for (SessionEntry s : from) {
            if (ids.size() >= limit) {
                break;
            }
            if (all ? s.messageCount > 0 || s.hasState()
                    : s.hasState() && s.stateUpdatedMs >= stateUpdatedSinceMs) {
                ids.add(s.id);
            }
        }
        return ids;
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
