package io.buslane.journal.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * Immutable. The control file ({@value SegmentFiles#MANIFEST_NAME}) that makes one compaction step resumable: it
 * names the source segments being replaced and the output that replaces them, and is durable before the first source
 * is deleted.
 *
 * <pre>
 * offset  size  field
 *  0       4    magic          "BLCM"
 *  4       1    version        1
 *  5       8    target         segment number the output takes (the first source's), big-endian
 * 13       8    outputBytes    size of {@code <target>.seg.compacted}; -1 when nothing was live (no output)
 * 21       4    sourceCount    n
 * 25       8n   sources        source segment numbers, ascending (the first is {@code target})
 * 25+8n    4    crc            CRC32C over bytes [0, 25+8n)
 * </pre>
 *
 * A manifest that is short or fails its CRC was torn while being written: nothing was deleted yet, so it is ignored
 * and the compaction rolled back.
 *
 * @param target      segment number the output is renamed to
 * @param sources     the replaced segments, ascending, contiguous in the segment order
 * @param outputBytes the output's size, or -1 when the group had no live record
 */
record CompactionManifest(long target, long[] sources, long outputBytes) {

    private static final int MAGIC = 0x424C434D; // "BLCM"
    private static final byte VERSION = 1;
    private static final int FIXED_BYTES = 4 + 1 + 8 + 8 + 4;

    boolean hasOutput() {
        return outputBytes >= 0;
    }

    /** Writes and forces the manifest (the caller then fsyncs the directory). */
    void write(Path directory) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(FIXED_BYTES + 8 * sources.length + 4);
        buffer.putInt(MAGIC).put(VERSION).putLong(target).putLong(outputBytes).putInt(sources.length);
        for (long source : sources) {
            buffer.putLong(source);
        }
        CRC32C crc = new CRC32C();
        crc.update(buffer.array(), 0, buffer.position());
        buffer.putInt((int) crc.getValue()).flip();
        try (FileChannel channel = FileChannel.open(directory.resolve(SegmentFiles.MANIFEST_NAME),
                StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
    }

    /** The manifest in {@code directory}: empty if there is none or it is torn. */
    static Optional<CompactionManifest> read(Path directory) throws IOException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(directory.resolve(SegmentFiles.MANIFEST_NAME));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        if (bytes.length < FIXED_BYTES + 4) {
            return Optional.empty();
        }
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        if (buffer.getInt() != MAGIC || buffer.get() != VERSION) {
            return Optional.empty();
        }
        long target = buffer.getLong();
        long outputBytes = buffer.getLong();
        int count = buffer.getInt();
        if (count < 1 || bytes.length != FIXED_BYTES + 8L * count + 4) {
            return Optional.empty();
        }
        long[] sources = new long[count];
        for (int i = 0; i < count; i++) {
            sources[i] = buffer.getLong();
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, buffer.position());
        if ((int) crc.getValue() != buffer.getInt() || sources[0] != target) {
            return Optional.empty();
        }
        return Optional.of(new CompactionManifest(target, sources, outputBytes));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CompactionManifest m && m.target == target && m.outputBytes == outputBytes
                && Arrays.equals(m.sources, sources);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(target) * 31 + Arrays.hashCode(sources);
    }

    @Override
    public String toString() {
        return "CompactionManifest[target=" + target + ", sources=" + Arrays.toString(sources) + ", outputBytes="
                + outputBytes + "]";
    }
}
