package io.buslane.journal.file;

import io.buslane.journal.DataDirectoryLayout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Thread-safe. Disk space kept back for the writes that free space: a file of zeros, {@value #FILE_NAME}, in the data
 * directory, deleted (released) when the disk fills up, so that the journals can still write DELETEs and checkpoints
 * and rewrite sparse segments, and written again once the disk has room.
 *
 * <p>New messages never get the reserve's space: {@link #usableBytes()}, which the engine compares with its
 * free-space threshold before it accepts a send, is the file system's usable space minus the part of the reserve that
 * is not on disk. Releasing the reserve therefore changes nothing for sends; they stay refused until the reserve is
 * back and the threshold is met on top of it.
 *
 * <p>The reserve is <b>held</b> (the file has its full size) or <b>owed</b> (released, or never written because the
 * disk had no room). It is released when a journal's write or compaction fails for lack of space, when a compaction
 * group needs the room, or when a reading finds less than half the reserve's size free. It is written again when a
 * reading finds three times its size free: on the background I/O thread, as {@value #TEMP_NAME} in chunks (the owed
 * bytes shrink as they go, so the reported space does not dip), forced and renamed, so a crash never leaves a short
 * reserve; a stray temporary file, or a reserve of another size, is deleted at open. Readings happen when the engine
 * checks the free space (at most every 100 ms while sends arrive) and when a journal picks a compaction group,
 * never per append.
 */
final class DiskReserve implements AutoCloseable {

    static final String FILE_NAME = DataDirectoryLayout.RESERVE;
    static final String TEMP_NAME = DataDirectoryLayout.RESERVE + DataDirectoryLayout.TEMP_SUFFIX;
    private static final Logger LOG = LoggerFactory.getLogger(DiskReserve.class);
    private static final int CHUNK_BYTES = 256 * 1024;
    /** Written again once a reading finds this many times its size free (so releasing right after is unlikely). */
    private static final long RECREATE_FACTOR = 3;

    /** One attempt to write the reserve; {@link #cancelled} stops it between chunks. */
    private static final class Creation {
        volatile boolean cancelled;
        Future<?> future;
    }

    private final Path directory;
    private final Path file;
    private final Path temp;
    private final long sizeBytes;
    private final DiskSpace diskSpace;
    /** Bytes of the reserve not on disk now: zero when held. Written under the lock. */
    private volatile long owedBytes;
    /** Guarded by this. */
    private boolean held;
    /** Guarded by this: the write under way, or null. */
    private Creation creation;
    /** Guarded by this: writing failed for another reason than space; not retried until the next open. */
    private boolean broken;
    /** Guarded by this. */
    private boolean closed;

    /**
     * @param directory the data directory that holds the file
     * @param sizeBytes the reserve's size; zero keeps none (and deletes a reserve left by an earlier run)
     * @param diskSpace reads the file system's usable space
     */
    DiskReserve(Path directory, long sizeBytes, DiskSpace diskSpace) {
        this.directory = directory;
        this.file = directory.resolve(FILE_NAME);
        this.temp = directory.resolve(TEMP_NAME);
        this.sizeBytes = sizeBytes;
        this.diskSpace = diskSpace;
    }

    /** No reserve: a journal opened on its own, without a factory. */
    static DiskReserve none(Path directory, DiskSpace diskSpace) {
        return new DiskReserve(directory, 0, diskSpace);
    }

    /**
     * Keeps the reserve found on disk, or writes it now (on the caller's thread) when the disk has room; never fails:
     * a broker on a full disk must still start, and runs with the reserve owed.
     */
    void open() {
        try {
            Files.deleteIfExists(temp);
            if (Files.exists(file) && Files.size(file) == sizeBytes && sizeBytes > 0) {
                synchronized (this) {
                    held = true;
                }
                return;
            }
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.warn("Could not prepare the disk reserve {}; running without it", file, e);
        }
        if (sizeBytes == 0) {
            return;
        }
        Creation now;
        synchronized (this) {
            owedBytes = sizeBytes;
            long free = diskSpace.usableBytes(directory);
            if (free < RECREATE_FACTOR * sizeBytes) {
                LOG.warn("Only {} bytes are free on the disk of {}: the {}-byte disk reserve for deletes and "
                        + "compaction is written once {} bytes are", free, directory, sizeBytes,
                        RECREATE_FACTOR * sizeBytes);
                return;
            }
            now = new Creation();
            creation = now;
        }
        write(now);
    }

    /** The file system's usable bytes, after releasing or writing the reserve as the reading calls for. */
    long freeBytes() {
        long free = diskSpace.usableBytes(directory);
        if (sizeBytes == 0 || free == Long.MAX_VALUE) {
            return free;
        }
        boolean released = false;
        synchronized (this) {
            if (closed) {
                return free;
            }
            if (held && free < sizeBytes / 2) {
                released = releaseLocked("only " + free + " bytes are free");
            } else if (!held && creation == null && !broken && free >= RECREATE_FACTOR * sizeBytes) {
                Creation later = new Creation();
                creation = later;
                later.future = BackgroundIo.submit(() -> {
                    write(later);
                    return null;
                });
            }
        }
        return released ? diskSpace.usableBytes(directory) : free;
    }

    /** Bytes new messages may use: {@link #freeBytes()} minus the part of the reserve that is not on disk. */
    long usableBytes() {
        long free = freeBytes();
        return free == Long.MAX_VALUE ? free : Math.max(0, free - owedBytes);
    }

    /** The reserve's bytes on disk that {@link #release} would free: its size when held, else zero. */
    synchronized long heldBytes() {
        return held ? sizeBytes : 0;
    }

    /** Bytes of the reserve that are not on disk now. */
    long owedBytes() {
        return owedBytes;
    }

    /**
     * Releases the reserve (deletes the file, or stops writing it) so that deletes and compaction can use its space.
     *
     * @param why logged
     * @return true when space was freed
     */
    synchronized boolean release(String why) {
        return releaseLocked(why);
    }

    private boolean releaseLocked(String why) {
        if (sizeBytes == 0 || closed) {
            return false;
        }
        if (creation != null) {
            creation.cancelled = true;
            creation = null;
            owedBytes = sizeBytes;
            deleteQuietly(temp);
            LOG.warn("Stopped writing the disk reserve {}: {}", file, why);
            return true;
        }
        if (!held) {
            return false;
        }
        held = false;
        owedBytes = sizeBytes;
        if (!deleteQuietly(file)) {
            return false;
        }
        LOG.warn("Released the {}-byte disk reserve {} for deletes and compaction: {}. New messages are refused until "
                + "it can be written again", sizeBytes, file, why);
        return true;
    }

    /** Writes the reserve as the temporary file, then renames it; gives up quietly when cancelled. */
    private void write(Creation c) {
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(CHUNK_BYTES, sizeBytes));
            long written = 0;
            while (written < sizeBytes) {
                int chunk = (int) Math.min(zeros.capacity(), sizeBytes - written);
                synchronized (this) {
                    if (c.cancelled) {
                        return;
                    }
                    owedBytes -= chunk; // before the write: the reported space never dips below the truth
                }
                zeros.clear().limit(chunk);
                while (zeros.hasRemaining()) {
                    written += channel.write(zeros, written);
                }
            }
            channel.force(true);
        } catch (IOException e) {
            failed(c, e);
            return;
        }
        synchronized (this) {
            if (c.cancelled || closed) {
                deleteQuietly(temp);
                return;
            }
            try {
                Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
                SegmentFiles.fsyncDirectory(directory);
            } catch (IOException e) {
                failed(c, e);
                return;
            }
            held = true;
            owedBytes = 0;
            creation = null;
        }
        LOG.info("Wrote the {}-byte disk reserve {} for deletes and compaction", sizeBytes, file);
    }

    private synchronized void failed(Creation c, IOException e) {
        deleteQuietly(temp);
        if (creation != c) {
            return; // released meanwhile
        }
        creation = null;
        owedBytes = sizeBytes;
        if (DiskErrors.isNoSpace(e)) {
            LOG.info("Could not write the disk reserve {} yet: the disk filled up again", file);
        } else {
            broken = true;
            LOG.warn("Could not write the disk reserve {}; running without it until the next start", file, e);
        }
    }

    private boolean deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
            return true;
        } catch (IOException e) {
            LOG.warn("Could not delete {}", path, e);
            return false;
        }
    }

    /** Test seam: waits for a background write of the reserve to finish. */
    void awaitWrite() throws Exception {
        Future<?> f;
        synchronized (this) {
            f = creation == null ? null : creation.future;
        }
        if (f != null) {
            f.get(10, TimeUnit.SECONDS);
        }
    }

    /** Stops a write under way and waits (a bounded time) for it, so that none outlives the data directory's lock. */
    @Override
    public void close() {
        Future<?> f;
        synchronized (this) {
            closed = true;
            Creation c = creation;
            if (c == null) {
                return;
            }
            c.cancelled = true;
            creation = null;
            f = c.future;
        }
        if (f == null) {
            return;
        }
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("The disk reserve {} is still being written; the next open deletes it", temp);
        }
    }
}
