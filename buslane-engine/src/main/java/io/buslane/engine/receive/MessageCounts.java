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
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.SubQueueState;
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

    /** Deletes up to {@code max} unlocked messages enqueued before {@code beforeMs}; completes with how many. */
    public CompletableFuture<Integer> deleteMessages(EntityAddress address, int max, long beforeMs) {
        return deleteMessages(address, max, beforeMs, null);
    }

    /** As {@link #deleteMessages(EntityAddress, int, long)}, only of one session when {@code sessionId} is set. */
    public CompletableFuture<Integer> deleteMessages(EntityAddress address, int max, long beforeMs,
                                                     String sessionId) {
        try {
            Source source = Source.of(namespace, address, clock.epochMillis());
            CompletableFuture<Integer> chain = CompletableFuture.completedFuture(0);
            for (PartitionRef ref : source.partitions()) {
                chain = chain.thenCompose(done -> done >= max ? CompletableFuture.completedFuture(done)
                        : directory.call(ref, () -> PartitionOp.of(PartitionOp.Kind.DELETE_MESSAGES,
                                address.toString(), ref.partition().index()).withSequences(new long[] {beforeMs},
                                max - done).withSession(sessionId, null, null), () -> Source.subQueue(ref, address)
                                .deleteMessages(max - done, beforeMs, sessionId)).thenApply(n -> done + n));
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
            return directory.onAll(source.partitions(), i -> PartitionOp.of(PartitionOp.Kind.PURGE,
                            address.toString(), i), p -> Source.subQueue(source.partitions()[p.index()], address)
                            .purge())
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
                        p -> p.subscriptionCounts(address.subscription())));
            }
            QueueEntity q = namespace.queue(address.entityPath());
            if (q != null) {
                return sum(directory.onAll(q.partitions(), i -> countsOp(address, i), Partition::counts));
            }
            TopicEntity t = namespace.topic(address.entityPath());
            if (t != null) {
                return sum(directory.onAll(t.partitions(), i -> countsOp(address, i), Partition::counts));
            }
            throw BrokerException.entityNotFound(address.entityPath());
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static PartitionOp countsOp(EntityAddress address, int partition) {
        return PartitionOp.of(PartitionOp.Kind.COUNTS, address.toString(), partition);
    }

    /**
     * The owner's side of COUNTS another node carried here: one partition's counts with the same engine code;
     * refused with SERVER_BUSY (never carried on) when this node does not serve it.
     */
    public CompletableFuture<Object> runHere(PartitionOp op) {
        if (op.kind() == PartitionOp.Kind.PURGE || op.kind() == PartitionOp.Kind.DELETE_MESSAGES) {
            return deleteHere(op);
        }
        try {
            EntityAddress address = EntityAddress.parse(op.path());
            if (address == null) {
                throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required.");
            }
            PartitionRef[] refs;
            QueueEntity q = address.subscription() == null ? namespace.queue(address.entityPath()) : null;
            TopicEntity t = namespace.topic(address.entityPath());
            if (q != null) {
                refs = q.partitions();
            } else if (t != null
                    && (address.subscription() == null || t.subscription(address.subscription()) != null)) {
                refs = t.partitions();
            } else {
                throw BrokerException.entityNotFound(address.entityName());
            }
            if (op.partition() < 0 || op.partition() >= refs.length) {
                throw new BrokerException(ErrorKind.ARGUMENT, "No partition " + op.partition() + " in '" + address
                        + "'.");
            }
            PartitionRef ref = refs[op.partition()];
            return ref.shard().call(() -> address.subscription() == null ? ref.partition().counts()
                    : ref.partition().subscriptionCounts(address.subscription()));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The owner's side of PURGE and DELETE_MESSAGES another node carried here. */
    private CompletableFuture<Object> deleteHere(PartitionOp op) {
        try {
            EntityAddress address = EntityAddress.parse(op.path());
            Source source = Source.of(namespace, address, clock.epochMillis());
            PartitionRef ref = Source.partition(source, op.partition());
            return ref.shard().call(() -> {
                SubQueueState q = Source.subQueue(ref, address);
                return op.kind() == PartitionOp.Kind.PURGE ? q.purge()
                        : q.deleteMessages(op.max(), op.sequences()[0], op.sessionId());
            });
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
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
