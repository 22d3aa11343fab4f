package io.buslane.journal.file;

import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

import static io.buslane.journal.file.JournalFiles.SMALL;
import static io.buslane.journal.file.JournalFiles.bytes;
import static io.buslane.journal.file.JournalFiles.describe;
import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A synced batch (a shard's commit) is atomic on disk: a crash while it is written never leaves part of it for
 * recovery, even when every frame that reached the file is intact. Batch markers are invisible to every consumer.
 */
class FileJournalBatchTest {

    /** The smallest write buffer: a batch's frames reach the file long before its sync, as a large batch's do. */
    private static final FileJournalOptions TINY_BUFFER =
            SMALL.withWriteBufferSizeBytes(FileJournalOptions.MIN_SIZE_BYTES);

    @TempDir
    Path temp;

    private static JournalRecord record(int i) {
        return JournalRecord.add(i, (byte) (i % 3), bytes(String.format("payload %016d", i)));
    }

    @Test
    void aCrashAfterSomeCompleteFramesOfABatchLosesTheWholeBatchAndNothingBefore() throws IOException {
        Path directory = temp.resolve("journal");
        Path crashed = temp.resolve("crashed");
        List<JournalRecord> synced = new ArrayList<>();
        try (FileJournal journal = new FileJournal(directory, TINY_BUFFER)) {
            replay(journal);
            for (int batch = 0; batch < 2; batch++) {
                for (int i = 0; i < 3; i++) {
                    JournalRecord r = record(batch * 10 + i);
                    journal.append(r);
                    synced.add(r);
                }
                journal.sync();
            }
            long syncedBytes = journal.storedBytes();
            // a transaction: four records written (most of them to the file already), then the crash, before sync
            for (int i = 100; i < 104; i++) {
                journal.append(record(i));
            }
            long onDisk = Files.size(JournalFiles.segmentFiles(directory).get(0));
            assertThat(onDisk).as("complete frames of the unfinished batch are in the file")
                    .isEqualTo(syncedBytes + 3L * RecordFormat.frameBytes(24));
            JournalFiles.copyDirectory(directory, crashed);
        }

        try (FileJournal journal = new FileJournal(crashed, SMALL)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(synced));
            RecoveryReport report = journal.recoveryReport();
            assertThat(report.recordsReplayed()).isEqualTo(synced.size());
            assertThat(report.bytesTruncated()).isPositive();
            assertThat(report.corruptions()).isEmpty();
            journal.append(record(200));
            journal.sync();
        }
        try (FileJournal journal = new FileJournal(crashed, SMALL)) {
            List<JournalRecord> expected = new ArrayList<>(synced);
            expected.add(record(200));
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(expected));
            assertThat(journal.recoveryReport().isClean()).isTrue();
        }
    }

    @Test
    void aBatchThatRolledIntoNewSegmentsIsKeptWholeOnceSyncedAndDroppedWholeWhenItsEndIsMissing() throws IOException {
        Path directory = temp.resolve("journal");
        List<JournalRecord> first = List.of(record(1), record(2));
        List<JournalRecord> big = new ArrayList<>();
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            first.forEach(journal::append);
            journal.sync();
            for (int i = 10; i < 40; i++) { // about 1.3 KB: the batch rolls twice
                JournalRecord r = record(i);
                journal.append(r);
                big.add(r);
            }
            journal.sync();
            assertThat(journal.segmentNumbers()).hasSize(3);
        }
        List<JournalRecord> all = new ArrayList<>(first);
        all.addAll(big);
        Path whole = JournalFiles.copyDirectory(directory, temp.resolve("whole"));
        try (FileJournal journal = new FileJournal(whole, SMALL)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(all));
            assertThat(journal.recoveryReport().isClean()).isTrue();
        }

        // the crash came just before the batch's end marker was complete: none of its 30 records may survive
        List<Path> segments = JournalFiles.segmentFiles(directory);
        Path last = segments.get(2);
        byte[] full = Files.readAllBytes(last);
        Files.write(last, Arrays.copyOf(full, full.length - 1));
        long firstBatchEnd = 2L * RecordFormat.MARKER_FRAME_BYTES + 2L * RecordFormat.frameBytes(24);
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(first));
            RecoveryReport report = journal.recoveryReport();
            assertThat(report.recordsReplayed()).isEqualTo(2);
            assertThat(report.corruptions()).isEmpty();
            assertThat(Files.size(segments.get(0))).isEqualTo(firstBatchEnd);
            assertThat(Files.size(segments.get(1))).isZero();
            assertThat(Files.size(segments.get(2))).isZero();
            journal.append(record(300));
            journal.sync();
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(describe(replay(journal))).containsExactly(
                    JournalModel.describe(record(1)), JournalModel.describe(record(2)),
                    JournalModel.describe(record(300)));
            assertThat(journal.recoveryReport().isClean()).isTrue();
        }
    }

    @Test
    void aSegmentWrittenBeforeMarkersExistedReplaysAsBeforeAndIsSealed() throws IOException {
        Path directory = temp.resolve("journal");
        Files.createDirectories(directory);
        List<JournalRecord> old = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            old.add(record(i));
        }
        old.add(JournalRecord.delete(3));
        ByteBuffer file = ByteBuffer.allocate(4096);
        CRC32C crc = new CRC32C();
        for (JournalRecord r : old) {
            RecordFormat.encode(r.kind(), r.id(), r.type(), r.payload(), 0, r.payload().length, file, crc);
        }
        int complete = file.position();
        JournalRecord torn = record(99);
        RecordFormat.encode(torn.kind(), torn.id(), torn.type(), torn.payload(), 0, torn.payload().length, file, crc);
        // the older format's torn tail: its complete records are kept, the partial one is cut
        Files.write(SegmentFiles.segmentPath(directory, 1), Arrays.copyOf(file.array(), complete + 20));

        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(old));
            assertThat(journal.recoveryReport().bytesTruncated()).isEqualTo(20);
            assertThat(journal.read(2)).isEqualTo(record(2).payload());
            journal.append(record(7));
            journal.sync();
            assertThat(journal.segmentNumbers()).as("new batches go to a segment that starts with a marker")
                    .containsExactly(1L, 2L);
        }
        assertThat(Files.size(SegmentFiles.segmentPath(directory, 1))).isEqualTo(complete);
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            List<JournalRecord> expected = new ArrayList<>(old);
            expected.add(record(7));
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(expected));
            assertThat(journal.recoveryReport().isClean()).isTrue();
        }
    }

    @Test
    void markersAreInvisibleToCountsReadsAndCompactionAndCompactedSegmentsHaveNone() throws IOException {
        Path directory = temp.resolve("journal");
        List<JournalRecord> appended = new ArrayList<>();
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            for (int i = 0; i < 60; i++) {
                JournalRecord r = record(i);
                journal.append(r);
                appended.add(r);
                if (i % 4 == 3) {
                    journal.sync(); // many small batches: many markers
                }
            }
            assertThat(journal.appendedCount()).isEqualTo(60);
            assertThat(journal.liveBytes()).isEqualTo(60L * RecordFormat.frameBytes(24));
            assertThat(journal.storedBytes()).isGreaterThan(journal.liveBytes());
            for (int i = 0; i < 60; i += 2) {
                JournalRecord d = JournalRecord.delete(i);
                journal.append(d);
                appended.add(d);
            }
            journal.sync();
            assertThat(journal.appendedCount()).isEqualTo(appended.size());

            journal.sealActiveSegment();
            assertThat(journal.compact(1.0).segmentsCompacted()).isPositive();
            assertThat(journal.read(1)).isEqualTo(record(1).payload());
            assertThat(journal.read(0)).isNull();
            for (long number : journal.segmentNumbers()) {
                assertThat(markers(SegmentFiles.segmentPath(directory, number))).as("segment %d", number).isZero();
            }
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            List<JournalRecord> replayed = replay(journal);
            assertThat(replayed).noneMatch(r -> r.id() == RecordFormat.MARKER_ID);
            assertThat(JournalModel.liveOf(replayed)).isEqualTo(JournalModel.liveOf(appended));
            assertThat(journal.recoveryReport().recordsReplayed()).isEqualTo(replayed.size());
        }
    }

    @Test
    void aRecordThatWouldLookLikeAMarkerIsRefused() {
        try (FileJournal journal = new FileJournal(temp.resolve("journal"), SMALL)) {
            replay(journal);
            assertThatThrownBy(() -> journal.append(new JournalRecord(RecordKind.DELETE, RecordFormat.MARKER_ID,
                    RecordFormat.BATCH_END_TYPE, new byte[0]))).isInstanceOf(IllegalArgumentException.class);
            journal.append(JournalRecord.delete(RecordFormat.MARKER_ID)); // another type: an ordinary DELETE
            journal.sync();
        }
    }

    private static int markers(Path segment) throws IOException {
        int markers = 0;
        try (SegmentReader reader = new SegmentReader(segment, ByteBuffer.allocate(4096))) {
            while (reader.nextFrame()) {
                if (reader.lastIsMarker()) {
                    markers++;
                }
            }
            assertThat(reader.failure()).isNull();
        }
        return markers;
    }
}
