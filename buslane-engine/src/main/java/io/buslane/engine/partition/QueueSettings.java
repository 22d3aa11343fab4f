package io.buslane.engine.partition;

import io.buslane.engine.entity.EntityStatus;

/**
 * The properties of a receivable entity (queue or subscription) that the partition logic applies, in
 * milliseconds. Immutable; replaced as a whole when the entity is updated.
 *
 * @param entityPath          the queue path or {@code topic/Subscriptions/sub}
 * @param lockDurationMs      peek-lock and session-lock duration
 * @param maxDeliveryCount    failed deliveries after which a message is dead-lettered
 * @param requiresSession     whether the entity is session-enabled
 * @param timeToLiveMs        the default time-to-live, also the ceiling (Long.MAX_VALUE for never)
 * @param deadLetterOnExpiry  whether expired messages go to the dead-letter queue
 * @param status              the entity status
 * @param maxSizeBytes        the size quota of this partition
 * @param deadLetterOnFilterError a subscription's DeadLetteringOnFilterEvaluationExceptions: whether a message whose
 *                            filter or action fails is dead-lettered (else dropped); true for queues
 */
public record QueueSettings(String entityPath, long lockDurationMs, int maxDeliveryCount, boolean requiresSession,
                            long timeToLiveMs, boolean deadLetterOnExpiry, EntityStatus status,
                            long maxSizeBytes, boolean deadLetterOnFilterError) {

    public QueueSettings(String entityPath, long lockDurationMs, int maxDeliveryCount, boolean requiresSession,
                         long timeToLiveMs, boolean deadLetterOnExpiry, EntityStatus status, long maxSizeBytes) {
        this(entityPath, lockDurationMs, maxDeliveryCount, requiresSession, timeToLiveMs, deadLetterOnExpiry, status,
                maxSizeBytes, true);
    }
}
