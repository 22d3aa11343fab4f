package io.buslane.journal.file;

import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An id whose records are all dead and all in one segment (an ADD and its DELETE written close together, the common
 * case of a message received soon after it was sent) is dropped from the index at its DELETE; compaction recognises
 * its frames as such (also when the id is used again) and checks their count.
 */
class FileJournalForgottenIdsTest {

    private static final byte TYPE = 1;
    private static final FileJournalOptions OPTIONS = FileJournalOptions.defaults().withSegmentSizeBytes(64 * 1024)
            .withAutoCompactLiveRatio(0);

    @TempDir
    Path temp;

    @Test
    void anAddAndItsDeleteInOneSegmentLeaveNothingIndexedAndCompactAway() {
        Path dir = temp.resolve("journal");
        try (FileJournal journal = openEmpty(dir)) {
            for (long id = 16; id < 216; id++) {
                journal.append(JournalRecord.add(id, TYPE, payload("m" + id)));
                if (id % 10 == 0) {
                    journal.sync();
                }
                if (id >= 20) {
                    journal.append(JournalRecord.delete(id - 4)); // received a few messages later
                }
            }
            journal.sync();
            // ids 212..215 are still live; every other id had its ADD and DELETE in the first segment
            assertThat(journal.indexedIdCount()).isEqualTo(4);
            assertThat(journal.read(100)).isNull();
            assertThat(journal.read(215)).isEqualTo(payload("m215"));
            rollPastTheFirstSegment(journal);
            CompactionResult result = journal.compact(1.0);
            assertThat(result.segmentsCompacted()).isGreaterThanOrEqualTo(1);
            assertThat(journal.read(215)).isEqualTo(payload("m215"));
        }
        try (FileJournal reopened = new FileJournal(dir, OPTIONS)) {
            assertThat(JournalFiles.describe(JournalFiles.replay(reopened)).stream()
                    .filter(d -> d.startsWith("ADD")).count()).isEqualTo(4 + FILLERS);
            assertThat(reopened.indexedIdCount()).isEqualTo(4 + FILLERS);
        }
    }

    @Test
    void anIdUsedAgainAfterBeingForgottenKeepsItsNewRecordsThroughCompaction() {
        Path dir = temp.resolve("journal");
        try (FileJournal journal = openEmpty(dir)) {
            journal.append(JournalRecord.add(16, TYPE, payload("first")));
            journal.append(JournalRecord.add(17, TYPE, payload("other")));
            journal.sync();
            journal.append(JournalRecord.delete(16));
            journal.sync();
            assertThat(journal.indexedIdCount()).isEqualTo(1); // 16 forgotten
            journal.append(JournalRecord.add(16, TYPE, payload("second"))); // same id, same segment
            journal.append(JournalRecord.update(16, TYPE, payload("second, updated")));
            journal.sync();
            rollPastTheFirstSegment(journal);
            journal.compact(1.0);
            assertThat(journal.read(16)).isEqualTo(payload("second"));
            assertThat(journal.read(16, RecordKind.UPDATE).payload()).isEqualTo(payload("second, updated"));
            journal.compact(1.0); // the output, compacted again, still matches the index
            assertThat(journal.read(16)).isEqualTo(payload("second"));
        }
        try (FileJournal reopened = new FileJournal(dir, OPTIONS)) {
            assertThat(JournalFiles.describe(JournalFiles.replay(reopened))).hasSize(3 + FILLERS);
            assertThat(reopened.read(16)).isEqualTo(payload("second"));
            assertThat(reopened.read(17)).isEqualTo(payload("other"));
        }
    }

    private static FileJournal openEmpty(Path dir) {
        FileJournal journal = new FileJournal(dir, OPTIONS);
        journal.replay(r -> { });
        return journal;
    }

    /** Live filler records beyond a segment's size, so the segment written so far is sealed. */
    private static void rollPastTheFirstSegment(FileJournal journal) {
        for (int i = 0; i < FILLERS; i++) {
            journal.append(JournalRecord.add(1_000_000 + i, TYPE, new byte[8 * 1024]));
        }
        journal.sync();
    }

    private static final int FILLERS = 10;

    private static byte[] payload(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
