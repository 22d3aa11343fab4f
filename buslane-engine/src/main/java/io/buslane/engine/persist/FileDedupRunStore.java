package io.buslane.engine.persist;

import io.buslane.journal.DataDirectoryLayout;
import io.buslane.engine.dedup.DedupRunStore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Runs of remembered keys as files of a shard's directory under {@value #DIRECTORY} in the data directory: 24
 * bytes per key (hash high, hash low, time; big-endian), sorted by hash, memory-mapped for lookups (so they take no
 * heap: the operating system's page cache holds what lookups touch). The files are a cache of the journal's key
 * blocks: they are not synced, and the directory is emptied when the store opens (the replay rebuilds them).
 * Confined to the shard thread.
 */
final class FileDedupRunStore implements DedupRunStore {

    /** The subdirectory of the data directory holding the runs. */
    static final String DIRECTORY = DataDirectoryLayout.DEDUP_RUNS;

    private static final int KEY_BYTES = 24;
    /** Keys per mapped chunk (a mapping holds at most 2 GiB). */
    private static final int CHUNK_SHIFT = 25;
    private static final long CHUNK_MASK = (1L << CHUNK_SHIFT) - 1;

    private final Path directory;
    private final String prefix = UUID.randomUUID().toString().substring(0, 8);
    private long nextFile;

    FileDedupRunStore(Path directory) {
        this.directory = directory;
        try {
            Files.createDirectories(directory);
            try (Stream<Path> files = Files.list(directory)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    try {
                        Files.deleteIfExists(f);
                    } catch (IOException e) {
                        // still mapped by an engine of this process (a restart in tests): names below differ
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare " + directory, e);
        }
    }

    @Override
    public Writer create() {
        Path file = directory.resolve("run-" + prefix + "-" + (nextFile++) + ".keys");
        FileChannel ch;
        try {
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + file, e);
        }
        return new Writer() {
            private final ByteBuffer buf = ByteBuffer.allocate(KEY_BYTES * 2730);
            private long count;

            @Override
            public void add(long hi, long lo, long timeMs) {
                if (buf.remaining() < KEY_BYTES) {
                    flush();
                }
                buf.putLong(hi).putLong(lo).putLong(timeMs);
                count++;
            }

            private void flush() {
                buf.flip();
                try {
                    while (buf.hasRemaining()) {
                        ch.write(buf);
                    }
                } catch (IOException e) {
                    close(ch);
                    deleteQuietly(file);
                    throw new UncheckedIOException("cannot write " + file, e);
                }
                buf.clear();
            }

            @Override
            public Run finish() {
                flush();
                try {
                    if (count == 0) {
                        close(ch);
                        Files.deleteIfExists(file);
                        return null;
                    }
                    long chunks = ((count - 1) >>> CHUNK_SHIFT) + 1;
                    MappedByteBuffer[] maps = new MappedByteBuffer[(int) chunks];
                    for (int c = 0; c < chunks; c++) {
                        long from = ((long) c << CHUNK_SHIFT) * KEY_BYTES;
                        long len = Math.min(count * KEY_BYTES - from, (1L << CHUNK_SHIFT) * KEY_BYTES);
                        maps[c] = ch.map(FileChannel.MapMode.READ_ONLY, from, len);
                    }
                    close(ch);
                    return new FileRun(file, count, maps);
                } catch (IOException e) {
                    close(ch);
                    deleteQuietly(file);
                    throw new UncheckedIOException("cannot map " + file, e);
                }
            }
        };
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // removed when the store next opens
        }
    }

    private static void close(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing left to do with it
        }
    }

    private record FileRun(Path file, long count, MappedByteBuffer[] maps) implements Run {

        private long at(long index, int field) {
            return maps[(int) (index >>> CHUNK_SHIFT)].getLong((int) (index & CHUNK_MASK) * KEY_BYTES + field * 8);
        }

        @Override
        public long hi(long index) {
            return at(index, 0);
        }

        @Override
        public long lo(long index) {
            return at(index, 1);
        }

        @Override
        public long time(long index) {
            return at(index, 2);
        }

        @Override
        public long bytes() {
            return count * KEY_BYTES;
        }

        @Override
        public void delete() {
            // the mapping stays valid until collected; the file's space is freed then
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a leftover file is removed when the store next opens
            }
        }
    }
}
