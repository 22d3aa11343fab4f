package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;

/**
 * A pending "accept the next available session" request, registered with every partition of an entity; the
 * first partition with a free session claims it. Thread-safe (claimed with a compare-and-set).
 */
public interface SessionWaiter {

    /** The receiver that will hold the session. */
    ConsumerHandle consumer();

    /** Claims the waiter; true for exactly one caller (a partition with a session, or the timeout). */
    boolean tryClaim();

    /** True once claimed (by anyone); such waiters are dropped from queues. */
    boolean isClaimed();

    /** Called on the shard thread, after durability, when a partition locked a session for this waiter. */
    void onAccepted(ConsumerSlot slot, String sessionId, long lockedUntilMs);

    /**
     * Called on the shard thread when a partition it waits on stops being served by this node (cluster mode); the
     * waiter should fail (if it can still be claimed) rather than wait for a timer that may never fire.
     */
    default void onFailed(BrokerException error) {
    }

    /**
     * Called on the shard thread instead of {@link #onAccepted} when the session the partition granted this (claimed)
     * waiter had to be let go again before the answer (the shard's lease may have passed to another node): the
     * waiter fails with {@code error} (retriable).
     */
    default void onGrantWithdrawn(BrokerException error) {
    }
}
