package io.buslane.engine.remote;

import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.Message;

import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One unary operation on one partition of an entity, as a value (cluster mode: carried to the node that serves the
 * partition's shard, which runs it through {@code Engine.runOnPartition}). Protocol-free; the fields an operation
 * does not use are null or zero.
 *
 * @param kind        what to do
 * @param path        the address the front end gave (a queue, topic, subscription, or one of their sub-queues)
 * @param partition   the partition index within the entity
 * @param messages    SEND: the batch; SCHEDULE: the one message
 * @param key         SEND: the transfer key that makes the forwarded batch idempotent at the owner
 * @param lockToken   settlements and RENEW_LOCK
 * @param properties  ABANDON, DEFER, DEAD_LETTER: the properties to modify
 * @param reason      DEAD_LETTER: the reason
 * @param description DEAD_LETTER: the description
 * @param sequences   CANCEL_SCHEDULED, RECEIVE_DEFERRED: the sequence numbers; PEEK: {from}
 * @param max         PEEK, PEEK_SCHEDULED: how many at most
 * @param sessionId   session operations, PEEK and RECEIVE_DEFERRED
 * @param state       SET_SESSION_STATE: the state (null clears it)
 * @param mode        RECEIVE_DEFERRED, RECEIVE, ACCEPT_SESSION: the receive mode
 * @param waitMs      RECEIVE, ACCEPT_SESSION: how long the owner may wait for a message or a session
 *
 * <p>Remote receivers: RECEIVE takes up to {@code max} messages for a receiver on another node (a long poll,
 * identified by {@code key} so that END_RECEIVE can end it early); with a {@code lockToken} it receives for the
 * remote session holder of that id, which ACCEPT_SESSION created. RENEW_SESSION_LOCK and CHECK_SESSION_LOCKED with
 * a {@code lockToken} require that holder to hold the session.
 */
public record PartitionOp(Kind kind, String path, int partition, List<Message> messages, String key, UUID lockToken,
                          Map<String, Object> properties, String reason, String description, long[] sequences,
                          int max, String sessionId, byte[] state, ReceiveMode mode, long waitMs) {

    /**
     * The operations; the result type is in brackets. Each has an explicit {@link #code()}, written to the cluster
     * channel: never change or reuse one.
     */
    public enum Kind {
        /**
         * [null] a send's share for one partition (scheduled-enqueue-time messages are scheduled); with a transfer
         * key and one sequence number, a message scheduled under a transaction through a via entity, stored as
         * scheduled under the number this partition reserved for it.
         */
        SEND(0),
        /** [Long] the schedule operation: the sequence number. */
        SCHEDULE(1),
        /** [null] cancels scheduled messages. */
        CANCEL_SCHEDULED(2),
        /** [null] settlement by lock token. */
        COMPLETE(3),
        /** [null]. */
        ABANDON(4),
        /** [null]. */
        RELEASE(5),
        /** [null]. */
        DEFER(6),
        /** [null]. */
        DEAD_LETTER(7),
        /** [Long] the new locked-until time. */
        RENEW_LOCK(8),
        /** [List of ReceivedMessage]. */
        RECEIVE_DEFERRED(9),
        /** [List of ReceivedMessage] browse a sub-queue. */
        PEEK(10),
        /** [List of ReceivedMessage] browse a topic's scheduled messages. */
        PEEK_SCHEDULED(11),
        /** [RuntimeCounts] of a queue, topic or subscription partition. */
        COUNTS(12),
        /** [byte[]]. */
        GET_SESSION_STATE(13),
        /** [null]. */
        SET_SESSION_STATE(14),
        /** [Long] the new locked-until time. */
        RENEW_SESSION_LOCK(15),
        /** [null] fails with SESSION_LOCK_LOST unless locked. */
        CHECK_SESSION_LOCKED(16),
        /** [List of ReceivedMessage] a remote receiver's long poll: at most max, after at most waitMs. */
        RECEIVE(17),
        /** [null] ends the RECEIVE whose key is given now, with what it has. */
        END_RECEIVE(18),
        /** [SessionGrant] locks the named session (or the next free one) for a holder on the owner. */
        ACCEPT_SESSION(19),
        /** [null] the remote session holder of lockToken lets its session go. */
        RELEASE_SESSION(20),
        /** [Integer] deletes every message of the sub-queue's partition. */
        PURGE(21),
        /** [Integer] deletes up to max unlocked messages enqueued before sequences[0] (of sessionId's session). */
        DELETE_MESSAGES(22),
        /** [List of String] up to max session ids after sessionId, state written since sequences[0]. */
        LIST_SESSIONS(23),
        /** [Long] a sequence number reserved for a message scheduled under a transaction (stored at commit). */
        RESERVE_SCHEDULED(24),
        /** [null] a transaction's work, all on the partition's shard, encoded in state (TransactionalBatchCodec). */
        COMMIT(25);

        private final int code;

        Kind(int code) {
            this.code = code;
        }

        /** The operation's code on the cluster channel (fixed, whatever the order of the constants). */
        public int code() {
            return code;
        }

        /** The operation with this code, or null when there is none (a peer of a newer version). */
        public static Kind ofCode(int code) {
            for (Kind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            return null;
        }
    }

    /**
     * What ACCEPT_SESSION answers: the id of the holder the owner keeps for the remote receiver, the session, and
     * when its lock expires (epoch ms).
     */
    public record SessionGrant(UUID holder, String sessionId, long lockedUntilMs) {
    }

    /** An operation with only kind, path and partition. */
    public static PartitionOp of(Kind kind, String path, int partition) {
        return new PartitionOp(kind, path, partition, null, null, null, null, null, null, null, 0, null, null, null, 0);
    }

    public PartitionOp withMessages(List<Message> batch, String transferKey) {
        return new PartitionOp(kind, path, partition, batch, transferKey, lockToken, properties, reason, description,
                sequences, max, sessionId, state, mode, waitMs);
    }

    public PartitionOp withLock(UUID token, Map<String, Object> props, String why, String text) {
        return new PartitionOp(kind, path, partition, messages, key, token, props, why, text, sequences, max,
                sessionId, state, mode, waitMs);
    }

    public PartitionOp withSequences(long[] seqs, int count) {
        return new PartitionOp(kind, path, partition, messages, key, lockToken, properties, reason, description, seqs,
                count, sessionId, state, mode, waitMs);
    }

    public PartitionOp withSession(String session, byte[] sessionState, ReceiveMode receiveMode) {
        return new PartitionOp(kind, path, partition, messages, key, lockToken, properties, reason, description,
                sequences, max, session, sessionState, receiveMode, waitMs);
    }

    /** A remote receiver's request: at most {@code count} messages (or sessions), waiting up to {@code wait} ms. */
    public PartitionOp withReceive(String pollKey, UUID holder, int count, ReceiveMode receiveMode, long wait) {
        return new PartitionOp(kind, path, partition, messages, pollKey, holder, properties, reason, description,
                sequences, count, sessionId, state, receiveMode, wait);
    }
}
