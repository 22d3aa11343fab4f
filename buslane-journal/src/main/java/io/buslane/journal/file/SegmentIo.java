package io.buslane.journal.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * Stateless. The two calls through which every segment byte reaches the disk: a seam for tests that inject a full
 * disk, a failing device or a crash in the middle of a write. Production uses {@link #DIRECT}.
 */
interface SegmentIo {

    SegmentIo DIRECT = new SegmentIo() {
    };

    /** Writes some of {@code src} at {@code positionBytes} of {@code file}; returns the bytes written. */
    default int write(FileChannel channel, ByteBuffer src, long positionBytes, Path file) throws IOException {
        return channel.write(src, positionBytes);
    }

    /** Forces the file's data (not necessarily its metadata) to the device. */
    default void force(FileChannel channel, Path file) throws IOException {
        channel.force(false);
    }
}
