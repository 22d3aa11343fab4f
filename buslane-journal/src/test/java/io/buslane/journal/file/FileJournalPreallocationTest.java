package io.buslane.journal.file;

import io.buslane.journal.JournalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import static io.buslane.journal.file.JournalFiles.bytes;
import static io.buslane.journal.file.JournalFiles.describe;
import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pre-allocated segments: the next segment is zero-filled to the full size in advance and written over; sealing
 * cuts the zeros off; recovery keeps a clean zero tail and truncates anything else after the last good record.
 */
class FileJournalPreallocationTest {

    private static final long SEGMENT_BYTES = 1024;
    private static final FileJournalOptions OPTIONS = FileJournalOptions.defaults()
            .withSegmentSizeBytes(SEGMENT_BYTES)
            .withAutoCompactLiveRatio(0)
            .withPreallocate(true);
    private static final int PAYLOAD_BYTES = 45;
    private static final int FRAME_BYTES = RecordFormat.OVERHEAD_BYTES + PAYLOAD_BYTES;

    @TempDir
    Path temp;

    private static JournalRecord record(long i) {
        return JournalRecord.add(i, (byte) 1, bytes(String.format("payload %037d", i)));
    }

    /** Appends and syncs records {@code from..to-1}, one sync each, adding them to {@code written}. */
    private static void write(FileJournal journal, long from, long to, List<JournalRecord> written) {
        for (long i = from; i < to; i++) {
            JournalRecord r = record(i);
            journal.append(r);
            journal.sync();
            written.add(r);
        }
    }

    /** Records that fit in one segment. */
    private static long perSegment() {
        return SEGMENT_BYTES / FRAME_BYTES;
    }

    @Test
    void recordFrameSize() {
        assertThat(record(1).payload()).hasSize(PAYLOAD_BYTES);
    }

    @Test
    void rollsIntoTheSpareAndSealsEachSegmentAtItsLastRecord() throws Exception {
        Path dir = temp.resolve("j");
        List<JournalRecord> written = new ArrayList<>();
        try (FileJournal journal = new FileJournal(dir, OPTIONS)) {
            replay(journal);
            write(journal, 0, perSegment(), written); // past half a segment: the spare is being written
            journal.awaitSpare();
            Path spare = dir.resolve(SegmentFiles.SPARE_NAME);
            assertThat(spare).exists();
            assertThat(Files.size(spare)).isEqualTo(SEGMENT_BYTES);

            write(journal, perSegment(), perSegment() + 2, written); // rolls into the spare
            assertThat(spare).doesNotExist();
            List<Path> segments = JournalFiles.segmentFiles(dir);
            assertThat(segments).hasSize(2);
            assertThat(Files.size(segments.get(0))).isEqualTo(perSegment() * FRAME_BYTES); // sealed: no zeros
            assertThat(Files.size(segments.get(1))).isEqualTo(SEGMENT_BYTES); // active: pre-allocated

            write(journal, perSegment() + 2, 3 * perSegment() + 1, written); // more rolls
            journal.awaitSpare();
            segments = JournalFiles.segmentFiles(dir);
            for (Path sealed : segments.subList(0, segments.size() - 1)) {
                assertThat(Files.size(sealed)).isEqualTo(perSegment() * FRAME_BYTES);
            }
        }
        assertThat(dir.resolve(SegmentFiles.SPARE_NAME)).as("closing deletes the unused spare").doesNotExist();
        try (FileJournal journal = new FileJournal(dir, OPTIONS)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(written));
            assertThat(journal.recoveryReport().bytesTruncated()).isZero();
        }
    }

    @Test
    void theCleanZeroTailOfAPreAllocatedSegmentIsKeptAndWrittenOver() throws Exception {
        Path dir = temp.resolve("j");
        List<JournalRecord> written = new ArrayList<>();
        try (FileJournal journal = new FileJournal(dir, OPTIONS)) {
            replay(journal);
            write(journal, 0, perSegment(), written);
            journal.awaitSpare();
            write(journal, perSegment(), perSegment() + 3, written); // 3 records in the pre-allocated segment
        }
        Path active = JournalFiles.segmentFiles(dir).get(1);
        assertThat(Files.size(active)).isEqualTo(SEGMENT_BYTES);

        try (FileJournal journal = new FileJournal(dir, OPTIONS)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(written));
            assertThat(journal.recoveryReport().bytesTruncated()).isZero();
            assertThat(Files.size(active)).as("still pre-allocated").isEqualTo(SEGMENT_BYTES);
            write(journal, perSegment() + 3, perSegment() + 6, written);
        }
        try (FileJournal journal = new FileJournal(dir, OPTIONS)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(written));
        }
    }

    @Test
    void aRecordBeyondAHoleInThePreAllocatedTailIsTruncatedAndNeverReadBack() throws Exception {
        Path dir = temp.resolve("j");
        List<JournalRecord> written = new ArrayList<>();
        try (FileJournal journal = new FileJournal(dir, OPTIONS)) {
            replay(journal);
            write(journal, 0, perSegment(), written);
            journal.awaitSpare();
            write(journal, perSegment(), perSegment() + 2, written);
        }
        Path active = JournalFiles.segmentFiles(dir).get(1);
        long end = 2L * FRAME_BYTES;
        // a crash: of an unsynced batch of two records, only the second reached the disk (a hole, then a record)
        JournalRecord lost = record(900);
        JournalRecord stale = record(901);
        writeFrame(active, end + FRAME_BYTES, stale);

        try (FileJournal journal = new FileJournal(dir, OPTIONS)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(written));
            assertThat(journal.recoveryReport().bytesTruncated()).isEqualTo(SEGMENT_BYTES - end);
            // the next record fills the hole exactly: without the truncation, the stale one would follow it
            JournalRecord next = record(902);
            journal.append(next);
            journal.sync();
            written.add(next);
        }
        try (FileJournal journal = new FileJournal(dir, OPTIONS)) {
            List<String> replayed = describe(replay(journal));
            assertThat(replayed).containsExactlyElementsOf(describe(written));
            assertThat(replayed).doesNotContain(describe(List.of(stale)).get(0), describe(List.of(lost)).get(0));
        }
    }

    @Test
    void aSpareLeftByACrashIsDeletedAtOpen() throws Exception {
        Path dir = temp.resolve("j");
        Files.createDirectories(dir);
        Path spare = dir.resolve(SegmentFiles.SPARE_NAME);
        Files.write(spare, new byte[100]); // its pre-allocation was cut short
        try (FileJournal journal = new FileJournal(dir, OPTIONS)) {
            replay(journal);
            assertThat(spare).doesNotExist();
        }
    }

    @Test
    void withoutPreallocationNoSpareIsWritten() throws Exception {
        Path dir = temp.resolve("j");
        List<JournalRecord> written = new ArrayList<>();
        try (FileJournal journal = new FileJournal(dir, OPTIONS.withPreallocate(false))) {
            replay(journal);
            write(journal, 0, 2 * perSegment() + 1, written);
            journal.awaitSpare();
            assertThat(dir.resolve(SegmentFiles.SPARE_NAME)).doesNotExist();
            List<Path> segments = JournalFiles.segmentFiles(dir);
            assertThat(Files.size(segments.get(segments.size() - 1))).isEqualTo(FRAME_BYTES);
        }
    }

    private static void writeFrame(Path file, long position, JournalRecord record) throws Exception {
        ByteBuffer frame = ByteBuffer.allocate(RecordFormat.frameBytes(record.payload().length));
        RecordFormat.encode(record, frame, new CRC32C());
        frame.flip();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            while (frame.hasRemaining()) {
                channel.write(frame, position + frame.position());
            }
        }
    }
}
