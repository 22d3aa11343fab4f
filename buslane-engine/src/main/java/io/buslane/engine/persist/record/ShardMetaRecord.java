package io.buslane.engine.persist.record;

import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Type 1, ADD then UPDATE, fixed id {@code 1}: the shard's meta record. Layout: {@code nextRecordId} varlong, then
 * (appended after the first format) {@code clockFloorMs} long, the latest cycle time a checkpoint stored.
 *
 * @param nextRecordId the next record id the shard hands out
 * @param clockFloorMs the clock floor, or -1 in a record of the first format
 */
public record ShardMetaRecord(long nextRecordId, long clockFloorMs) {

    public static final byte TYPE = 1;

    public static void write(RecordWriter w, long nextRecordId, long clockFloorMs) {
        w.writeVarLong(nextRecordId);
        w.writeLong(clockFloorMs);
    }

    public static ShardMetaRecord read(RecordReader in) {
        long next = in.readVarLong();
        return new ShardMetaRecord(next, in.remaining() >= Long.BYTES ? in.readLong() : -1);
    }
}
