package io.buslane.journal.file;

import io.buslane.journal.DataDirectoryLayout;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/** Stateless. Names of the files in a journal directory, and directory-level fsync. */
final class SegmentFiles {

    /** A segment: {@code 00000000000000000001.seg}, numbered from 1 in append order. */
    static final String SEGMENT_SUFFIX = DataDirectoryLayout.SEGMENT_SUFFIX;
    /** A compaction output not yet swapped in: {@code <first source>.seg.compacted}. */
    static final String COMPACTED_SUFFIX = DataDirectoryLayout.COMPACTED_SUFFIX;
    /**
     * A segment a finished compaction replaced, renamed out of the way so that freeing its blocks (tens of
     * milliseconds for a large file) happens off the writer thread: {@code <number>.seg.obsolete}. Never read;
     * deleted in the background, or at the next open.
     */
    static final String OBSOLETE_SUFFIX = DataDirectoryLayout.OBSOLETE_SUFFIX;
    /** The control file of an interrupted compaction; see {@link CompactionManifest}. */
    static final String MANIFEST_NAME = DataDirectoryLayout.COMPACTION_MANIFEST;
    private static final int NUMBER_DIGITS = 20;

    private SegmentFiles() {
    }

    static String segmentName(long number) {
        return String.format("%0" + NUMBER_DIGITS + "d%s", number, SEGMENT_SUFFIX);
    }

    static Path segmentPath(Path directory, long number) {
        return directory.resolve(segmentName(number));
    }

    static Path compactedPath(Path directory, long number) {
        return directory.resolve(String.format("%0" + NUMBER_DIGITS + "d%s", number, COMPACTED_SUFFIX));
    }

    static Path obsoletePath(Path segment) {
        return segment.resolveSibling(segment.getFileName() + OBSOLETE_SUFFIX.substring(SEGMENT_SUFFIX.length()));
    }

    /** The number in a segment file name, or -1 if the name is not one. */
    static long parseSegmentNumber(String fileName) {
        if (fileName.length() != NUMBER_DIGITS + SEGMENT_SUFFIX.length() || !fileName.endsWith(SEGMENT_SUFFIX)) {
            return -1;
        }
        long number = 0;
        for (int i = 0; i < NUMBER_DIGITS; i++) {
            char c = fileName.charAt(i);
            if (c < '0' || c > '9' || number > (Long.MAX_VALUE - 9) / 10) {
                return -1;
            }
            number = number * 10 + (c - '0');
        }
        return number > 0 ? number : -1;
    }

    /** Numbers of the segment files in {@code directory}, ascending. */
    static List<Long> listSegments(Path directory) throws IOException {
        List<Long> numbers = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, "*" + SEGMENT_SUFFIX)) {
            for (Path entry : entries) {
                long number = parseSegmentNumber(entry.getFileName().toString());
                if (number > 0) {
                    numbers.add(number);
                }
            }
        }
        numbers.sort(null);
        return numbers;
    }

    /** Compaction outputs that were never swapped in. */
    static List<Path> listCompacted(Path directory) throws IOException {
        return list(directory, COMPACTED_SUFFIX);
    }

    /** Replaced segments not deleted yet. */
    static List<Path> listObsolete(Path directory) throws IOException {
        return list(directory, OBSOLETE_SUFFIX);
    }

    private static List<Path> list(Path directory, String suffix) throws IOException {
        List<Path> paths = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, "*" + suffix)) {
            entries.forEach(paths::add);
        }
        paths.sort(null);
        return paths;
    }

    /**
     * Makes creations, renames and deletions in {@code directory} durable. Skipped on Windows, which cannot open a
     * directory as a channel (and journals its metadata itself).
     */
    static void fsyncDirectory(Path directory) throws IOException {
        if (File.separatorChar == '\\') {
            return;
        }
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
