package io.buslane.journal.file;

import io.buslane.journal.JournalException;
import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.file.RecoveryReport.InterruptedCompaction;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static io.buslane.journal.file.JournalFiles.SMALL;
import static io.buslane.journal.file.JournalFiles.bytes;
import static io.buslane.journal.file.JournalFiles.describe;
import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One test per compaction crash point (Kafka {@code LogLoaderTest} phases, Artemis {@code NIOJournalCompactTest}):
 * the hook throws after a step, the journal is abandoned as a crash would leave it, and reopening must roll the
 * step back or forward, with the live set intact and compaction working again afterwards.
 */
class FileJournalCompactionCrashTest {

    /** Thrown from the test hooks: the process "dies" here. */
    static final class SimulatedCrash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SimulatedCrash(String where) {
            super("simulated crash " + where);
        }
    }

    @TempDir
    Path temp;

    private Path directory;
    private final List<JournalRecord> appended = new ArrayList<>();
    private Map<Long, String> expectedLive;

    /** Six segments of ADDs (two in eleven stay live), then UPDATEs of the survivors and DELETEs of the rest. */
    @BeforeEach
    void writeJournalWithMostlyDeadSegments() {
        directory = temp.resolve("journal");
        write(journal -> {
            for (int i = 0; i < 60; i++) {
                append(journal, JournalRecord.add(i, (byte) 1, bytes(String.format("payload %016d", i))));
            }
            for (int i = 0; i < 60; i += 7) {
                append(journal, JournalRecord.update(i, (byte) 2, bytes("updated " + i)));
            }
            for (int i = 0; i < 60; i++) {
                if (i % 7 != 0) {
                    append(journal, JournalRecord.delete(i));
                }
            }
        });
    }

    private void write(Consumer<FileJournal> ops) {
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            ops.accept(journal);
            journal.sync();
            journal.sealActiveSegment();
        }
        expectedLive = JournalModel.liveOf(appended);
    }

    private void append(FileJournal journal, JournalRecord record) {
        journal.append(record);
        appended.add(record);
    }

    /** Compacts at threshold 1 with {@code hook} installed, expecting the simulated crash. */
    private void compactAndCrash(CompactionStep.Hook hook) {
        compactAndCrash(hook, SegmentIo.DIRECT);
    }

    private void compactAndCrash(CompactionStep.Hook hook, SegmentIo io) {
        FileJournal journal = new FileJournal(directory, SMALL, io, () -> { });
        replay(journal);
        journal.compactionHook(hook);
        assertThatThrownBy(() -> journal.compact(1.0)).isInstanceOf(SimulatedCrash.class);
        journal.close(); // a failed journal only releases its file handles
    }

    /** Crashes the {@code occurrence}-th time {@code step} completes. */
    private static CompactionStep.Hook crashAfter(CompactionStep step, int occurrence) {
        int[] seen = {0};
        return (completed, target) -> {
            if (completed == step && ++seen[0] == occurrence) {
                throw new SimulatedCrash("after " + step + " #" + occurrence + " (target segment " + target + ")");
            }
        };
    }

    private boolean manifestExists() {
        return Files.exists(directory.resolve(SegmentFiles.MANIFEST_NAME));
    }

    private long compactedFiles() {
        return JournalFiles.fileNames(directory).stream().filter(n -> n.endsWith(SegmentFiles.COMPACTED_SUFFIX))
                .count();
    }

    /** Reopens twice: the first recovers as {@code expected}, then compacts; the second finds nothing to recover. */
    private void assertRecovers(InterruptedCompaction expected) {
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            List<JournalRecord> replayed = replay(journal);

            assertThat(JournalModel.liveOf(replayed)).isEqualTo(expectedLive);
            assertThat(JournalFiles.isSubsequence(describe(appended), describe(replayed))).isTrue();
            RecoveryReport report = journal.recoveryReport();
            assertThat(report.interruptedCompaction()).isEqualTo(expected);
            assertThat(report.isClean()).isTrue();
            assertThat(JournalFiles.fileNames(directory)).allMatch(n -> n.endsWith(SegmentFiles.SEGMENT_SUFFIX));

            journal.compact(1.0);
            assertThat(journal.liveBytes()).isEqualTo(journal.storedBytes());
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(JournalModel.liveOf(replay(journal))).isEqualTo(expectedLive);
            assertThat(journal.recoveryReport().interruptedCompaction()).isEqualTo(InterruptedCompaction.NONE);
        }
    }

    @Test
    void crashWhileWritingTheOutputRollsBack() {
        SegmentIo crashHalfWayThroughOutput = new SegmentIo() {
            @Override
            public int write(FileChannel channel, ByteBuffer src, long positionBytes, Path file) throws IOException {
                if (file.toString().endsWith(SegmentFiles.COMPACTED_SUFFIX)) {
                    src.limit(src.position() + src.remaining() / 2);
                    channel.write(src, positionBytes);
                    throw new SimulatedCrash("while writing " + file.getFileName());
                }
                return channel.write(src, positionBytes);
            }
        };
        compactAndCrash(CompactionStep.Hook.NONE, crashHalfWayThroughOutput);

        assertThat(compactedFiles()).isEqualTo(1);
        assertThat(manifestExists()).isFalse();
        assertRecovers(InterruptedCompaction.ROLLED_BACK);
    }

    @Test
    void crashAfterTheOutputIsWrittenRollsBack() {
        List<Path> segmentsBefore = JournalFiles.segmentFiles(directory);
        compactAndCrash(crashAfter(CompactionStep.OUTPUT_WRITTEN, 1));

        assertThat(compactedFiles()).isEqualTo(1);
        assertThat(manifestExists()).isFalse();
        assertThat(JournalFiles.segmentFiles(directory)).isEqualTo(segmentsBefore);
        assertRecovers(InterruptedCompaction.ROLLED_BACK);
    }

    @Test
    void crashWhileTheManifestIsWrittenRollsBack() {
        compactAndCrash((step, target) -> {
            if (step == CompactionStep.MANIFEST_WRITTEN) {
                Path manifest = directory.resolve(SegmentFiles.MANIFEST_NAME);
                try {
                    byte[] full = Files.readAllBytes(manifest);
                    Files.write(manifest, java.util.Arrays.copyOf(full, full.length / 2));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                throw new SimulatedCrash("with a torn manifest");
            }
        });

        assertThat(manifestExists()).isTrue();
        assertRecovers(InterruptedCompaction.ROLLED_BACK);
    }

    @Test
    void crashAfterTheManifestIsWrittenRollsForward() {
        List<Path> segmentsBefore = JournalFiles.segmentFiles(directory);
        compactAndCrash(crashAfter(CompactionStep.MANIFEST_WRITTEN, 1));

        assertThat(manifestExists()).isTrue();
        assertThat(compactedFiles()).isEqualTo(1);
        assertThat(JournalFiles.segmentFiles(directory)).isEqualTo(segmentsBefore);
        assertRecovers(InterruptedCompaction.ROLLED_FORWARD);
    }

    @Test
    void crashAfterTheFirstSourceIsDeletedRollsForward() {
        int segmentsBefore = JournalFiles.segmentFiles(directory).size();
        compactAndCrash(crashAfter(CompactionStep.SOURCE_DELETED, 1));

        assertThat(manifestExists()).isTrue();
        assertThat(JournalFiles.segmentFiles(directory)).hasSize(segmentsBefore - 1);
        assertRecovers(InterruptedCompaction.ROLLED_FORWARD);
    }

    @Test
    void crashAfterEverySourceButTheTargetIsDeletedRollsForward() {
        compactAndCrash((step, target) -> {
            if (step != CompactionStep.SOURCE_DELETED) {
                return;
            }
            try {
                CompactionManifest manifest = CompactionManifest.read(directory).orElseThrow();
                boolean onlyTargetLeft = java.util.Arrays.stream(manifest.sources()).filter(s -> s != target)
                        .noneMatch(s -> Files.exists(SegmentFiles.segmentPath(directory, s)));
                if (onlyTargetLeft) {
                    throw new SimulatedCrash("after deleting every source of " + target);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });

        assertThat(manifestExists()).isTrue();
        assertThat(compactedFiles()).isEqualTo(1);
        assertRecovers(InterruptedCompaction.ROLLED_FORWARD);
    }

    @Test
    void crashAfterTheOutputIsRenamedRollsForward() {
        compactAndCrash(crashAfter(CompactionStep.OUTPUT_RENAMED, 1));

        assertThat(manifestExists()).isTrue();
        assertThat(compactedFiles()).isZero();
        assertRecovers(InterruptedCompaction.ROLLED_FORWARD);
    }

    @Test
    void crashAfterTheManifestIsDeletedFindsACompleteStep() {
        compactAndCrash(crashAfter(CompactionStep.MANIFEST_DELETED, 1));

        assertThat(manifestExists()).isFalse();
        assertThat(compactedFiles()).isZero();
        assertRecovers(InterruptedCompaction.NONE);
    }

    @Test
    void crashInTheSecondGroupKeepsTheFirstGroupsWork() {
        long[] targets = new long[2];
        int[] manifests = {0};
        compactAndCrash((step, target) -> {
            if (step == CompactionStep.MANIFEST_WRITTEN) {
                targets[manifests[0]++] = target;
                if (manifests[0] == 2) {
                    throw new SimulatedCrash("in the second group");
                }
            }
        });

        assertThat(targets[1]).isGreaterThan(targets[0]);
        assertRecovers(InterruptedCompaction.ROLLED_FORWARD);
    }

    @Test
    void crashWhileRemovingAGroupWithNothingLiveLeavesAValidSuffix() {
        directory = temp.resolve("all-dead");
        appended.clear();
        write(journal -> {
            for (int i = 0; i < 11; i++) {
                append(journal, JournalRecord.add(i, (byte) 1, bytes(String.format("payload %016d", i))));
            }
            for (int i = 0; i < 11; i++) {
                append(journal, JournalRecord.delete(i));
            }
        });
        assertThat(JournalFiles.segmentFiles(directory)).hasSize(3);

        compactAndCrash(crashAfter(CompactionStep.SOURCE_DELETED, 1));

        assertThat(manifestExists()).as("nothing is written to remove a dead group").isFalse();
        assertThat(compactedFiles()).isZero();
        assertThat(JournalFiles.segmentFiles(directory)).as("the oldest source goes first").hasSize(2)
                .noneMatch(p -> p.getFileName().toString().equals(SegmentFiles.segmentName(1)));
        assertRecovers(InterruptedCompaction.NONE);
        assertThat(JournalFiles.segmentFiles(directory)).hasSize(1);
    }

    @Test
    void outputOfTheWrongSizeIsNotGuessedAt() throws IOException {
        compactAndCrash(crashAfter(CompactionStep.MANIFEST_WRITTEN, 1));
        Path output = JournalFiles.fileNames(directory).stream()
                .filter(n -> n.endsWith(SegmentFiles.COMPACTED_SUFFIX)).map(directory::resolve).findFirst()
                .orElseThrow();
        Files.write(output, new byte[] {1, 2, 3}, java.nio.file.StandardOpenOption.APPEND);

        assertThatThrownBy(() -> new FileJournal(directory, SMALL)).isInstanceOf(JournalException.class)
                .hasMessageContaining("refusing to guess");
    }
}
