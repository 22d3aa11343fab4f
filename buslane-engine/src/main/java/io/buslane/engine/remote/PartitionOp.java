package io.buslane.engine.remote;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.ConsumerHandle;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.SubQueueState;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * One unary operation on one partition of an entity, as a value: what a front end asks of a partition whose shard
 * may be served by another node (cluster mode), carried there by {@link RemotePartitions} and run by the owner's
 * {@link Runner}. Each kind is a record with only its own fields and a typed result ({@code R}); its code and body
 * on the channel are {@link #code()} and {@link #write} (read back through {@link OpCode}), its result's bytes
 * {@link #result()}. What runs on a partition or a sub-queue is the value's own {@code apply}, on the shard thread:
 * the local call and the owner of a carried one run that same method.
 *
 * @param <R> what the operation answers ({@link Void} for "done")
 */
public sealed interface PartitionOp<R> {

    /** The address the front end gave (a queue, topic, subscription, or one of their sub-queues). */
    String path();

    /** The partition index within the entity. */
    int partition();

    /** The operation's code on the channel. */
    OpCode code();

    /** How the result travels back. */
    OpResult<R> result();

    /** Fills the body's slots this operation uses. */
    void write(OpSlots slots);

    /**
     * Whether it may be sent again on a new connection when the one it went on closed before the answer: a send
     * with a transfer key (the owner takes it once) and the reads. Not a purge: sent again after its answer was
     * lost it would delete what arrived since the first one ran, and answer the wrong count.
     */
    default boolean resendable() {
        return false;
    }

    /** Runs it on the owner's side ({@link Runner} resolves the partition, refuses what this node does not serve). */
    CompletableFuture<R> runAt(Runner runner);

    /**
     * The owning node's side: resolves what an operation names, refuses what this node does not serve (SERVER_BUSY,
     * never carried on to a third node), and runs it. One method per way of resolving; a new kind of operation that
     * needs a new one fails to compile until it is served.
     */
    interface Runner {
        /** On a partition of the queue or topic a send goes to ({@link OnSendTarget#checksSendable()}). */
        <R> CompletableFuture<R> onSendTarget(OnSendTarget<R> op);

        /** On the sub-queue (of a partition of a queue or subscription) the path names. */
        <R> CompletableFuture<R> onSubQueue(OnSubQueue<R> op);

        CompletableFuture<List<ReceivedMessage>> peekScheduled(PeekScheduled op);

        CompletableFuture<RuntimeCounts> counts(Counts op);

        /** On the partition of the queue or subscription the path names. */
        CompletableFuture<List<String>> listSessions(ListSessions op);

        CompletableFuture<Void> commit(Commit op);

        CompletableFuture<List<ReceivedMessage>> receive(Receive op);

        CompletableFuture<Void> endReceive(EndReceive op);

        CompletableFuture<SessionGrant> acceptSession(AcceptSession op);

        CompletableFuture<Void> releaseSession(ReleaseSession op);
    }

    /** An operation on a partition of the entity a send goes to, run by {@link #apply} on its shard thread. */
    sealed interface OnSendTarget<R> extends PartitionOp<R> {
        R apply(Partition p, long nowMs);

        /** Whether the target must take sends now (active, not send-disabled). */
        default boolean checksSendable() {
            return true;
        }

        /** Messages it counts as sent once durable. */
        default int sent() {
            return 0;
        }

        @Override
        default CompletableFuture<R> runAt(Runner runner) {
            return runner.onSendTarget(this);
        }
    }

    /** An operation on one sub-queue, run by {@link #apply} on its shard thread. */
    sealed interface OnSubQueue<R> extends PartitionOp<R> {
        /**
         * @param by the receiver the operation is for (a local one, or the owner's holder for a remote session
         *           receiver), or null for any
         */
        R apply(SubQueueState q, long nowMs, ConsumerHandle by);

        /** The owner's holder for the remote session receiver it is for, or null. */
        default UUID holder() {
            return null;
        }

        @Override
        default CompletableFuture<R> runAt(Runner runner) {
            return runner.onSubQueue(this);
        }
    }

    /**
     * What {@link AcceptSession} answers: the id of the holder the owner keeps for the remote receiver, the session,
     * and when its lock expires (epoch ms).
     */
    record SessionGrant(UUID holder, String sessionId, long lockedUntilMs) {
    }

    // ================================================================================================ sending

    /** A send's share for one partition; with a transfer key, taken once per key (a forward or a carried send). */
    record Send(String path, int partition, List<Message> messages, String transferKey) implements OnSendTarget<Void> {
        @Override
        public Void apply(Partition p, long nowMs) {
            if (transferKey == null) {
                p.send(messages, nowMs);
            } else {
                p.acceptForwarded(messages, transferKey, nowMs);
            }
            return null;
        }

        @Override
        public int sent() {
            return messages.size();
        }

        @Override
        public boolean resendable() {
            return transferKey != null;
        }

        @Override
        public OpCode code() {
            return OpCode.SEND;
        }

        @Override
        public OpResult<Void> result() {
            return OpResult.NONE;
        }

        @Override
        public void write(OpSlots s) {
            s.messages = messages;
            s.key = transferKey;
        }

        static PartitionOp<?> read(OpSlots s) {
            if (s.key != null && s.sequences != null && s.sequences.length == 1) {
                return new SendScheduled(s.path, s.partition, s.message(), s.key, s.sequences[0]);
            }
            return new Send(s.path, s.partition, s.requiredMessages(), s.key);
        }
    }

    /**
     * A message scheduled under a transaction through a via entity, forwarded once it committed: stored as scheduled
     * under the number this partition reserved for it ({@link ReserveScheduled}), once per transfer key. On the
     * channel a {@link OpCode#SEND} with one sequence number.
     */
    record SendScheduled(String path, int partition, Message message, String transferKey, long reservedSequence)
            implements OnSendTarget<Void> {
        @Override
        public Void apply(Partition p, long nowMs) {
            p.acceptForwardedScheduled(message, reservedSequence, transferKey, nowMs);
            return null;
        }

        @Override
        public boolean resendable() {
            return true;
        }

        @Override
        public OpCode code() {
            return OpCode.SEND;
        }

        @Override
        public OpResult<Void> result() {
            return OpResult.NONE;
        }

        @Override
        public void write(OpSlots s) {
            s.messages = List.of(message);
            s.key = transferKey;
            s.sequences = new long[] {reservedSequence};
        }
    }

    /** The schedule operation: answers the sequence number. */
    record Schedule(String path, int partition, Message message) implements OnSendTarget<Long> {
        @Override
        public Long apply(Partition p, long nowMs) {
            return p.scheduleRequested(message, message.scheduledEnqueueTimeMs(), nowMs);
        }

        @Override
        public int sent() {
            return 1;
        }

        @Override
        public OpCode code() {
            return OpCode.SCHEDULE;
        }

        @Override
        public OpResult<Long> result() {
            return OpResult.LONG;
        }

        @Override
        public void write(OpSlots s) {
            s.messages = List.of(message);
        }

        static Schedule read(OpSlots s) {
            return new Schedule(s.path, s.partition, s.message());
        }
    }

    /** A sequence number reserved for a message scheduled under a transaction (stored at commit). */
    record ReserveScheduled(String path, int partition, Message message) implements OnSendTarget<Long> {
        @Override
        public Long apply(Partition p, long nowMs) {
            return p.reserveScheduled(message);
        }

        @Override
        public OpCode code() {
            return OpCode.RESERVE_SCHEDULED;
        }

        @Override
        public OpResult<Long> result() {
            return OpResult.LONG;
        }

        @Override
        public void write(OpSlots s) {
            s.messages = List.of(message);
        }

        static ReserveScheduled read(OpSlots s) {
            return new ReserveScheduled(s.path, s.partition, s.message());
        }
    }

    /** Cancels scheduled messages. */
    record CancelScheduled(String path, int partition, long[] sequences) implements OnSendTarget<Void> {
        @Override
        public Void apply(Partition p, long nowMs) {
            for (long seq : sequences) {
                p.cancelScheduled(seq);
            }
            return null;
        }

        @Override
        public boolean checksSendable() {
            return false;
        }

        @Override
        public OpCode code() {
            return OpCode.CANCEL_SCHEDULED;
        }

        @Override
        public OpResult<Void> result() {
            return OpResult.NONE;
        }

        @Override
        public void write(OpSlots s) {
            s.sequences = sequences;
        }

        static CancelScheduled read(OpSlots s) {
            return new CancelScheduled(s.path, s.partition, s.requiredSequences());
        }
    }

    // ================================================================================================ settling

    /** A settlement by lock token. */
    record Settle(String path, int partition, Disposition disposition, UUID lockToken, Map<String, Object> properties,
                  String reason, String description) implements OnSubQueue<Void> {

        /** How a message is settled; each is its own code on the channel. */
        public enum Disposition {
            COMPLETE(OpCode.COMPLETE), ABANDON(OpCode.ABANDON), RELEASE(OpCode.RELEASE), DEFER(OpCode.DEFER),
            DEAD_LETTER(OpCode.DEAD_LETTER);

            private final OpCode code;

            Disposition(OpCode code) {
                this.code = code;
            }
        }

        @Override
        public Void apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            switch (disposition) {
                case COMPLETE -> q.settlements().complete(lockToken, nowMs);
                case ABANDON -> q.settlements().abandon(lockToken, properties, nowMs);
                case RELEASE -> q.settlements().release(lockToken, nowMs);
                case DEFER -> q.settlements().defer(lockToken, properties, nowMs);
                case DEAD_LETTER -> q.settlements().deadLetter(lockToken, reason, description, properties, nowMs);
                default -> throw new IllegalStateException(disposition.name());
            }
            return null;
        }

        @Override
        public OpCode code() {
            return disposition.code;
        }

        @Override
        public OpResult<Void> result() {
            return OpResult.NONE;
        }

        @Override
        public void write(OpSlots s) {
            s.lockToken = lockToken;
            s.properties = properties;
            s.reason = reason;
            s.description = description;
        }

        static Settle read(Disposition disposition, OpSlots s) {
            return new Settle(s.path, s.partition, disposition, s.lockToken, s.properties, s.reason, s.description);
        }
    }

    /** Renews a message lock: answers the new locked-until time. */
    record RenewLock(String path, int partition, UUID lockToken) implements OnSubQueue<Long> {
        @Override
        public Long apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            return q.settlements().renewLock(lockToken, nowMs);
        }

        @Override
        public OpCode code() {
            return OpCode.RENEW_LOCK;
        }

        @Override
        public OpResult<Long> result() {
            return OpResult.LONG;
        }

        @Override
        public void write(OpSlots s) {
            s.lockToken = lockToken;
        }

        static RenewLock read(OpSlots s) {
            return new RenewLock(s.path, s.partition, s.lockToken);
        }
    }

    /** Receives deferred messages by sequence number (for the remote session receiver {@code holder}, if any). */
    record ReceiveDeferred(String path, int partition, long[] sequences, ReceiveMode mode, String sessionId,
                           UUID holder) implements OnSubQueue<List<ReceivedMessage>> {
        @Override
        public List<ReceivedMessage> apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            return q.settlements().receiveDeferred(sequences, mode, sessionId, by, nowMs);
        }

        @Override
        public OpCode code() {
            return OpCode.RECEIVE_DEFERRED;
        }

        @Override
        public OpResult<List<ReceivedMessage>> result() {
            return OpResult.RECEIVED;
        }

        @Override
        public void write(OpSlots s) {
            s.sequences = sequences;
            s.sessionId = sessionId;
            s.mode = mode;
            s.lockToken = holder;
        }

        static ReceiveDeferred read(OpSlots s) {
            return new ReceiveDeferred(s.path, s.partition, s.requiredSequences(), s.mode, s.sessionId, s.lockToken);
        }
    }

    // ================================================================================================ browsing

    /** Browses a sub-queue from a sequence number (of one session when {@code sessionId} is set). */
    record Peek(String path, int partition, long fromSequence, int max, String sessionId)
            implements OnSubQueue<List<ReceivedMessage>> {
        @Override
        public List<ReceivedMessage> apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            return q.partition().peek(q, fromSequence, max, sessionId);
        }

        @Override
        public boolean resendable() {
            return true;
        }

        @Override
        public OpCode code() {
            return OpCode.PEEK;
        }

        @Override
        public OpResult<List<ReceivedMessage>> result() {
            return OpResult.RECEIVED;
        }

        @Override
        public void write(OpSlots s) {
            s.sequences = new long[] {fromSequence};
            s.max = max;
            s.sessionId = sessionId;
        }

        static Peek read(OpSlots s) {
            return new Peek(s.path, s.partition, s.sequence(), s.max, s.sessionId);
        }
    }

    /** Browses a topic partition's scheduled messages from a sequence number. */
    record PeekScheduled(String path, int partition, long fromSequence, int max)
            implements PartitionOp<List<ReceivedMessage>> {
        /** Runs on the shard thread of the topic partition. */
        public List<ReceivedMessage> apply(Partition p) {
            return p.peekScheduled(fromSequence, max);
        }

        @Override
        public boolean resendable() {
            return true;
        }

        @Override
        public CompletableFuture<List<ReceivedMessage>> runAt(Runner runner) {
            return runner.peekScheduled(this);
        }

        @Override
        public OpCode code() {
            return OpCode.PEEK_SCHEDULED;
        }

        @Override
        public OpResult<List<ReceivedMessage>> result() {
            return OpResult.RECEIVED;
        }

        @Override
        public void write(OpSlots s) {
            s.sequences = new long[] {fromSequence};
            s.max = max;
        }

        static PeekScheduled read(OpSlots s) {
            return new PeekScheduled(s.path, s.partition, s.sequence(), s.max);
        }
    }

    /** The counts of a queue, topic or subscription partition. */
    record Counts(String path, int partition) implements PartitionOp<RuntimeCounts> {
        /** Runs on the shard thread of the queue or topic partition. */
        public RuntimeCounts apply(Partition p) {
            EntityAddress address = EntityAddress.parse(path);
            return address.subscription() == null ? p.counts() : p.subscriptionCounts(address.subscription());
        }

        @Override
        public boolean resendable() {
            return true;
        }

        @Override
        public CompletableFuture<RuntimeCounts> runAt(Runner runner) {
            return runner.counts(this);
        }

        @Override
        public OpCode code() {
            return OpCode.COUNTS;
        }

        @Override
        public OpResult<RuntimeCounts> result() {
            return OpResult.COUNTS;
        }

        @Override
        public void write(OpSlots s) {
            // the target only
        }

        static Counts read(OpSlots s) {
            return new Counts(s.path, s.partition);
        }
    }

    /** Deletes every message of the sub-queue's partition: answers how many. */
    record Purge(String path, int partition) implements OnSubQueue<Integer> {
        @Override
        public Integer apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            return q.purge();
        }

        @Override
        public OpCode code() {
            return OpCode.PURGE;
        }

        @Override
        public OpResult<Integer> result() {
            return OpResult.COUNT;
        }

        @Override
        public void write(OpSlots s) {
            // the target only
        }

        static Purge read(OpSlots s) {
            return new Purge(s.path, s.partition);
        }
    }

    /** Deletes up to {@code max} unlocked messages enqueued before a time (of one session when set). */
    record DeleteMessages(String path, int partition, long beforeMs, int max, String sessionId)
            implements OnSubQueue<Integer> {
        @Override
        public Integer apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            return q.deleteMessages(max, beforeMs, sessionId);
        }

        @Override
        public OpCode code() {
            return OpCode.DELETE_MESSAGES;
        }

        @Override
        public OpResult<Integer> result() {
            return OpResult.COUNT;
        }

        @Override
        public void write(OpSlots s) {
            s.sequences = new long[] {beforeMs};
            s.max = max;
            s.sessionId = sessionId;
        }

        static DeleteMessages read(OpSlots s) {
            return new DeleteMessages(s.path, s.partition, s.sequence(), s.max, s.sessionId);
        }
    }

    // ================================================================================================ sessions

    /** A session's state (null when it has none). */
    record GetSessionState(String path, int partition, String sessionId) implements OnSubQueue<byte[]> {
        @Override
        public byte[] apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            return q.sessions().state(sessionId);
        }

        @Override
        public boolean resendable() {
            return true;
        }

        @Override
        public OpCode code() {
            return OpCode.GET_SESSION_STATE;
        }

        @Override
        public OpResult<byte[]> result() {
            return OpResult.BYTES;
        }

        @Override
        public void write(OpSlots s) {
            s.sessionId = sessionId;
        }

        static GetSessionState read(OpSlots s) {
            return new GetSessionState(s.path, s.partition, s.sessionId);
        }
    }

    /** Sets (null: clears) a session's state. */
    record SetSessionState(String path, int partition, String sessionId, byte[] state) implements OnSubQueue<Void> {
        @Override
        public Void apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            q.requireSessionful();
            q.sessions().setState(sessionId, state, nowMs);
            return null;
        }

        @Override
        public OpCode code() {
            return OpCode.SET_SESSION_STATE;
        }

        @Override
        public OpResult<Void> result() {
            return OpResult.NONE;
        }

        @Override
        public void write(OpSlots s) {
            s.sessionId = sessionId;
            s.state = state;
        }

        static SetSessionState read(OpSlots s) {
            return new SetSessionState(s.path, s.partition, s.sessionId, s.state);
        }
    }

    /** Renews a session's lock (held by {@code holder}'s receiver when set): answers the new locked-until time. */
    record RenewSessionLock(String path, int partition, String sessionId, UUID holder) implements OnSubQueue<Long> {
        @Override
        public Long apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            return q.sessions().renewLock(sessionId, nowMs, by);
        }

        @Override
        public OpCode code() {
            return OpCode.RENEW_SESSION_LOCK;
        }

        @Override
        public OpResult<Long> result() {
            return OpResult.LONG;
        }

        @Override
        public void write(OpSlots s) {
            s.sessionId = sessionId;
            s.lockToken = holder;
        }

        static RenewSessionLock read(OpSlots s) {
            return new RenewSessionLock(s.path, s.partition, s.sessionId, s.lockToken);
        }
    }

    /** Fails with SESSION_LOCK_LOST unless the session is locked (by {@code holder}'s receiver when set). */
    record CheckSessionLocked(String path, int partition, String sessionId, UUID holder) implements OnSubQueue<Void> {
        @Override
        public Void apply(SubQueueState q, long nowMs, ConsumerHandle by) {
            q.sessions().lockedUntil(sessionId, nowMs, by);
            return null;
        }

        @Override
        public OpCode code() {
            return OpCode.CHECK_SESSION_LOCKED;
        }

        @Override
        public OpResult<Void> result() {
            return OpResult.NONE;
        }

        @Override
        public void write(OpSlots s) {
            s.sessionId = sessionId;
            s.lockToken = holder;
        }

        static CheckSessionLocked read(OpSlots s) {
            return new CheckSessionLocked(s.path, s.partition, s.sessionId, s.lockToken);
        }
    }

    /**
     * Up to {@code max} session ids after {@code afterId}, state written since a time (or all active), of the queue
     * or subscription partition the path names (none while the subscription is not on the partition yet).
     */
    record ListSessions(String path, int partition, long updatedSinceMs, int max, String afterId)
            implements PartitionOp<List<String>> {
        /** Runs on the shard thread of the partition. */
        public List<String> apply(Partition p) {
            String subscription = EntityAddress.parse(path).subscription();
            SubQueueState main = subscription == null ? p.queue() : p.subscription(subscription);
            return main == null ? List.of() : main.sessions().ids(updatedSinceMs, afterId, max);
        }

        @Override
        public boolean resendable() {
            return true;
        }

        @Override
        public CompletableFuture<List<String>> runAt(Runner runner) {
            return runner.listSessions(this);
        }

        @Override
        public OpCode code() {
            return OpCode.LIST_SESSIONS;
        }

        @Override
        public OpResult<List<String>> result() {
            return OpResult.IDS;
        }

        @Override
        public void write(OpSlots s) {
            s.sequences = new long[] {updatedSinceMs};
            s.max = max;
            s.sessionId = afterId;
        }

        static ListSessions read(OpSlots s) {
            return new ListSessions(s.path, s.partition, s.sequence(), s.max, s.sessionId);
        }
    }

    // ================================================================================================ receivers

    /**
     * A remote receiver's long poll: at most {@code max} messages, after at most {@code waitMs}; identified by
     * {@code pollKey} so that {@link EndReceive} can end it early; for the remote session holder {@code holder}
     * (which {@link AcceptSession} created) when set.
     */
    record Receive(String path, int partition, String pollKey, UUID holder, int max, ReceiveMode mode, long waitMs)
            implements PartitionOp<List<ReceivedMessage>> {
        @Override
        public CompletableFuture<List<ReceivedMessage>> runAt(Runner runner) {
            return runner.receive(this);
        }

        @Override
        public OpCode code() {
            return OpCode.RECEIVE;
        }

        @Override
        public OpResult<List<ReceivedMessage>> result() {
            return OpResult.RECEIVED;
        }

        @Override
        public void write(OpSlots s) {
            s.key = pollKey;
            s.lockToken = holder;
            s.max = max;
            s.mode = mode;
            s.waitMs = waitMs;
        }

        static Receive read(OpSlots s) {
            return new Receive(s.path, s.partition, s.key, s.lockToken, s.max, s.mode, s.waitMs);
        }
    }

    /** Ends the {@link Receive} whose key is given now, with what it has. */
    record EndReceive(String path, int partition, String pollKey) implements PartitionOp<Void> {
        @Override
        public boolean resendable() {
            return true;
        }

        @Override
        public CompletableFuture<Void> runAt(Runner runner) {
            return runner.endReceive(this);
        }

        @Override
        public OpCode code() {
            return OpCode.END_RECEIVE;
        }

        @Override
        public OpResult<Void> result() {
            return OpResult.NONE;
        }

        @Override
        public void write(OpSlots s) {
            s.key = pollKey;
        }

        static EndReceive read(OpSlots s) {
            return new EndReceive(s.path, s.partition, s.key);
        }
    }

    /** Locks the named session (null: the next free one, waiting up to {@code waitMs}) for a holder on the owner. */
    record AcceptSession(String path, int partition, String sessionId, ReceiveMode mode, long waitMs)
            implements PartitionOp<SessionGrant> {
        @Override
        public CompletableFuture<SessionGrant> runAt(Runner runner) {
            return runner.acceptSession(this);
        }

        @Override
        public OpCode code() {
            return OpCode.ACCEPT_SESSION;
        }

        @Override
        public OpResult<SessionGrant> result() {
            return OpResult.GRANT;
        }

        @Override
        public void write(OpSlots s) {
            s.sessionId = sessionId;
            s.mode = mode;
            s.max = 1;
            s.waitMs = waitMs;
        }

        static AcceptSession read(OpSlots s) {
            return new AcceptSession(s.path, s.partition, s.sessionId, s.mode, s.waitMs);
        }
    }

    /** The remote session holder {@code holder} lets its session go. */
    record ReleaseSession(String path, int partition, UUID holder) implements PartitionOp<Void> {
        @Override
        public boolean resendable() {
            return true;
        }

        @Override
        public CompletableFuture<Void> runAt(Runner runner) {
            return runner.releaseSession(this);
        }

        @Override
        public OpCode code() {
            return OpCode.RELEASE_SESSION;
        }

        @Override
        public OpResult<Void> result() {
            return OpResult.NONE;
        }

        @Override
        public void write(OpSlots s) {
            s.lockToken = holder;
        }

        static ReleaseSession read(OpSlots s) {
            return new ReleaseSession(s.path, s.partition, s.lockToken);
        }
    }

    // ================================================================================================ transactions

    /** A transaction's work, all on the partition's shard, encoded ({@code TransactionalBatchCodec}). */
    record Commit(String path, int partition, byte[] batch) implements PartitionOp<Void> {
        @Override
        public CompletableFuture<Void> runAt(Runner runner) {
            return runner.commit(this);
        }

        @Override
        public OpCode code() {
            return OpCode.COMMIT;
        }

        @Override
        public OpResult<Void> result() {
            return OpResult.NONE;
        }

        @Override
        public void write(OpSlots s) {
            s.state = batch;
        }

        static Commit read(OpSlots s) {
            if (s.state == null) {
                throw new IllegalArgumentException("A transaction expected");
            }
            return new Commit(s.path, s.partition, s.state);
        }
    }
}
