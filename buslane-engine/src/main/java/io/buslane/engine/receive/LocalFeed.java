package io.buslane.engine.receive;

import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.partition.ConsumerSlot;
import io.buslane.engine.shard.Shard;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A receiver's messages from a partition this node serves: its consumer slot on the partition's sub-queue (set on
 * the shard thread once the receiver is attached there), pumped on the shard. At most one pump is queued at a time.
 */
final class LocalFeed implements PartitionFeed {

    private final Receiver receiver;
    private final PartitionRef ref;
    private final AtomicBoolean kickScheduled = new AtomicBoolean();
    private volatile ConsumerSlot slot;

    LocalFeed(Receiver receiver, PartitionRef ref) {
        this.receiver = receiver;
        this.ref = ref;
    }

    /** The receiver's slot on the partition (on its shard thread). */
    void attached(ConsumerSlot consumerSlot) {
        this.slot = consumerSlot;
    }

    @Override
    public void kick(boolean polls) {
        if (kickScheduled.compareAndSet(false, true)) {
            ref.shard().submit(() -> {
                kickScheduled.set(false);
                pump();
            });
        }
    }

    private void pump() {
        ConsumerSlot s = slot;
        if (s == null || receiver.isClosed()) {
            return;
        }
        if (receiver.sessionId() != null) {
            s.queue().deliveries().pumpSessionOf(s);
        } else {
            s.queue().deliveries().pump();
        }
    }

    @Override
    public void drain(Runnable answered) {
        ref.shard().submit(new Shard.Refusable() {
            @Override
            public void run() {
                pump();
                ref.shard().afterSync(answered);
            }

            @Override
            public void refused() {
                answered.run(); // cluster mode: a partition this node does not serve has nothing to deliver
            }
        });
    }

    @Override
    public boolean endDrain() {
        return false;
    }

    @Override
    public void preempt() {
        // nothing held: a local partition takes its credit one message at a time
    }

    @Override
    public void close() {
        ref.shard().submit(() -> {
            ConsumerSlot s = slot;
            if (s != null) {
                s.queue().deliveries().removeConsumer(s); // nothing for the slot the engine closed already
            }
        });
    }

    @Override
    public UUID holder() {
        return null;
    }
}
