package io.buslane.engine.persist.record;

import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Type 2, ADD then UPDATE at each checkpoint: one partition of an entity. Layout: {@code entityId} varlong,
 * {@code index} varint, {@code nextCounter} long (the partition's next sequence counter).
 */
public record PartitionRecord(long entityId, int index, long nextCounter) {

    public static final byte TYPE = 2;

    public static void write(RecordWriter w, long entityId, int index, long nextCounter) {
        w.writeVarLong(entityId);
        w.writeVarInt(index);
        w.writeLong(nextCounter);
    }

    public static PartitionRecord read(RecordReader in) {
        return new PartitionRecord(in.readVarLong(), in.readVarInt(), in.readLong());
    }
}
