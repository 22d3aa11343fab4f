package io.buslane.journal.file;

import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.buslane.journal.file.JournalFiles.SMALL;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Model-checked reload (Artemis {@code JournalImplTestBase.loadAndCheck}): random mixes of ADD/UPDATE/DELETE (ids
 * reused across incarnations), syncs, compactions at random thresholds, closes that drop unsynced records, and
 * crashes that leave a torn tail, checking after every reopen that the journal holds exactly the synced live state.
 *
 * <p>Each seed is a fixed, repeatable run: to debug one, copy it into its own {@code @ValueSource}.
 */
class FileJournalModelTest {

    private static final int STEPS = 400;
    private static final double[] THRESHOLDS = {0.25, 0.5, 0.75, 1.0};

    @TempDir
    Path temp;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
    void randomOperationMixesSurviveReopenAndCompaction(long seed) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        Path directory = temp.resolve("journal");
        FileJournalOptions options = SMALL.withSyncPolicy(SyncPolicy.NONE)
                .withWriteBufferSizeBytes(random.nextBoolean() ? 64 : 4096)
                .withAutoCompactLiveRatio(random.nextBoolean() ? 0.0 : 0.5);
        FileJournal journal = new FileJournal(directory, options);
        JournalModel working = new JournalModel();
        journal.replay(working);
        Map<Long, String> durable = working.live();
        int reopens = 0;
        int segmentsCompacted = 0;
        try {
            for (int step = 0; step < STEPS; step++) {
                int dice = random.nextInt(100);
                if (dice < 70) {
                    JournalRecord record = RandomOps.next(random, working, 60);
                    journal.append(record);
                    working.apply(record);
                } else if (dice < 84) {
                    journal.sync();
                    durable = working.live();
                } else if (dice < 89) {
                    segmentsCompacted += journal.compact(THRESHOLDS[random.nextInt(THRESHOLDS.length)])
                            .segmentsCompacted();
                    durable = working.live();
                } else {
                    journal.close();
                    long tornBytes = dice < 94 ? 0 : appendGarbageToTheLastSegment(directory, random);
                    journal = new FileJournal(directory, options);
                    working = new JournalModel();
                    journal.replay(working);
                    reopens++;

                    assertThat(working.live()).as("seed %d, step %d", seed, step).isEqualTo(durable);
                    assertThat(journal.recoveryReport().bytesTruncated()).isEqualTo(tornBytes);
                    assertThat(journal.recoveryReport().corruptions()).isEmpty();
                }
            }
            journal.sync();
            durable = working.live();
        } finally {
            journal.close();
        }
        try (FileJournal reopened = new FileJournal(directory, options)) {
            assertThat(JournalModel.replayLive(reopened)).as("seed %d at the end", seed).isEqualTo(durable);
        }
        assertThat(reopens).isPositive();
        assertThat(segmentsCompacted).as("explicit compactions did work").isPositive();
    }

    /** A crash mid-write: some bytes of a record that was never synced. Returns how many. */
    private static long appendGarbageToTheLastSegment(Path directory, SplittableRandom random) throws IOException {
        List<Path> segments = JournalFiles.segmentFiles(directory);
        byte[] garbage = new byte[1 + random.nextInt(40)];
        random.nextBytes(garbage);
        garbage[0] = random.nextBoolean() ? RecordFormat.MAGIC : 0;
        Files.write(segments.get(segments.size() - 1), garbage, StandardOpenOption.APPEND);
        return garbage.length;
    }
}
