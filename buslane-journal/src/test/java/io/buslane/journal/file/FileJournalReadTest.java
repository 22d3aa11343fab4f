package io.buslane.journal.file;

import io.buslane.journal.JournalException;
import io.buslane.journal.JournalModel;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import io.buslane.journal.memory.InMemoryJournal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;

import static io.buslane.journal.file.JournalFiles.SMALL;
import static io.buslane.journal.file.JournalFiles.bytes;
import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Reading records back from segment files: the same answers as {@link InMemoryJournal} after random mixes,
 * compactions at random thresholds, interrupted batches and reopening; verification of what is read; a bounded
 * number of open files.
 */
class FileJournalReadTest {

    private static final int ID_SPACE = 60;

    @TempDir
    Path temp;

    private static String describe(JournalRecord record) {
        return record == null ? null : JournalModel.describe(record);
    }

    private static void assertSameReads(FileJournal file, InMemoryJournal expected) {
        for (long id = 0; id < ID_SPACE; id++) {
            for (RecordKind kind : new RecordKind[] {RecordKind.ADD, RecordKind.UPDATE}) {
                assertThat(describe(file.read(id, kind))).as("%s of id %d", kind, id)
                        .isEqualTo(describe(expected.read(id, kind)));
            }
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4})
    void readsMatchTheInMemoryJournalThroughCompactionAndReopen(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Path directory = temp.resolve("journal");
        InMemoryJournal expected = new InMemoryJournal();
        expected.replay(r -> { });
        JournalModel model = new JournalModel();
        FileJournal journal = new FileJournal(directory, SMALL.withSyncPolicy(SyncPolicy.NONE));
        replay(journal);
        try {
            for (int step = 0; step < 1500; step++) {
                JournalRecord record = RandomOps.next(random, model, ID_SPACE);
                journal.append(record);
                expected.append(record);
                model.apply(record);
                if (random.nextInt(6) == 0) {
                    journal.sync();
                    expected.sync();
                    assertSameReads(journal, expected);
                }
                if (random.nextInt(150) == 0) {
                    journal.compact(random.nextDouble());
                    expected.sync();
                    assertSameReads(journal, expected);
                }
                if (random.nextInt(300) == 0) {
                    journal.close(); // discards the unsynced tail, as a crash would
                    expected.crash();
                    model = new JournalModel();
                    journal = new FileJournal(directory, SMALL.withSyncPolicy(SyncPolicy.NONE)
                            .withAutoCompactLiveRatio(random.nextBoolean() ? 0.5 : 0));
                    journal.replay(model);
                    expected.replay(r -> { });
                    assertSameReads(journal, expected);
                }
            }
        } finally {
            journal.close();
        }
    }

    @Test
    void aRecordThatFailsVerificationIsReportedNotServed() throws IOException {
        Path directory = temp.resolve("journal");
        try (FileJournal journal = new FileJournal(directory, SMALL)) {
            replay(journal);
            journal.append(JournalRecord.add(1, (byte) 1, bytes("first record")));
            journal.append(JournalRecord.add(2, (byte) 1, bytes("second record")));
            journal.sync();
            // flip one payload byte of record 2: it starts after the segment's first batch marker and record 1's frame
            int firstFrame = RecordFormat.MARKER_FRAME_BYTES + RecordFormat.frameBytes(bytes("first record").length);
            Path segment = JournalFiles.segmentFiles(directory).get(0);
            try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ByteBuffer one = ByteBuffer.allocate(1);
                long at = firstFrame + RecordFormat.HEADER_BYTES + RecordFormat.FIXED_BODY_BYTES + 3;
                channel.read(one, at);
                one.put(0, (byte) (one.get(0) ^ 0x40)).rewind();
                channel.write(one, at);
            }

            assertThatThrownBy(() -> journal.read(2)).isInstanceOf(JournalException.class)
                    .hasMessageContaining("CRC mismatch");
            assertThat(journal.read(1)).isEqualTo(bytes("first record"));
            // the journal still appends and syncs
            journal.append(JournalRecord.add(3, (byte) 1, bytes("third record")));
            journal.sync();
            assertThat(journal.read(3)).isEqualTo(bytes("third record"));
        }
    }

    @Test
    void keepsAtMostAFewSegmentsOpenForReading() {
        try (FileJournal journal = new FileJournal(temp.resolve("journal"), SMALL.withSyncPolicy(SyncPolicy.NONE))) {
            replay(journal);
            for (int id = 0; id < 400; id++) {
                journal.append(JournalRecord.add(id, (byte) 1, bytes("record " + id + " " + "y".repeat(100))));
            }
            journal.sync();
            assertThat(journal.segmentNumbers().size()).isGreaterThan(3 * FileJournal.MAX_READ_CHANNELS);

            for (int round = 0; round < 2; round++) {
                for (int id = 0; id < 400; id++) {
                    assertThat(journal.read(id)).isEqualTo(bytes("record " + id + " " + "y".repeat(100)));
                    assertThat(journal.openReadChannels()).isLessThanOrEqualTo(FileJournal.MAX_READ_CHANNELS);
                }
            }
        }
    }

    @Test
    void recordsOfAFailedBatchAreNeverReadable() {
        FaultyIo io = new FaultyIo();
        try (FileJournal journal = new FileJournal(temp.resolve("journal"), SMALL.withSegmentSizeBytes(64 * 1024),
                io, () -> { })) {
            replay(journal);
            journal.append(JournalRecord.add(1, (byte) 1, bytes("durable")));
            journal.sync();
            journal.append(JournalRecord.add(2, (byte) 1, bytes("lost with its batch")));
            journal.append(JournalRecord.delete(1));
            io.failNextForce();
            assertThatThrownBy(journal::sync).isInstanceOf(JournalException.class);

            assertThat(journal.read(2)).isNull();
            assertThat(journal.read(1)).isEqualTo(bytes("durable"));
            io.spaceReturns();
            journal.append(JournalRecord.add(3, (byte) 1, bytes("after the failure")));
            journal.sync();
            assertThat(journal.read(3)).isEqualTo(bytes("after the failure"));
            assertThat(journal.read(1)).isEqualTo(bytes("durable"));
        }
    }

    @Test
    void readingBeforeReplayOrAfterCloseFails() {
        FileJournal journal = new FileJournal(temp.resolve("journal"), SMALL);
        assertThatThrownBy(() -> journal.read(1)).isInstanceOf(IllegalStateException.class);
        replay(journal);
        assertThat(journal.read(1)).isNull();
        journal.close();
        assertThatThrownBy(() -> journal.read(1)).isInstanceOf(IllegalStateException.class);
    }
}
