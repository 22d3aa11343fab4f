package io.buslane.bench.broker;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * What {@code artemis create} does to choose {@code journal-buffer-timeout}: time a run of small writes each
 * followed by a disk sync, on the disk the journal will use, and take the mean time per write+sync as the timeout
 * (so Artemis batches for about as long as one sync takes).
 */
final class DiskSync {

    private DiskSync() {
    }

    /** Mean nanoseconds of a 4 KiB positional write + {@code force(false)} in {@code dir} (one warm-up pass). */
    static long meanSyncNanos(Path dir, int writes) throws IOException {
        Files.createDirectories(dir);
        Path file = Files.createTempFile(dir, "sync-test-", ".tmp");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.READ)) {
            ByteBuffer block = ByteBuffer.allocateDirect(4096);
            long mean = 0;
            for (int pass = 0; pass < 2; pass++) {
                long start = System.nanoTime();
                for (int i = 0; i < writes; i++) {
                    block.clear();
                    ch.write(block, (long) i * 4096);
                    ch.force(false);
                }
                mean = (System.nanoTime() - start) / writes;
            }
            return mean;
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
