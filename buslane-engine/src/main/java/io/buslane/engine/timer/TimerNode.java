package io.buslane.engine.timer;

/**
 * A timer that a {@link TimerWheel} can hold. Confined to the thread that owns the wheel.
 *
 * <p>The node is intrusive: it carries its own deadline and list links, so scheduling allocates nothing. Callers
 * subclass it (a scheduled message entry, a message lock, a session lock extends {@code TimerNode}) and get the
 * subclass instance back in the handler passed to {@link TimerWheel#advance(long, java.util.function.Consumer)}.
 *
 * <p>A node belongs to at most one wheel at a time. While it is scheduled, only that wheel may schedule or cancel
 * it.
 */
public abstract class TimerNode {

    /** The deadline the node was last scheduled for, in milliseconds on the wheel's time line. */
    long deadlineMs;

    /** Links in the owning bucket's doubly-linked list; {@code null} at the ends and when not scheduled. */
    TimerNode prev;
    TimerNode next;

    /** The bucket holding the node, or {@code null} when the node is not scheduled. */
    TimerWheel.Bucket bucket;

    protected TimerNode() {
    }

    /**
     * The deadline this node was last scheduled for, in milliseconds. Still readable after the node fired or was
     * cancelled (it is then the deadline it had); {@code 0} if it was never scheduled.
     */
    public final long deadlineMs() {
        return deadlineMs;
    }

    /** Whether the node is currently held by a wheel (scheduled, not yet fired, not cancelled). */
    public final boolean isScheduled() {
        return bucket != null;
    }
}
