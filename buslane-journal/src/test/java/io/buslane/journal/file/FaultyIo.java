package io.buslane.journal.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * Test helper: a disk that fills up. With a write budget set, writes succeed until the budget is used up (the last
 * one partially, leaving a torn record on disk) and then fail with the given message, as ENOSPC does.
 */
final class FaultyIo implements SegmentIo {

    static final String ENOSPC = "No space left on device";

    private long writeBudgetBytes = -1;
    private boolean failNextForce;
    private String message = ENOSPC;

    /** Lets {@code bytes} more bytes through, then fails every write. */
    FaultyIo fillUpAfter(long bytes) {
        this.writeBudgetBytes = bytes;
        return this;
    }

    FaultyIo failNextForce() {
        this.failNextForce = true;
        return this;
    }

    FaultyIo withMessage(String newMessage) {
        this.message = newMessage;
        return this;
    }

    void spaceReturns() {
        writeBudgetBytes = -1;
        failNextForce = false;
    }

    @Override
    public int write(FileChannel channel, ByteBuffer src, long positionBytes, Path file) throws IOException {
        if (writeBudgetBytes < 0) {
            return channel.write(src, positionBytes);
        }
        if (writeBudgetBytes == 0) {
            throw new IOException(message);
        }
        int allowed = (int) Math.min(writeBudgetBytes, src.remaining());
        int savedLimit = src.limit();
        src.limit(src.position() + allowed);
        int written = channel.write(src, positionBytes);
        src.limit(savedLimit);
        writeBudgetBytes -= written;
        return written;
    }

    @Override
    public void force(FileChannel channel, Path file) throws IOException {
        if (failNextForce) {
            failNextForce = false;
            throw new IOException(message);
        }
        channel.force(false);
    }
}
