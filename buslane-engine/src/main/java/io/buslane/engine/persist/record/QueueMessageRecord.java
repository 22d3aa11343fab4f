package io.buslane.engine.persist.record;

import io.buslane.engine.api.SubQueue;
import io.buslane.engine.message.Message;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Type 3, ADD: a message of a queue. Layout: {@code partitionRecordId} varlong, {@code subQueue} byte
 * ({@link SubQueue#code()}), {@code seq} long, {@code enqueuedTimeMs} long, {@code expiresAtMs} long, then the
 * message ({@link MessageCodec}).
 */
public record QueueMessageRecord(long partitionRecordId, SubQueue subQueue, long seq, long enqueuedTimeMs,
                                 long expiresAtMs, Message message) {

    public static final byte TYPE = 3;

    public static void write(RecordWriter w, long partitionRecordId, SubQueue subQueue, long seq,
                             long enqueuedTimeMs, long expiresAtMs, Message message) {
        w.writeVarLong(partitionRecordId);
        w.writeByte(subQueue.code());
        w.writeLong(seq);
        w.writeLong(enqueuedTimeMs);
        w.writeLong(expiresAtMs);
        MessageCodec.write(w, message);
    }

    public static QueueMessageRecord read(RecordReader in) {
        long partitionRecordId = in.readVarLong();
        SubQueue q = SubQueue.ofCode(in.readByte());
        long seq = in.readLong();
        long enqueuedTimeMs = in.readLong();
        long expiresAtMs = in.readLong();
        return new QueueMessageRecord(partitionRecordId, q, seq, enqueuedTimeMs, expiresAtMs, MessageCodec.read(in));
    }

    /** Moves {@code in} to the record's message. */
    public static void skipToMessage(RecordReader in) {
        in.readVarLong();
        in.readByte();
        in.skip(3 * Long.BYTES);
    }
}
