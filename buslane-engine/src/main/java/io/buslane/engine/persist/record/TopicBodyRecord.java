package io.buslane.engine.persist.record;

import io.buslane.engine.message.Message;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Type 4, ADD: a topic message's body, shared by the subscriptions' references ({@link SubscriptionRefRecord}).
 * Layout: {@code partitionRecordId} varlong, {@code seq} long, {@code enqueuedTimeMs} long, then the message.
 */
public record TopicBodyRecord(long partitionRecordId, long seq, long enqueuedTimeMs, Message message) {

    public static final byte TYPE = 4;

    public static void write(RecordWriter w, long partitionRecordId, long seq, long enqueuedTimeMs, Message message) {
        w.writeVarLong(partitionRecordId);
        w.writeLong(seq);
        w.writeLong(enqueuedTimeMs);
        MessageCodec.write(w, message);
    }

    public static TopicBodyRecord read(RecordReader in) {
        long partitionRecordId = in.readVarLong();
        long seq = in.readLong();
        long enqueuedTimeMs = in.readLong();
        return new TopicBodyRecord(partitionRecordId, seq, enqueuedTimeMs, MessageCodec.read(in));
    }

    /** Moves {@code in} to the record's message. */
    public static void skipToMessage(RecordReader in) {
        in.readVarLong();
        in.skip(2 * Long.BYTES);
    }
}
