package io.buslane.engine.owner;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.partition.ConsumerHandle;
import io.buslane.engine.receive.RemoteConsumers;
import io.buslane.engine.receive.Settlements;
import io.buslane.engine.receive.Source;
import io.buslane.engine.remote.PartitionOp;
import io.buslane.engine.remote.RemotePartitions;
import io.buslane.engine.routing.SendRouter;
import io.buslane.engine.routing.SendTarget;
import io.buslane.engine.txn.TransactionCommit;
import io.buslane.engine.txn.TransactionalBatchCodec;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The owning node's side of the cluster seam: the one entry point for operations other nodes carried here. It
 * resolves the partition an operation names (each kind of operation resolves as its local call does: a send's
 * target, the sub-queue of a queue or subscription, a topic partition, the counted entity), refuses what this node
 * does not serve (a shard it does not serve refuses with SERVER_BUSY; an operation is never carried on to a third
 * node), and runs the operation value's own {@code apply} on the shard thread: the code a local call runs. Counts
 * what it runs in the stats as the local call would (the requester counts nothing).
 */
public final class OwnerSide implements RemotePartitions.Owner {

    private final Namespace namespace;
    private final Clock clock;
    private final EngineStats stats;
    private final SendRouter router;
    private final TransactionCommit transactions;
    private final RemoteConsumers remoteConsumers;
    private final PartitionOp.Runner runner = new Runner();

    public OwnerSide(Namespace namespace, Clock clock, EngineStats stats, SendRouter router,
                     TransactionCommit transactions, RemoteConsumers remoteConsumers) {
        this.namespace = namespace;
        this.clock = clock;
        this.stats = stats;
        this.router = router;
        this.transactions = transactions;
        this.remoteConsumers = remoteConsumers;
    }

    @Override
    public <R> CompletableFuture<R> run(PartitionOp<R> op) {
        try {
            return op.runAt(runner);
        } catch (RuntimeException e) { // a refusal, or a defect: answered either way, never thrown at the channel
            return CompletableFuture.failedFuture(e);
        }
    }

    private static PartitionRef partitionOf(PartitionRef[] refs, PartitionOp<?> op, Object named) {
        if (op.partition() < 0 || op.partition() >= refs.length) {
            throw new BrokerException(ErrorKind.ARGUMENT, "No partition " + op.partition() + " in '" + named + "'.");
        }
        return refs[op.partition()];
    }

    private final class Runner implements PartitionOp.Runner {

        @Override
        public <R> CompletableFuture<R> onSendTarget(PartitionOp.OnSendTarget<R> op) {
            SendTarget target = router.target(op.path());
            PartitionRef ref = partitionOf(target.partitions(), op, op.path());
            if (op.checksSendable()) {
                target.requireSendable();
            }
            int sent = op.sent();
            return ref.shard().call(() -> op.apply(ref.partition(), ref.shard().nowMs()),
                    sent > 0 ? stats.sentCounter() : null, sent);
        }

        @Override
        public <R> CompletableFuture<R> onSubQueue(PartitionOp.OnSubQueue<R> op) {
            EntityAddress address = EntityAddress.parse(op.path());
            Source source = Source.of(namespace, address, clock.epochMillis());
            PartitionRef ref = Source.partition(source, op.partition());
            ConsumerHandle holder = remoteConsumers.requireHolder(op.holder());
            Supplier<R> apply = () -> op.apply(Source.subQueue(ref, address), ref.shard().nowMs(), holder);
            if (op instanceof PartitionOp.ReceiveDeferred) {
                return countDelivered(ref.shard().call(apply));
            }
            LongAdder settled = op instanceof PartitionOp.Settle s
                    ? stats.settledCounter(Settlements.outcome(s.disposition())) : null;
            return ref.shard().call(apply, settled, 1);
        }

        @SuppressWarnings("unchecked")
        private <R> CompletableFuture<R> countDelivered(CompletableFuture<R> received) {
            return (CompletableFuture<R>) stats.countDelivered((CompletableFuture<List<ReceivedMessage>>) received);
        }

        @Override
        public CompletableFuture<List<ReceivedMessage>> peekScheduled(PartitionOp.PeekScheduled op) {
            EntityAddress address = EntityAddress.parse(op.path());
            if (address == null) {
                throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required.");
            }
            TopicEntity t = namespace.topic(address.entityPath());
            if (t == null) {
                throw BrokerException.entityNotFound(address.entityPath());
            }
            PartitionRef ref = partitionOf(t.partitions(), op, address);
            return ref.shard().call(() -> op.apply(ref.partition()));
        }

        @Override
        public CompletableFuture<RuntimeCounts> counts(PartitionOp.Counts op) {
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
            PartitionRef ref = partitionOf(refs, op, address);
            return ref.shard().call(() -> op.apply(ref.partition()));
        }

        @Override
        public CompletableFuture<List<String>> listSessions(PartitionOp.ListSessions op) {
            Source source = Source.of(namespace, EntityAddress.parse(op.path()), clock.epochMillis());
            PartitionRef ref = Source.partition(source, op.partition());
            return ref.shard().call(() -> op.apply(ref.partition()));
        }

        @Override
        public CompletableFuture<Void> commit(PartitionOp.Commit op) {
            try {
                return transactions.commitCarried(TransactionalBatchCodec.decode(op.batch()));
            } catch (BrokerException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new BrokerException(ErrorKind.ARGUMENT, "A malformed transaction: " + e.getMessage());
            }
        }

        @Override
        public CompletableFuture<List<ReceivedMessage>> receive(PartitionOp.Receive op) {
            return remoteConsumers.receive(op);
        }

        @Override
        public CompletableFuture<Void> endReceive(PartitionOp.EndReceive op) {
            return remoteConsumers.endReceive(op);
        }

        @Override
        public CompletableFuture<PartitionOp.SessionGrant> acceptSession(PartitionOp.AcceptSession op) {
            return remoteConsumers.accept(op);
        }

        @Override
        public CompletableFuture<Void> releaseSession(PartitionOp.ReleaseSession op) {
            return remoteConsumers.release(op);
        }
    }
}
