package io.buslane.engine.partition;

/**
 * Moves a partition's pending transfers to their destination entity (implemented by the engine, which knows the
 * namespace). Called on the source's shard thread once the transfer's record is durable; the engine later calls
 * {@link Partition#transferDone} or {@link Partition#transferFailed} on that same shard.
 */
public interface Forwarder {

    void forward(Transfer transfer);
}
