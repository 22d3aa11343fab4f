package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.remote.PartitionOp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import java.util.function.Supplier;

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
    private <T> CompletableFuture<T> onLockPartition(EntityAddress address, UUID lockToken,
                                                     IntFunction<PartitionOp.OnSubQueue<T>> opOf) {
        try {
            Source source = Source.of(namespace, address, clock.epochMillis());
            PartitionRef ref = directory.forLockToken(source.partitions(), lockToken);
            PartitionOp.OnSubQueue<T> op = opOf.apply(ref.partition().index());
            LongAdder settled = op instanceof PartitionOp.Settle s ? stats.settledCounter(outcome(s.disposition()))
                    : null;
            return directory.call(ref, () -> op, () -> op.apply(Source.subQueue(ref, address), ref.shard().nowMs(),
                    null), settled, 1);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<Void> settle(EntityAddress address, PartitionOp.Settle.Disposition disposition,
                                           UUID lockToken, Map<String, Object> props, String reason,
                                           String description) {
        return onLockPartition(address, lockToken, i -> new PartitionOp.Settle(address.toString(), i, disposition,
                lockToken, props, reason, description));
    }

    /** The stats' outcome of a settlement. */
    public static EngineStats.Outcome outcome(PartitionOp.Settle.Disposition disposition) {
        return switch (disposition) {
            case COMPLETE -> EngineStats.Outcome.COMPLETE;
            case ABANDON -> EngineStats.Outcome.ABANDON;
            case RELEASE -> EngineStats.Outcome.RELEASE;
            case DEFER -> EngineStats.Outcome.DEFER;
            case DEAD_LETTER -> EngineStats.Outcome.DEAD_LETTER;
        };
    }

    public CompletableFuture<Void> complete(EntityAddress address, UUID lockToken) {
        return settle(address, PartitionOp.Settle.Disposition.COMPLETE, lockToken, null, null, null);
    }

    public CompletableFuture<Void> abandon(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return settle(address, PartitionOp.Settle.Disposition.ABANDON, lockToken, props, null, null);
    }

    /** Unlocks a message without counting a delivery (AMQP {@code released}). */
    public CompletableFuture<Void> release(EntityAddress address, UUID lockToken) {
        return settle(address, PartitionOp.Settle.Disposition.RELEASE, lockToken, null, null, null);
    }

    public CompletableFuture<Void> defer(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return settle(address, PartitionOp.Settle.Disposition.DEFER, lockToken, props, null, null);
    }

    public CompletableFuture<Void> deadLetter(EntityAddress address, UUID lockToken, String reason,
                                              String description, Map<String, Object> props) {
        return settle(address, PartitionOp.Settle.Disposition.DEAD_LETTER, lockToken, props, reason, description);
    }

    /** Renews a message lock; completes with the new locked-until time. */
    public CompletableFuture<Long> renewLock(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, lockToken, i -> new PartitionOp.RenewLock(address.toString(), i, lockToken));
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
                // a session receiver (by) attached here holds its session here, unless (cluster mode) the node
                // serving the session keeps a holder for it: then the request is carried for that holder
                UUID holder = by == null ? null : by.remoteSessionHolder();
                PartitionOp.ReceiveDeferred op = new PartitionOp.ReceiveDeferred(address.toString(),
                        ref.partition().index(), seqs, mode, sessionId, holder);
                Supplier<List<ReceivedMessage>> local = () -> op.apply(Source.subQueue(ref,
                        address), ref.shard().nowMs(), by);
                all.add(by != null && holder == null ? ref.shard().call(local) : directory.call(ref, () -> op,
                        local));
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
