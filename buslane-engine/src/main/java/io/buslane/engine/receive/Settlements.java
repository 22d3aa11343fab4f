package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.routing.PartitionDirectory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

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

    private <T> CompletableFuture<T> onLockPartition(EntityAddress address, UUID lockToken,
                                                     Function<SubQueueState, T> action) {
        return onLockPartition(address, lockToken, null, action);
    }

    /** As above; a successful settlement counts in {@code settled} (unless null) once durable. */
    private <T> CompletableFuture<T> onLockPartition(EntityAddress address, UUID lockToken,
                                                     EngineStats.Outcome settled, Function<SubQueueState, T> action) {
        try {
            Source source = Source.of(namespace, address, clock.epochMillis());
            PartitionRef ref = directory.forLockToken(source.partitions(), lockToken);
            return ref.shard().call(() -> action.apply(Source.subQueue(ref, address)),
                    settled == null ? null : stats.settledCounter(settled), 1);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    public CompletableFuture<Void> complete(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.COMPLETE, q -> {
            q.complete(lockToken, q.partition().ctxNowMs());
            return null;
        });
    }

    public CompletableFuture<Void> abandon(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.ABANDON, q -> {
            q.abandon(lockToken, props, q.partition().ctxNowMs());
            return null;
        });
    }

    /** Unlocks a message without counting a delivery (AMQP {@code released}). */
    public CompletableFuture<Void> release(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.RELEASE, q -> {
            q.release(lockToken, q.partition().ctxNowMs());
            return null;
        });
    }

    public CompletableFuture<Void> defer(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.DEFER, q -> {
            q.defer(lockToken, props, q.partition().ctxNowMs());
            return null;
        });
    }

    public CompletableFuture<Void> deadLetter(EntityAddress address, UUID lockToken, String reason,
                                              String description, Map<String, Object> props) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.DEAD_LETTER, q -> {
            q.deadLetter(lockToken, reason, description, props, q.partition().ctxNowMs());
            return null;
        });
    }

    /** Renews a message lock; completes with the new locked-until time. */
    public CompletableFuture<Long> renewLock(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, lockToken, q -> q.renewLock(lockToken, q.partition().ctxNowMs()));
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
                all.add(ref.shard().call(() -> Source.subQueue(ref, address).receiveDeferred(seqs, mode, sessionId, by,
                        ref.shard().nowMs())));
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
