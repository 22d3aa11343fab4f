package io.buslane.journal.file;

import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.memory.InMemoryJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.buslane.journal.file.JournalFiles.SMALL;
import static io.buslane.journal.file.JournalFiles.bytes;
import static io.buslane.journal.file.JournalFiles.describe;
import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;

/** Compaction keeps exactly the live records, in append order, and frees the rest. */
class FileJournalCompactionTest {

    @TempDir
    Path temp;

    private static JournalRecord add(long id, int payloadBytes) {
        byte[] payload = new byte[payloadBytes];
        java.util.Arrays.fill(payload, (byte) id);
        return JournalRecord.add(id, (byte) 1, payload);
    }

    /**
     * Random ADD/UPDATE/DELETE mixes, with ids re-added after their DELETE, written to both journals. After compacting
     * every sealed segment at threshold 1, the file journal must hold exactly what {@link InMemoryJournal#compact()}
     * keeps: the same records in the same order.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6})
    void compactionAtThresholdOneKeepsExactlyWhatInMemoryCompactionKeeps(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Path directory = temp.resolve("journal");
        InMemoryJournal expected = new InMemoryJournal();
        expected.replay(r -> { });
        try (FileJournal journal = new FileJournal(directory, SMALL.withSyncPolicy(SyncPolicy.NONE))) {
            replay(journal);
            JournalModel model = new JournalModel();
            for (int step = 0; step < 600; step++) {
                JournalRecord record = RandomOps.next(random, model, 40);
                journal.append(record);
                expected.append(record);
                model.apply(record);
                if (random.nextInt(8) == 0) {
                    journal.sync();
                    expected.sync();
                }
            }
            journal.sync();
            expected.sync();
            journal.sealActiveSegment();

            CompactionResult result = journal.compact(1.0);

            assertThat(result.segmentsCompacted()).isPositive();
            assertThat(result.bytesReclaimed()).isPositive();
            assertThat(journal.liveBytes()).isEqualTo(journal.storedBytes());
        }
        expected.compact();
        List<JournalRecord> compacted = new ArrayList<>();
        expected.replay(compacted::add);
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(compacted));
        }
    }

    /**
     * Compaction copies surviving frames verbatim: records larger than its read buffer (64 KiB) and its write buffer
     * (256 KiB) come out byte for byte, beside small ones, and read back and replay intact.
     */
    @Test
    void framesLargerThanTheCompactionBuffersAreCopiedIntact() {
        Path directory = temp.resolve("journal");
        List<JournalRecord> kept = new ArrayList<>();
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            for (int i = 0; i < 12; i++) {
                JournalRecord record = add(i, i % 3 == 0 ? 300 * 1024 + i : 40 + i);
                journal.append(record);
                if (i % 2 == 0) {
                    kept.add(record);
                }
            }
            journal.sync();
            for (int i = 1; i < 12; i += 2) {
                journal.append(JournalRecord.delete(i));
            }
            journal.sync();
            journal.sealActiveSegment();

            CompactionResult result = journal.compact(1.0);

            assertThat(result.segmentsCompacted()).isPositive();
            assertThat(journal.liveBytes()).isEqualTo(journal.storedBytes());
            for (JournalRecord record : kept) {
                assertThat(journal.read(record.id())).isEqualTo(record.payload());
            }
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(describe(replay(journal))).containsExactlyElementsOf(describe(kept));
        }
    }

    @Test
    void smallSegmentsMergeAndDeadOnesDisappear() {
        Path directory = temp.resolve("journal");
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            for (int i = 0; i < 400; i++) {
                journal.append(add(i, 30));
            }
            journal.sync();
            for (int i = 0; i < 400; i++) {
                if (i % 10 != 0) {
                    journal.append(JournalRecord.delete(i));
                }
            }
            journal.sync();
            int segmentsBefore = journal.segmentNumbers().size();

            CompactionResult result = journal.compact(0.5);

            assertThat(result.segmentsCompacted()).isGreaterThan(result.segmentsWritten());
            assertThat(journal.segmentNumbers().size()).isLessThan(segmentsBefore / 2);
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            Map<Long, String> live = JournalModel.liveOf(replay(journal));
            assertThat(live.keySet()).containsExactlyElementsOf(
                    java.util.stream.LongStream.range(0, 40).map(i -> i * 10).boxed().toList());
        }
    }

    @Test
    void segmentWithNothingLiveIsRemovedWithoutOutputAndThenItsDeletesGoToo() throws IOException {
        Path directory = temp.resolve("journal");
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            for (int i = 0; i < 11; i++) {
                journal.append(add(i, 24)); // fills segment 1
            }
            for (int i = 0; i < 11; i++) {
                journal.append(JournalRecord.delete(i)); // segment 2
            }
            journal.sync();
            journal.sealActiveSegment();
            assertThat(journal.segmentNumbers()).containsExactly(1L, 2L, 3L);

            CompactionResult result = journal.compact(1.0);

            assertThat(result.segmentsWritten()).isZero();
            assertThat(result.segmentsCompacted()).isEqualTo(2);
            assertThat(journal.segmentNumbers()).containsExactly(3L);
            assertThat(journal.storedBytes()).isZero();
        }
        assertThat(JournalFiles.fileNames(directory)).containsExactly(SegmentFiles.segmentName(3));
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(replay(journal)).isEmpty();
        }
    }

    @Test
    void deleteIsKeptWhileAnOlderSegmentStillHoldsItsAdd() {
        Path directory = temp.resolve("journal");
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            journal.append(add(1, 10));
            journal.append(add(2, 400)); // segment 1 stays mostly live: not a candidate at 0.3
            for (int i = 10; i < 20; i++) {
                journal.append(add(i, 24)); // segment 2 ...
            }
            journal.append(JournalRecord.delete(1));
            for (int i = 10; i < 20; i++) {
                journal.append(JournalRecord.delete(i)); // ... and segment 3: mostly dead
            }
            journal.sync();
            journal.sealActiveSegment();

            journal.compact(0.3);

            assertThat(journal.segmentNumbers()).contains(1L);
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            List<JournalRecord> replayed = replay(journal);
            assertThat(describe(replayed)).contains(JournalModel.describe(JournalRecord.delete(1)));
            assertThat(JournalModel.liveOf(replayed)).containsOnlyKeys(2L);
        }
    }

    @Test
    void theActiveSegmentIsNeverRewritten() throws IOException {
        Path directory = temp.resolve("journal");
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            journal.append(add(1, 10));
            journal.append(JournalRecord.delete(1));
            journal.sync();
            Path active = JournalFiles.segmentFiles(directory).get(0);
            byte[] before = Files.readAllBytes(active);

            assertThat(journal.compact(1.0)).isEqualTo(CompactionResult.NONE);

            assertThat(Files.readAllBytes(active)).isEqualTo(before);
        }
    }

    @Test
    void compactSyncsPendingAppendsFirst() {
        Path directory = temp.resolve("journal");
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            for (int i = 0; i < 30; i++) {
                journal.append(add(i, 24));
            }
            for (int i = 0; i < 30; i += 2) {
                journal.append(JournalRecord.delete(i));
            }
            journal.compact(1.0);
        }
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(JournalModel.liveOf(replay(journal))).hasSize(15).containsKey(29L).doesNotContainKey(28L);
        }
    }

    @Test
    void automaticCompactionAfterRollsKeepsAChurningJournalSmall() {
        Path directory = temp.resolve("journal");
        FileJournalOptions options = SMALL.withAutoCompactLiveRatio(0.5).withSyncPolicy(SyncPolicy.NONE);
        try (FileJournal journal = new FileJournal(directory, options)) {
            replay(journal);
            journal.append(add(-1, 100)); // one long-lived record at the very start
            for (int i = 0; i < 3000; i++) {
                journal.append(add(i, 24));
                journal.sync();
                journal.append(JournalRecord.update(i, (byte) 2, bytes("settled")));
                journal.append(JournalRecord.delete(i));
                journal.sync();
            }
            assertThat(journal.storedBytes()).isLessThan(4 * options.segmentSizeBytes());
        }
        try (FileJournal journal = new FileJournal(directory, options)) {
            assertThat(JournalModel.liveOf(replay(journal))).containsOnlyKeys(-1L);
        }
    }

    /**
     * Automatic compaction in small steps (a few hundred source bytes per sync, so one group's copy spans many
     * syncs) while random appends, updates and deletes go on and live records are read back between the steps:
     * reads always return the latest record, a later full compaction leaves only live bytes, and a reopened journal
     * replays exactly the model's live state.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11, 12, 13, 14})
    void automaticCompactionInStepsInterleavesWithAppendsAndStaysExact(long seed) {
        compactInStepsAndCheck(seed, Integer.MAX_VALUE);
    }

    /**
     * As above, with the index entries of a swapped group's survivors settled two per step: appends, syncs and reads
     * of ids whose entries are not settled yet (they name replaced segments, or the output's number with offsets in
     * the file it replaced) must settle them first.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {21, 22, 23, 24})
    void survivorsSettledInBatchesAfterASwapStayExact(long seed) {
        compactInStepsAndCheck(seed, 2);
    }

    private void compactInStepsAndCheck(long seed, int settleBatch) {
        SplittableRandom random = new SplittableRandom(seed);
        Path directory = temp.resolve("journal");
        FileJournalOptions options = SMALL.withSegmentSizeBytes(4096).withAutoCompactLiveRatio(0.6);
        JournalModel model = new JournalModel();
        Map<Long, JournalRecord> latestAdd = new java.util.HashMap<>();
        int syncsWithACopyUnderWay = 0;
        int syncsWithSettlingUnderWay = 0;
        try (FileJournal journal = new FileJournal(directory, options)) {
            replay(journal);
            journal.compactionStepBytes(300);
            journal.compactionSettleBatch(settleBatch);
            for (int step = 0; step < 4000; step++) {
                JournalRecord record = RandomOps.next(random, model, 60);
                journal.append(record);
                model.apply(record);
                if (record.kind() == io.buslane.journal.RecordKind.ADD) {
                    latestAdd.put(record.id(), record);
                }
                if (random.nextInt(4) == 0) {
                    journal.sync();
                    if (JournalFiles.fileNames(directory).stream()
                            .anyMatch(n -> n.endsWith(SegmentFiles.COMPACTED_SUFFIX))) {
                        syncsWithACopyUnderWay++;
                    }
                    if (journal.compactionSettling()) {
                        syncsWithSettlingUnderWay++;
                    }
                    for (int k = 0; k < 3; k++) {
                        long id = random.nextInt(60);
                        byte[] stored = journal.read(id);
                        if (model.isLive(id)) {
                            assertThat(stored).as("ADD of live id %d", id).isEqualTo(latestAdd.get(id).payload());
                        }
                    }
                }
            }
            journal.sync();
            assertThat(syncsWithACopyUnderWay).as("syncs that returned with a group half-copied").isPositive();
            if (settleBatch < 10) {
                assertThat(syncsWithSettlingUnderWay).as("syncs that returned with survivors unsettled").isPositive();
            }

            journal.sealActiveSegment();
            journal.compact(1.0);
            assertThat(journal.liveBytes()).isEqualTo(journal.storedBytes());
        }
        try (FileJournal journal = new FileJournal(directory, options)) {
            assertThat(JournalModel.liveOf(replay(journal))).isEqualTo(model.live());
        }
    }

    @Test
    void replacedSegmentsLeftByACrashAreDeletedAtOpen() throws IOException {
        Path directory = temp.resolve("journal");
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            journal.append(add(1, 24));
            journal.sync();
        }
        Path leftover = directory.resolve(SegmentFiles.segmentName(7) + ".obsolete");
        Files.write(leftover, new byte[100]);
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            assertThat(JournalModel.liveOf(replay(journal))).containsOnlyKeys(1L);
        }
        assertThat(leftover).doesNotExist();
    }

    @Test
    void thresholdZeroCompactsNothing() {
        try (FileJournal journal = new FileJournal(temp.resolve("journal"), SMALL)) {
            replay(journal);
            for (int i = 0; i < 50; i++) {
                journal.append(add(i, 24));
                journal.append(JournalRecord.delete(i));
            }
            journal.sync();
            assertThat(journal.compact(0.0)).isEqualTo(CompactionResult.NONE);
        }
    }
}
