package io.buslane.engine.partition;

import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;

/**
 * A scheduled message waiting for its enqueue time; its own activation timer. Confined to its shard thread.
 */
public final class ScheduledEntry extends EngineTimer {
    final long seq;
    final long recordId;
    final long enqueuedTimeMs;
    final long scheduledTimeMs;
    final Message message;
    Partition partition;

    public ScheduledEntry(long seq, long recordId, long enqueuedTimeMs, long scheduledTimeMs, Message message) {
        this.seq = seq;
        this.recordId = recordId;
        this.enqueuedTimeMs = enqueuedTimeMs;
        this.scheduledTimeMs = scheduledTimeMs;
        this.message = message;
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

    public Message message() {
        return message;
    }

    ReceivedMessage view(int partitionIndex) {
        return new ReceivedMessage(message, seq, enqueuedTimeMs, 0, null, 0L, MessageState.SCHEDULED,
                Long.MAX_VALUE, scheduledTimeMs, null, partitionIndex);
    }

    @Override
    public void onTimer(long nowMs) {
        if (partition != null) {
            partition.activate(this, nowMs);
        }
    }
}
