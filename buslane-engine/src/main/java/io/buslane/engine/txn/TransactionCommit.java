package io.buslane.engine.txn;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.message.Message;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.receive.Source;
import io.buslane.engine.routing.MessageIds;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.routing.SendRouter;
import io.buslane.engine.routing.SendTarget;
import io.buslane.engine.shard.Shard;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Applies a committed transaction: every staged send and settlement. Every entity, lock token and partition is
 * resolved up front; then the work of each shard runs as one shard command, so it is applied in one go and made
 * durable by one journal sync: first every settlement's lock is checked (a lost lock fails the command before
 * anything changed), then the sends, then the settlements. Work spread over several shards (partitioned entities,
 * or entities on different shards) is one command per shard: each is atomic, together they are not.
 */
public final class TransactionCommit {

    private final Namespace namespace;
    private final PartitionDirectory directory;
    private final SendRouter router;
    private final Clock clock;
    private final EngineStats stats;

    public TransactionCommit(Namespace namespace, PartitionDirectory directory, SendRouter router, Clock clock,
                             EngineStats stats) {
        this.namespace = namespace;
        this.directory = directory;
        this.router = router;
        this.clock = clock;
        this.stats = stats;
    }

    public CompletableFuture<Void> commit(TransactionalBatch batch) {
        try {
            Map<PartitionRef, List<Message>> sends = new LinkedHashMap<>();
            for (TransactionalBatch.Send send : batch.sends()) {
                SendTarget target = router.target(send.entityPath());
                target.requireSendable();
                target.requireSessionIds(send.messages());
                for (Map.Entry<Integer, List<Message>> e : router.route(target, send.messages()).entrySet()) {
                    sends.computeIfAbsent(target.partitions()[e.getKey()], k -> new ArrayList<>())
                            .addAll(e.getValue());
                }
            }
            Map<PartitionRef, List<TransactionalBatch.Schedule>> schedules = new LinkedHashMap<>();
            for (TransactionalBatch.Schedule s : batch.schedules()) {
                SendTarget target = router.target(s.entityPath());
                target.requireSendable();
                schedules.computeIfAbsent(directory.forSequence(target.partitions(), target.partitioned(),
                        s.sequenceNumber()), k -> new ArrayList<>()).add(s);
            }
            if (!sends.isEmpty() || !schedules.isEmpty()) {
                router.requireFreeSpace();
            }
            Map<PartitionRef, List<TransactionalBatch.Settle>> settles = new LinkedHashMap<>();
            Set<UUID> tokens = new HashSet<>();
            for (TransactionalBatch.Settle settle : batch.settlements()) {
                if (!tokens.add(settle.lockToken())) {
                    throw new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, "The message with lock token '"
                            + settle.lockToken() + "' is settled more than once in the transaction.");
                }
                Source source = Source.of(namespace, settle.address(), clock.epochMillis());
                settles.computeIfAbsent(directory.forLockToken(source.partitions(), settle.lockToken()),
                        k -> new ArrayList<>()).add(settle);
            }
            Map<Shard, List<PartitionRef>> byShard = new LinkedHashMap<>();
            for (PartitionRef ref : sends.keySet()) {
                byShard.computeIfAbsent(ref.shard(), k -> new ArrayList<>()).add(ref);
            }
            for (PartitionRef ref : schedules.keySet()) {
                List<PartitionRef> refs = byShard.computeIfAbsent(ref.shard(), k -> new ArrayList<>());
                if (!refs.contains(ref)) {
                    refs.add(ref);
                }
            }
            for (PartitionRef ref : settles.keySet()) {
                List<PartitionRef> refs = byShard.computeIfAbsent(ref.shard(), k -> new ArrayList<>());
                if (!refs.contains(ref)) {
                    refs.add(ref);
                }
            }
            List<CompletableFuture<Object>> all = new ArrayList<>(byShard.size());
            for (Map.Entry<Shard, List<PartitionRef>> e : byShard.entrySet()) {
                Shard shard = e.getKey();
                List<PartitionRef> refs = e.getValue();
                all.add(shard.call(() -> {
                    applyOnShard(shard.nowMs(), refs, sends, schedules, settles);
                    return null;
                }));
            }
            return counted(CompletableFuture.allOf(all.toArray(new CompletableFuture[0])), batch);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * One shard's share of the commit, on that shard: locks checked, then sends, then scheduled messages (under the
     * sequence numbers they were given), then settlements.
     */
    private static void applyOnShard(long now, List<PartitionRef> refs, Map<PartitionRef, List<Message>> sends,
                                     Map<PartitionRef, List<TransactionalBatch.Schedule>> schedules,
                                     Map<PartitionRef, List<TransactionalBatch.Settle>> settles) {
        for (PartitionRef ref : refs) {
            for (TransactionalBatch.Settle s : settles.getOrDefault(ref, List.of())) {
                Source.subQueue(ref, s.address()).requireLock(s.lockToken(), now);
            }
        }
        for (PartitionRef ref : refs) {
            List<Message> messages = sends.get(ref);
            if (messages != null) {
                ref.partition().send(messages, now);
            }
        }
        for (PartitionRef ref : refs) {
            for (TransactionalBatch.Schedule s : schedules.getOrDefault(ref, List.of())) {
                Message m = MessageIds.withMessageId(s.message());
                ref.partition().scheduleReserved(m, m.scheduledEnqueueTimeMs(), s.sequenceNumber(), now);
            }
        }
        for (PartitionRef ref : refs) {
            for (TransactionalBatch.Settle s : settles.getOrDefault(ref, List.of())) {
                SubQueueState q = Source.subQueue(ref, s.address());
                switch (s.kind()) {
                    case COMPLETE -> q.complete(s.lockToken(), now);
                    case ABANDON -> q.abandon(s.lockToken(), s.properties(), now);
                    case DEFER -> q.defer(s.lockToken(), s.properties(), now);
                    case DEAD_LETTER -> q.deadLetter(s.lockToken(), s.deadLetterReason(),
                            s.deadLetterDescription(), s.properties(), now);
                }
            }
        }
    }

    /** Counts a committed transaction's sends and settlements once {@code f} succeeds; returns {@code f} itself. */
    private <T> CompletableFuture<T> counted(CompletableFuture<T> f, TransactionalBatch batch) {
        f.whenComplete((r, e) -> {
            if (e == null) {
                for (TransactionalBatch.Send send : batch.sends()) {
                    stats.sentCounter().add(send.messages().size());
                }
                stats.sentCounter().add(batch.schedules().size());
                for (TransactionalBatch.Settle settle : batch.settlements()) {
                    EngineStats.Outcome o = switch (settle.kind()) {
                        case COMPLETE -> EngineStats.Outcome.COMPLETE;
                        case ABANDON -> EngineStats.Outcome.ABANDON;
                        case DEFER -> EngineStats.Outcome.DEFER;
                        case DEAD_LETTER -> EngineStats.Outcome.DEAD_LETTER;
                    };
                    stats.settledCounter(o).increment();
                }
            }
        });
        return f;
    }
}
