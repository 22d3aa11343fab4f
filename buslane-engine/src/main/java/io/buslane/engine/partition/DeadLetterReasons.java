package io.buslane.engine.partition;

import io.buslane.common.error.ErrorKind;

/**
 * Every dead-letter reason and description the broker itself writes, and the application properties that carry
 * them. (A receiver's own dead-letter settlement brings its own reason; a subscription's filter or action that fails
 * dead-letters its copy with the exception name the SQL evaluator reports, {@code SqlEvaluationException}.)
 */
public final class DeadLetterReasons {

    /** The application property that holds the reason. */
    public static final String DEAD_LETTER_REASON = "DeadLetterReason";
    /** The application property that holds the description. */
    public static final String DEAD_LETTER_DESCRIPTION = "DeadLetterErrorDescription";

    /** The delivery count reached the entity's MaxDeliveryCount. */
    public static final String MAX_DELIVERY_COUNT_EXCEEDED = "MaxDeliveryCountExceeded";
    /** A message expired on an entity that dead-letters expired messages. */
    public static final String TTL_EXPIRED = "TTLExpiredException";
    public static final String TTL_EXPIRED_DESCRIPTION = "The message expired and was dead lettered.";
    /** A copy without a SessionId reached a session-enabled subscription (literal text, with period). */
    public static final String SESSION_ID_NULL = "Session ID is null.";
    public static final String SESSION_ID_NULL_DESCRIPTION =
            "Session enabled entity doesn't allow a message whose session identifier is null.";
    /** A message already forwarded {@link Transfer#MAX_HOPS} times (to the transfer dead-letter queue). */
    public static final String MAX_HOPS_REASON = "MaxTransferHopCountExceeded";
    public static final String MAX_HOPS_DESCRIPTION = "The message was forwarded more than the maximum number of "
            + "hops allowed (" + Transfer.MAX_HOPS + ").";

    private DeadLetterReasons() {
    }

    /** The description of a message dead-lettered after {@code maxDeliveryCount} deliveries. */
    public static String maxDeliveryCountDescription(int maxDeliveryCount) {
        return "Message could not be consumed after " + maxDeliveryCount + " delivery attempts.";
    }

    /**
     * The reason of a message the forwarding destination refused for good (to the source's transfer dead-letter
     * queue); the destination's error text is the description.
     */
    public static String transferFailed(ErrorKind kind) {
        return switch (kind) {
            case ENTITY_NOT_FOUND -> "MessagingEntityNotFound";
            case ENTITY_DISABLED -> "MessagingEntityDisabled";
            case QUOTA_EXCEEDED -> "QuotaExceeded";
            case MESSAGE_SIZE_EXCEEDED -> "MessageSizeExceeded";
            default -> "TransferFailed";
        };
    }
}
