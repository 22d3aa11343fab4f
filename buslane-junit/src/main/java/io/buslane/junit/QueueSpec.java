package io.buslane.junit;

import java.time.Duration;

/**
 * A queue defined in code: {@code Buslane.inMemory().queue("orders", q -> q.requiresSession(true))}. Each setter
 * writes one property of the queue's Config.json entry; what is not set takes the cloud's default.
 */
public final class QueueSpec extends EntitySpec<QueueSpec> {

    QueueSpec(String name) {
        super(name);
    }

    /** Whether receivers must accept a session ({@code RequiresSession}). */
    public QueueSpec requiresSession(boolean required) {
        return property("RequiresSession", required);
    }

    /** Deliveries before a message is dead-lettered ({@code MaxDeliveryCount}, default 10). */
    public QueueSpec maxDeliveryCount(int count) {
        return property("MaxDeliveryCount", count);
    }

    /** How long a received message stays locked ({@code LockDuration}, default one minute). */
    public QueueSpec lockDuration(Duration duration) {
        return property("LockDuration", duration);
    }

    /** Whether expired messages go to the dead-letter queue ({@code DeadLetteringOnMessageExpiration}). */
    public QueueSpec deadLetteringOnMessageExpiration(boolean enabled) {
        return property("DeadLetteringOnMessageExpiration", enabled);
    }

    /** Turns duplicate detection on with this history window. */
    public QueueSpec duplicateDetection(Duration window) {
        property("RequiresDuplicateDetection", true);
        return property("DuplicateDetectionHistoryTimeWindow", window);
    }

    /** Forwards every message to this queue or topic ({@code ForwardTo}); it must be defined too. */
    public QueueSpec forwardTo(String entity) {
        return property("ForwardTo", entity);
    }

    /** Forwards dead-lettered messages to this queue or topic ({@code ForwardDeadLetteredMessagesTo}). */
    public QueueSpec forwardDeadLetteredMessagesTo(String entity) {
        return property("ForwardDeadLetteredMessagesTo", entity);
    }
}
