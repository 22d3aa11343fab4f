package io.buslane.engine.routing;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.namespace.Forwarding;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.partition.DeadLetterReasons;
import io.buslane.engine.partition.Forwarder;
import io.buslane.engine.partition.Transfer;
import io.buslane.engine.persist.Storage;
import io.buslane.engine.remote.PartitionOp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiFunction;

/**
 * The send side of the engine: resolves the target of a send (a queue or a topic), validates and completes the
 * messages (MessageIds), picks their partitions through the {@link PartitionDirectory} and submits them to the
 * owning shards; schedules and cancels scheduled messages; and forwards the transfers of auto-forwarding entities
 * to their destination the same way.
 */
public final class SendRouter implements Forwarding {

    private static final Logger LOG = LoggerFactory.getLogger(SendRouter.class);
    /** Above this many queued commands on a shard, sends are refused with SERVER_BUSY (back-pressure). */
    static final int MAX_QUEUED_COMMANDS = 200_000;

    private final Namespace namespace;
    private final PartitionDirectory directory;
    private final Storage storage;
    private final Clock clock;
    private final EngineStats stats;

    public SendRouter(Namespace namespace, PartitionDirectory directory, Storage storage, Clock clock,
                      EngineStats stats) {
        this.namespace = namespace;
        this.directory = directory;
        this.storage = storage;
        this.clock = clock;
        this.stats = stats;
    }

    // ================================================================================================ targets

    /** The queue or topic a path names, as a send sees it; records activity on it. */
    public SendTarget target(String path) {
        EntityAddress address = EntityAddress.parse(path);
        if (address == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required.");
        }
        if (address.subscription() != null || address.subQueue() != SubQueue.MAIN) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "Cannot send to '" + address
                    + "': messages can only be sent to a queue or a topic.");
        }
        QueueEntity q = namespace.queue(address.entityPath());
        if (q != null) {
            q.touch(clock.epochMillis());
            QueueProperties p = q.properties();
            return new SendTarget(p.name(), q.partitions(), p.enablePartitioning(), p.requiresDuplicateDetection(),
                    p.status(), p.requiresSession(), p.maxMessageSizeInKilobytes(), q.roundRobin());
        }
        TopicEntity t = namespace.topic(address.entityPath());
        if (t != null) {
            t.touch(clock.epochMillis());
            TopicProperties p = t.properties();
            return new SendTarget(p.name(), t.partitions(), p.enablePartitioning(), p.requiresDuplicateDetection(),
                    p.status(), false, p.maxMessageSizeInKilobytes(), t.roundRobin());
        }
        throw BrokerException.entityNotFound(address.entityPath());
    }

    /** Fails like a send would when the path is not a queue or topic that accepts messages. */
    public void checkSendable(String entityPath) {
        target(entityPath).requireSendable();
    }

    /** The largest message the entity accepts, in bytes. */
    public long maxMessageSizeBytes(String entityPath) {
        return target(entityPath).maxMessageSizeBytes();
    }

    /** Fails when the disk has too little free space left for new messages ({@link Storage#requireFreeSpace}). */
    public void requireFreeSpace() {
        storage.requireFreeSpace(clock.monotonicNanos());
    }

    // ================================================================================================ routing

    /** The messages validated, each with a MessageId, grouped by partition index (in the order first met). */
    public Map<Integer, List<Message>> route(SendTarget target, List<Message> messages) {
        Map<Integer, List<Message>> byPartition = new LinkedHashMap<>();
        int n = target.partitions().length;
        int unkeyed = directory.unkeyedPartition(target);
        for (Message m : prepared(target, messages)) {
            int p = PartitionDirectory.partitionIndexFor(m, target.dedup(), n, unkeyed);
            byPartition.computeIfAbsent(p, k -> new ArrayList<>()).add(m);
        }
        return byPartition;
    }

    /** The messages validated and each with a MessageId: the given list itself when every one had one. */
    private static List<Message> prepared(SendTarget target, List<Message> messages) {
        List<Message> out = messages;
        for (int i = 0; i < messages.size(); i++) {
            Message given = messages.get(i);
            target.validate(given);
            Message m = MessageIds.withMessageId(given);
            if (m != given && out == messages) {
                out = new ArrayList<>(messages);
            }
            if (out != messages) {
                out.set(i, m);
            }
        }
        return out;
    }

    // ================================================================================================ sending

    /**
     * Sends messages to a queue or topic. Messages with a future {@code ScheduledEnqueueTimeUtc} are scheduled.
     * Completes when every message is durable. The list is used as given (not copied).
     */
    public CompletableFuture<Void> send(String entityPath, List<Message> messages) {
        try {
            SendTarget target = target(entityPath);
            target.requireSendable();
            requireFreeSpace();
            List<Message> batch = prepared(target, messages);
            requireOneKeyPerBatch(target, batch);
            if (target.partitions().length == 1) {
                // one partition (every entity that is not partitioned): no routing map
                checkNotBusy(target.partitions()[0]);
                return batch.isEmpty() ? CompletableFuture.completedFuture(null)
                        : sendToPartition(target.partitions()[0], batch);
            }
            Map<Integer, List<Message>> routed = route(target, batch);
            for (Integer p : routed.keySet()) {
                checkNotBusy(target.partitions()[p]);
            }
            if (routed.size() == 1) {
                Map.Entry<Integer, List<Message>> only = routed.entrySet().iterator().next();
                return sendToPartition(target.partitions()[only.getKey()], only.getValue());
            }
            List<CompletableFuture<Void>> all = new ArrayList<>(routed.size());
            for (Map.Entry<Integer, List<Message>> e : routed.entrySet()) {
                all.add(sendToPartition(target.partitions()[e.getKey()], e.getValue()));
            }
            return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The service's text for a batch a partitioned entity refuses (its double space included). */
    public static final String DISTINCT_KEYS_TEXT = "Batching brokered messages with distinct SessionId, PartitionKey, "
            + "or MessageId  is not supported for an entity with partitioning and duplicate detection enabled.";

    /**
     * One send (a batch) to a partitioned entity goes to one partition, whole, as on the service: its messages must
     * carry the same SessionId, PartitionKey and ViaPartitionKey (the keys that place a message), and with
     * duplicate detection the same MessageId; otherwise it is refused ({@code amqp:not-allowed}) with the
     * service's text, before anything is stored.
     */
    private static void requireOneKeyPerBatch(SendTarget target, List<Message> batch) {
        if (!target.partitioned() || batch.size() < 2) {
            return;
        }
        Message first = batch.get(0);
        for (int i = 1; i < batch.size(); i++) {
            Message m = batch.get(i);
            if (!Objects.equals(first.sessionId(), m.sessionId())
                    || !Objects.equals(first.partitionKey(), m.partitionKey())
                    || !Objects.equals(first.viaPartitionKey(), m.viaPartitionKey())
                    || (target.dedup() && !Objects.equals(first.messageId(), m.messageId()))) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION, DISTINCT_KEYS_TEXT);
            }
        }
    }

    private static void checkNotBusy(PartitionRef ref) {
        if (ref.shard().queuedCommands() > MAX_QUEUED_COMMANDS) {
            throw new BrokerException(ErrorKind.SERVER_BUSY, "The broker is busy and cannot accept more "
                    + "messages right now; retry shortly.");
        }
    }

    /** Sends one partition's share of a send; its messages count as sent once they are durable. */
    private CompletableFuture<Void> sendToPartition(PartitionRef ref, List<Message> batch) {
        PartitionOp.Send local = new PartitionOp.Send(ref.partition().entityPath(), ref.partition().index(), batch,
                null);
        return directory.call(ref, () -> new PartitionOp.Send(local.path(), local.partition(), batch,
                UUID.randomUUID().toString()), () -> local.apply(ref.partition(), ref.shard().nowMs()),
                stats.sentCounter(), batch.size());
    }

    /** Runs {@code op} on its partition's shard here, or on the node serving it. */
    private <T> CompletableFuture<T> onPartition(PartitionRef ref, PartitionOp.OnSendTarget<T> op) {
        return directory.call(ref, () -> op, () -> op.apply(ref.partition(), ref.shard().nowMs()),
                op.sent() > 0 ? stats.sentCounter() : null, op.sent());
    }

    /**
     * Schedules messages (each must carry its scheduled enqueue time); completes with their sequence numbers, in
     * order, valid while they are scheduled.
     */
    public CompletableFuture<long[]> schedule(String entityPath, List<Message> messages) {
        return onEachScheduled(entityPath, messages, true, (ref, m) -> onPartition(ref,
                new PartitionOp.Schedule(ref.partition().entityPath(), ref.partition().index(), m)));
    }

    /**
     * Numbers messages scheduled under a transaction (each must carry its scheduled enqueue time): checked and given
     * their sequence numbers now, in order, stored only when the transaction commits
     * ({@code TransactionCommit}, which also gives a message without a MessageId its id).
     */
    public CompletableFuture<long[]> reserveScheduled(String entityPath, List<Message> messages) {
        return onEachScheduled(entityPath, messages, false, (ref, m) -> onPartition(ref,
                new PartitionOp.ReserveScheduled(ref.partition().entityPath(), ref.partition().index(), m)));
    }

    /**
     * What scheduling and reserving share: the target checked, each message validated (given its MessageId when
     * {@code assignIds}) and routed to its partition, {@code onPartition} run for it there; completes with the
     * sequence numbers the calls answered, in order.
     */
    private CompletableFuture<long[]> onEachScheduled(
            String entityPath, List<Message> messages, boolean assignIds,
            BiFunction<PartitionRef, Message, CompletableFuture<Long>> onPartition) {
        try {
            SendTarget target = target(entityPath);
            target.requireSendable();
            requireFreeSpace();
            int n = target.partitions().length;
            int unkeyed = directory.unkeyedPartition(target);
            List<CompletableFuture<Long>> all = new ArrayList<>(messages.size());
            for (Message given : messages) {
                target.validate(given);
                Message m = assignIds ? MessageIds.withMessageId(given) : given;
                if (m.scheduledEnqueueTimeMs() == null) {
                    throw new BrokerException(ErrorKind.ARGUMENT, "A scheduled message needs a "
                            + "ScheduledEnqueueTimeUtc.");
                }
                PartitionRef ref = target.partitions()[PartitionDirectory.partitionIndexFor(m, target.dedup(), n,
                        unkeyed)];
                all.add(onPartition.apply(ref, m));
            }
            return CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).thenApply(x -> {
                long[] seqs = new long[all.size()];
                for (int i = 0; i < seqs.length; i++) {
                    seqs[i] = all.get(i).join();
                }
                return seqs;
            });
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Cancels scheduled messages by the sequence numbers the schedule operation returned. */
    public CompletableFuture<Void> cancelScheduled(String entityPath, long[] sequenceNumbers) {
        try {
            SendTarget target = target(entityPath);
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (long seq : sequenceNumbers) {
                PartitionRef ref = directory.forSequence(target.partitions(), target.partitioned(), seq);
                all.add(onPartition(ref, new PartitionOp.CancelScheduled(ref.partition().entityPath(),
                        ref.partition().index(), new long[] {seq})));
            }
            return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // ================================================================================================ forwarding

    @Override
    public Forwarder forwarderFor(PartitionRef source) {
        return t -> forward(source, t);
    }

    /**
     * Forwards a pending transfer of {@code source} (on the source's shard thread, its record durable): the
     * destination partition is chosen from the message's keys, or from the transfer key when it has none, so a
     * re-forward after a crash reaches the same partition, which remembers the key and takes the message once.
     * The outcome goes back to the source's shard: done (the source forgets the transfer), refused for good (it
     * goes to the source's transfer dead-letter queue), or refused for now (retried).
     */
    private void forward(PartitionRef source, Transfer t) {
        try {
            SendTarget target = target(t.destination());
            target.requireSendable();
            Message m = t.forwardedMessage();
            String key = t.key();
            long reserved = t.reservedSequenceNumber();
            if (reserved >= 0) {
                // scheduled under a transaction: stored where its number was reserved, under that number
                PartitionRef ref = directory.forSequence(target.partitions(), target.partitioned(), reserved);
                onPartition(ref, new PartitionOp.SendScheduled(ref.partition().entityPath(), ref.partition().index(),
                        m, key, reserved)).whenComplete((x, error) -> afterForward(source, t, error));
                return;
            }
            PartitionRef ref = directory.forTransfer(target, m, key);
            PartitionOp.Send forwarded = new PartitionOp.Send(ref.partition().entityPath(), ref.partition().index(),
                    List.of(m), key); // not counted as sent here: the owner of a carried one counts it
            directory.call(ref, () -> forwarded, () -> forwarded.apply(ref.partition(), ref.shard().nowMs()))
                    .whenComplete((x, error) -> afterForward(source, t, error));
        } catch (BrokerException e) {
            afterForward(source, t, e);
        } catch (RuntimeException e) {
            LOG.warn("Forwarding a message of '{}' to '{}' failed; retrying", t.owner().settings().entityPath(),
                    t.destination(), e);
            afterForward(source, t, new BrokerException(ErrorKind.INTERNAL, String.valueOf(e.getMessage())));
        }
    }

    private static void afterForward(PartitionRef source, Transfer t, Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        source.shard().submit(() -> {
            if (cause == null) {
                source.partition().transferDone(t);
            } else if (cause instanceof BrokerException be && refusedForGood(be.kind())) {
                source.partition().transferFailed(t, DeadLetterReasons.transferFailed(be.kind()), be.getMessage());
            } else {
                source.partition().retryTransferLater(t);
            }
        });
    }

    private static boolean refusedForGood(ErrorKind kind) {
        return switch (kind) {
            case ENTITY_NOT_FOUND, ENTITY_DISABLED, QUOTA_EXCEEDED, MESSAGE_SIZE_EXCEEDED, INVALID_OPERATION,
                 ARGUMENT, ARGUMENT_OUT_OF_RANGE,
                 MESSAGE_NOT_FOUND -> true; // a scheduled message's partition gone (the entity made again)
            default -> false;
        };
    }
}
