package io.buslane.journal.file;

import io.buslane.journal.JournalException;
import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A disk filled by the journals' own records never deadlocks: deleting records always frees space. DELETEs find room
 * in the disk reserve once the disk is full, dead segments are reclaimed without a roll and without writing anything,
 * also after a restart when nothing is written at all, and appends work again once space is back.
 */
class FileJournalFullDiskTest {

    private static final long SEGMENT_BYTES = 4096;
    private static final long RESERVE_BYTES = 16 * 1024;
    private static final int PAYLOAD_BYTES = 200;

    @TempDir
    Path temp;

    private static FileJournalOptions options(DiskSpace disk, double autoCompactLiveRatio) {
        return FileJournalOptions.defaults().withSegmentSizeBytes(SEGMENT_BYTES).withSyncPolicy(SyncPolicy.NONE)
                .withAutoCompactLiveRatio(autoCompactLiveRatio).withDiskSpace(disk).withReserveBytes(RESERVE_BYTES);
    }

    private static JournalRecord add(long id) {
        byte[] payload = new byte[PAYLOAD_BYTES];
        java.util.Arrays.fill(payload, (byte) id);
        return JournalRecord.add(id, (byte) 1, payload);
    }

    private static int drive(FileJournal journal) {
        int steps = 0;
        while (journal.maintain()) {
            steps++;
            assertThat(steps).as("maintenance steps").isLessThan(10_000);
        }
        return steps;
    }

    private static List<Long> sealed(FileJournal journal) {
        List<Long> numbers = journal.segmentNumbers();
        return numbers.subList(0, numbers.size() - 1);
    }

    @Test
    void consumingFromADiskFilledToTheLastByteFreesItThroughTheReserve() throws Exception {
        Path data = temp.resolve("data");
        SmallDisk disk = new SmallDisk(data, 256 * 1024);
        FileJournalOptions options = options(disk, 0.5);
        List<Long> stored = new ArrayList<>();
        try (FileJournalFactory factory = new FileJournalFactory(data, options, disk);
             FileJournal journal = factory.open("shard-0")) {
            Path reserve = data.resolve(DiskReserve.FILE_NAME);
            assertThat(Files.size(reserve)).isEqualTo(RESERVE_BYTES);
            replay(journal);

            // the journal's own records fill the disk (a batch larger than the threshold's headroom, say)
            JournalException full = null;
            for (long id = 0; full == null; id++) {
                journal.append(add(id));
                try {
                    journal.sync();
                    stored.add(id);
                } catch (JournalException e) {
                    full = e;
                }
                assertThat(id).isLessThan(10_000);
            }
            assertThat(full.diskFull()).isTrue();
            assertThat(stored).hasSizeGreaterThan(500);
            assertThat(reserve).as("released for the writes that free space").doesNotExist();
            assertThat(factory.usableSpaceBytes()).as("the reserve's space is not offered to new records")
                    .isLessThan(RESERVE_BYTES / 4);

            // every record is consumed: the DELETEs are written into the reserve, compaction frees the rest
            for (int i = 0; i < stored.size(); i += 25) {
                for (long id : stored.subList(i, Math.min(stored.size(), i + 25))) {
                    journal.append(JournalRecord.delete(id));
                }
                journal.sync();
            }
            drive(journal);
            assertThat(disk.usedBytes()).as("bytes left on the disk").isLessThan(4 * SEGMENT_BYTES + RESERVE_BYTES);

            // space is back: the reserve is written again in the background, and appends work
            assertThat(factory.usableSpaceBytes()).isGreaterThan(128 * 1024);
            factory.reserve().awaitWrite();
            assertThat(Files.size(reserve)).isEqualTo(RESERVE_BYTES);
            assertThat(factory.reserve().owedBytes()).isZero();
            journal.append(add(1_000_000));
            journal.sync();
        }
        try (FileJournal journal = new FileJournal(data.resolve("shard-0"), options)) {
            assertThat(JournalModel.liveOf(replay(journal))).containsOnlyKeys(1_000_000L);
        }
    }

    @Test
    void deletesReclaimSealedSegmentsWithoutASegmentRoll() {
        SmallDisk disk = new SmallDisk(temp, Long.MAX_VALUE);
        try (FileJournal journal = new FileJournal(temp.resolve("journal"), options(disk, 0.5), disk, () -> { })) {
            replay(journal);
            for (long id = 0; id <= 90; id++) {
                journal.append(add(id));
                journal.sync(); // the passes that rolls start find every record live
            }
            assertThat(journal.segmentNumbers()).containsExactly(1L, 2L, 3L, 4L, 5L, 6L); // 18 ADDs each, 1 in 6

            for (long id = 0; id < 90; id++) {
                journal.append(JournalRecord.delete(id)); // 90 DELETEs fit in the active segment: no roll
            }
            journal.sync();

            assertThat(journal.segmentNumbers()).as("segments left").containsExactly(6L);
        }
    }

    @Test
    void aDrainedJournalOnAFullDiskIsReclaimedAfterARestartWithoutWritingAnything() {
        Path directory = temp.resolve("journal");
        SmallDisk disk = new SmallDisk(temp, Long.MAX_VALUE);
        try (FileJournal journal = new FileJournal(directory, options(disk, 0), disk, () -> { })) {
            replay(journal);
            for (long id = 0; id < 90; id++) {
                journal.append(add(id));
            }
            journal.sync();
            for (long id = 0; id < 90; id++) {
                journal.append(JournalRecord.delete(id));
            }
            journal.sync();
            assertThat(sealed(journal)).hasSizeGreaterThanOrEqualTo(4);
        }
        disk.fillUp();
        long usedBefore = disk.usedBytes();

        List<CompactionStep> steps = new ArrayList<>();
        try (FileJournal journal = new FileJournal(directory, options(disk, 0.5), disk, () -> { })) {
            assertThat(JournalModel.liveOf(replay(journal))).isEmpty();
            journal.compactionHook((step, target) -> steps.add(step));

            drive(journal); // nothing is appended, so no sync carries compaction

            assertThat(sealed(journal)).isEmpty();
            assertThat(steps).as("only renames: no output, no manifest").containsOnly(CompactionStep.SOURCE_DELETED);
            assertThat(disk.usedBytes()).isLessThan(usedBefore - 4 * SEGMENT_BYTES);
            journal.append(add(500));
            journal.sync();
        }
        try (FileJournal journal = new FileJournal(directory, options(disk, 0.5))) {
            assertThat(JournalModel.liveOf(replay(journal))).containsOnlyKeys(500L);
            assertThat(journal.recoveryReport().isClean()).isTrue();
        }
    }

    @Test
    void aGroupThatDoesNotFitIsPassedOverAndTheDeadSegmentsAfterItAreStillRemoved() {
        Path directory = temp.resolve("journal");
        SmallDisk disk = new SmallDisk(temp, Long.MAX_VALUE);
        try (FileJournal journal = new FileJournal(directory, options(disk, 0), disk, () -> { })) {
            replay(journal);
            for (long id = 0; id < 36; id++) {
                journal.append(add(id));
            }
            journal.sync();
            journal.sealActiveSegment(); // segment 1: ids 0-17, segment 2: ids 18-35
            assertThat(journal.segmentNumbers()).containsExactly(1L, 2L, 3L);
            for (long id = 0; id < 36; id++) {
                if (id >= 18 || id % 3 != 0) {
                    journal.append(JournalRecord.delete(id)); // segment 1 a third live, segment 2 all dead
                }
            }
            journal.sync();
            disk.capacityBytes(disk.usedBytes() + 100); // no room for segment 1's live records

            CompactionResult result = journal.compact(0.5);

            assertThat(result.segmentsCompacted()).isEqualTo(1);
            assertThat(result.segmentsWritten()).isZero();
            assertThat(journal.segmentNumbers()).containsExactly(1L, 3L);

            disk.capacityBytes(Long.MAX_VALUE);
            assertThat(journal.compact(0.5).segmentsWritten()).isEqualTo(1);
        }
        try (FileJournal journal = new FileJournal(directory, options(disk, 0))) {
            assertThat(JournalModel.liveOf(replay(journal))).containsOnlyKeys(0L, 3L, 6L, 9L, 12L, 15L);
        }
    }

    @Test
    void aGroupThatFitsOnlyWithTheReserveReleasesItAndIsRewritten() throws IOException {
        Path data = temp.resolve("data");
        SmallDisk disk = new SmallDisk(data, Long.MAX_VALUE);
        long reserveBytes = 2048;
        FileJournalOptions options = options(disk, 0).withReserveBytes(reserveBytes);
        try (FileJournalFactory factory = new FileJournalFactory(data, options, disk);
             FileJournal journal = factory.open("shard-0")) {
            replay(journal);
            for (long id = 0; id < 36; id++) {
                journal.append(add(id));
            }
            journal.sync();
            journal.sealActiveSegment();
            for (long id = 0; id < 18; id++) {
                if (id % 3 != 0) {
                    journal.append(JournalRecord.delete(id)); // segment 1 a third live (1,314 bytes)
                }
            }
            journal.sync();
            // too little free for the output, but more than half the reserve: only the group's need releases it
            disk.capacityBytes(disk.usedBytes() + 1200);

            CompactionResult result = journal.compact(0.5);

            assertThat(result.segmentsWritten()).isEqualTo(1);
            assertThat(data.resolve(DiskReserve.FILE_NAME)).doesNotExist();
            assertThat(factory.reserve().owedBytes()).isEqualTo(reserveBytes);
        }
        try (FileJournal journal = new FileJournal(data.resolve("shard-0"), options)) {
            assertThat(JournalModel.liveOf(replay(journal))).hasSize(24).containsKeys(0L, 3L, 18L, 35L);
        }
    }

    @Test
    void theReserveIsReleasedWhenTheDiskRunsLowAndWrittenAgainOnceThreeTimesItIsFree() throws Exception {
        Path data = temp.resolve("data");
        AtomicLong free = new AtomicLong(RESERVE_BYTES); // too little to write the reserve at open
        try (FileJournalFactory factory = new FileJournalFactory(data, options(d -> free.get(), 0.5))) {
            Path reserve = data.resolve(DiskReserve.FILE_NAME);
            assertThat(reserve).doesNotExist();
            assertThat(factory.usableSpaceBytes()).as("owed, so not offered").isZero();

            free.set(3 * RESERVE_BYTES);
            assertThat(factory.usableSpaceBytes()).isBetween(2 * RESERVE_BYTES, 3 * RESERVE_BYTES); // being written
            factory.reserve().awaitWrite();
            assertThat(Files.size(reserve)).isEqualTo(RESERVE_BYTES);
            free.set(2 * RESERVE_BYTES); // what the written reserve took
            assertThat(factory.usableSpaceBytes()).isEqualTo(2 * RESERVE_BYTES);

            free.set(RESERVE_BYTES / 2 - 1); // the headroom is nearly gone: released before any write fails
            factory.usableSpaceBytes();
            assertThat(reserve).doesNotExist();
            assertThat(factory.reserve().owedBytes()).isEqualTo(RESERVE_BYTES);
        }
    }

    @Test
    void aReserveOfAnotherSizeIsReplacedAndNoReserveDeletesALeftOne() throws IOException {
        Path data = temp.resolve("data");
        Files.createDirectories(data);
        Path reserve = data.resolve(DiskReserve.FILE_NAME);
        Files.write(reserve, new byte[100]);
        Files.write(data.resolve(DiskReserve.TEMP_NAME), new byte[100]);
        FileJournalOptions options = FileJournalOptions.defaults().withReserveBytes(RESERVE_BYTES);
        try (FileJournalFactory factory = new FileJournalFactory(data, options)) {
            assertThat(Files.size(reserve)).isEqualTo(RESERVE_BYTES);
            assertThat(data.resolve(DiskReserve.TEMP_NAME)).doesNotExist();
            assertThatThrownBy(() -> factory.open(DiskReserve.FILE_NAME)).isInstanceOf(IllegalArgumentException.class);
        }
        try (FileJournalFactory factory = new FileJournalFactory(data, options.withReserveBytes(0))) {
            assertThat(reserve).doesNotExist();
            assertThat(factory.usableSpaceBytes()).isPositive();
        }
    }
}
