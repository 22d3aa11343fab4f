package io.buslane.engine.partition;

import io.buslane.engine.message.Message;

/**
 * A topic message stored once and shared by the subscriptions' copies; removed when the last copy goes.
 * Confined to its shard thread.
 */
public final class TopicBody {
    final long recordId;
    final long seq;
    final long enqueuedTimeMs;
    final Message message;
    int references;

    TopicBody(long recordId, long seq, long enqueuedTimeMs, Message message) {
        this.recordId = recordId;
        this.seq = seq;
        this.enqueuedTimeMs = enqueuedTimeMs;
        this.message = message;
    }

    public long recordId() {
        return recordId;
    }

    public long sequenceNumber() {
        return seq;
    }

    public long enqueuedTimeMs() {
        return enqueuedTimeMs;
    }

    /** Number of subscription copies still referring to the body. */
    public int references() {
        return references;
    }

    public Message message() {
        return message;
    }
}
