package io.buslane.engine.partition;

/**
 * A receiver's registration in one sub-queue of one partition (for a session receiver, with its session).
 * Confined to its shard thread.
 */
public final class ConsumerSlot {
    final ConsumerHandle consumer;
    final SubQueueState queue;
    SessionEntry session;
    boolean closed;

    ConsumerSlot(ConsumerHandle consumer, SubQueueState queue) {
        this.consumer = consumer;
        this.queue = queue;
    }

    public ConsumerHandle consumer() {
        return consumer;
    }

    public SubQueueState queue() {
        return queue;
    }
}
