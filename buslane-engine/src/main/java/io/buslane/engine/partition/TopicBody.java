package io.buslane.engine.partition;

import io.buslane.engine.message.Message;

/**
 * A topic message stored once and shared by the subscriptions' copies; removed when the last copy goes.
 * Confined to its shard thread. The message may be evicted from the heap: read it through
 * {@link MessageBodies#of(TopicBody)}.
 */
public final class TopicBody {
    final long recordId;
    final long seq;
    final long enqueuedTimeMs;
    final int sizeBytes;
    /** The message while resident, or null when evicted. */
    Message message;
    boolean pinned;
    int references;

    TopicBody(long recordId, long seq, long enqueuedTimeMs, Message message) {
        this.recordId = recordId;
        this.seq = seq;
        this.enqueuedTimeMs = enqueuedTimeMs;
        this.message = message;
        this.sizeBytes = message.encodedSize();
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

    /** The message if it is held in the heap, else null; {@link MessageBodies#of(TopicBody)} reads it. */
    public Message residentMessage() {
        return message;
    }
}
