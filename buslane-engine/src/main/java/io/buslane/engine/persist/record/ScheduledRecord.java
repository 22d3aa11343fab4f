package io.buslane.engine.persist.record;

import io.buslane.engine.message.Message;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Type 7, ADD: a scheduled message. Layout: {@code partitionRecordId} varlong, {@code seq} long,
 * {@code enqueuedTimeMs} long, {@code scheduledTimeMs} long, then the message.
 */
public record ScheduledRecord(long partitionRecordId, long seq, long enqueuedTimeMs, long scheduledTimeMs,
                              Message message) {

    public static final byte TYPE = 7;

    public static void write(RecordWriter w, long partitionRecordId, long seq, long enqueuedTimeMs,
                             long scheduledTimeMs, Message message) {
        w.writeVarLong(partitionRecordId);
        w.writeLong(seq);
        w.writeLong(enqueuedTimeMs);
        w.writeLong(scheduledTimeMs);
        MessageCodec.write(w, message);
    }

    public static ScheduledRecord read(RecordReader in) {
        long partitionRecordId = in.readVarLong();
        long seq = in.readLong();
        long enqueuedTimeMs = in.readLong();
        long scheduledTimeMs = in.readLong();
        return new ScheduledRecord(partitionRecordId, seq, enqueuedTimeMs, scheduledTimeMs, MessageCodec.read(in));
    }

    /** Moves {@code in} to the record's message. */
    public static void skipToMessage(RecordReader in) {
        in.readVarLong();
        in.skip(3 * Long.BYTES);
    }
}
