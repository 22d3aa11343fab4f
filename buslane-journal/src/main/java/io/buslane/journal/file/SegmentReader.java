package io.buslane.journal.file;

import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Confined to the thread that opened it. Reads one segment file front to back, verifying each record's magic, length
 * and CRC, and stops at the first record that fails (see {@link #failure()} and {@link #position()}).
 */
final class SegmentReader implements AutoCloseable {

    private final FileChannel channel;
    private final long fileSizeBytes;
    private final CRC32C crc = new CRC32C();
    private ByteBuffer buffer;
    /** File position of the next byte to read into the buffer. */
    private long readPosition;
    /** File position of the next record: the end of the valid prefix. */
    private long recordPosition;
    private int lastFrameBytes;
    /** Buffer offset of the current frame (valid until the buffer is refilled by the next call). */
    private int frameStart;
    private RecordKind lastKind;
    private byte lastType;
    private long lastId;
    private String failure;

    /**
     * @param file    the segment to read
     * @param scratch a heap buffer to read through; grown (replaced) for a record larger than it
     */
    SegmentReader(Path file, ByteBuffer scratch) throws IOException {
        this.channel = FileChannel.open(file, StandardOpenOption.READ);
        this.fileSizeBytes = channel.size();
        this.buffer = scratch;
        buffer.clear().flip();
    }

    /**
     * The next record, or null at the end of the file or at the first bad record ({@link #failure()} tells which).
     */
    JournalRecord next() throws IOException {
        if (!nextFrame()) {
            return null;
        }
        byte[] payload = new byte[lastFrameBytes - RecordFormat.OVERHEAD_BYTES];
        buffer.get(frameStart + RecordFormat.HEADER_BYTES + RecordFormat.FIXED_BODY_BYTES, payload);
        return new JournalRecord(lastKind, lastId, lastType, payload);
    }

    /**
     * Verifies the next record and makes it the current frame ({@link #lastKind()}, {@link #lastId()},
     * {@link #lastFrameBytes()}, {@link #copyLastFrameTo}) without copying its payload anywhere: compaction copies
     * the frames it keeps verbatim and never materialises the ones it drops. False at the end of the file or at the
     * first bad record ({@link #failure()} tells which). The frame stays readable until the next call.
     */
    boolean nextFrame() throws IOException {
        if (failure != null || recordPosition == fileSizeBytes) {
            return false;
        }
        if (!ensure(RecordFormat.HEADER_BYTES)) {
            return fail("truncated header (" + (fileSizeBytes - recordPosition) + " bytes left)");
        }
        int start = buffer.position();
        byte magic = buffer.get(start);
        if (magic != RecordFormat.MAGIC) {
            return fail(String.format("bad magic 0x%02x", magic & 0xff));
        }
        int length = buffer.getInt(start + 1);
        if (length < RecordFormat.MIN_LENGTH || length > RecordFormat.MAX_LENGTH) {
            return fail("length " + length + " out of range");
        }
        int frameBytes = RecordFormat.HEADER_BYTES + length;
        if (recordPosition + frameBytes > fileSizeBytes) {
            return fail("record of " + frameBytes + " bytes runs past the end of the file");
        }
        if (!ensure(frameBytes)) {
            return fail("file shorter than its size while reading");
        }
        start = buffer.position();
        int crcStart = start + RecordFormat.HEADER_BYTES;
        int crcEnd = start + frameBytes - RecordFormat.CRC_BYTES;
        int savedLimit = buffer.limit();
        buffer.limit(crcEnd).position(crcStart);
        crc.reset();
        crc.update(buffer);
        buffer.limit(savedLimit).position(start);
        if ((int) crc.getValue() != buffer.getInt(crcEnd)) {
            return fail("CRC mismatch");
        }
        byte kindCode = buffer.get(start + RecordFormat.HEADER_BYTES);
        if (kindCode < RecordKind.ADD.code() || kindCode > RecordKind.DELETE.code()) {
            return fail("unknown record kind " + kindCode);
        }
        lastKind = RecordKind.ofCode(kindCode);
        lastType = buffer.get(start + RecordFormat.HEADER_BYTES + 1);
        lastId = buffer.getLong(start + RecordFormat.HEADER_BYTES + 2);
        frameStart = start;
        buffer.position(start + frameBytes);
        recordPosition += frameBytes;
        lastFrameBytes = frameBytes;
        return true;
    }

    /** The kind of the current frame (after {@link #nextFrame()} returned true). */
    RecordKind lastKind() {
        return lastKind;
    }

    /** The owner's type byte of the current frame. */
    byte lastType() {
        return lastType;
    }

    /** Whether the current frame is a batch marker (see {@link RecordFormat#MARKER_ID}). */
    boolean lastIsMarker() {
        return lastFrameBytes == RecordFormat.MARKER_FRAME_BYTES && RecordFormat.isMarker(lastKind, lastId, lastType);
    }

    /** Whether the current frame is a batch-end marker. */
    boolean lastIsBatchEnd() {
        return lastIsMarker() && lastType == RecordFormat.BATCH_END_TYPE;
    }

    /** The record id of the current frame. */
    long lastId() {
        return lastId;
    }

    /** Appends the current frame, byte for byte (its CRC included), to {@code writer}. */
    void copyLastFrameTo(SegmentWriter writer) throws IOException {
        writer.appendFrame(buffer, frameStart, lastFrameBytes);
    }

    /** Bytes the current frame (the record last returned by {@link #next()}) takes on disk. */
    int lastFrameBytes() {
        return lastFrameBytes;
    }

    /** End of the valid prefix: after the last good record, i.e. where a bad record starts. */
    long position() {
        return recordPosition;
    }

    long fileSizeBytes() {
        return fileSizeBytes;
    }

    /** Why reading stopped before the end of the file, or null if it has not. */
    String failure() {
        return failure;
    }

    private boolean fail(String reason) {
        failure = reason;
        return false;
    }

    private boolean ensure(int bytes) throws IOException {
        if (buffer.remaining() >= bytes) {
            return true;
        }
        if (bytes > buffer.capacity()) {
            ByteBuffer bigger = ByteBuffer.allocate(Math.max(bytes, buffer.capacity() * 2));
            bigger.put(buffer).flip();
            buffer = bigger;
        }
        buffer.compact();
        while (buffer.hasRemaining() && readPosition < fileSizeBytes) {
            int read = channel.read(buffer, readPosition);
            if (read < 0) {
                break;
            }
            readPosition += read;
        }
        buffer.flip();
        return buffer.remaining() >= bytes;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
