package io.buslane.engine.routing;

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
 * @param mode        RECEIVE_DEFERRED: the receive mode
 */
public record PartitionOp(Kind kind, String path, int partition, List<Message> messages, String key, UUID lockToken,
                          Map<String, Object> properties, String reason, String description, long[] sequences,
                          int max, String sessionId, byte[] state, ReceiveMode mode) {

    /** The operations; the result type is in brackets. */
    public enum Kind {
        /** [null] a send's share for one partition (scheduled-enqueue-time messages are scheduled). */
        SEND,
        /** [Long] the schedule operation: the sequence number. */
        SCHEDULE,
        /** [null] cancels scheduled messages. */
        CANCEL_SCHEDULED,
        /** [null] settlement by lock token. */
        COMPLETE,
        /** [null]. */
        ABANDON,
        /** [null]. */
        RELEASE,
        /** [null]. */
        DEFER,
        /** [null]. */
        DEAD_LETTER,
        /** [Long] the new locked-until time. */
        RENEW_LOCK,
        /** [List of ReceivedMessage]. */
        RECEIVE_DEFERRED,
        /** [List of ReceivedMessage] browse a sub-queue. */
        PEEK,
        /** [List of ReceivedMessage] browse a topic's scheduled messages. */
        PEEK_SCHEDULED,
        /** [RuntimeCounts] of a queue, topic or subscription partition. */
        COUNTS,
        /** [byte[]]. */
        GET_SESSION_STATE,
        /** [null]. */
        SET_SESSION_STATE,
        /** [Long] the new locked-until time. */
        RENEW_SESSION_LOCK,
        /** [null] fails with SESSION_LOCK_LOST unless locked. */
        CHECK_SESSION_LOCKED
    }

    /** An operation with only kind, path and partition. */
    public static PartitionOp of(Kind kind, String path, int partition) {
        return new PartitionOp(kind, path, partition, null, null, null, null, null, null, null, 0, null, null, null);
    }

    public PartitionOp withMessages(List<Message> batch, String transferKey) {
        return new PartitionOp(kind, path, partition, batch, transferKey, lockToken, properties, reason, description,
                sequences, max, sessionId, state, mode);
    }

    public PartitionOp withLock(UUID token, Map<String, Object> props, String why, String text) {
        return new PartitionOp(kind, path, partition, messages, key, token, props, why, text, sequences, max,
                sessionId, state, mode);
    }

    public PartitionOp withSequences(long[] seqs, int count) {
        return new PartitionOp(kind, path, partition, messages, key, lockToken, properties, reason, description, seqs,
                count, sessionId, state, mode);
    }

    public PartitionOp withSession(String session, byte[] sessionState, ReceiveMode receiveMode) {
        return new PartitionOp(kind, path, partition, messages, key, lockToken, properties, reason, description,
                sequences, max, session, sessionState, receiveMode);
    }
}
