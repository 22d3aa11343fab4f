package io.buslane.journal.file;

import io.buslane.journal.JournalException;
import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.buslane.journal.file.JournalFiles.SMALL;
import static io.buslane.journal.file.JournalFiles.bytes;
import static io.buslane.journal.file.JournalFiles.describe;
import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A full disk surfaces as {@code JournalException(diskFull=true)}, discards the failed batch (and only it), leaves no
 * garbage on disk, and the journal works again once space returns.
 */
class FileJournalDiskFullTest {

    @TempDir
    Path temp;

    private final FaultyIo io = new FaultyIo();
    private final List<JournalRecord> durable = new ArrayList<>();
    private int nextId;

    private FileJournal open(FileJournalOptions options) {
        FileJournal journal = new FileJournal(temp.resolve("journal"), options, io, () -> { });
        replay(journal);
        return journal;
    }

    private void appendBatch(FileJournal journal, int count) {
        for (int i = 0; i < count; i++) {
            journal.append(JournalRecord.add(nextId, (byte) 1, bytes(String.format("payload %016d", nextId))));
            nextId++;
        }
    }

    /** Appends and syncs a batch that must succeed, remembering it as durable. */
    private void durableBatch(FileJournal journal, int count) {
        int first = nextId;
        appendBatch(journal, count);
        journal.sync();
        for (int id = first; id < nextId; id++) {
            durable.add(JournalRecord.add(id, (byte) 1, bytes(String.format("payload %016d", id))));
        }
    }

    private void assertReopenedJournalHoldsExactlyTheDurableBatches(FileJournalOptions options) {
        try (FileJournal journal = new FileJournal(temp.resolve("journal"), options)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(durable));
            assertThat(journal.recoveryReport().isClean()).isTrue();
        }
    }

    private long segmentBytes() throws IOException {
        long total = 0;
        for (Path segment : JournalFiles.segmentFiles(temp.resolve("journal"))) {
            total += Files.size(segment);
        }
        return total;
    }

    @Test
    void diskFullDuringSyncDiscardsTheBatchAndTheJournalWorksOnceSpaceReturns() throws IOException {
        FileJournalOptions options = SMALL.withSegmentSizeBytes(64 * 1024);
        try (FileJournal journal = open(options)) {
            durableBatch(journal, 5);
            long syncedBytes = segmentBytes();

            io.fillUpAfter(30);
            appendBatch(journal, 5);
            assertThatThrownBy(journal::sync).isInstanceOfSatisfying(JournalException.class, e -> {
                assertThat(e.diskFull()).isTrue();
                assertThat(e).hasMessageContaining("disk is full").hasMessageContaining(FaultyIo.ENOSPC);
            });
            assertThat(segmentBytes()).as("partial write truncated away").isEqualTo(syncedBytes);

            // still full: a new attempt fails the same way
            appendBatch(journal, 1);
            assertThatThrownBy(journal::sync).isInstanceOf(JournalException.class);

            io.spaceReturns();
            durableBatch(journal, 3);
        }
        assertReopenedJournalHoldsExactlyTheDurableBatches(options);
    }

    @Test
    void diskFullWhenAnAppendSpillsTheBufferFailsTheAppend() {
        FileJournalOptions options = SMALL.withSegmentSizeBytes(64 * 1024).withWriteBufferSizeBytes(64);
        try (FileJournal journal = open(options)) {
            durableBatch(journal, 4);
            io.fillUpAfter(10);

            journal.append(JournalRecord.add(1000, (byte) 1, bytes("buffered"))); // 27 of 64 bytes
            byte[] large = new byte[40]; // a 59-byte frame: the buffer is written first, and the disk is full
            assertThatThrownBy(() -> journal.append(JournalRecord.add(1001, (byte) 1, large)))
                    .isInstanceOfSatisfying(JournalException.class, e -> assertThat(e.diskFull()).isTrue());

            io.spaceReturns();
            durableBatch(journal, 4);
        }
        assertReopenedJournalHoldsExactlyTheDurableBatches(options);
    }

    @Test
    void diskFullAfterASegmentRollDeletesTheNewSegments() throws IOException {
        try (FileJournal journal = open(SMALL)) {
            durableBatch(journal, 5);
            List<Long> segmentsAtSync = journal.segmentNumbers();
            long syncedBytes = segmentBytes();

            io.fillUpAfter(600); // the rest of segment 1 and part of segment 2 get written, then the disk is full
            assertThatThrownBy(() -> appendBatch(journal, 40)).isInstanceOfSatisfying(JournalException.class,
                    e -> assertThat(e.diskFull()).isTrue());

            assertThat(journal.segmentNumbers()).isEqualTo(segmentsAtSync);
            assertThat(JournalFiles.segmentFiles(temp.resolve("journal"))).hasSize(1);
            assertThat(segmentBytes()).isEqualTo(syncedBytes);

            io.spaceReturns();
            durableBatch(journal, 40);
            assertThat(journal.segmentNumbers()).hasSizeGreaterThan(2);
        }
        assertReopenedJournalHoldsExactlyTheDurableBatches(SMALL);
    }

    @Test
    void diskFullOnForceDiscardsTheBatch() throws IOException {
        try (FileJournal journal = open(SMALL)) {
            durableBatch(journal, 3);
            long syncedBytes = segmentBytes();

            io.failNextForce();
            appendBatch(journal, 3);
            assertThatThrownBy(journal::sync).isInstanceOfSatisfying(JournalException.class,
                    e -> assertThat(e.diskFull()).isTrue());
            assertThat(segmentBytes()).isEqualTo(syncedBytes);

            durableBatch(journal, 3);
        }
        assertReopenedJournalHoldsExactlyTheDurableBatches(SMALL);
    }

    @Test
    void otherIoErrorsAreNotReportedAsDiskFull() {
        try (FileJournal journal = open(SMALL)) {
            durableBatch(journal, 3);
            io.withMessage("Input/output error").failNextForce();
            appendBatch(journal, 3);

            assertThatThrownBy(journal::sync).isInstanceOfSatisfying(JournalException.class,
                    e -> assertThat(e.diskFull()).isFalse());
        }
        assertReopenedJournalHoldsExactlyTheDurableBatches(SMALL);
    }

    @Test
    void diskFullDuringCompactionLeavesTheJournalAsItWas() {
        Path directory = temp.resolve("journal");
        try (FileJournal journal = open(SMALL)) {
            for (int i = 0; i < 40; i++) {
                journal.append(JournalRecord.add(i, (byte) 1, bytes(String.format("payload %016d", i))));
            }
            for (int i = 0; i < 40; i += 2) {
                journal.append(JournalRecord.delete(i));
            }
            journal.sync();
            journal.sealActiveSegment();
            List<String> filesBefore = JournalFiles.fileNames(directory);

            io.fillUpAfter(100);
            assertThatThrownBy(() -> journal.compact(1.0)).isInstanceOfSatisfying(JournalException.class,
                    e -> assertThat(e.diskFull()).isTrue());
            assertThat(JournalFiles.fileNames(directory)).isEqualTo(filesBefore);

            io.spaceReturns();
            assertThat(journal.compact(1.0).segmentsCompacted()).isPositive();
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(JournalModel.liveOf(replay(journal))).hasSize(20).containsKey(39L).doesNotContainKey(38L);
        }
    }

    @Test
    void noSpaceIsRecognisedInCausesAndFileSystemReasons() {
        assertThat(DiskErrors.isNoSpace(new IOException("No space left on device"))).isTrue();
        assertThat(DiskErrors.isNoSpace(new IOException("write failed", new IOException("Disk quota exceeded"))))
                .isTrue();
        assertThat(DiskErrors.isNoSpace(new FileSystemException("/x/1.seg", null, "No space left on device")))
                .isTrue();
        assertThat(DiskErrors.isNoSpace(new IOException("There is not enough space on the disk"))).isTrue();
        assertThat(DiskErrors.isNoSpace(new IOException("Input/output error"))).isFalse();
        assertThat(DiskErrors.isNoSpace(new IOException((String) null))).isFalse();
    }
}
