package io.buslane.journal.file;

import ch.qos.logback.classic.Level;
import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.file.RecoveryReport.Corruption;
import io.buslane.journal.file.RecoveryReport.InterruptedCompaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.buslane.journal.file.JournalFiles.SMALL;
import static io.buslane.journal.file.JournalFiles.bytes;
import static io.buslane.journal.file.JournalFiles.describe;
import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;

/** Recovery: torn tails are truncated, corruption in sealed segments is reported and never served. */
class FileJournalRecoveryTest {

    private static final int PAYLOAD_BYTES = 24;
    private static final int FRAME_BYTES = RecordFormat.OVERHEAD_BYTES + PAYLOAD_BYTES;
    private static final int MARKER_BYTES = RecordFormat.MARKER_FRAME_BYTES;
    /**
     * {@link #writeRecords} syncs every 5 records, so a 512-byte segment holds two batches: a batch marker, 5 records,
     * a batch-end marker, 5 records and a batch-end marker (487 bytes); the next record rolls.
     */
    private static final int RECORDS_PER_SEGMENT = 10;
    private static final int BATCH_BYTES = 5 * FRAME_BYTES + MARKER_BYTES;

    @TempDir
    Path temp;

    private static JournalRecord record(int i) {
        return JournalRecord.add(i, (byte) (i % 3), bytes(String.format("payload %016d", i)));
    }

    /** Writes {@code count} fixed-size ADD records (one sync per 5) and returns them. */
    private static List<JournalRecord> writeRecords(Path directory, int count) {
        List<JournalRecord> written = new ArrayList<>();
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            for (int i = 0; i < count; i++) {
                JournalRecord r = record(i);
                journal.append(r);
                written.add(r);
                if (i % 5 == 4) {
                    journal.sync();
                }
            }
            journal.sync();
        }
        return written;
    }

    @Test
    void recordFrameIsNineteenBytesPlusPayloadAndTwoBatchesFillASegment() {
        assertThat(FRAME_BYTES).isEqualTo(43);
        assertThat(MARKER_BYTES).isEqualTo(19);
        assertThat(MARKER_BYTES + 2 * BATCH_BYTES).isEqualTo(487).isLessThanOrEqualTo((int) SMALL.segmentSizeBytes())
                .isGreaterThan((int) SMALL.segmentSizeBytes() - FRAME_BYTES);
    }

    @Test
    void tornTailAtEveryByteOffsetOfTheLastBatchDropsThatBatchWhole() throws IOException {
        Path pristine = temp.resolve("pristine");
        List<JournalRecord> written = writeRecords(pristine, 30); // 10 + 10 + 10 records in three segments
        List<Path> segments = JournalFiles.segmentFiles(pristine);
        assertThat(segments).hasSize(3);
        Path last = segments.get(2);
        byte[] full = Files.readAllBytes(last);
        int validBytes = full.length - BATCH_BYTES; // up to the end marker of the batch before the last

        for (int length = validBytes; length < full.length; length++) {
            Path directory = JournalFiles.copyDirectory(pristine, temp.resolve("torn-" + length));
            Path torn = directory.resolve(last.getFileName());
            Files.write(torn, Arrays.copyOf(full, length));

            try (FileJournal journal = new FileJournal(directory, SMALL)) {
                List<JournalRecord> replayed = replay(journal);

                // a crash anywhere in the last batch, even after its last record, loses all of it and nothing else
                assertThat(describe(replayed)).as("torn at %d", length)
                        .containsExactlyElementsOf(describe(written.subList(0, written.size() - 5)));
                RecoveryReport report = journal.recoveryReport();
                assertThat(report.bytesTruncated()).isEqualTo(length - validBytes);
                assertThat(report.recordsReplayed()).isEqualTo(written.size() - 5);
                assertThat(report.corruptions()).isEmpty();
                assertThat(Files.size(torn)).isEqualTo(validBytes);

                journal.append(record(1000));
                journal.sync();
            }
            try (FileJournal journal = new FileJournal(directory, SMALL)) {
                List<JournalRecord> replayed = replay(journal);
                assertThat(replayed).hasSize(written.size() - 5 + 1);
                assertThat(replayed.get(replayed.size() - 1).id()).isEqualTo(1000);
                assertThat(journal.recoveryReport().isClean()).isTrue();
            }
        }
    }

    @Test
    void tornTailIsLoggedAtWarnWithTheRecordsAndBytesDropped() throws IOException {
        Path directory = temp.resolve("journal");
        writeRecords(directory, 8); // a batch of 5, then one of 3
        Path segment = JournalFiles.segmentFiles(directory).get(0);
        byte[] full = Files.readAllBytes(segment);
        Files.write(segment, Arrays.copyOf(full, full.length - 5)); // into the last batch's end marker
        int dropped = 3 * FRAME_BYTES + MARKER_BYTES - 5;

        try (LogCapture log = LogCapture.of(FileJournal.class);
             FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);

            assertThat(log.messages(Level.WARN)).singleElement().asString()
                    .contains("torn tail").contains("unfinished last batch").contains("3 complete records")
                    .contains(dropped + " bytes");
            assertThat(log.messages(Level.INFO)).singleElement().asString()
                    .contains("5 records").contains("torn tail truncated: " + dropped + " bytes");
        }
    }

    @Test
    void zeroFilledTailIsTruncated() throws IOException {
        Path directory = temp.resolve("journal");
        List<JournalRecord> written = writeRecords(directory, 4);
        Path segment = JournalFiles.segmentFiles(directory).get(0);
        long validBytes = Files.size(segment);
        Files.write(segment, new byte[4096], java.nio.file.StandardOpenOption.APPEND);

        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(written));
            assertThat(journal.recoveryReport().bytesTruncated()).isEqualTo(4096);
        }
        assertThat(Files.size(segment)).isEqualTo(validBytes);
    }

    @Test
    void bitFlipsInTheMiddleOfASealedSegmentAreReportedAndNeverServed() throws IOException {
        Path pristine = temp.resolve("pristine");
        List<JournalRecord> written = writeRecords(pristine, 30);
        List<Path> segments = JournalFiles.segmentFiles(pristine);
        Path middle = segments.get(1);
        byte[] original = Files.readAllBytes(middle);
        int recordsPerSegment = RECORDS_PER_SEGMENT;
        int damagedRecord = 2; // in the segment's first batch: the records before it are served, as before markers
        int damagedOffset = MARKER_BYTES + damagedRecord * FRAME_BYTES;
        List<JournalRecord> expected = new ArrayList<>(written.subList(0, recordsPerSegment + damagedRecord));
        expected.addAll(written.subList(2 * recordsPerSegment, written.size()));

        for (int offset = damagedOffset; offset < damagedOffset + FRAME_BYTES; offset++) {
            for (int bit = 0; bit < 8; bit++) {
                Path directory = JournalFiles.copyDirectory(pristine, temp.resolve("flip-" + offset + "-" + bit));
                byte[] damaged = original.clone();
                damaged[offset] ^= (byte) (1 << bit);
                Files.write(directory.resolve(middle.getFileName()), damaged);

                try (FileJournal journal = new FileJournal(directory, SMALL)) {
                    List<JournalRecord> replayed = replay(journal);

                    assertThat(describe(replayed)).as("bit %d of byte %d", bit, offset)
                            .containsExactlyElementsOf(describe(expected));
                    RecoveryReport report = journal.recoveryReport();
                    assertThat(report.corruptions()).containsExactly(new Corruption(
                            middle.getFileName().toString(), damagedOffset, original.length - damagedOffset,
                            report.corruptions().get(0).reason()));
                    assertThat(report.bytesTruncated()).isZero();
                    assertThat(report.isClean()).isFalse();
                }
                // the damaged segment is left as it was, for inspection
                assertThat(Files.readAllBytes(directory.resolve(middle.getFileName()))).isEqualTo(damaged);
            }
        }
    }

    @Test
    void corruptionIsLoggedAtErrorAndTheJournalKeepsWorkingWithoutCompactingTheDamagedSegment() throws IOException {
        Path directory = temp.resolve("journal");
        writeRecords(directory, 30);
        Path middle = JournalFiles.segmentFiles(directory).get(1);
        byte[] damaged = Files.readAllBytes(middle);
        damaged[MARKER_BYTES + FRAME_BYTES + 20] ^= 0x10; // in the segment's second record
        Files.write(middle, damaged);

        try (LogCapture log = LogCapture.of(FileJournal.class);
             FileJournal journal = new FileJournal(directory, SMALL)) {
            List<JournalRecord> replayed = replay(journal);
            assertThat(replayed).hasSize(30 - (RECORDS_PER_SEGMENT - 1));
            assertThat(log.messages(Level.ERROR)).singleElement().asString()
                    .contains("Corrupt record").contains(middle.getFileName().toString())
                    .contains("offset " + (MARKER_BYTES + FRAME_BYTES)).contains("CRC mismatch");
            assertThat(log.messages(Level.INFO)).singleElement().asString().contains("corrupt segments: 1");

            for (long id : JournalModel.liveOf(replayed).keySet()) {
                journal.append(JournalRecord.delete(id));
            }
            journal.append(record(5000));
            journal.sync();
            journal.compact(1.0);
        }
        assertThat(Files.readAllBytes(middle)).isEqualTo(damaged);
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            List<JournalRecord> replayed = replay(journal);
            assertThat(journal.recoveryReport().corruptions()).hasSize(1);
            // the first record of the damaged segment was replayed; the ones the DELETEs above covered were not
            assertThat(JournalModel.liveOf(replayed)).containsOnlyKeys(5000L);
        }
    }

    @Test
    void deletesAfterACorruptSegmentSurviveCompaction() throws IOException {
        Path directory = temp.resolve("journal");
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            for (int i = 0; i < 11; i++) {
                journal.append(record(i)); // segment 1
            }
            journal.append(record(100)); // segment 2, first record: about to be damaged
            for (int i = 11; i < 21; i++) {
                journal.append(record(i)); // segment 2 is full: 11 records of 43 bytes
            }
            journal.append(record(21)); // segment 3
            journal.append(JournalRecord.delete(100));
            for (int i = 0; i < 11; i++) {
                journal.append(JournalRecord.delete(i));
            }
            journal.append(record(200));
            journal.sync();
        }
        Path second = JournalFiles.segmentFiles(directory).get(1);
        byte[] damaged = Files.readAllBytes(second);
        damaged[10] ^= 1; // inside the id of record 100
        Files.write(second, damaged);

        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(journal.segmentNumbers()).hasSize(3);
            assertThat(JournalModel.liveOf(replay(journal))).containsOnlyKeys(21L, 200L);
            journal.append(record(300));
            journal.sync();
            journal.compact(1.0);
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            List<JournalRecord> replayed = replay(journal);
            // the DELETE of 100 is kept: the damaged bytes may still hold its ADD
            assertThat(describe(replayed)).contains(JournalModel.describe(JournalRecord.delete(100)));
        }
    }

    @Test
    void recordsLargerThanTheReadAndWriteBuffersReplayAndCompact() {
        Path directory = temp.resolve("journal");
        java.util.SplittableRandom random = new java.util.SplittableRandom(3);
        List<JournalRecord> kept = new ArrayList<>();
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            for (int size : new int[] {300_000, 1_000_000, 5}) {
                byte[] payload = new byte[size];
                random.nextBytes(payload);
                JournalRecord live = JournalRecord.add(size, (byte) 1, payload);
                journal.append(live);
                kept.add(live);
                journal.append(JournalRecord.add(-size, (byte) 1, payload)); // a segment with nothing live ...
                journal.append(JournalRecord.delete(-size)); // ... that compaction reads through
            }
            journal.sync();
            journal.sealActiveSegment();
            assertThat(journal.compact(1.0).segmentsCompacted()).isPositive();
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(kept));
        }
    }

    @Test
    void emptyLastSegmentAfterARollIsFine() throws IOException {
        Path directory = temp.resolve("journal");
        List<JournalRecord> written = writeRecords(directory, RECORDS_PER_SEGMENT); // fills segment 1
        Files.createFile(directory.resolve(SegmentFiles.segmentName(2)));

        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(written));
            assertThat(journal.recoveryReport().isClean()).isTrue();
            assertThat(journal.recoveryReport().interruptedCompaction()).isEqualTo(InterruptedCompaction.NONE);
        }
    }

    @Test
    void syncPolicyNoneWarnsOnceAtOpen() {
        try (LogCapture log = LogCapture.of(FileJournal.class);
             FileJournal journal = new FileJournal(temp.resolve("journal"), SMALL.withSyncPolicy(SyncPolicy.NONE))) {
            replay(journal);
            for (int i = 0; i < 30; i++) {
                journal.append(record(i));
                journal.sync();
            }
            assertThat(log.messages(Level.WARN)).singleElement().asString()
                    .contains("SyncPolicy.NONE").contains("NOT durable");
        }
    }

    @Test
    void replayIsOnceAndComesBeforeAppends() {
        try (FileJournal journal = new FileJournal(temp.resolve("journal"), SMALL)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> journal.append(record(1)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("replay");
            replay(journal);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> replay(journal))
                    .isInstanceOf(IllegalStateException.class);
        }
    }
}
