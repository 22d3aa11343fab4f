package io.buslane.engine.persist.record;

import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Type 8, ADD then UPDATE: a session's state. Layout: {@code partitionRecordId} varlong, {@code ownerEntityId}
 * varlong (the queue or subscription), {@code sessionId} string, {@code lastUpdatedMs} long, {@code state} bytes.
 */
public record SessionStateRecord(long partitionRecordId, long ownerEntityId, String sessionId, long lastUpdatedMs,
                                 byte[] state) {

    public static final byte TYPE = 8;

    public static void write(RecordWriter w, long partitionRecordId, long ownerEntityId, String sessionId,
                             long lastUpdatedMs, byte[] state) {
        w.writeVarLong(partitionRecordId);
        w.writeVarLong(ownerEntityId);
        w.writeString(sessionId);
        w.writeLong(lastUpdatedMs);
        w.writeBytes(state);
    }

    public static SessionStateRecord read(RecordReader in) {
        return new SessionStateRecord(in.readVarLong(), in.readVarLong(), in.readString(), in.readLong(),
                in.readBytes());
    }

    /** The state alone (a state read back when first needed). */
    public static byte[] stateOf(RecordReader in) {
        return read(in).state();
    }
}
