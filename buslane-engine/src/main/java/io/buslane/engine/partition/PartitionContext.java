package io.buslane.engine.partition;

import java.util.UUID;

/**
 * What a partition's logic may use of its shard: the cycle's time, the log of records, deferred completion,
 * timers and lock tokens. Implemented by the shard; confined to its thread.
 */
public interface PartitionContext {

    /** The time of the current duty cycle (read once per cycle from the injected clock). */
    long nowMs();

    /** Where the partition's state changes are recorded. */
    PartitionLog log();

    /** The shard's resident messages: every read of a message goes through it (it may have to load it). */
    MessageBodies bodies();

    /** Runs {@code action} on the shard thread once every record logged so far in this cycle is durable. */
    void afterSync(Runnable action);

    void schedule(EngineTimer timer, long deadlineMs);

    void cancel(EngineTimer timer);

    /** Asks for a checkpoint of the partition's counters at the end of the cycle. */
    void markDirty(Partition partition);

    /** A new random lock token that carries the partition index in its lowest 16 bits. */
    UUID newLockToken(int partitionIndex);

    /** A message lock expired before settlement (counted for metrics; shards survive entity deletion). */
    default void onLockExpired() {
    }

    /**
     * Whether the shard may still act on what it holds only in memory: deliver a message, grant or renew a lock,
     * accept a session (the journal's {@code leaseHeld}: always, except in cluster mode once the shard's lease may
     * have passed to another node). Cheap: asked before each delivery and again when it is handed over.
     */
    default boolean leaseHeld() {
        return true;
    }

    /**
     * Whether the shard holds answers for a batch the journal kept after a failed sync (they run once a later sync
     * stores it): hand-outs wait meanwhile, since a delivery made now would be handed over only then, its lock
     * perhaps run out and its message taken by another receiver.
     */
    default boolean answersHeld() {
        return false;
    }

    /** The heap budget of each duplicate-detection window of a partition (see {@code DedupWindow}), in bytes. */
    long dedupHeapBudgetBytes();

    /** The shard's resident session states; by default a store that keeps every state. */
    default ResidentSessionStates sessionStates() {
        return UNLIMITED_STATES;
    }

    /** The default store of {@link #sessionStates()} (shared: it never reads anything back). */
    ResidentSessionStates UNLIMITED_STATES = ResidentSessionStates.unlimited();
}
