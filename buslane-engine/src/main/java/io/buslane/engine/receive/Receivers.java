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
import io.buslane.engine.partition.ConsumerHandle;
import io.buslane.engine.partition.ConsumerSlot;
import io.buslane.engine.partition.EngineTimer;
import io.buslane.engine.partition.SessionWaiter;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.routing.PartitionDirectory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Attaches receivers: plain receivers on every partition of a queue, a subscription or a dead-letter queue, and
 * session receivers that accept a named session or the next free one. The session requirement of receivers (a
 * session-enabled entity has only session receivers, and the reverse) is checked here.
 */
public final class Receivers {

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
     * Cluster mode: a receiver gets messages from the partitions this node serves; one on an entity none of whose
     * partitions is served here would never get any, so it is refused with SERVER_BUSY (retriable: the SDKs attach
     * again, and the shard may be served here by then).
     */
    private static void requireAPartitionServedHere(Source source) {
        for (PartitionRef ref : source.partitions()) {
            if (ref.shard().serving()) {
                return;
            }
        }
        throw new BrokerException(ErrorKind.SERVER_BUSY, "No partition of '" + source.address()
                + "' is served by this node now. Retry later.");
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
            ref.shard().submit(() -> {
                if (receiver.isClosed()) {
                    return;
                }
                try {
                    SubQueueState q = Source.subQueue(ref, address);
                    receiver.setSlot(index, q.addConsumer(receiver));
                    q.pump();
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
                return ref.shard().call(() -> {
                    SubQueueState q = Source.subQueue(ref, address);
                    var slot = q.acceptSession(sessionId, receiver, ref.shard().nowMs());
                    receiver.setSlot(0, slot);
                    receiver.bindSession(sessionId, q.sessionLockedUntil(sessionId, ref.shard().nowMs(), null));
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
        AtomicBoolean claimed = new AtomicBoolean();
        SessionWaiter waiter = new SessionWaiter() {
            @Override
            public ConsumerHandle consumer() {
                return receiver;
            }

            @Override
            public boolean tryClaim() {
                return claimed.compareAndSet(false, true);
            }

            @Override
            public boolean isClaimed() {
                return claimed.get();
            }

            @Override
            public void onFailed(BrokerException error) {
                if (tryClaim()) {
                    result.completeExceptionally(error);
                }
            }

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
        for (PartitionRef ref : refs) {
            ref.shard().submit(() -> {
                try {
                    Source.subQueue(ref, address).acceptNextSession(waiter);
                } catch (BrokerException e) {
                    if (waiter.tryClaim()) {
                        result.completeExceptionally(e);
                    }
                }
            });
        }
        PartitionRef first = null;
        for (PartitionRef ref : refs) {
            if (ref.shard().serving()) {
                first = ref; // cluster mode: the timer must live on a shard this node serves
                break;
            }
        }
        if (first == null) {
            return CompletableFuture.failedFuture(new BrokerException(ErrorKind.SERVER_BUSY, "No partition of '"
                    + address + "' is served by this node now. Retry later."));
        }
        PartitionRef timerRef = first;
        timerRef.shard().submit(() -> timerRef.shard().schedule(new EngineTimer() {
            @Override
            public void onTimer(long nowMs) {
                if (waiter.tryClaim()) {
                    result.completeExceptionally(new BrokerException(ErrorKind.TIMEOUT, "No session available to "
                            + "accept on '" + address + "' within " + timeoutMs + " ms."));
                }
            }
        }, saturatedAdd(timerRef.shard().nowMs(), Math.max(0, timeoutMs))));
        return result;
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
