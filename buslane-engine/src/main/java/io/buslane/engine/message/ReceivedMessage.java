package io.buslane.engine.message;

import java.util.UUID;

/**
 * A message as the broker hands it out (delivery, peek, receive-by-sequence-number): the client's message plus
 * the broker-assigned values. Immutable.
 *
 * @param message            the message (with any properties modified by abandon/defer/dead-letter applied)
 * @param sequenceNumber     the broker-assigned sequence number
 * @param enqueuedTimeMs     when the broker accepted (or activated) the message
 * @param deliveryCount      the number of earlier deliveries that failed (abandoned, or lock expired): 0 for a fresh
 *                           message, also while it is locked. This is the AMQP {@code header.delivery-count};
 *                           the SDKs show it, or it plus one for a delivery, as DeliveryCount
 * @param lockToken          the lock token of a peek-lock delivery, or null
 * @param lockedUntilMs      when the lock expires, or 0 without a lock
 * @param state              Active, Deferred or Scheduled (Scheduled: not enqueued yet; see {@link #reportedState})
 * @param expiresAtMs        when the message expires (Long.MAX_VALUE for never)
 * @param scheduledEnqueueTimeMs the scheduled enqueue time of a scheduled message, or null
 * @param deadLetterSource   the entity a dead-lettered message came from when it was forwarded, or null
 * @param partitionIndex     the partition holding the message (0 on non-partitioned entities)
 */
public record ReceivedMessage(
        Message message,
        long sequenceNumber,
        long enqueuedTimeMs,
        int deliveryCount,
        UUID lockToken,
        long lockedUntilMs,
        MessageState state,
        long expiresAtMs,
        Long scheduledEnqueueTimeMs,
        String deadLetterSource,
        int partitionIndex) {

    /**
     * The state a received message reports ({@code x-opt-message-state} of a delivery, the REST {@code State} of a
     * received message): a message that was scheduled and has been enqueued since reports Scheduled (the JavaScript
     * SDK's live tests receive a message sent with {@code scheduleMessages} and expect "scheduled"; one sent plainly
     * is "active"). Browsing shows {@link #state()}: where the message stands, so that a peek tells a message still
     * waiting for its time from one enqueued since.
     */
    public MessageState reportedState() {
        MessageState s = state == null ? MessageState.ACTIVE : state;
        return s == MessageState.ACTIVE && message.wasScheduled() ? MessageState.SCHEDULED : s;
    }

    /** The message's session id, or null. */
    public String sessionId() {
        return message.sessionId();
    }
}
