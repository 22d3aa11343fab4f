package io.buslane.journal.file;

import io.buslane.journal.RecordKind;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Confined to its journal's writer thread. Appends framed records to one segment file through a buffer it borrows
 * from the journal: only one writer holds buffered bytes at a time (the active segment between syncs, or a
 * compaction output while the active segment's buffer is empty).
 */
final class SegmentWriter implements AutoCloseable {

    private final Path path;
    private final FileChannel channel;
    private final SegmentIo io;
    private final ByteBuffer buffer;
    private final CRC32C crc;
    private long writtenBytes;

    private SegmentWriter(Path path, FileChannel channel, long writtenBytes, SegmentIo io, ByteBuffer buffer,
                          CRC32C crc) {
        this.path = path;
        this.channel = channel;
        this.writtenBytes = writtenBytes;
        this.io = io;
        this.buffer = buffer;
        this.crc = crc;
    }

    /** Creates a new, empty file; fails if it exists. */
    static SegmentWriter create(Path path, SegmentIo io, ByteBuffer buffer, CRC32C crc) throws IOException {
        FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        return new SegmentWriter(path, channel, 0, io, buffer, crc);
    }

    /** Opens an existing file to append after its first {@code sizeBytes} bytes. */
    static SegmentWriter openAt(Path path, long sizeBytes, SegmentIo io, ByteBuffer buffer, CRC32C crc)
            throws IOException {
        FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        return new SegmentWriter(path, channel, sizeBytes, io, buffer, crc);
    }

    Path path() {
        return path;
    }

    /**
     * Buffers (or, if larger than the buffer, writes) one record whose payload is {@code length} bytes of
     * {@code payload} from {@code offset}; returns its size on disk.
     */
    int append(RecordKind kind, long id, byte type, byte[] payload, int offset, int length) throws IOException {
        int frameBytes = RecordFormat.frameBytes(length);
        if (frameBytes > buffer.remaining()) {
            flush();
        }
        if (frameBytes > buffer.capacity()) {
            ByteBuffer oneOff = ByteBuffer.allocate(frameBytes);
            RecordFormat.encode(kind, id, type, payload, offset, length, oneOff, crc);
            oneOff.flip();
            writeFully(oneOff);
        } else {
            RecordFormat.encode(kind, id, type, payload, offset, length, buffer, crc);
        }
        return frameBytes;
    }

    /**
     * Buffers (or, if larger than the buffer, writes) {@code frameBytes} bytes of an already framed record found at
     * {@code offset} in {@code src}, verbatim: compaction's copy of a surviving record. {@code src}'s position and
     * limit are left as they were.
     */
    void appendFrame(ByteBuffer src, int offset, int frameBytes) throws IOException {
        if (frameBytes > buffer.remaining()) {
            flush();
        }
        if (frameBytes > buffer.capacity()) {
            ByteBuffer frame = src.duplicate();
            frame.limit(offset + frameBytes).position(offset);
            writeFully(frame);
        } else {
            int at = buffer.position();
            buffer.put(at, src, offset, frameBytes); // absolute: no view of src per frame
            buffer.position(at + frameBytes);
        }
    }

    /** Writes what is buffered to the file (no force). The buffer is empty afterwards, even on failure. */
    void flush() throws IOException {
        if (buffer.position() == 0) {
            return;
        }
        buffer.flip();
        try {
            writeFully(buffer);
        } finally {
            buffer.clear();
        }
    }

    void force() throws IOException {
        io.force(channel, path);
    }

    /** Bytes handed to the file system (excluding what is still buffered). */
    long writtenBytes() {
        return writtenBytes;
    }

    /** Size the file will have once the buffer is written. */
    long logicalSizeBytes() {
        return writtenBytes + buffer.position();
    }

    /**
     * Drops what is buffered and cuts the file back to {@code sizeBytes}, forcing the new size where the device lets
     * it (the next sync forces it anyway).
     */
    void discardAndTruncate(long sizeBytes) throws IOException {
        buffer.clear();
        channel.truncate(sizeBytes);
        writtenBytes = sizeBytes;
        try {
            channel.force(true);
        } catch (IOException ignored) {
            // best effort: a torn tail left by a later crash is truncated again on recovery
        }
    }

    private void writeFully(ByteBuffer src) throws IOException {
        while (src.hasRemaining()) {
            writtenBytes += io.write(channel, src, writtenBytes, path);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
