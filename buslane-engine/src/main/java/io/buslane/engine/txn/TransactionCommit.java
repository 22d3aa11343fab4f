package io.buslane.engine.txn;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.message.Message;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.receive.Source;
import io.buslane.engine.routing.MessageIds;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.routing.PartitionOp;
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
 * anything changed), then the sends, then the settlements. As on the service, a transaction never spans partitions
 * (see {@link #requireOnePartitionPerEntity}) and messages sent through a via queue are parked in that queue's
 * partition (forwarded after the commit, idempotently): every commit is therefore one command on one shard, and
 * atomic. (Settling messages of one entity while sending directly to another on a different shard is refused by
 * the transaction's one-top-level-entity rule before it gets here.)
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
        return commit(batch, true);
    }

    /**
     * The owner's side of a commit another node carried here (cluster mode): the same work, every shard of it
     * served here (else SERVER_BUSY, never carried on).
     */
    public CompletableFuture<Object> runHere(PartitionOp op) {
        try {
            return commit(TransactionalBatchCodec.decode(op.state()), false).thenApply(x -> null);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e instanceof BrokerException ? e
                    : new BrokerException(ErrorKind.ARGUMENT, "A malformed transaction: " + e.getMessage()));
        }
    }

    private CompletableFuture<Void> commit(TransactionalBatch batch, boolean mayCarry) {
        try {
            Map<PartitionRef, List<Message>> sends = new LinkedHashMap<>();
            Map<PartitionRef, List<ViaSend>> viaSends = new LinkedHashMap<>();
            for (TransactionalBatch.Send send : batch.sends()) {
                SendTarget target = router.target(send.entityPath());
                target.requireSendable();
                target.requireSessionIds(send.messages());
                QueueEntity via = send.via() != null ? namespace.queue(send.via()) : null;
                if (via != null) {
                    // send-via: parked in the via queue's partition, forwarded after the commit
                    PartitionRef[] viaRefs = via.partitions();
                    for (Message m : send.messages()) {
                        Message withId = MessageIds.withMessageId(m);
                        viaSends.computeIfAbsent(viaRefs[viaPartition(withId, via)], k -> new ArrayList<>())
                                .add(new ViaSend(target.name(), withId));
                    }
                    continue;
                }
                requireKeys(target, send.messages());
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
            requireOnePartitionPerEntity(sends.keySet(), viaSends.keySet(), schedules.keySet(), settles.keySet());
            Map<Shard, List<PartitionRef>> byShard = new LinkedHashMap<>();
            for (PartitionRef ref : sends.keySet()) {
                byShard.computeIfAbsent(ref.shard(), k -> new ArrayList<>()).add(ref);
            }
            for (PartitionRef ref : viaSends.keySet()) {
                List<PartitionRef> refs = byShard.computeIfAbsent(ref.shard(), k -> new ArrayList<>());
                if (!refs.contains(ref)) {
                    refs.add(ref);
                }
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
            CompletableFuture<Void> carried = mayCarry ? carried(byShard, batch) : null;
            if (carried != null) {
                return carried;
            }
            List<CompletableFuture<Object>> all = new ArrayList<>(byShard.size());
            for (Map.Entry<Shard, List<PartitionRef>> e : byShard.entrySet()) {
                Shard shard = e.getKey();
                List<PartitionRef> refs = e.getValue();
                all.add(shard.call(() -> {
                    applyOnShard(shard.nowMs(), refs, sends, viaSends, schedules, settles);
                    return null;
                }));
            }
            return counted(CompletableFuture.allOf(all.toArray(new CompletableFuture[0])), batch);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Cluster mode: a commit whose shard another node serves is carried there whole and applied by that node (the
     * same code, one command on one shard); null when every shard of it is served here. A commit that would need
     * shards served by different nodes, or by this one and another, is refused (retriable) rather than split.
     */
    private CompletableFuture<Void> carried(Map<Shard, List<PartitionRef>> byShard, TransactionalBatch batch) {
        if (directory.remote() == null) {
            return null;
        }
        boolean anyElsewhere = false;
        for (Shard shard : byShard.keySet()) {
            anyElsewhere |= !shard.serving();
        }
        if (!anyElsewhere) {
            return null;
        }
        if (byShard.size() != 1) {
            throw new BrokerException(ErrorKind.SERVER_BUSY, "This transaction's work is on shards served by "
                    + "different nodes; in cluster mode a transaction is committed by the node serving its shard.");
        }
        Map.Entry<Shard, List<PartitionRef>> only = byShard.entrySet().iterator().next();
        PartitionRef ref = only.getValue().get(0);
        String path = anyPath(batch);
        PartitionOp op = PartitionOp.of(PartitionOp.Kind.COMMIT, path, ref.partition().index())
                .withSession(null, TransactionalBatchCodec.encode(batch), null);
        return directory.remote().call(only.getKey().index(), op).thenApply(x -> null);
    }

    private static String anyPath(TransactionalBatch batch) {
        if (!batch.sends().isEmpty()) {
            return batch.sends().get(0).entityPath();
        }
        if (!batch.schedules().isEmpty()) {
            return batch.schedules().get(0).entityPath();
        }
        return batch.settlements().get(0).address().toString();
    }

    /**
     * One shard's share of the commit, on that shard: locks checked, then sends, then scheduled messages (under the
     * sequence numbers they were given), then settlements.
     */
    private static void applyOnShard(long now, List<PartitionRef> refs, Map<PartitionRef, List<Message>> sends,
                                     Map<PartitionRef, List<ViaSend>> viaSends,
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
            for (ViaSend v : viaSends.getOrDefault(ref, List.of())) {
                ref.partition().sendVia(v.destination(), List.of(v.message()), now);
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

    /** A message sent under the transaction through a via queue, to {@code destination}. */
    private record ViaSend(String destination, Message message) {
    }

    /** The via queue's partition of a send-via message: by its ViaPartitionKey, else by its own keys. */
    private static int viaPartition(Message m, QueueEntity via) {
        int n = via.partitions().length;
        if (n == 1) {
            return 0;
        }
        if (m.viaPartitionKey() != null) {
            return Math.floorMod(PartitionDirectory.stableHash(m.viaPartitionKey()), n);
        }
        int p = PartitionDirectory.partitionIndexFor(m, via.properties().requiresDuplicateDetection(), n, -1);
        if (p < 0) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, PARTITIONS_TEXT);
        }
        return p;
    }

    /** A message sent under a transaction to a partitioned entity needs a partition key (see above). */
    private static void requireKeys(SendTarget target, List<Message> messages) {
        if (!target.partitioned()) {
            return;
        }
        for (Message m : messages) {
            boolean keyed = m.sessionId() != null || m.partitionKey() != null
                    || (target.dedup() && m.messageId() != null);
            if (!keyed) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION, PARTITIONS_TEXT);
            }
        }
    }

    /**
     * Service Bus keeps a transaction within one partition of a partitioned entity: every message sent in it needs a
     * partition key (SessionId, PartitionKey, or MessageId with duplicate detection; ViaPartitionKey through a via
     * queue), the same one for all, and settled messages come from that partition. So a commit is one shard's
     * command, applied and made durable at once. A transaction that would span partitions is refused here, before
     * anything is applied.
     */
    @SafeVarargs
    private static void requireOnePartitionPerEntity(java.util.Collection<PartitionRef>... groups) {
        Map<Long, PartitionRef> byEntity = new java.util.HashMap<>();
        for (java.util.Collection<PartitionRef> group : groups) {
            for (PartitionRef ref : group) {
                PartitionRef seen = byEntity.putIfAbsent(ref.partition().entityId(), ref);
                if (seen != null && seen != ref) {
                    throw new BrokerException(ErrorKind.INVALID_OPERATION, PARTITIONS_TEXT);
                }
            }
        }
    }

    static final String PARTITIONS_TEXT = "A transaction on a partitioned entity must stay within one partition: "
            + "every message sent in it must carry the same partition key (SessionId, PartitionKey, or MessageId "
            + "with duplicate detection; ViaPartitionKey when sent through a via entity), and the messages it "
            + "settles must come from that partition.";

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
