package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.remote.PartitionOp;
import io.buslane.engine.remote.RemotePartitions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Cluster mode: a receiver's messages from one partition served by another node. One long poll at a time
 * ({@link PartitionOp.Receive}) takes up to {@link #BATCH} units of the receiver's shared credit; its answer
 * hands the messages to the receiver, gives back the unused credit and polls again while credit is left. A drain
 * ends the poll in flight at once. A poll that fails retriably (the shard is moving, the owner is busy or did not
 * answer) is retried with a growing pause; any other failure (the session lock was lost, the entity is gone)
 * closes the receiver as the engine would. Thread-safe.
 */
final class RemoteFeed implements PartitionFeed {

    private static final Logger LOG = LoggerFactory.getLogger(RemoteFeed.class);
    /** The most messages one poll asks for. */
    static final int BATCH = 256;
    /** How long the owner may hold a poll open: well below the cluster channel's answer timeout. */
    static final long WAIT_MS = 5_000;
    /** A shorter wait when the entity has other partitions, which the credit a poll holds may be wanted for. */
    static final long SHARED_CREDIT_WAIT_MS = 1_000;

    private final Receiver receiver;
    private final RemotePartitions remote;
    private final int shard;
    private final String path;
    private final int partition;
    private final UUID holder;
    private final long waitMs;
    private boolean inFlight;
    private String pollKey;
    private boolean closed;
    private boolean draining;
    private boolean preempted;
    private CompletableFuture<Void> drained;
    private int failures;

    RemoteFeed(Receiver receiver, RemotePartitions remote, int shard, String path, int partition, UUID holder,
               long waitMs) {
        this.receiver = receiver;
        this.remote = remote;
        this.shard = shard;
        this.path = path;
        this.partition = partition;
        this.holder = holder;
        this.waitMs = waitMs;
    }

    /** The owner's session holder this feed receives for, or null for a non-session receiver. */
    @Override
    public UUID holder() {
        return holder;
    }

    @Override
    public void kick(boolean polls) {
        if (polls) {
            kick();
        }
    }

    /** Polls if credit is left and no poll is in flight. */
    void kick() {
        PartitionOp.Receive op;
        int taken;
        synchronized (this) {
            if (closed || inFlight || draining && drained == null) {
                return;
            }
            taken = receiver.takeCredit(BATCH);
            if (taken == 0) {
                finishDrain();
                return;
            }
            inFlight = true;
            pollKey = UUID.randomUUID().toString();
            op = new PartitionOp.Receive(path, partition, pollKey, holder, taken, receiver.mode(),
                    draining ? 0 : waitMs);
        }
        remote.call(shard, op).whenComplete((result, failure) -> answered(taken, result, failure));
    }

    @Override
    public void drain(Runnable answered) {
        drain().thenRun(answered);
    }

    /**
     * Hands over what is available now: ends the poll in flight (or polls once without waiting); completes when
     * its answer was handed to the receiver. No poll starts after that until {@link #endDrain()}.
     */
    CompletableFuture<Void> drain() {
        CompletableFuture<Void> done;
        String key;
        boolean poll;
        synchronized (this) {
            if (closed) {
                return CompletableFuture.completedFuture(null);
            }
            if (draining && drained != null) {
                return drained; // a drain under way: this one ends with it
            }
            draining = true;
            drained = done = new CompletableFuture<>();
            key = inFlight ? pollKey : null;
            poll = !inFlight;
        }
        if (key != null) {
            end(key);
        } else if (poll) {
            kick();
        }
        return done;
    }

    /** The receiver's drain is over: polls may start again. */
    @Override
    public synchronized boolean endDrain() {
        draining = false;
        drained = null;
        return true;
    }

    /** Ends the poll in flight, once, so that the credit it holds comes back (another partition has messages). */
    @Override
    public void preempt() {
        String key;
        synchronized (this) {
            if (!inFlight || preempted || closed) {
                return;
            }
            preempted = true;
            key = pollKey;
        }
        end(key);
    }

    /** Detaches: ends the poll in flight and lets the owner's session holder go. */
    @Override
    public void close() {
        String key;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            key = inFlight ? pollKey : null;
            finishDrain();
        }
        if (key != null) {
            end(key);
        }
        if (holder != null) {
            remote.call(shard, new PartitionOp.ReleaseSession(path, partition, holder)).exceptionally(e -> {
                LOG.debug("Could not release the remote session of {}: {}", receiver, e.toString());
                return null;
            });
        }
    }

    private void end(String key) {
        remote.call(shard, new PartitionOp.EndReceive(path, partition, key)).exceptionally(e -> null);
    }

    private void answered(int taken, List<ReceivedMessage> result, Throwable failure) {
        List<ReceivedMessage> got = failure == null && result != null ? result : List.of();
        boolean wasClosed;
        boolean wasPreempted;
        synchronized (this) {
            inFlight = false;
            pollKey = null;
            wasPreempted = preempted;
            preempted = false;
            wasClosed = closed;
        }
        if (wasClosed) {
            receiver.giveBackCredit(taken);
            letGo(got);
            return;
        }
        receiver.giveBackCredit(taken - got.size());
        for (ReceivedMessage m : got) {
            receiver.deliver(m);
        }
        if (failure != null) {
            BrokerException error = brokerError(failure);
            if (!retriable(error)) {
                close();
                receiver.closedByEngine(error);
                return;
            }
            int n;
            synchronized (this) {
                n = ++failures;
                finishDrain();
            }
            long pauseMs = Math.min(2_000, 50L << Math.min(n, 6));
            remote.schedule(this::kick, pauseMs);
            return;
        }
        synchronized (this) {
            failures = 0;
            if (draining) {
                finishDrain();
                return;
            }
        }
        if (wasPreempted && got.isEmpty()) {
            // ended for a partition served here that has messages: it gets the credit first, this one polls a
            // moment later (else the two would take the same credit from each other without end)
            receiver.kick(false);
            remote.schedule(this::kick, 50);
            return;
        }
        receiver.kick(); // every partition: the credit given back may be wanted elsewhere, and this one polls again
    }

    /** Messages that came for a receiver that closed meanwhile: released (no delivery counted) when locked. */
    private void letGo(List<ReceivedMessage> got) {
        for (ReceivedMessage m : got) {
            if (receiver.mode() == ReceiveMode.PEEK_LOCK && m.lockToken() != null && holder == null) {
                receiver.release(m.lockToken());
            } else if (receiver.mode() == ReceiveMode.RECEIVE_AND_DELETE) {
                LOG.warn("A message received and deleted for {} arrived after it closed: sequence number {} is lost "
                        + "(receive-and-delete gives at most once)", receiver, m.sequenceNumber());
            }
        }
    }

    private void finishDrain() {
        CompletableFuture<Void> d = drained;
        if (d != null) {
            drained = null;
            d.complete(null);
        }
    }

    /** The failure a future completed with, without the CompletionException around it. */
    static Throwable cause(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** A remote operation's failure as the engine's error (anything else: the other node did not answer). */
    static BrokerException brokerError(Throwable failure) {
        Throwable cause = cause(failure);
        return cause instanceof BrokerException be ? be : new BrokerException(ErrorKind.SERVER_BUSY,
                "The node serving the partition did not answer: " + cause);
    }

    private static boolean retriable(BrokerException e) {
        return e.kind() == ErrorKind.SERVER_BUSY || e.kind() == ErrorKind.TIMEOUT;
    }
}
