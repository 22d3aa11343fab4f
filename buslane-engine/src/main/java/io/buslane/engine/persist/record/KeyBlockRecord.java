package io.buslane.engine.persist.record;

import io.buslane.engine.dedup.DedupWindow;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Types 10 (first format, read only) and 11, ADD: a block of remembered keys (message ids for duplicate detection,
 * or transfer keys). Layout: {@code partitionRecordId} varlong, {@code kind} byte ({@link DedupWindow#kind()}: 0
 * duplicate detection, 1 transfer keys), {@code count} varint, then count × ({@code hashHigh} long,
 * {@code hashLow} long, {@code timeMs} long). Type 11 holds the hashes as the window holds them (XXH3-128 with the
 * lowest bit as the legacy tag); type 10 the first, home-made hash, tagged as legacy when read
 * ({@link DedupWindow#legacyTagged}). Written once per cycle per partition, deleted once expired.
 */
public record KeyBlockRecord(long partitionRecordId, byte kind) {

    /** Blocks of the first format (their hashes are the legacy hash). */
    public static final byte TYPE_LEGACY = 10;
    public static final byte TYPE = 11;

    /** Writes the block's head; then {@code count} calls of {@link #writeKey} follow. */
    public static void writeHead(RecordWriter w, long partitionRecordId, byte kind, int count) {
        w.writeVarLong(partitionRecordId);
        w.writeByte(kind);
        w.writeVarInt(count);
    }

    public static void writeKey(RecordWriter w, long hashHigh, long hashLow, long timeMs) {
        w.writeLong(hashHigh);
        w.writeLong(hashLow);
        w.writeLong(timeMs);
    }

    /** The block's head (replay keeps only that until the keys are wanted). */
    public static KeyBlockRecord readHead(RecordReader in) {
        return new KeyBlockRecord(in.readVarLong(), in.readByte());
    }

    /** The block's keys as (hash high, hash low, time) triples, tagged as legacy for a block of type 10. */
    public static long[] readKeys(RecordReader in, byte type) {
        boolean legacy = type == TYPE_LEGACY;
        in.readVarLong();
        in.readByte();
        int n = in.readVarInt();
        long[] keys = new long[n * 3];
        for (int i = 0; i < keys.length; i += 3) {
            keys[i] = in.readLong();
            long low = in.readLong();
            keys[i + 1] = legacy ? DedupWindow.legacyTagged(low) : low;
            keys[i + 2] = in.readLong();
        }
        return keys;
    }
}
