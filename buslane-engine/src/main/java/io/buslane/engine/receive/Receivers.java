package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.partition.ConsumerSlot;
import io.buslane.engine.partition.EngineTimer;
import io.buslane.engine.partition.SessionWaiter;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.remote.PartitionOp;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Attaches receivers: plain receivers on every partition of a queue, a subscription or a dead-letter queue, and
 * session receivers that accept a named session or the next free one. The session requirement of receivers (a
 * session-enabled entity has only session receivers, and the reverse) is checked here.
 */
public final class Receivers {

    /** The longest a node holds another's accept-next open (below the cluster channel's answer timeout). */
    static final long REMOTE_ACCEPT_WAIT_MS = 8_000;

    private final Namespace namespace;
    private final PartitionDirectory directory;
    private final Clock clock;
    private final EngineStats stats;
    private final Settlements settlements;
    private final SessionStates sessions;

    public Receivers(Namespace namespace, PartitionDirectory directory, Clock clock, EngineStats stats,
                     Settlements settlements, SessionStates sessions) {
        this.namespace = namespace;
        this.directory = directory;
        this.clock = clock;
        this.stats = stats;
        this.settlements = settlements;
        this.sessions = sessions;
    }

    private Source source(EntityAddress address) {
        return Source.of(namespace, address, clock.epochMillis());
    }

    /** Fails like attaching a receiver would when the address does not name a receivable queue. */
    public void checkReceivable(EntityAddress address) {
        source(address).requireReceivable();
    }

    /**
     * Cluster mode without a channel to the other nodes: a receiver gets messages from the partitions this node
     * serves; one on an entity none of whose partitions is served here would never get any, so it is refused with
     * SERVER_BUSY (retriable: the SDKs attach again, and the shard may be served here by then). With the channel,
     * partitions served elsewhere are fed by long polls to their node.
     */
    private void requireAPartitionServedHere(Source source) {
        if (directory.remote() != null) {
            return;
        }
        for (PartitionRef ref : source.partitions()) {
            if (ref.shard().serving()) {
                return;
            }
        }
        throw new BrokerException(ErrorKind.SERVER_BUSY, "No partition of '" + source.address()
                + "' is served by this node now. Retry later.");
    }

    /** Whether partition {@code ref} is served by another node that the channel reaches (cluster mode). */
    private boolean remote(PartitionRef ref) {
        return !directory.servedHere(ref.shard());
    }

    private RemoteFeed feed(Receiver receiver, PartitionRef ref, int partitions, UUID holder) {
        return new RemoteFeed(receiver, directory.remote(), ref.shard().index(), receiver.address().toString(),
                ref.partition().index(), holder, partitions == 1 ? RemoteFeed.WAIT_MS
                : RemoteFeed.SHARED_CREDIT_WAIT_MS);
    }

    /** Whether the receivable entity an address names requires sessions (its main queue). */
    public boolean requiresSession(EntityAddress address) {
        return source(address).requiresSession() && address.subQueue() == SubQueue.MAIN;
    }

    /** Attaches a non-session receiver. Fails for session-enabled main queues. */
    public Receiver createReceiver(EntityAddress address, ReceiveMode mode, DeliverySink sink) {
        Source source = source(address);
        source.requireReceivable();
        if (source.requiresSession() && address.subQueue() == SubQueue.MAIN) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "It is not possible for an entity that "
                    + "requires sessions to create a non-sessionful message receiver.");
        }
        requireAPartitionServedHere(source);
        Receiver receiver = new Receiver(settlements, sessions, stats, address, mode, sink);
        receiver.bind(source.partitions());
        for (int i = 0; i < source.partitions().length; i++) {
            int index = i;
            PartitionRef ref = source.partitions()[i];
            if (remote(ref)) {
                receiver.bindRemote(i, feed(receiver, ref, source.partitions().length, null));
                continue;
            }
            ref.shard().submit(() -> {
                if (receiver.isClosed()) {
                    return;
                }
                try {
                    SubQueueState q = Source.subQueue(ref, address);
                    receiver.setSlot(index, q.deliveries().addConsumer(receiver));
                    q.deliveries().pump();
                } catch (BrokerException e) {
                    receiver.closedByEngine(e);
                }
            });
        }
        return receiver;
    }

    /**
     * Accepts a session: the named one, or (with a null id) the next available one, waiting up to
     * {@code timeoutMs} for one to free up. Completes with a receiver holding the session's lock.
     */
    public CompletableFuture<Receiver> acceptSession(EntityAddress address, String sessionId, ReceiveMode mode,
                                                     long timeoutMs, DeliverySink sink) {
        try {
            Source source = source(address);
            source.requireReceivable();
            if (!source.requiresSession() || address.subQueue() != SubQueue.MAIN) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION, "A sessionful message receiver cannot be "
                        + "created on an entity that does not require sessions. Ensure RequiresSession is set to "
                        + "true when creating a Queue or Subscription to enable sessionful behavior.");
            }
            Receiver receiver = new Receiver(settlements, sessions, stats, address, mode, sink);
            if (sessionId != null) {
                PartitionRef ref = directory.forSession(source.partitions(), sessionId);
                receiver.bind(new PartitionRef[] {ref});
                if (remote(ref)) {
                    return acceptRemote(ref, receiver, sessionId, 0).thenApply(grant -> {
                        receiver.bindRemote(0, feed(receiver, ref, 1, grant.holder()));
                        receiver.bindSession(grant.sessionId(), grant.lockedUntilMs());
                        return receiver;
                    });
                }
                return ref.shard().call(() -> {
                    SubQueueState q = Source.subQueue(ref, address);
                    var slot = q.deliveries().acceptSession(sessionId, receiver, ref.shard().nowMs());
                    receiver.setSlot(0, slot);
                    receiver.bindSession(sessionId, q.sessions().lockedUntil(sessionId, ref.shard().nowMs(), null));
                    return receiver;
                });
            }
            return acceptNext(source, receiver, timeoutMs);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<Receiver> acceptNext(Source source, Receiver receiver, long timeoutMs) {
        CompletableFuture<Receiver> result = new CompletableFuture<>();
        PartitionRef[] refs = source.partitions();
        SessionWaiter waiter = new OnceWaiter(receiver, result) {
            @Override
            public void onAccepted(ConsumerSlot slot, String id, long lockedUntilMs) {
                for (int i = 0; i < refs.length; i++) {
                    if (refs[i].partition() == slot.queue().partition()) {
                        receiver.bind(new PartitionRef[] {refs[i]});
                        receiver.setSlot(0, slot);
                        receiver.bindSession(id, lockedUntilMs);
                        result.complete(receiver);
                        return;
                    }
                }
            }
        };
        EntityAddress address = source.address();
        PartitionRef first = null;
        List<PartitionRef> elsewhere = new ArrayList<>();
        for (PartitionRef ref : refs) {
            if (remote(ref)) {
                elsewhere.add(ref);
                continue;
            }
            if (first == null && ref.shard().serving()) {
                first = ref; // cluster mode: the timer must live on a shard this node serves
            }
            ref.shard().submit(() -> {
                try {
                    Source.subQueue(ref, address).deliveries().acceptNextSession(waiter);
                } catch (BrokerException e) {
                    if (waiter.tryClaim()) {
                        result.completeExceptionally(e);
                    }
                }
            });
        }
        if (first == null && elsewhere.isEmpty()) {
            return CompletableFuture.failedFuture(new BrokerException(ErrorKind.SERVER_BUSY, "No partition of '"
                    + address + "' is served by this node now. Retry later."));
        }
        Runnable timedOut = () -> {
            if (waiter.tryClaim()) {
                result.completeExceptionally(new BrokerException(ErrorKind.TIMEOUT, "No session available to "
                        + "accept on '" + address + "' within " + timeoutMs + " ms."));
            }
        };
        long deadlineNanos = clock.monotonicNanos() + TimeUnit.MILLISECONDS.toNanos(Math.min(timeoutMs, 1L << 40));
        for (PartitionRef ref : elsewhere) {
            acceptNextElsewhere(ref, receiver, waiter, result, deadlineNanos);
        }
        if (first == null) {
            directory.remote().schedule(timedOut, timeoutMs);
            return result;
        }
        PartitionRef timerRef = first;
        timerRef.shard().submit(() -> timerRef.shard().schedule(new EngineTimer() {
            @Override
            public void onTimer(long nowMs) {
                timedOut.run();
            }
        }, saturatedAdd(timerRef.shard().nowMs(), Math.max(0, timeoutMs))));
        return result;
    }

    /**
     * Cluster mode: waits for a session on a partition another node serves, in turns of at most
     * {@link #REMOTE_ACCEPT_WAIT_MS} (an answer must come within the channel's timeout) until the deadline or until
     * another partition gave the receiver its session; a session granted too late is let go at once.
     */
    private void acceptNextElsewhere(PartitionRef ref, Receiver receiver, SessionWaiter waiter,
                                     CompletableFuture<Receiver> result, long deadlineNanos) {
        long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - clock.monotonicNanos());
        if (waiter.isClaimed() || remainingMs <= 0) {
            return; // the deadline's timer answers
        }
        acceptRemote(ref, receiver, null, Math.min(remainingMs, REMOTE_ACCEPT_WAIT_MS)).whenComplete((grant, f) -> {
            if (f == null) {
                if (waiter.tryClaim()) {
                    receiver.bind(new PartitionRef[] {ref});
                    receiver.bindRemote(0, feed(receiver, ref, 1, grant.holder()));
                    receiver.bindSession(grant.sessionId(), grant.lockedUntilMs());
                    result.complete(receiver);
                } else {
                    directory.remote().call(ref.shard().index(), new PartitionOp.ReleaseSession(
                            receiver.address().toString(), ref.partition().index(), grant.holder()))
                            .exceptionally(e -> null);
                }
                return;
            }
            BrokerException e = RemoteFeed.brokerError(f);
            if (e.kind() == ErrorKind.TIMEOUT) {
                acceptNextElsewhere(ref, receiver, waiter, result, deadlineNanos);
            } else if (e.kind() == ErrorKind.SERVER_BUSY) {
                directory.remote().schedule(() -> acceptNextElsewhere(ref, receiver, waiter, result, deadlineNanos),
                        200);
            } else if (waiter.tryClaim()) {
                result.completeExceptionally(e);
            }
        });
    }

    /** Cluster mode: asks the node serving {@code ref} to lock a session (null: the next free one) for us. */
    private CompletableFuture<PartitionOp.SessionGrant> acceptRemote(PartitionRef ref, Receiver receiver,
                                                                     String sessionId, long waitMs) {
        return directory.remote().call(ref.shard().index(), new PartitionOp.AcceptSession(
                receiver.address().toString(), ref.partition().index(), sessionId, receiver.mode(), waitMs));
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
