package io.buslane.engine.api;

/**
 * An entity's message counts and size, as the service's runtime properties report them.
 *
 * @param activeMessageCount              messages available, locked or deferred in the main queue
 * @param deadLetterMessageCount          messages in the dead-letter queue
 * @param scheduledMessageCount           scheduled messages not yet activated
 * @param transferMessageCount            messages waiting to be forwarded
 * @param transferDeadLetterMessageCount  messages in the transfer dead-letter queue
 * @param sizeInBytes                     bytes of messages and session state held
 */
public record RuntimeCounts(long activeMessageCount, long deadLetterMessageCount, long scheduledMessageCount,
                            long transferMessageCount, long transferDeadLetterMessageCount, long sizeInBytes) {

    public static final RuntimeCounts ZERO = new RuntimeCounts(0, 0, 0, 0, 0, 0);

    /** Total messages, as {@code MessageCount} reports it. */
    public long messageCount() {
        return activeMessageCount + deadLetterMessageCount + scheduledMessageCount + transferMessageCount
                + transferDeadLetterMessageCount;
    }

    public RuntimeCounts plus(RuntimeCounts o) {
        return new RuntimeCounts(activeMessageCount + o.activeMessageCount,
                deadLetterMessageCount + o.deadLetterMessageCount,
                scheduledMessageCount + o.scheduledMessageCount,
                transferMessageCount + o.transferMessageCount,
                transferDeadLetterMessageCount + o.transferDeadLetterMessageCount,
                sizeInBytes + o.sizeInBytes);
    }
}
