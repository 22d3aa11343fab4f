package io.buslane.engine.persist.record;

import io.buslane.engine.message.Message;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Type 9, ADD: a message waiting to be auto-forwarded (or parked in a via entity by a transaction). Layout:
 * {@code partitionRecordId} varlong, {@code ownerEntityId} varlong (the via entity for a parked message),
 * {@code fromDeadLetter} bool, {@code seq} long, {@code enqueuedTimeMs} long, the message; appended after the first
 * format, for a parked message only: {@code viaDestination} string, then, for one scheduled through the via entity,
 * {@code reservedSeq} long.
 *
 * @param viaDestination the destination of a parked message, or null
 * @param reservedSeq    the sequence number reserved for a message scheduled through a via entity, or -1
 */
public record TransferRecord(long partitionRecordId, long ownerEntityId, boolean fromDeadLetter, long seq,
                             long enqueuedTimeMs, Message message, String viaDestination, long reservedSeq) {

    public static final byte TYPE = 9;

    public static void write(RecordWriter w, long partitionRecordId, long ownerEntityId, boolean fromDeadLetter,
                             long seq, long enqueuedTimeMs, Message message, String viaDestination,
                             long reservedSeq) {
        w.writeVarLong(partitionRecordId);
        w.writeVarLong(ownerEntityId);
        w.writeBoolean(fromDeadLetter);
        w.writeLong(seq);
        w.writeLong(enqueuedTimeMs);
        MessageCodec.write(w, message);
        if (viaDestination != null) {
            w.writeString(viaDestination);
            if (reservedSeq >= 0) {
                w.writeLong(reservedSeq);
            }
        }
    }

    public static TransferRecord read(RecordReader in) {
        long partitionRecordId = in.readVarLong();
        long ownerEntityId = in.readVarLong();
        boolean fromDeadLetter = in.readBoolean();
        long seq = in.readLong();
        long enqueuedTimeMs = in.readLong();
        Message m = MessageCodec.read(in);
        String via = in.hasRemaining() ? in.readString() : null;
        long reserved = via != null && in.hasRemaining() ? in.readLong() : -1;
        return new TransferRecord(partitionRecordId, ownerEntityId, fromDeadLetter, seq, enqueuedTimeMs, m, via,
                reserved);
    }
}
