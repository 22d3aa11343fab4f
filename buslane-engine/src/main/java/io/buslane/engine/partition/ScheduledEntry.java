package io.buslane.engine.partition;

import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;

/**
 * A scheduled message waiting for its enqueue time; its own activation timer. Confined to its shard thread. The
 * message may be evicted from the heap: read it through {@link MessageBodies#of(ScheduledEntry)}.
 */
public final class ScheduledEntry extends EngineTimer {
    final long seq;
    final long recordId;
    final long enqueuedTimeMs;
    final long scheduledTimeMs;
    final int sizeBytes;
    /** The message while resident, or null when evicted. */
    Message message;
    boolean pinned;
    Partition partition;

    public ScheduledEntry(long seq, long recordId, long enqueuedTimeMs, long scheduledTimeMs, Message message) {
        this.seq = seq;
        this.recordId = recordId;
        this.enqueuedTimeMs = enqueuedTimeMs;
        this.scheduledTimeMs = scheduledTimeMs;
        this.message = message;
        this.sizeBytes = message.encodedSize();
    }

    public long sequenceNumber() {
        return seq;
    }

    public long recordId() {
        return recordId;
    }

    public long enqueuedTimeMs() {
        return enqueuedTimeMs;
    }

    public long scheduledTimeMs() {
        return scheduledTimeMs;
    }

    /** The message if it is held in the heap, else null; {@link MessageBodies#of(ScheduledEntry)} reads it. */
    public Message residentMessage() {
        return message;
    }

    public int sizeBytes() {
        return sizeBytes;
    }

    ReceivedMessage view(Message m, int partitionIndex) {
        return new ReceivedMessage(m, seq, enqueuedTimeMs, 0, null, 0L, MessageState.SCHEDULED,
                Long.MAX_VALUE, scheduledTimeMs, null, partitionIndex);
    }

    @Override
    public void onTimer(long nowMs) {
        if (partition != null) {
            partition.activate(this, nowMs);
        }
    }
}
