package io.buslane.engine.txn;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.message.Message;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.receive.Source;
import io.buslane.engine.routing.MessageIds;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.remote.PartitionOp;
import io.buslane.engine.routing.SendRouter;
import io.buslane.engine.routing.SendTarget;
import io.buslane.engine.shard.Shard;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Applies a committed transaction: every staged send, scheduled message, cancel and settlement, as one command on
 * one shard, made durable by one journal sync. Every entity, lock token and partition is resolved up front. As on
 * the service, a transaction never spans partitions (see {@link #requireOnePartitionPerEntity}), and what it sends
 * or schedules for another entity goes through its via entity (a queue, or the topic whose subscription it
 * receives from) and is parked in the via entity's partition (a transfer, forwarded after the commit with an
 * idempotent transfer key, and again after a crash): the parked transfers, written in the same sync as the
 * settlements, are the commit's durable decision for the other entities. So every commit touches one partition's
 * shard, and is all or nothing; work that would need a second shard is refused before anything is applied. On
 * the shard, everything is checked first (every lock, the room for every send, somewhere to park), then applied.
 */
public final class TransactionCommit {

    /** A refused batch whose work would need two shards (the Transactions rules never build one). */
    static final String SHARDS_TEXT = "Local transactions cannot span multiple top-level entities such as queue or "
            + "topic. Work for another entity must be sent through the transaction's via entity.";

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
     * The owner's side of a commit another node carried here (cluster mode): the same work, its shard served here
     * (else SERVER_BUSY, never carried on).
     */
    public CompletableFuture<Void> commitCarried(TransactionalBatch batch) {
        return commit(batch, false);
    }

    private CompletableFuture<Void> commit(TransactionalBatch given, boolean mayCarry) {
        try {
            TransactionalBatch batch = identified(given);
            Map<PartitionRef, Work> work = plan(batch);
            Shard shard = null;
            for (PartitionRef ref : work.keySet()) {
                if (shard != null && shard != ref.shard()) {
                    throw new BrokerException(ErrorKind.INVALID_OPERATION, SHARDS_TEXT);
                }
                shard = ref.shard();
            }
            if (shard == null) {
                return CompletableFuture.completedFuture(null);
            }
            if (mayCarry && !directory.servedHere(shard)) {
                // cluster mode: committed whole by the node serving the shard, with this same code
                PartitionOp.Commit op = new PartitionOp.Commit(anyPath(batch),
                        work.keySet().iterator().next().partition().index(), TransactionalBatchCodec.encode(batch));
                return directory.remote().call(shard.index(), op);
            }
            Shard on = shard;
            return counted(on.call(() -> {
                applyOnShard(on.nowMs(), work);
                return null;
            }), batch);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The batch with a MessageId on every message sent or scheduled (given once, here: a message's partition may
     * depend on it, and a commit carried to another node must land in the partition this node chose).
     */
    private static TransactionalBatch identified(TransactionalBatch batch) {
        TransactionalBatch out = new TransactionalBatch();
        for (TransactionalBatch.Send s : batch.sends()) {
            List<Message> messages = new ArrayList<>(s.messages().size());
            for (Message m : s.messages()) {
                messages.add(MessageIds.withMessageId(m));
            }
            out.addSend(s.entityPath(), messages, s.via());
        }
        for (TransactionalBatch.Schedule s : batch.schedules()) {
            out.addSchedule(new TransactionalBatch.Schedule(s.entityPath(), MessageIds.withMessageId(s.message()),
                    s.sequenceNumber(), s.via()));
        }
        batch.cancels().forEach(out::addCancel);
        batch.settlements().forEach(out::addSettlement);
        return out;
    }

    /** What one partition does at commit. */
    private static final class Work {
        final List<Message> sends = new ArrayList<>();
        final List<Parked> parked = new ArrayList<>();
        final List<TransactionalBatch.Schedule> schedules = new ArrayList<>();
        final List<Long> cancels = new ArrayList<>();
        final List<TransactionalBatch.Settle> settles = new ArrayList<>();
        /** The subscription whose messages the transaction settles here (a topic via's parked work goes there). */
        String settledSubscription;
    }

    /**
     * A message parked in the via entity's partition for {@code destination}: sent, or scheduled under the sequence
     * number {@code reservedSeq} the destination took for it (-1 for a send).
     */
    private record Parked(String destination, Message message, long reservedSeq) {
    }

    /** Every check that needs no shard: entities, partitions, keys, free space; the work of each partition. */
    private Map<PartitionRef, Work> plan(TransactionalBatch batch) {
        Map<PartitionRef, Work> work = new LinkedHashMap<>();
        for (TransactionalBatch.Send send : batch.sends()) {
            SendTarget target = router.target(send.entityPath());
            target.requireSendable();
            target.requireSessionIds(send.messages());
            if (send.via() != null) {
                SendTarget via = router.target(send.via());
                for (Message m : send.messages()) { // every message has its MessageId (identified)
                    work.computeIfAbsent(via.partitions()[viaPartition(m, via)], k -> new Work()).parked
                            .add(new Parked(target.name(), m, -1));
                }
                continue;
            }
            requireKeys(target, send.messages());
            for (Map.Entry<Integer, List<Message>> e : router.route(target, send.messages()).entrySet()) {
                work.computeIfAbsent(target.partitions()[e.getKey()], k -> new Work()).sends.addAll(e.getValue());
            }
        }
        for (TransactionalBatch.Schedule s : batch.schedules()) {
            SendTarget target = router.target(s.entityPath());
            target.requireSendable();
            if (s.via() != null) {
                SendTarget via = router.target(s.via());
                work.computeIfAbsent(via.partitions()[viaPartition(s.message(), via)], k -> new Work()).parked
                        .add(new Parked(target.name(), s.message(), s.sequenceNumber()));
                continue;
            }
            work.computeIfAbsent(directory.forSequence(target.partitions(), target.partitioned(),
                    s.sequenceNumber()), k -> new Work()).schedules.add(s);
        }
        if (!batch.sends().isEmpty() || !batch.schedules().isEmpty()) {
            router.requireFreeSpace();
        }
        for (TransactionalBatch.Cancel c : batch.cancels()) {
            SendTarget target = router.target(c.entityPath());
            for (long seq : c.sequenceNumbers()) {
                work.computeIfAbsent(directory.forSequence(target.partitions(), target.partitioned(), seq),
                        k -> new Work()).cancels.add(seq);
            }
        }
        Set<UUID> tokens = new HashSet<>();
        for (TransactionalBatch.Settle settle : batch.settlements()) {
            if (!tokens.add(settle.lockToken())) {
                throw new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, "The message with lock token '"
                        + settle.lockToken() + "' is settled more than once in the transaction.");
            }
            Source source = Source.of(namespace, settle.address(), clock.epochMillis());
            Work w = work.computeIfAbsent(directory.forLockToken(source.partitions(), settle.lockToken()),
                    k -> new Work());
            w.settles.add(settle);
            if (w.settledSubscription == null) {
                w.settledSubscription = settle.address().subscription();
            }
        }
        requireOnePartitionPerEntity(work.keySet());
        return work;
    }

    private static String anyPath(TransactionalBatch batch) {
        if (!batch.sends().isEmpty()) {
            return batch.sends().get(0).entityPath();
        }
        if (!batch.schedules().isEmpty()) {
            return batch.schedules().get(0).entityPath();
        }
        if (!batch.cancels().isEmpty()) {
            return batch.cancels().get(0).entityPath();
        }
        return batch.settlements().get(0).address().toString();
    }

    /**
     * The commit on its shard: everything checked (every settled message's lock, room for every message stored,
     * somewhere to park), then applied: sends and scheduled messages (under the sequence numbers they were given),
     * parked messages, cancels, settlements. A refused check leaves no trace.
     */
    private static void applyOnShard(long now, Map<PartitionRef, Work> work) {
        Map<PartitionRef, Partition.Admission> admitted = new LinkedHashMap<>();
        Map<PartitionRef, long[]> reservedSeqs = new LinkedHashMap<>();
        Map<PartitionRef, SubQueueState> owners = new LinkedHashMap<>();
        for (Map.Entry<PartitionRef, Work> e : work.entrySet()) {
            PartitionRef ref = e.getKey();
            Work w = e.getValue();
            for (TransactionalBatch.Settle s : w.settles) {
                SubQueueState q = Source.subQueue(ref, s.address());
                q.settlements().requireLock(s.lockToken(), now);
                if (s.kind() == TransactionalBatch.SettleKind.DEAD_LETTER
                        && q.kind() != SubQueue.MAIN) {
                    // refused here, before anything is applied, as the settlement itself would refuse it
                    throw new BrokerException(ErrorKind.INVALID_OPERATION, SubQueueState.DEAD_LETTER_TWICE_TEXT);
                }
            }
            if (!w.sends.isEmpty() || !w.schedules.isEmpty()) {
                // sends and scheduled messages of the partition in one admission: one size check, one filter
                List<Message> stored = new ArrayList<>(w.sends);
                long[] reserved = new long[w.sends.size() + w.schedules.size()];
                Arrays.fill(reserved, -1);
                for (TransactionalBatch.Schedule s : w.schedules) {
                    reserved[stored.size()] = s.sequenceNumber();
                    stored.add(s.message()); // with its MessageId (identified)
                }
                admitted.put(ref, ref.partition().admit(stored, now));
                reservedSeqs.put(ref, reserved);
            }
            if (!w.parked.isEmpty()) {
                SubQueueState owner = ref.partition().viaOwner(w.settledSubscription);
                if (owner == null) {
                    throw new BrokerException(ErrorKind.INVALID_OPERATION, "The topic '"
                            + ref.partition().entityPath() + "' has no subscription: a message sent through it "
                            + "in a transaction has no transfer queue to be held in until it is forwarded.");
                }
                owners.put(ref, owner);
            }
        }
        for (Map.Entry<PartitionRef, Work> e : work.entrySet()) {
            PartitionRef ref = e.getKey();
            Work w = e.getValue();
            Partition.Admission a = admitted.get(ref);
            if (a != null) {
                ref.partition().apply(a, reservedSeqs.get(ref), now);
            }
            for (Parked p : w.parked) {
                if (p.reservedSeq() < 0) {
                    ref.partition().sendVia(owners.get(ref), p.destination(), List.of(p.message()), now);
                } else {
                    ref.partition().scheduleVia(owners.get(ref), p.destination(), p.message(), p.reservedSeq(),
                            now);
                }
            }
            for (long seq : w.cancels) {
                ref.partition().cancelScheduledIfPresent(seq);
            }
            for (TransactionalBatch.Settle s : w.settles) {
                SubQueueState q = Source.subQueue(ref, s.address());
                switch (s.kind()) {
                    case COMPLETE -> q.settlements().complete(s.lockToken(), now);
                    case ABANDON -> q.settlements().abandon(s.lockToken(), s.properties(), now);
                    case DEFER -> q.settlements().defer(s.lockToken(), s.properties(), now);
                    case DEAD_LETTER -> q.settlements().deadLetter(s.lockToken(), s.deadLetterReason(),
                            s.deadLetterDescription(), s.properties(), now);
                }
            }
        }
    }

    /** The via entity's partition of a message sent or scheduled through it: by its ViaPartitionKey, else its keys. */
    private static int viaPartition(Message m, SendTarget via) {
        int n = via.partitions().length;
        if (n == 1) {
            return 0;
        }
        if (m.viaPartitionKey() != null) {
            return Math.floorMod(PartitionDirectory.stableHash(m.viaPartitionKey()), n);
        }
        int p = PartitionDirectory.partitionIndexFor(m, via.dedup(), n, -1);
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
            boolean keyed = m.sessionId() != null || m.partitionKey() != null || m.viaPartitionKey() != null
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
    private static void requireOnePartitionPerEntity(Collection<PartitionRef> refs) {
        Map<Long, PartitionRef> byEntity = new HashMap<>();
        for (PartitionRef ref : refs) {
            PartitionRef seen = byEntity.putIfAbsent(ref.partition().entityId(), ref);
            if (seen != null && seen != ref) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION, PARTITIONS_TEXT);
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
