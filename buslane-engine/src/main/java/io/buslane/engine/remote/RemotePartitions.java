package io.buslane.engine.remote;

import java.util.concurrent.CompletableFuture;

/**
 * The engine's port to the other nodes of a cluster: runs an operation on a partition whose shard this node does not
 * serve, on the node that serves it, and completes as the local call would (with the owner's result, or failed with
 * a {@link io.buslane.common.error.BrokerException} of the owner's kind and text). Set on the engine by whoever
 * wires the cluster; absent outside cluster mode, where such a partition refuses with SERVER_BUSY as before.
 * Implementations must never hang: an operation without an answer in time fails with SERVER_BUSY.
 */
public interface RemotePartitions {

    /** Runs {@code op} on the node serving shard {@code shard}. */
    <R> CompletableFuture<R> call(int shard, PartitionOp<R> op);

    /**
     * Runs {@code action} once, after {@code delayMs}, on the channel's own timer (the retries and deadlines of
     * receivers fed from other nodes; the engine keeps no timer thread of its own outside its shards).
     */
    void schedule(Runnable action, long delayMs);

    /** The owning node's entry point for operations other nodes carried here ({@code Engine.cluster().ownerSide()}). */
    interface Owner {
        /**
         * Runs an operation on the partition it names, with the same engine code as a local call; refuses with
         * SERVER_BUSY when this node does not serve the partition's shard (never carried on to a third node).
         */
        <R> CompletableFuture<R> run(PartitionOp<R> op);
    }
}
