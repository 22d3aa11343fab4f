package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.partition.ConsumerHandle;
import io.buslane.engine.partition.ConsumerSlot;
import io.buslane.engine.partition.EngineTimer;
import io.buslane.engine.partition.SessionWaiter;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.remote.PartitionOp;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The owner's side of receivers attached on other nodes (cluster mode). A remote receiver asks for messages with
 * long polls ({@link PartitionOp.Receive}): each poll is a consumer of the partition's sub-queue with a credit
 * of its own, and answers as soon as it has delivered something (after the records behind the deliveries are
 * durable, as for a local receiver), or empty when its wait runs out or the requester ends it
 * ({@link PartitionOp.EndReceive}). A remote session receiver is a <em>holder</em> kept here
 * ({@link PartitionOp.AcceptSession}): it holds the session lock like a local session receiver, its polls
 * take the session's messages, and it goes when released, when the session lock runs out (a requester that died
 * stops renewing) or when this node stops serving the partition.
 */
public final class RemoteConsumers {

    /** How long an ended poll still waits for deliveries its credit was taken for (they follow the next sync). */
    private static final long DELIVERY_GRACE_MS = 2_000;
    /**
     * A poll takes no more messages once those it took reach this many encoded bytes (it takes at least one, of any
     * size the entity allows): an answer stays far below the channel's frame limit, and a slow requester holds at
     * most this much per poll, whatever the size of the messages.
     */
    public static final long MAX_ANSWER_BYTES = 4L * 1024 * 1024;

    private final Namespace namespace;
    private final Clock clock;
    private final Map<UUID, Holder> holders = new ConcurrentHashMap<>();
    private final Map<String, Poll> polls = new ConcurrentHashMap<>();

    public RemoteConsumers(Namespace namespace, Clock clock) {
        this.namespace = namespace;
        this.clock = clock;
    }

    /**
     * The session holder of a remote receiver that an operation names, or null when it names none; fails with
     * SESSION_LOCK_LOST when that holder is gone (its lock was lost with it).
     */
    public ConsumerHandle requireHolder(UUID id) {
        return id == null ? null : holder(id);
    }

    private Holder holder(UUID id) {
        Holder holder = holders.get(id);
        if (holder == null) {
            throw new BrokerException(ErrorKind.SESSION_LOCK_LOST, SubQueueState.SESSION_LOCK_LOST_TEXT);
        }
        return holder;
    }

    /** Remote session holders kept here (a metric, and for tests). */
    public int holders() {
        return holders.size();
    }

    /** A remote receiver's long poll, on this node, which serves the partition. */
    public CompletableFuture<List<ReceivedMessage>> receive(PartitionOp.Receive op) {
        try {
            EntityAddress address = EntityAddress.parse(op.path());
            Source source = Source.of(namespace, address, clock.epochMillis());
            source.requireReceivable();
            return receive(Source.partition(source, op.partition()), address, op);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Locks a session for a remote session receiver, on this node, which serves the partition. */
    public CompletableFuture<PartitionOp.SessionGrant> accept(PartitionOp.AcceptSession op) {
        try {
            EntityAddress address = EntityAddress.parse(op.path());
            Source source = Source.of(namespace, address, clock.epochMillis());
            source.requireReceivable();
            return accept(Source.partition(source, op.partition()), address, op);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // ------------------------------------------------------------------------------------------------ polls

    private CompletableFuture<List<ReceivedMessage>> receive(PartitionRef ref, EntityAddress address,
                                                             PartitionOp.Receive op) {
        Holder holder = op.holder() == null ? null : holder(op.holder());
        Poll poll = new Poll(op.pollKey(), ref, Math.max(1, op.max()), holder,
                op.mode() == null ? ReceiveMode.PEEK_LOCK : op.mode());
        if (op.pollKey() != null) {
            polls.put(op.pollKey(), poll);
        }
        Holder h = holder;
        ref.shard().call(() -> {
            if (h == null) {
                SubQueueState q = Source.subQueue(ref, address);
                poll.slot = q.deliveries().addConsumer(poll);
                q.deliveries().pump();
            } else {
                Poll old = h.poll;
                if (old != null) {
                    // the requester gave up on it (its answer timed out) and asks again: what the old poll took
                    // and has not been handed yet comes to this one, and the old one answers now (to nobody)
                    poll.acquired += old.acquired - old.got.size();
                    old.acquired = old.got.size();
                    old.end();
                }
                h.poll = poll;
                h.slot.queue().deliveries().pumpSessionOf(h.slot);
            }
            poll.arm(Math.max(0, op.waitMs()));
            return null;
        }).whenComplete((x, failure) -> {
            if (failure != null) {
                polls.remove(op.pollKey() == null ? "" : op.pollKey());
                poll.result.completeExceptionally(RemoteFeed.cause(failure));
            }
        });
        return poll.result;
    }

    /** Ends a remote receiver's poll now, with what it has. */
    public CompletableFuture<Void> endReceive(PartitionOp.EndReceive op) {
        String key = op.pollKey();
        Poll poll = key == null ? null : polls.get(key);
        if (poll == null) {
            return CompletableFuture.completedFuture(null);
        }
        return poll.ref.shard().call(() -> {
            poll.end();
            return null;
        });
    }

    /**
     * One long poll: a consumer whose credit is the poll's size. Confined to the shard thread. It answers once
     * every message it took credit for was handed to it, with something or when it ends.
     */
    private final class Poll extends EngineTimer implements ConsumerHandle {
        final String key;
        final PartitionRef ref;
        final int max;
        final Holder holder;
        final ReceiveMode mode;
        final CompletableFuture<List<ReceivedMessage>> result = new CompletableFuture<>();
        final List<ReceivedMessage> got = new ArrayList<>();
        ConsumerSlot slot;
        int acquired;
        /** Encoded bytes of the messages taken so far (see {@link #MAX_ANSWER_BYTES}). */
        long takenBytes;
        boolean ending;
        boolean armed;
        BrokerException error;

        Poll(String key, PartitionRef ref, int max, Holder holder, ReceiveMode mode) {
            this.key = key;
            this.ref = ref;
            this.max = max;
            this.holder = holder;
            this.mode = holder != null ? holder.mode : mode;
        }

        void arm(long waitMs) {
            if (result.isDone()) {
                return;
            }
            if (waitMs == 0) {
                end();
                return;
            }
            armed = true;
            ref.shard().schedule(this, ref.shard().nowMs() + waitMs);
        }

        @Override
        public void onTimer(long nowMs) {
            armed = false;
            if (ending) {
                // the grace below ran out: deliveries that never came (a failed sync drops them; their messages
                // stay locked until their lock expires) are not waited for any longer
                acquired = got.size();
            }
            end();
        }

        void end() {
            ending = true;
            maybeFinish();
            if (!result.isDone() && !armed) {
                armed = true; // deliveries on their way (after the sync): a little more time for them
                ref.shard().schedule(this, ref.shard().nowMs() + DELIVERY_GRACE_MS);
            }
        }

        private void maybeFinish() {
            if (result.isDone() || got.size() < acquired || !ending && got.isEmpty()) {
                return; // deliveries on their way, or nothing yet to answer with
            }
            ending = true;
            if (key != null) {
                polls.remove(key);
            }
            if (armed) {
                armed = false;
                ref.shard().cancel(this);
            }
            if (slot != null) {
                slot.queue().deliveries().removeConsumer(slot);
            }
            if (holder != null && holder.poll == this) {
                holder.poll = null;
            }
            if (got.isEmpty() && error != null) {
                result.completeExceptionally(error);
            } else {
                result.complete(List.copyOf(got));
            }
        }

        @Override
        public ReceiveMode mode() {
            return mode;
        }

        @Override
        public boolean tryAcquireCredit() {
            if (ending || acquired >= max || takenBytes >= MAX_ANSWER_BYTES && acquired > 0) {
                return false;
            }
            acquired++;
            return true;
        }

        @Override
        public void taking(int sizeBytes) {
            takenBytes += sizeBytes;
        }

        @Override
        public void releaseCredit() {
            acquired--;
            if (ending || !got.isEmpty()) { // given back with messages in hand (a hand-over held back): answer
                ref.shard().afterSync(this::maybeFinish); // not now: the pump that gave it back is still running
            }
        }

        @Override
        public void deliver(ReceivedMessage message) {
            got.add(message);
            maybeFinish();
        }

        @Override
        public void closedByEngine(BrokerException why) {
            error = why;
            acquired = got.size(); // what was not handed over stays locked (or is gone) at this node
            end();
        }
    }

    // ------------------------------------------------------------------------------------------------ sessions

    private CompletableFuture<PartitionOp.SessionGrant> accept(PartitionRef ref, EntityAddress address,
                                                               PartitionOp.AcceptSession op) {
        Holder holder = new Holder(UUID.randomUUID(), ref, op.mode() == null ? ReceiveMode.PEEK_LOCK : op.mode());
        if (op.sessionId() != null) {
            return ref.shard().call(() -> {
                SubQueueState q = Source.subQueue(ref, address);
                long now = ref.shard().nowMs();
                holder.slot = q.deliveries().acceptSession(op.sessionId(), holder, now);
                holders.put(holder.id, holder);
                return new PartitionOp.SessionGrant(holder.id, op.sessionId(),
                        q.sessions().lockedUntil(op.sessionId(), now, null));
            });
        }
        CompletableFuture<PartitionOp.SessionGrant> result = new CompletableFuture<>();
        SessionWaiter waiter = new OnceWaiter(holder, result) {
            @Override
            public void onAccepted(ConsumerSlot slot, String id, long lockedUntilMs) {
                holder.slot = slot;
                holders.put(holder.id, holder);
                result.complete(new PartitionOp.SessionGrant(holder.id, id, lockedUntilMs));
            }
        };
        long waitMs = Math.max(0, op.waitMs());
        ref.shard().call(() -> {
            Source.subQueue(ref, address).deliveries().acceptNextSession(waiter);
            ref.shard().schedule(new EngineTimer() {
                @Override
                public void onTimer(long nowMs) {
                    if (waiter.tryClaim()) {
                        result.completeExceptionally(new BrokerException(ErrorKind.TIMEOUT, "No session available "
                                + "to accept on '" + address + "' within " + waitMs + " ms."));
                    }
                }
            }, ref.shard().nowMs() + waitMs);
            return null;
        }).whenComplete((x, failure) -> {
            if (failure != null && waiter.tryClaim()) {
                result.completeExceptionally(RemoteFeed.cause(failure));
            }
        });
        return result;
    }

    /** A remote session receiver's holder lets its session go. */
    public CompletableFuture<Void> release(PartitionOp.ReleaseSession op) {
        UUID id = op.holder();
        Holder holder = id == null ? null : holders.remove(id);
        if (holder == null) {
            return CompletableFuture.completedFuture(null);
        }
        return holder.ref.shard().call(() -> {
            if (holder.poll != null) {
                holder.poll.end();
            }
            // the session is free again, no delivery counted
            holder.slot.queue().deliveries().removeConsumer(holder.slot);
            return null;
        });
    }

    /**
     * A remote session receiver's stand-in: holds the session lock; its current poll takes the credit and the
     * messages. Confined to the shard thread, except its registration.
     */
    private final class Holder implements ConsumerHandle {
        final UUID id;
        final PartitionRef ref;
        final ReceiveMode mode;
        ConsumerSlot slot;
        Poll poll;

        Holder(UUID id, PartitionRef ref, ReceiveMode mode) {
            this.id = id;
            this.ref = ref;
            this.mode = mode;
        }

        @Override
        public ReceiveMode mode() {
            return mode;
        }

        @Override
        public boolean tryAcquireCredit() {
            return poll != null && poll.tryAcquireCredit();
        }

        @Override
        public void taking(int sizeBytes) {
            if (poll != null) {
                poll.taking(sizeBytes); // the session's poll is bounded in bytes as any other
            }
        }

        @Override
        public void releaseCredit() {
            if (poll != null) {
                poll.releaseCredit();
            }
        }

        @Override
        public void deliver(ReceivedMessage message) {
            if (poll != null) {
                poll.deliver(message);
            } // else its poll ended by a failure: the message stays locked under the session until released
        }

        @Override
        public void closedByEngine(BrokerException error) {
            holders.remove(id);
            if (poll != null) {
                poll.closedByEngine(error);
            }
        }
    }
}
