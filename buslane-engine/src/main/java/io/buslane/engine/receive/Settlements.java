package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.remote.PartitionOp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Settlement of locked messages by lock token (complete, abandon, release, defer, dead-letter, renew), from a
 * receive link or from {@code $management}, and receiving deferred messages by sequence number. A lock token
 * carries its partition, so each call goes straight to the owning shard; the sub-queue checks the lock there.
 */
public final class Settlements {

    private final Namespace namespace;
    private final PartitionDirectory directory;
    private final Clock clock;
    private final EngineStats stats;
    /** Cluster mode: the session holder this node keeps for a receiver on another node, by id (null for none). */
    private volatile java.util.function.Function<UUID, io.buslane.engine.partition.ConsumerHandle> holders =
            id -> null;

    /** Cluster mode: where the session holders kept for receivers on other nodes are found. */
    public void holders(java.util.function.Function<UUID, io.buslane.engine.partition.ConsumerHandle> lookup) {
        this.holders = lookup;
    }

    public Settlements(Namespace namespace, PartitionDirectory directory, Clock clock, EngineStats stats) {
        this.namespace = namespace;
        this.directory = directory;
        this.clock = clock;
        this.stats = stats;
    }

    /**
     * A settlement or lock renewal on the partition the lock token names: run here, or on the node serving it; a
     * successful settlement counts in the stats (where it runs) once durable.
     */
    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> onLockPartition(EntityAddress address, PartitionOp.Kind kind, UUID lockToken,
                                                     Map<String, Object> props, String reason, String description) {
        try {
            Source source = Source.of(namespace, address, clock.epochMillis());
            PartitionRef ref = directory.forLockToken(source.partitions(), lockToken);
            PartitionOp op = PartitionOp.of(kind, address.toString(), ref.partition().index())
                    .withLock(lockToken, props, reason, description);
            EngineStats.Outcome settled = outcome(kind);
            return directory.call(ref, () -> op, () -> (T) settle(Source.subQueue(ref, address), op),
                    settled == null ? null : stats.settledCounter(settled), 1);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static EngineStats.Outcome outcome(PartitionOp.Kind kind) {
        return switch (kind) {
            case COMPLETE -> EngineStats.Outcome.COMPLETE;
            case ABANDON -> EngineStats.Outcome.ABANDON;
            case RELEASE -> EngineStats.Outcome.RELEASE;
            case DEFER -> EngineStats.Outcome.DEFER;
            case DEAD_LETTER -> EngineStats.Outcome.DEAD_LETTER;
            default -> null;
        };
    }

    /** Runs a settlement or lock renewal on the shard thread; RENEW_LOCK answers the new locked-until time. */
    private static Object settle(SubQueueState q, PartitionOp op) {
        long now = q.partition().ctxNowMs();
        UUID token = op.lockToken();
        switch (op.kind()) {
            case COMPLETE -> q.complete(token, now);
            case ABANDON -> q.abandon(token, op.properties(), now);
            case RELEASE -> q.release(token, now);
            case DEFER -> q.defer(token, op.properties(), now);
            case DEAD_LETTER -> q.deadLetter(token, op.reason(), op.description(), op.properties(), now);
            case RENEW_LOCK -> {
                return q.renewLock(token, now);
            }
            default -> throw new BrokerException(ErrorKind.INTERNAL, "Not a settlement: " + op.kind());
        }
        return null;
    }

    /**
     * The owner's side of a settlement, lock renewal or deferred receive another node carried here: runs it on the
     * named partition with the same engine code as a local call; refused with SERVER_BUSY (never carried on) when
     * this node does not serve the partition's shard. A session's deferred messages are received for any holder.
     */
    public CompletableFuture<Object> runHere(PartitionOp op) {
        try {
            EntityAddress address = EntityAddress.parse(op.path());
            Source source = Source.of(namespace, address, clock.epochMillis());
            PartitionRef ref = Source.partition(source, op.partition());
            if (op.kind() == PartitionOp.Kind.RECEIVE_DEFERRED) {
                io.buslane.engine.partition.ConsumerHandle holder = holders.apply(op.lockToken());
                return stats.countDelivered(ref.shard().call(() -> Source.subQueue(ref, address).receiveDeferred(
                        op.sequences(), op.mode(), op.sessionId(), holder, ref.shard().nowMs()))).thenApply(x -> x);
            }
            EngineStats.Outcome settled = outcome(op.kind());
            return ref.shard().call(() -> settle(Source.subQueue(ref, address), op),
                    settled == null ? null : stats.settledCounter(settled), 1);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    public CompletableFuture<Void> complete(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, PartitionOp.Kind.COMPLETE, lockToken, null, null, null);
    }

    public CompletableFuture<Void> abandon(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return onLockPartition(address, PartitionOp.Kind.ABANDON, lockToken, props, null, null);
    }

    /** Unlocks a message without counting a delivery (AMQP {@code released}). */
    public CompletableFuture<Void> release(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, PartitionOp.Kind.RELEASE, lockToken, null, null, null);
    }

    public CompletableFuture<Void> defer(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return onLockPartition(address, PartitionOp.Kind.DEFER, lockToken, props, null, null);
    }

    public CompletableFuture<Void> deadLetter(EntityAddress address, UUID lockToken, String reason,
                                              String description, Map<String, Object> props) {
        return onLockPartition(address, PartitionOp.Kind.DEAD_LETTER, lockToken, props, reason, description);
    }

    /** Renews a message lock; completes with the new locked-until time. */
    public CompletableFuture<Long> renewLock(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, PartitionOp.Kind.RENEW_LOCK, lockToken, null, null, null);
    }

    /** Receives deferred messages by sequence number. */
    public CompletableFuture<List<ReceivedMessage>> receiveDeferred(EntityAddress address, long[] sequenceNumbers,
                                                                    ReceiveMode mode, String sessionId,
                                                                    Receiver by) {
        try {
            Source source = Source.of(namespace, address, clock.epochMillis());
            Map<PartitionRef, List<Long>> byPartition = new LinkedHashMap<>();
            for (long seq : sequenceNumbers) {
                byPartition.computeIfAbsent(directory.forSequence(source.partitions(), source.partitioned(), seq),
                        k -> new ArrayList<>()).add(seq);
            }
            List<CompletableFuture<List<ReceivedMessage>>> all = new ArrayList<>();
            for (Map.Entry<PartitionRef, List<Long>> e : byPartition.entrySet()) {
                PartitionRef ref = e.getKey();
                long[] seqs = e.getValue().stream().mapToLong(Long::longValue).toArray();
                java.util.function.Supplier<List<ReceivedMessage>> local = () -> Source.subQueue(ref, address)
                        .receiveDeferred(seqs, mode, sessionId, by, ref.shard().nowMs());
                // a session receiver (by) attached here holds its session here, unless (cluster mode) the node
                // serving the session keeps a holder for it: then the request is carried for that holder
                UUID holder = by == null ? null : by.remoteSessionHolder();
                all.add(by != null && holder == null ? ref.shard().call(local) : directory.call(ref,
                        () -> PartitionOp.of(PartitionOp.Kind.RECEIVE_DEFERRED, address.toString(),
                                ref.partition().index()).withSequences(seqs, 0).withSession(sessionId, null, mode)
                                .withLock(holder, null, null, null), local));
            }
            return stats.countDelivered(CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).thenApply(x -> {
                List<ReceivedMessage> out = new ArrayList<>();
                for (CompletableFuture<List<ReceivedMessage>> f : all) {
                    out.addAll(f.join());
                }
                return out;
            }));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
