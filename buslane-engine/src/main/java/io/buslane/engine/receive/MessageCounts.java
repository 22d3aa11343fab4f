package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.remote.PartitionOp;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Message counts of an entity, and bulk deletion (purge, delete-messages) of a sub-queue's messages. */
public final class MessageCounts {

    private final Namespace namespace;
    private final Clock clock;
    private final PartitionDirectory directory;

    public MessageCounts(Namespace namespace, PartitionDirectory directory, Clock clock) {
        this.namespace = namespace;
        this.directory = directory;
        this.clock = clock;
    }

    /**
     * Deletes up to {@code max} unlocked messages enqueued before {@code beforeMs}, only those of one session when
     * {@code sessionId} is not null; completes with how many.
     */
    public CompletableFuture<Integer> deleteMessages(EntityAddress address, int max, long beforeMs,
                                                     String sessionId) {
        try {
            Source source = Source.of(namespace, address, clock.epochMillis());
            CompletableFuture<Integer> chain = CompletableFuture.completedFuture(0);
            for (PartitionRef ref : source.partitions()) {
                chain = chain.thenCompose(done -> done >= max ? CompletableFuture.completedFuture(done)
                        : onSubQueue(ref, address, new PartitionOp.DeleteMessages(address.toString(),
                                ref.partition().index(), beforeMs, max - done, sessionId)).thenApply(n -> done + n));
            }
            return chain;
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Deletes every message of the addressed sub-queue; completes with how many. */
    public CompletableFuture<Integer> purge(EntityAddress address) {
        try {
            Source source = Source.of(namespace, address, clock.epochMillis());
            PartitionRef[] refs = source.partitions();
            return directory.onAll(refs, i -> new PartitionOp.Purge(address.toString(), i),
                            p -> new PartitionOp.Purge(address.toString(), p.index()).apply(
                                    Source.subQueue(refs[p.index()], address), p.ctxNowMs(), null))
                    .thenApply(list -> list.stream().mapToInt(Integer::intValue).sum());
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Message counts of a queue, a subscription, or a topic (scheduled messages only). */
    public CompletableFuture<RuntimeCounts> counts(String entityPath) {
        EntityAddress address = EntityAddress.parse(entityPath);
        try {
            if (address == null) {
                throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required.");
            }
            if (address.subscription() != null) {
                TopicEntity t = namespace.topic(address.entityPath());
                if (t == null || t.subscription(address.subscription()) == null) {
                    throw BrokerException.entityNotFound(address.entityName());
                }
                return sum(directory.onAll(t.partitions(), i -> countsOp(address, i),
                        p -> countsOp(address, p.index()).apply(p)));
            }
            QueueEntity q = namespace.queue(address.entityPath());
            if (q != null) {
                return sum(directory.onAll(q.partitions(), i -> countsOp(address, i),
                        p -> countsOp(address, p.index()).apply(p)));
            }
            TopicEntity t = namespace.topic(address.entityPath());
            if (t != null) {
                return sum(directory.onAll(t.partitions(), i -> countsOp(address, i),
                        p -> countsOp(address, p.index()).apply(p)));
            }
            throw BrokerException.entityNotFound(address.entityPath());
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static PartitionOp.Counts countsOp(EntityAddress address, int partition) {
        return new PartitionOp.Counts(address.toString(), partition);
    }

    private <T> CompletableFuture<T> onSubQueue(PartitionRef ref, EntityAddress address,
                                                PartitionOp.OnSubQueue<T> op) {
        return directory.call(ref, () -> op, () -> op.apply(Source.subQueue(ref, address), ref.shard().nowMs(),
                null));
    }

    private static CompletableFuture<RuntimeCounts> sum(CompletableFuture<List<RuntimeCounts>> parts) {
        return parts.thenApply(list -> {
            RuntimeCounts sum = RuntimeCounts.ZERO;
            for (RuntimeCounts c : list) {
                sum = sum.plus(c);
            }
            return sum;
        });
    }
}
