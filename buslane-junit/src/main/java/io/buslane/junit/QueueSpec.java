package io.buslane.junit;

import java.time.Duration;

/**
 * A queue defined in code: {@code Buslane.inMemory().queue("orders", q -> q.requiresSession(true))}. Each setter
 * writes one property of the queue's Config.json entry; what is not set takes the cloud's default.
 */
public final class QueueSpec extends ReceivableSpec<QueueSpec> {

    QueueSpec(String name) {
        super(name);
    }

    /** Turns duplicate detection on with this history window. */
    public QueueSpec duplicateDetection(Duration window) {
        property("RequiresDuplicateDetection", true);
        return property("DuplicateDetectionHistoryTimeWindow", window);
    }

    /** Forwards dead-lettered messages to this queue or topic ({@code ForwardDeadLetteredMessagesTo}). */
    public QueueSpec forwardDeadLetteredMessagesTo(String entity) {
        return property("ForwardDeadLetteredMessagesTo", entity);
    }
}
