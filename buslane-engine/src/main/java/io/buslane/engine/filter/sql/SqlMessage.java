package io.buslane.engine.filter.sql;

import io.buslane.engine.message.Message;

/**
 * What a filter or action sees: the message and the values the broker assigned on arrival. Not thread-safe; one per
 * evaluation (actions replace {@link #message()} statement by statement).
 */
public final class SqlMessage {

    private Message message;
    private final long sequenceNumber;
    private final long enqueuedTimeMs;

    public SqlMessage(Message message, long sequenceNumber, long enqueuedTimeMs) {
        this.message = message;
        this.sequenceNumber = sequenceNumber;
        this.enqueuedTimeMs = enqueuedTimeMs;
    }

    public Message message() {
        return message;
    }

    void message(Message m) {
        this.message = m;
    }

    public long sequenceNumber() {
        return sequenceNumber;
    }

    /** The sequence number of the original point of submission: of the first entity, for a forwarded message. */
    public long enqueuedSequenceNumber() {
        Long original = message.enqueuedSequenceNumber();
        return original != null ? original : sequenceNumber;
    }

    public long enqueuedTimeMs() {
        return enqueuedTimeMs;
    }

    /** The application property with this name: exact match first, else the first that matches ignoring case. */
    String userKey(String name) {
        var props = message.applicationProperties();
        if (props.containsKey(name)) {
            return name;
        }
        for (String k : props.keySet()) {
            if (k.equalsIgnoreCase(name)) {
                return k;
            }
        }
        return null;
    }
}
