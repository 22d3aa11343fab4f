package io.buslane.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/** Stateless. What the journal benchmarks share: the record shape and where their files go. */
final class BenchFiles {

    /** Payload of every record. */
    static final int PAYLOAD_BYTES = 1024;
    /**
     * The file journal's framing around a payload (magic 1, length 4, kind 1, type 1, id 8, crc 4; see
     * {@code io.buslane.journal.file.FileJournal}). {@link JournalAppendBenchmark} checks it against the bytes the
     * journal actually stored, so the ceiling writes exactly as many bytes as the journal.
     */
    static final int FRAMING_BYTES = 19;
    static final int FRAME_BYTES = PAYLOAD_BYTES + FRAMING_BYTES;
    /** The largest batch any benchmark method writes. */
    static final int MAX_BATCH = 256;
    /** System property naming the directory the benchmark files go to (default: java.io.tmpdir). */
    static final String DIR_PROPERTY = "buslane.bench.dir";

    private BenchFiles() {
    }

    /** A fresh, empty directory for one iteration's files. */
    static Path freshDirectory(String prefix) {
        try {
            Path base = Paths.get(System.getProperty(DIR_PROPERTY, System.getProperty("java.io.tmpdir")));
            Files.createDirectories(base);
            return Files.createTempDirectory(base, prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes the directory and everything in it. */
    static void deleteRecursively(Path directory) {
        if (directory == null || !Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Incompressible bytes (not that anything compresses here; it keeps the content honest). */
    static byte[] randomBytes(int length, long seed) {
        byte[] bytes = new byte[length];
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) random.nextInt(256);
        }
        return bytes;
    }
}
