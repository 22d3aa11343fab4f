package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.partition.SequenceCounter;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.remote.PartitionOp;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Browsing (peek): messages in sequence order, neither locked nor counted as delivered. */
public final class Browser {

    private final Namespace namespace;
    private final PartitionDirectory directory;
    private final Clock clock;

    public Browser(Namespace namespace, PartitionDirectory directory, Clock clock) {
        this.namespace = namespace;
        this.directory = directory;
        this.clock = clock;
    }

    /**
     * Browses messages from a sequence number, in sequence order, without locking them or counting a delivery;
     * includes deferred and (for a queue) scheduled messages. On a topic address, browses its scheduled messages.
     */
    public CompletableFuture<List<ReceivedMessage>> peek(EntityAddress address, long fromSeq, int max,
                                                         String sessionId) {
        try {
            if (max <= 0) {
                return CompletableFuture.completedFuture(List.of());
            }
            if (address != null && address.subscription() == null && address.subQueue() == SubQueue.MAIN
                    && namespace.queue(address.entityPath()) == null && namespace.topic(address.entityPath()) != null) {
                TopicEntity t = namespace.topic(address.entityPath());
                return peekChain(t.partitions(), t.properties().enablePartitioning(), fromSeq, max,
                        (ref, from, count) -> {
                            PartitionOp.PeekScheduled op = new PartitionOp.PeekScheduled(address.toString(),
                                    ref.partition().index(), from, count);
                            return directory.call(ref, () -> op, () -> op.apply(ref.partition()));
                        });
            }
            Source source = Source.of(namespace, address, clock.epochMillis());
            PartitionRef[] refs = source.partitions();
            if (sessionId != null) {
                PartitionRef ref = directory.forSession(refs, sessionId);
                return peekOn(ref, address, fromSeq, max, sessionId);
            }
            return peekChain(refs, source.partitioned(), fromSeq, max,
                    (ref, from, count) -> peekOn(ref, address, from, count, null));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private interface PeekStep {
        CompletableFuture<List<ReceivedMessage>> peek(PartitionRef ref, long fromSeq, int max);
    }

    private CompletableFuture<List<ReceivedMessage>> peekOn(PartitionRef ref, EntityAddress address, long from,
                                                            int max, String sessionId) {
        PartitionOp.Peek op = new PartitionOp.Peek(address.toString(), ref.partition().index(), from, max, sessionId);
        return directory.call(ref, () -> op, () -> op.apply(Source.subQueue(ref, address), ref.shard().nowMs(),
                null));
    }

    /** Browses partition after partition in sequence-number order (the partition id is the top 16 bits). */
    private static CompletableFuture<List<ReceivedMessage>> peekChain(PartitionRef[] refs, boolean partitioned,
                                                                      long fromSeq, int max, PeekStep step) {
        if (!partitioned) {
            PartitionRef ref = refs[0];
            return step.peek(ref, fromSeq, max);
        }
        int startPartition = fromSeq < 0 ? 0 : SequenceCounter.partitionOf(fromSeq);
        List<ReceivedMessage> out = new ArrayList<>();
        CompletableFuture<List<ReceivedMessage>> chain = CompletableFuture.completedFuture(out);
        for (int p = startPartition; p < refs.length; p++) {
            PartitionRef ref = refs[p];
            long from = p == startPartition ? fromSeq : ((long) p) << 48;
            chain = chain.thenCompose(acc -> {
                if (acc.size() >= max) {
                    return CompletableFuture.completedFuture(acc);
                }
                return step.peek(ref, from, max - acc.size()).thenApply(more -> {
                    acc.addAll(more);
                    return acc;
                });
            });
        }
        return chain;
    }
}
