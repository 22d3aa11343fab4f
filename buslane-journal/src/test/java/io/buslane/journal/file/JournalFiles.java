package io.buslane.journal.file;

import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Test helpers for file journals: replaying, describing records, and copying or listing journal directories. */
final class JournalFiles {

    /** Small segments, no automatic compaction, real fsync: the defaults of most file tests. */
    static final FileJournalOptions SMALL = FileJournalOptions.defaults()
            .withSegmentSizeBytes(512)
            .withAutoCompactLiveRatio(0);

    private JournalFiles() {
    }

    static List<JournalRecord> replay(FileJournal journal) {
        List<JournalRecord> records = new ArrayList<>();
        journal.replay(records::add);
        return records;
    }

    static List<String> describe(List<JournalRecord> records) {
        return records.stream().map(JournalModel::describe).collect(Collectors.toList());
    }

    /** True when {@code part} appears in {@code whole} in the same order (gaps allowed); an empty part always does. */
    static boolean isSubsequence(List<String> whole, List<String> part) {
        int matched = 0;
        for (int i = 0; i < whole.size() && matched < part.size(); i++) {
            if (whole.get(i).equals(part.get(matched))) {
                matched++;
            }
        }
        return matched == part.size();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** File names in the directory, sorted. */
    static List<String> fileNames(Path directory) {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<Path> segmentFiles(Path directory) {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(p -> p.getFileName().toString().endsWith(SegmentFiles.SEGMENT_SUFFIX)).sorted()
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Copies the regular files of {@code from} into a new directory {@code to}. */
    static Path copyDirectory(Path from, Path to) {
        try {
            Files.createDirectories(to);
            try (Stream<Path> files = Files.list(from)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    Files.copy(file, to.resolve(file.getFileName()));
                }
            }
            return to;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
