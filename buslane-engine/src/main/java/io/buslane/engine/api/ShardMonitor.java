package io.buslane.engine.api;

import java.util.function.Consumer;

/**
 * What an engine's shards report about themselves, for metrics, health and tests: the heap they hold, the
 * commands waiting for them, the locks that expired, and the error that ended a shard's thread. Readable from any
 * thread; the figures are as of each shard's last duty cycle (exact in manual threading mode).
 */
public interface ShardMonitor {

    /**
     * Encoded bytes of the message bodies all shards hold in the heap; each keeps its share under the engine's
     * resident budget per shard once its records are durable.
     */
    long residentMessageBytes();

    /**
     * Bytes of session state the shards hold in the heap; each keeps its share under the engine's session-state
     * budget per shard once the states are durable, and reads the others back.
     */
    long residentSessionStateBytes();

    /** Message bodies read back from the journals so far. */
    long messageBodyReads();

    /** Commands waiting in all shard queues (a back-pressure signal). */
    int queuedCommands();

    /** Message locks that expired before settlement, on every shard since start. */
    long lockExpiries();

    /**
     * Calls {@code listener} (on the failing shard's thread) if an error ends a shard's thread: the engine cannot
     * serve that shard's entities any more, and the process should report itself unhealthy and stop.
     */
    void onFatal(Consumer<Throwable> listener);

    /** The first error that ended a shard's thread, or null while every shard runs. */
    Throwable fatalError();
}
