package io.buslane.journal.file;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Test helper: a disk of a fixed capacity that holds one directory tree, so a full disk is simulated exactly and
 * deterministically. Its used space is the size of the tree's files; segment writes that would grow the files past
 * the capacity write what fits and then fail with ENOSPC, as a real disk does. Segments that compaction replaced
 * ({@code *.obsolete}) are freed by the journal's background thread moments later; they count as free, so that tests
 * need not wait for that thread.
 */
final class SmallDisk implements SegmentIo, DiskSpace {

    private final Path root;
    private volatile long capacityBytes;

    SmallDisk(Path root, long capacityBytes) {
        this.root = root;
        this.capacityBytes = capacityBytes;
    }

    /** Bytes the tree's files take. */
    long usedBytes() {
        long[] used = {0};
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                    if (attributes.isRegularFile()
                            && !file.getFileName().toString().endsWith(SegmentFiles.OBSOLETE_SUFFIX)) {
                        used[0] += attributes.size();
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    return FileVisitResult.CONTINUE; // deleted meanwhile (the background thread frees segments)
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return used[0];
    }

    /** The disk is full now: its capacity becomes what is used. */
    void fillUp() {
        capacityBytes = usedBytes();
    }

    void capacityBytes(long bytes) {
        capacityBytes = bytes;
    }

    @Override
    public long usableBytes(Path directory) {
        return Math.max(0, capacityBytes - usedBytes());
    }

    @Override
    public int write(FileChannel channel, ByteBuffer src, long positionBytes, Path file) throws IOException {
        long growth = Math.max(0, positionBytes + src.remaining() - channel.size());
        long free = usableBytes(root);
        if (growth <= free) {
            return channel.write(src, positionBytes);
        }
        long fits = src.remaining() - (growth - free);
        if (fits <= 0) {
            throw new IOException(FaultyIo.ENOSPC);
        }
        int savedLimit = src.limit();
        src.limit(src.position() + (int) fits);
        try {
            return channel.write(src, positionBytes);
        } finally {
            src.limit(savedLimit);
        }
    }
}
