package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.partition.ConsumerHandle;
import io.buslane.engine.partition.ConsumerSlot;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A receiver attached to a queue, a subscription or one of their dead-letter queues, or holding one session.
 * Thread-safe: every method may be called from any thread; work is handed to the shards that own the
 * partitions. Messages arrive at the {@link DeliverySink}, one unit of credit each; the credit is shared by all
 * partitions of the entity and taken atomically, so a receiver never gets more messages than it asked for.
 */
public final class Receiver implements ConsumerHandle {

    private static final AtomicLong IDS = new AtomicLong();

    private final long id = IDS.incrementAndGet();
    private final Settlements settlements;
    private final SessionStates sessions;
    private final EngineStats stats;
    private final EntityAddress address;
    private final ReceiveMode mode;
    private final DeliverySink sink;
    private final AtomicLong credit = new AtomicLong();
    /** One feed per partition of the entity (one for a session receiver): local, or remote in cluster mode. */
    private volatile PartitionFeed[] feeds;
    private volatile boolean closed;
    private volatile String sessionId;
    private volatile long sessionLockedUntilMs;

    Receiver(Settlements settlements, SessionStates sessions, EngineStats stats, EntityAddress address,
             ReceiveMode mode, DeliverySink sink) {
        this.settlements = settlements;
        this.sessions = sessions;
        this.stats = stats;
        this.address = address;
        this.mode = mode;
        this.sink = sink;
    }

    /** Binds the receiver to the entity's partitions (one for a session receiver), each fed locally at first. */
    void bind(PartitionRef[] refs) {
        PartitionFeed[] f = new PartitionFeed[refs.length];
        for (int i = 0; i < refs.length; i++) {
            f[i] = new LocalFeed(this, refs[i]);
        }
        this.feeds = f;
    }

    /** Cluster mode: partition {@code i} is served by another node and fed by {@code feed}. */
    void bindRemote(int i, RemoteFeed feed) {
        feeds[i] = feed;
    }

    /** The session holder the owner node keeps for this receiver (cluster mode), or null. */
    public UUID remoteSessionHolder() {
        PartitionFeed[] f = feeds;
        return f != null && f.length == 1 ? f[0].holder() : null;
    }

    /** The receiver's slot on local partition {@code i}: called on the owning shard thread. */
    void setSlot(int i, ConsumerSlot slot) {
        ((LocalFeed) feeds[i]).attached(slot);
    }

    void bindSession(String id, long lockedUntilMs) {
        this.sessionId = id;
        this.sessionLockedUntilMs = lockedUntilMs;
    }

    public long id() {
        return id;
    }

    public EntityAddress address() {
        return address;
    }

    @Override
    public ReceiveMode mode() {
        return mode;
    }

    /** The session this receiver holds, or null for a non-session receiver. */
    public String sessionId() {
        return sessionId;
    }

    /** When the held session's lock expires (epoch ms), or 0. */
    public long sessionLockedUntilMs() {
        return sessionLockedUntilMs;
    }

    public boolean isClosed() {
        return closed;
    }

    /** Credit not yet used. */
    public long credit() {
        return credit.get();
    }

    /** Grants {@code n} more messages. */
    public void addCredit(int n) {
        if (n <= 0 || closed) {
            return;
        }
        credit.addAndGet(n);
        kick();
    }

    void kick() {
        kick(true);
    }

    /** Pumps the partitions served here, and polls those served elsewhere when {@code remoteToo}. */
    void kick(boolean remoteToo) {
        for (PartitionFeed feed : feeds) {
            feed.kick(remoteToo);
        }
    }

    /**
     * Delivers what is available now, then takes back the unused credit; completes with the credit drained once
     * every partition has been asked and the deliveries it made have been handed to the sink.
     */
    public CompletableFuture<Long> drain() {
        CompletableFuture<Long> done = new CompletableFuture<>();
        PartitionFeed[] f = feeds;
        AtomicInteger remaining = new AtomicInteger(f.length);
        Runnable answered = () -> {
            if (remaining.decrementAndGet() == 0) {
                long drained = credit.getAndSet(0);
                boolean polls = false;
                for (PartitionFeed feed : f) {
                    polls |= feed.endDrain();
                }
                if (polls && credit.get() > 0) {
                    kick(); // credit granted while the drain finished: the remote feeds poll again for it
                }
                done.complete(drained);
            }
        };
        for (PartitionFeed feed : f) {
            feed.drain(answered);
        }
        return done;
    }

    public CompletableFuture<Void> complete(UUID lockToken) {
        return settlements.complete(address, lockToken);
    }

    public CompletableFuture<Void> abandon(UUID lockToken, Map<String, Object> propertiesToModify) {
        return settlements.abandon(address, lockToken, propertiesToModify);
    }

    public CompletableFuture<Void> defer(UUID lockToken, Map<String, Object> propertiesToModify) {
        return settlements.defer(address, lockToken, propertiesToModify);
    }

    public CompletableFuture<Void> deadLetter(UUID lockToken, String reason, String description,
                                              Map<String, Object> propertiesToModify) {
        return settlements.deadLetter(address, lockToken, reason, description, propertiesToModify);
    }

    public CompletableFuture<Long> renewLock(UUID lockToken) {
        return settlements.renewLock(address, lockToken);
    }

    /** Unlocks a message without counting a delivery. */
    CompletableFuture<Void> release(UUID lockToken) {
        return settlements.release(address, lockToken);
    }

    /** Renews the held session's lock. */
    public CompletableFuture<Long> renewSessionLock() {
        String sid = sessionId;
        if (sid == null) {
            return CompletableFuture.failedFuture(new BrokerException(
                    ErrorKind.INVALID_OPERATION, "The receiver holds no session."));
        }
        return sessions.renewSessionLock(address, sid, this).thenApply(until -> {
            sessionLockedUntilMs = until;
            return until;
        });
    }

    /**
     * Detaches the receiver. A held session is released without counting a delivery; locked messages stay
     * locked until settled or until their lock expires.
     */
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        detach();
    }

    /** Leaves every partition: the remote feeds end their polls, the local slots are removed on their shards. */
    private void detach() {
        PartitionFeed[] f = feeds;
        if (f == null) {
            return;
        }
        for (PartitionFeed feed : f) {
            feed.close();
        }
    }

    // ------------------------------------------------------------------------------------------------ ConsumerHandle

    @Override
    public boolean tryAcquireCredit() {
        while (true) {
            long c = credit.get();
            if (c <= 0 || closed) {
                if (!closed) {
                    preemptRemotePolls();
                }
                return false;
            }
            if (credit.compareAndSet(c, c - 1)) {
                return true;
            }
        }
    }

    @Override
    public void releaseCredit() {
        credit.incrementAndGet();
    }

    /**
     * Cluster mode: a partition served here has a message and no credit is left while remote polls hold some: they
     * are ended (answering with what they have), so that the credit comes back and is shared out again.
     */
    private void preemptRemotePolls() {
        PartitionFeed[] f = feeds;
        if (f == null || f.length < 2) {
            return;
        }
        for (PartitionFeed feed : f) {
            feed.preempt();
        }
    }

    /**
     * Takes up to {@code max} units of credit at once for a remote poll, and at most an even share of what is left
     * among the receiver's partitions (at least one); returns how many.
     */
    int takeCredit(int max) {
        int ways = feeds.length;
        while (true) {
            long c = credit.get();
            if (c <= 0 || closed) {
                return 0;
            }
            int n = (int) Math.min(Math.max(1, c / ways), max);
            if (credit.compareAndSet(c, c - n)) {
                return n;
            }
        }
    }

    /** Gives back credit a remote poll took and did not use. */
    void giveBackCredit(int n) {
        if (n > 0) {
            credit.addAndGet(n);
        }
    }

    @Override
    public void deliver(ReceivedMessage message) {
        stats.onDelivered(); // ops (metrics)
        sink.onMessage(this, message);
    }

    @Override
    public void closedByEngine(BrokerException error) {
        closed = true;
        detach(); // the other partitions (cluster mode: one stopped serving, or a remote one failed) let go too
        sink.onClosed(this, error);
    }

    @Override
    public String toString() {
        return "Receiver{" + id + ", " + address + (sessionId == null ? "" : ", session=" + sessionId) + '}';
    }
}
