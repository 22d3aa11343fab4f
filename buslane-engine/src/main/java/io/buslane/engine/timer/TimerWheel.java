package io.buslane.engine.timer;

import java.util.Arrays;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * Confined to its owner thread. A hierarchical timing wheel (Kafka's design) holding {@link TimerNode}s, used by
 * a shard for scheduled-message activation, message-lock and session-lock expiry and time-to-live.
 *
 * <h2>Design</h2>
 * Level {@code L} is a wheel of {@code wheelSize} buckets, each spanning {@code tickMs * wheelSize^L}
 * milliseconds; level {@code L + 1} (an overflow wheel, created lazily) covers what no longer fits in level
 * {@code L}. A node goes into the finest level whose window, starting at the current time truncated to that
 * level's bucket span, still contains its deadline. Buckets are intrusive doubly-linked lists, so scheduling and
 * cancelling are O(1) (plus a walk over the handful of levels) and allocate nothing per node.
 *
 * <p>Non-empty buckets sit in a {@link PriorityQueue} keyed by the start of their time range; the queue holds
 * buckets, never nodes, so its size is bounded by the number of buckets. {@link #advance} pops the buckets whose
 * start has passed, in order; each node of a popped bucket is re-inserted relative to the new time, which moves it
 * to a finer level (a cascade) or, once it is within the current tick, to the <em>current-tick list</em>, from
 * which it fires as soon as its exact deadline is {@code <= nowMs}. Nothing is ever fired early, and a node is
 * cascaded at most once per level, so the cost of an advance is proportional to the buckets popped and the nodes
 * they hold, never to the number of ticks elapsed nor to the number of nodes that are not due.
 *
 * <p><b>Cascading ahead of time.</b> A coarse bucket can hold a great many nodes (a level-2 bucket of a 1 ms, 64-slot
 * wheel spans 4 s: 68,000 nodes at 17,000 scheduled messages a second), and re-inserting them all in the advance
 * that pops it would hold the owner thread for tens of milliseconds. So once the earliest queued bucket of a level
 * {@code >= 1} is within {@code 1/16} of its span of starting, each advance walks at most
 * {@value #PRECASCADE_BUDGET} of its nodes and moves those that already fit a finer level there (a move is always
 * correct: {@code place} is relative to the current time); {@link #nextExpirationMs} asks for advances until the
 * walk is done. The pop then only cascades what did not fit yet (a sixteenth of the span at most, less as the walk
 * runs later) and what was added after the walk.
 *
 * <h2>Time</h2>
 * The wheel never reads a clock: every time is an argument, in milliseconds on one arbitrary but non-negative time
 * line (normally the epoch). The wheel's {@linkplain #currentTimeMs() current time} is the largest {@code nowMs}
 * passed to {@link #advance} (or {@code startMs}); an earlier {@code nowMs} is treated as the current time, so time
 * never goes backwards. Deadlines may be anywhere in {@code long}: a deadline at or before the current time fires
 * on the next advance; levels are added (lazily) until the top one's buckets together cover every non-negative
 * {@code long}, so even a deadline millennia away has an exact bucket and nothing overflows; a deadline of
 * {@link Long#MAX_VALUE} means "never" and such a node never fires (it is still
 * {@linkplain TimerNode#isScheduled() scheduled}, counted by {@link #size()} and can be cancelled or
 * rescheduled).
 *
 * <h2>Firing order</h2>
 * Within one {@link #advance} call, nodes that were overdue when scheduled fire first, in the order they were
 * scheduled; the others fire tick by tick in deadline-tick order ({@code deadlineMs / tickMs}), in no particular
 * order within a tick. The handler may schedule and cancel nodes, including the one it is given; a node it
 * schedules for a time at or before {@code nowMs} fires on the next advance (so a handler that keeps rescheduling
 * a node into the past cannot make an advance loop forever), and one it schedules later fires when due.
 */
public final class TimerWheel {

    /** Nodes one advance examines in the walk of the next coarse bucket (see "Cascading ahead of time"). */
    static final int PRECASCADE_BUDGET = 1024;

    private final long tickMs;
    private final int wheelSize;
    /** Number of levels: up to the first whose buckets together cover every non-negative {@code long}. */
    private final int maxLevels;
    /** Per level: the time range of one bucket, {@code tickMs * wheelSize^level}. */
    private final long[] spanMs;
    /** Per level: the time range of the whole wheel, {@code spanMs[level] * wheelSize} (unbounded for the top). */
    private final long[] intervalMs;
    /**
     * Per level: where the level's wheel window starts for the current tick ({@code currentTickStartMs} rounded down
     * to the level's span), valid while the level's {@link #levelStartTickMs} is the current tick: computed once per
     * tick and level instead of with a division per level on every schedule.
     */
    private final long[] levelStartMs;
    private final long[] levelStartTickMs;
    /** Per level, created lazily; the buckets in a level are created lazily too. */
    private final Bucket[][] wheels;
    private int levelsCreated;

    /** Non-empty wheel buckets (and possibly some emptied by cancellation), keyed by {@link Bucket#expirationMs}. */
    private final PriorityQueue<Bucket> queue = new PriorityQueue<>(
            (a, b) -> Long.compare(a.expirationMs, b.expirationMs));

    /** Nodes scheduled for a deadline at or before the current time; they fire first on the next advance. */
    private Bucket overdue;
    /** Nodes whose deadline is after the current time but within the current tick. */
    private Bucket current;
    /** An always-empty list swapped with {@link #overdue} or {@link #current} while they are being fired. */
    private Bucket spare;
    /** Nodes with a deadline of {@link Long#MAX_VALUE}: they never fire. */
    private final Bucket never;

    /** The start of the tick the wheel is in (a multiple of {@code tickMs}, at most {@link #clockMs}). */
    private long currentTickStartMs;
    /** The largest time seen: {@code startMs} or an advance's {@code nowMs}. */
    private long clockMs;
    private int size;
    private boolean advancing;
    private long bucketsPopped;
    /** Nodes the last advance moved out of a coarse bucket (at its pop or ahead of it); for tests. */
    private int lastAdvanceCascaded;

    /**
     * @param tickMs    the span of a bucket in the finest wheel, in milliseconds ({@code >= 1}); it only sets the
     *                  granularity of the bucketing and the firing order, never the firing precision
     * @param wheelSize the number of buckets per wheel ({@code >= 2})
     * @param startMs   the initial current time ({@code >= 0})
     */
    public TimerWheel(long tickMs, int wheelSize, long startMs) {
        if (tickMs < 1) {
            throw new IllegalArgumentException("tickMs must be >= 1: " + tickMs);
        }
        if (wheelSize < 2) {
            throw new IllegalArgumentException("wheelSize must be >= 2: " + wheelSize);
        }
        if (startMs < 0) {
            throw new IllegalArgumentException("startMs must be >= 0: " + startMs);
        }
        this.tickMs = tickMs;
        this.wheelSize = wheelSize;
        long[] spans = new long[64];
        long[] intervals = new long[64];
        int levels = 0;
        long span = tickMs;
        while (true) {
            spans[levels] = span;
            if (span > Long.MAX_VALUE / wheelSize) {
                // The top level: its buckets together cover every non-negative long.
                intervals[levels++] = Long.MAX_VALUE;
                break;
            }
            intervals[levels++] = span * wheelSize;
            span *= wheelSize;
        }
        this.maxLevels = levels;
        this.spanMs = Arrays.copyOf(spans, levels);
        this.intervalMs = Arrays.copyOf(intervals, levels);
        this.levelStartMs = new long[levels];
        this.levelStartTickMs = new long[levels];
        Arrays.fill(levelStartTickMs, Long.MIN_VALUE);
        this.wheels = new Bucket[levels][];
        this.overdue = new Bucket(this, -1);
        this.current = new Bucket(this, -1);
        this.spare = new Bucket(this, -1);
        this.never = new Bucket(this, -1);
        this.clockMs = startMs;
        this.currentTickStartMs = startMs - startMs % tickMs;
    }

    /**
     * Schedules (or reschedules, if already scheduled) the node at {@code deadlineMs}. A deadline at or before the
     * {@linkplain #currentTimeMs() current time} fires on the next advance; {@link Long#MAX_VALUE} never fires.
     * O(1) amortised (a walk over at most {@link #maxLevels()} levels).
     *
     * @throws IllegalStateException if the node is scheduled on another wheel
     */
    public void schedule(TimerNode node, long deadlineMs) {
        Objects.requireNonNull(node, "node");
        Bucket bucket = node.bucket;
        if (bucket != null) {
            checkOwned(bucket);
            if (node.deadlineMs == deadlineMs) {
                return; // already where it belongs
            }
            bucket.remove(node);
        } else {
            size++;
        }
        node.deadlineMs = deadlineMs;
        if (deadlineMs == Long.MAX_VALUE) {
            never.addLast(node);
        } else if (deadlineMs <= clockMs) {
            overdue.addLast(node);
        } else {
            place(node, deadlineMs);
        }
    }

    /**
     * Removes the node if it is scheduled on this wheel; O(1).
     *
     * @return whether it was scheduled
     * @throws IllegalStateException if the node is scheduled on another wheel
     */
    public boolean cancel(TimerNode node) {
        Bucket bucket = node.bucket;
        if (bucket == null) {
            return false;
        }
        checkOwned(bucket);
        bucket.remove(node);
        size--;
        return true;
    }

    /**
     * Fires every node with a deadline {@code <= nowMs}, passing each to {@code handler} after unscheduling it.
     * Nodes in different ticks fire tick by tick in order (see the class comment for the exact order). The handler
     * may schedule or cancel nodes; it must not call {@code advance}. If the handler throws, the exception
     * propagates and the nodes not yet fired stay scheduled.
     *
     * @param nowMs the current time; a value below {@link #currentTimeMs()} is treated as that
     * @return the number of nodes fired
     * @throws IllegalStateException if called from the handler
     */
    public int advance(long nowMs, Consumer<? super TimerNode> handler) {
        Objects.requireNonNull(handler, "handler");
        if (advancing) {
            throw new IllegalStateException("advance is not reentrant");
        }
        advancing = true;
        lastAdvanceCascaded = 0;
        try {
            if (nowMs > clockMs) {
                clockMs = nowMs;
            }
            long now = clockMs;
            int fired = 0;
            if (!overdue.isEmpty()) {
                Bucket list = overdue;
                overdue = spare;
                spare = list;
                fired += fire(list, now, handler);
            }
            while (true) {
                if (current.minDeadlineMs <= now) {
                    Bucket list = current;
                    current = spare;
                    spare = list;
                    fired += fire(list, now, handler);
                }
                Bucket bucket = queue.peek();
                if (bucket == null || bucket.expirationMs > now) {
                    break;
                }
                queue.poll();
                bucket.queued = false;
                bucketsPopped++;
                if (bucket.expirationMs > currentTickStartMs) {
                    currentTickStartMs = bucket.expirationMs;
                }
                // Cascade: every node moves to a finer level or to the current-tick list, never back here.
                TimerNode node;
                while ((node = bucket.pollFirst()) != null) {
                    place(node, node.deadlineMs);
                    if (bucket.level > 0) {
                        lastAdvanceCascaded++;
                    }
                }
            }
            // Every bucket starting at or before now has been popped, so the window can move up to now's tick.
            long nowTickStartMs = now - now % tickMs;
            if (nowTickStartMs > currentTickStartMs) {
                currentTickStartMs = nowTickStartMs;
            }
            precascade(now);
            return fired;
        } finally {
            advancing = false;
        }
    }

    /**
     * The earliest time at which {@link #advance} may have work, or {@link Long#MAX_VALUE} when nothing can ever
     * fire. Never later than the earliest deadline (so a shard parking until then never fires late); it may be
     * earlier (the start of a bucket that only holds later deadlines, or one to cascade) and it may be in the past
     * (a node is overdue). O(1) amortised.
     */
    public long nextExpirationMs() {
        Bucket head;
        while ((head = queue.peek()) != null && head.isEmpty()) {
            queue.poll(); // emptied by cancellation: nothing to do there
            head.queued = false;
        }
        long nextMs = Math.min(overdue.minDeadlineMs, current.minDeadlineMs);
        if (head != null && head.expirationMs < nextMs) {
            nextMs = head.expirationMs;
        }
        if (head != null && walkPending(head)) {
            nextMs = Math.min(nextMs, head.expirationMs - precascadeLeadMs(head.level));
        }
        return nextMs;
    }

    /** The number of scheduled nodes, including those that never fire. */
    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** The wheel's current time: the largest {@code nowMs} passed to {@link #advance}, or {@code startMs}. */
    public long currentTimeMs() {
        return clockMs;
    }

    public long tickMs() {
        return tickMs;
    }

    public int wheelSize() {
        return wheelSize;
    }

    /** The most levels this wheel can have: enough for the top one to cover every non-negative {@code long}. */
    public int maxLevels() {
        return maxLevels;
    }

    /** The number of levels created so far (overflow wheels are created on first use). */
    public int levelsCreated() {
        return levelsCreated;
    }

    /** The number of buckets popped from the queue since creation; for tests and metrics. */
    long bucketsPopped() {
        return bucketsPopped;
    }

    /** Whether an advance at {@code nowMs} has a walk to do ahead of a coarse bucket's start; for tests. */
    boolean walkDue(long nowMs) {
        Bucket head = queue.peek();
        return head != null && walkPending(head) && head.expirationMs - nowMs <= precascadeLeadMs(head.level);
    }

    /** Nodes the last {@link #advance} moved out of coarse buckets, at their pop or ahead of it; for tests. */
    int lastAdvanceCascaded() {
        return lastAdvanceCascaded;
    }

    /** The number of buckets in the queue; for tests. */
    int queuedBuckets() {
        return queue.size();
    }

    @Override
    public String toString() {
        return "TimerWheel[tickMs=" + tickMs + ", wheelSize=" + wheelSize + ", levels=" + levelsCreated
                + ", size=" + size + ", currentTimeMs=" + clockMs + "]";
    }

    /**
     * Fires the due nodes of {@code list} (detached from the wheel's fields, so nodes the handler schedules do not
     * go into it) and returns the others to the current-tick list.
     */
    private int fire(Bucket list, long now, Consumer<? super TimerNode> handler) {
        int fired = 0;
        try {
            TimerNode node;
            while ((node = list.pollFirst()) != null) {
                if (node.deadlineMs <= now) {
                    size--;
                    fired++;
                    handler.accept(node);
                } else {
                    current.addLast(node);
                }
            }
        } finally {
            // Only if the handler threw: keep the nodes not visited yet.
            TimerNode node;
            while ((node = list.pollFirst()) != null) {
                (node.deadlineMs <= clockMs ? overdue : current).addLast(node);
            }
        }
        return fired;
    }

    /** Puts a node with {@code currentTickStartMs <= deadlineMs < Long.MAX_VALUE} where it belongs. */
    private void place(TimerNode node, long deadlineMs) {
        int level = levelFor(deadlineMs);
        if (level < 0) {
            current.addLast(node);
            return;
        }
        long span = spanMs[level];
        // In the top level, deadlineMs / span < wheelSize for every long, so slots never wrap there.
        long virtualId = deadlineMs / span;
        Bucket bucket = bucket(level, (int) (virtualId % wheelSize));
        long bucketStartMs = virtualId * span;
        if (!bucket.queued) {
            bucket.expirationMs = bucketStartMs;
            bucket.queued = true;
            bucket.walking = false; // a new rotation of this slot: not walked yet
            bucket.cursor = null;
            queue.offer(bucket);
        } else {
            assert bucket.expirationMs == bucketStartMs
                    : "bucket holds two rotations: " + bucket.expirationMs + " vs " + bucketStartMs;
        }
        bucket.addLast(node);
    }

    /**
     * The level whose window, from the current tick on, holds {@code deadlineMs} (the finest that does), or -1 for
     * the current-tick list.
     */
    private int levelFor(long deadlineMs) {
        long tickStartMs = currentTickStartMs;
        if (deadlineMs - tickStartMs < tickMs) {
            return -1;
        }
        for (int level = 0; ; level++) {
            if (levelStartTickMs[level] != tickStartMs) {
                levelStartMs[level] = tickStartMs - tickStartMs % spanMs[level];
                levelStartTickMs[level] = tickStartMs;
            }
            if (level < maxLevels - 1 && deadlineMs - levelStartMs[level] >= intervalMs[level]) {
                continue;
            }
            return level;
        }
    }

    /** How long before a level's bucket starts its walk begins: a sixteenth of its span (at least a tick). */
    private long precascadeLeadMs(int level) {
        return Math.max(tickMs, spanMs[level] / 16);
    }

    /** Whether {@code bucket} is a coarse bucket whose walk has not finished. */
    private static boolean walkPending(Bucket bucket) {
        return bucket.level >= 1 && !bucket.isEmpty() && (!bucket.walking || bucket.cursor != null);
    }

    /**
     * Walks up to {@link #PRECASCADE_BUDGET} nodes of the earliest queued bucket when it is coarse and about to start,
     * moving the nodes that already fit a finer level (see the class comment).
     */
    private void precascade(long now) {
        int budget = PRECASCADE_BUDGET;
        while (budget > 0) {
            // the moves may have queued an earlier bucket that needs a walk of its own: same budget
            Bucket head;
            while ((head = queue.peek()) != null && head.isEmpty()) {
                queue.poll(); // emptied by cancellation or by the walk
                head.queued = false;
            }
            if (head == null || !walkPending(head) || head.expirationMs - now > precascadeLeadMs(head.level)) {
                return;
            }
            if (!head.walking) {
                head.walking = true;
                head.cursor = head.head;
            }
            TimerNode node = head.cursor;
            for (; node != null && budget > 0; budget--) {
                TimerNode next = node.next;
                if (levelFor(node.deadlineMs) < head.level) {
                    head.remove(node);
                    place(node, node.deadlineMs);
                    lastAdvanceCascaded++;
                }
                node = next;
            }
            head.cursor = node;
        }
    }

    private Bucket bucket(int level, int slot) {
        Bucket[] wheel = wheels[level];
        if (wheel == null) {
            wheel = new Bucket[wheelSize];
            wheels[level] = wheel;
            levelsCreated = Math.max(levelsCreated, level + 1);
        }
        Bucket bucket = wheel[slot];
        if (bucket == null) {
            bucket = new Bucket(this, level);
            wheel[slot] = bucket;
        }
        return bucket;
    }

    private void checkOwned(Bucket bucket) {
        if (bucket.wheel != this) {
            throw new IllegalStateException("node is scheduled on another wheel");
        }
    }

    /** An intrusive doubly-linked list of nodes. */
    static final class Bucket {
        final TimerWheel wheel;
        /** The wheel level, or -1 for the wheel's special lists. */
        final int level;
        TimerNode head;
        TimerNode tail;
        /** While queued: the start of the bucket's time range. */
        long expirationMs;
        boolean queued;
        /** A lower bound of the deadlines held, {@link Long#MAX_VALUE} when empty; exact after additions only. */
        long minDeadlineMs = Long.MAX_VALUE;
        /** The walk ahead of this rotation's start has begun ({@link #precascade}). */
        boolean walking;
        /** While walking: the next node to examine, or null when the walk reached the end. */
        TimerNode cursor;

        Bucket(TimerWheel wheel, int level) {
            this.wheel = wheel;
            this.level = level;
        }

        boolean isEmpty() {
            return head == null;
        }

        void addLast(TimerNode node) {
            node.bucket = this;
            node.prev = tail;
            node.next = null;
            if (tail == null) {
                head = node;
            } else {
                tail.next = node;
            }
            tail = node;
            if (node.deadlineMs < minDeadlineMs) {
                minDeadlineMs = node.deadlineMs;
            }
        }

        void remove(TimerNode node) {
            TimerNode prev = node.prev;
            TimerNode next = node.next;
            if (cursor == node) {
                cursor = next;
            }
            if (prev == null) {
                head = next;
            } else {
                prev.next = next;
            }
            if (next == null) {
                tail = prev;
            } else {
                next.prev = prev;
            }
            node.prev = null;
            node.next = null;
            node.bucket = null;
            if (head == null) {
                minDeadlineMs = Long.MAX_VALUE;
            }
        }

        TimerNode pollFirst() {
            TimerNode node = head;
            if (node != null) {
                remove(node);
            }
            return node;
        }
    }
}
