package io.buslane.journal.file;

import io.buslane.journal.RecordKind;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Stateless. The framing of one record inside a segment file; see {@link FileJournal} for the whole layout.
 *
 * <pre>
 * offset    size  field
 *  0         1    magic    0xB1: the record format version (1). Zero, as in a pre-allocated or torn tail, is invalid
 *  1         4    length   int, big-endian: bytes after this field = 14 + payload length
 *  5         1    kind     {@link io.buslane.journal.RecordKind#code()}: 1 ADD, 2 UPDATE, 3 DELETE
 *  6         1    type     the owner's record type, stored and never interpreted
 *  7         8    id       long, big-endian
 * 15         n    payload  the owner's bytes (n = length - 14; zero for a DELETE)
 * 15+n       4    crc      CRC32C (Castagnoli) over bytes [5, 15+n): kind, type, id and payload, as an int
 * </pre>
 *
 * <p>A frame of kind DELETE, id {@link Long#MIN_VALUE}, type 0x7F or 0x7E and no payload is a batch marker, not a
 * record (see {@link #MARKER_ID}).
 *
 * <p>The CRC does not cover the magic or the length: a damaged length either falls outside
 * [{@link #MIN_LENGTH}, {@link #MAX_LENGTH}], runs past the end of the file, or makes the CRC cover the wrong bytes.
 */
final class RecordFormat {

    /** Format version 1. A new format gets a new magic, so old and new records can be told apart. */
    static final byte MAGIC = (byte) 0xB1;
    /** Magic plus length: the bytes before the part the length counts. */
    static final int HEADER_BYTES = 1 + 4;
    /** Kind, type and id. */
    static final int FIXED_BODY_BYTES = 1 + 1 + 8;
    static final int CRC_BYTES = 4;
    /** The length of a record with an empty payload. */
    static final int MIN_LENGTH = FIXED_BODY_BYTES + CRC_BYTES;
    /** Bytes a record takes on disk on top of its payload. */
    static final int OVERHEAD_BYTES = HEADER_BYTES + MIN_LENGTH;
    /** Largest frame: 256 MiB, well above the 100 MB Service Bus premium message limit. */
    static final int MAX_FRAME_BYTES = 256 * 1024 * 1024;
    static final int MAX_LENGTH = MAX_FRAME_BYTES - HEADER_BYTES;
    static final int MAX_PAYLOAD_BYTES = MAX_FRAME_BYTES - OVERHEAD_BYTES;

    /**
     * Batch markers: frames of kind DELETE with this id and no payload, never records of the owner's. A batch-end
     * marker ({@link #BATCH_END_TYPE}) is written by {@link FileJournal} at the end of every synced batch and as the
     * first frame of a segment started between batches; a segment started in the middle of a batch (a roll) starts
     * with a batch-continues marker ({@link #BATCH_CONTINUES_TYPE}) instead. Recovery delivers the records of a
     * segment that starts with a marker only once their batch's end marker has been read, so that a batch (a shard's
     * commit: a transaction's records) is recovered whole or not at all. Markers are never indexed, replayed, read
     * back or copied by compaction; {@link FileJournal#append} refuses a record that would look like one.
     */
    static final long MARKER_ID = Long.MIN_VALUE;
    static final byte BATCH_END_TYPE = (byte) 0x7F;
    static final byte BATCH_CONTINUES_TYPE = (byte) 0x7E;
    static final byte[] NO_PAYLOAD = new byte[0];
    /** Bytes a batch marker takes on disk. */
    static final int MARKER_FRAME_BYTES = OVERHEAD_BYTES;

    private RecordFormat() {
    }

    /** Whether a frame with this kind, id and type is a batch marker (of either type). */
    static boolean isMarker(RecordKind kind, long id, byte type) {
        return id == MARKER_ID && kind == RecordKind.DELETE
                && (type == BATCH_END_TYPE || type == BATCH_CONTINUES_TYPE);
    }

    /** Bytes the record with this payload length takes on disk. */
    static int frameBytes(int payloadBytes) {
        if (payloadBytes > MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException("payload of " + payloadBytes + " bytes exceeds the maximum of "
                    + MAX_PAYLOAD_BYTES);
        }
        return OVERHEAD_BYTES + payloadBytes;
    }

    /**
     * Writes the whole frame (the payload: {@code length} bytes of {@code payload} from {@code offset}) at
     * {@code dst}'s position, which advances past it. The caller has checked that
     * {@code dst} has {@link #frameBytes} remaining.
     */
    static void encode(RecordKind kind, long id, byte type, byte[] payload, int offset, int length, ByteBuffer dst,
                       CRC32C crc) {
        int start = dst.position();
        dst.put(MAGIC)
                .putInt(MIN_LENGTH + length)
                .put(kind.code())
                .put(type)
                .putLong(id)
                .put(payload, offset, length);
        int end = dst.position();
        int savedLimit = dst.limit();
        dst.limit(end).position(start + HEADER_BYTES);
        crc.reset();
        crc.update(dst);
        dst.limit(savedLimit);
        dst.putInt((int) crc.getValue());
    }
}
