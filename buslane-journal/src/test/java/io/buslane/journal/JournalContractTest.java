package io.buslane.journal;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour every {@link Journal} shares, run against each implementation by a subclass (NATS
 * {@code testAllStoreAllPermutations} style). Only synced records are checked after a reopen; records whose later
 * records made them dead may be missing from a compacting implementation, so long runs compare live state and order.
 */
public abstract class JournalContractTest {

    private Journal journal;

    /** Opens the journal under test, seeing whatever an earlier instance synced. Called again after each close. */
    protected abstract Journal openJournal();

    /** Closes the current instance (if any) and opens the journal again, without replaying it. */
    protected final Journal reopen() {
        if (journal != null) {
            journal.close();
        }
        journal = openJournal();
        return journal;
    }

    /** Reopens and replays everything. */
    protected final List<JournalRecord> reopenAndReplay() {
        Journal j = reopen();
        List<JournalRecord> records = new ArrayList<>();
        j.replay(records::add);
        return records;
    }

    @AfterEach
    void closeJournal() {
        if (journal != null) {
            journal.close();
            journal = null;
        }
    }

    private static List<String> describe(List<JournalRecord> records) {
        return records.stream().map(JournalModel::describe).collect(Collectors.toList());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void emptyJournalReplaysNothing() {
        assertThat(reopenAndReplay()).isEmpty();
        assertThat(reopenAndReplay()).isEmpty();
    }

    @Test
    void syncedRecordsReplayInAppendOrderAfterReopen() {
        reopenAndReplay();
        List<JournalRecord> written = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            written.add(JournalRecord.add(1000 - i, (byte) i, bytes("message " + i)));
        }
        written.forEach(journal::append);
        journal.sync();

        assertThat(describe(reopenAndReplay())).containsExactlyElementsOf(describe(written));
    }

    /** A payload slice is read during the append only: the caller reuses its array at once, as the engine does. */
    @Test
    void aPayloadSliceIsReadDuringTheAppendOnly() {
        reopenAndReplay();
        byte[] scratch = new byte[64];
        List<JournalRecord> written = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            java.util.Arrays.fill(scratch, (byte) (i + 1));
            int offset = i * 3;
            int length = 10 + i;
            journal.append(i == 2 ? RecordKind.UPDATE : RecordKind.ADD, 50 + i, (byte) 4, scratch, offset, length);
            written.add(new JournalRecord(i == 2 ? RecordKind.UPDATE : RecordKind.ADD, 50 + i, (byte) 4,
                    java.util.Arrays.copyOfRange(scratch, offset, offset + length)));
            java.util.Arrays.fill(scratch, (byte) 0); // reused before the sync
        }
        journal.append(RecordKind.ADD, 60, (byte) 4, scratch, 0, 0);
        written.add(JournalRecord.add(60, (byte) 4, new byte[0]));
        journal.sync();

        assertThat(describe(reopenAndReplay())).containsExactlyElementsOf(describe(written));
    }

    @Test
    void deleteAndUpdateRecordsReplayAsWritten() {
        reopenAndReplay();
        List<JournalRecord> written = List.of(
                JournalRecord.add(1, (byte) 7, bytes("one")),
                JournalRecord.add(2, (byte) 7, bytes("two")),
                JournalRecord.update(1, (byte) 8, bytes("one, delivered once")),
                JournalRecord.delete(2),
                JournalRecord.update(1, (byte) 8, bytes("one, delivered twice")),
                JournalRecord.add(3, (byte) 7, new byte[0]));
        written.forEach(journal::append);
        journal.sync();

        List<JournalRecord> replayed = reopenAndReplay();

        assertThat(JournalModel.liveOf(replayed)).isEqualTo(JournalModel.liveOf(written));
        assertThat(JournalModel.liveOf(replayed)).containsOnlyKeys(1L, 3L);
        assertThat(JournalModel.liveOf(replayed).get(1L)).endsWith(
                "update 8:" + java.util.HexFormat.of().formatHex(bytes("one, delivered twice")));
        assertThat(describe(written)).containsSubsequence(describe(replayed));
    }

    @Test
    void idsTypesAndPayloadsRoundTripIncludingExtremes() {
        reopenAndReplay();
        byte[] large = new byte[100_000];
        new SplittableRandom(7).nextBytes(large);
        List<JournalRecord> written = List.of(
                JournalRecord.add(Long.MIN_VALUE, Byte.MIN_VALUE, new byte[0]),
                JournalRecord.add(Long.MAX_VALUE, Byte.MAX_VALUE, new byte[] {0}),
                JournalRecord.add(0, (byte) 0, large),
                JournalRecord.add(-1, (byte) -1, bytes("x")));
        written.forEach(journal::append);
        journal.sync();

        assertThat(describe(reopenAndReplay())).containsExactlyElementsOf(describe(written));
    }

    @Test
    void recordsNotSyncedBeforeCloseAreDiscarded() {
        reopenAndReplay();
        journal.append(JournalRecord.add(1, (byte) 1, bytes("synced")));
        journal.sync();
        journal.append(JournalRecord.add(2, (byte) 1, bytes("never synced")));
        journal.append(JournalRecord.delete(1));

        List<JournalRecord> replayed = reopenAndReplay();

        assertThat(describe(replayed)).containsExactly(describe(List.of(JournalRecord.add(1, (byte) 1,
                bytes("synced")))).get(0));
        journal.append(JournalRecord.add(3, (byte) 1, bytes("after reopen")));
        journal.sync();
        assertThat(JournalModel.liveOf(reopenAndReplay())).containsOnlyKeys(1L, 3L);
    }

    @Test
    void appendedCountCountsAppends() {
        reopenAndReplay();
        long before = journal.appendedCount();
        for (int i = 0; i < 5; i++) {
            journal.append(JournalRecord.add(i, (byte) 1, bytes("r" + i)));
        }
        assertThat(journal.appendedCount()).isEqualTo(before + 5);
        journal.sync();
        assertThat(journal.appendedCount()).isEqualTo(before + 5);
    }

    @Test
    void manyRecordsAcrossSegmentRollsSurviveReopen() {
        reopenAndReplay();
        SplittableRandom random = new SplittableRandom(42);
        List<JournalRecord> written = new ArrayList<>();
        JournalModel model = new JournalModel();
        List<Long> live = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            JournalRecord record;
            int dice = random.nextInt(10);
            if (dice < 5 || live.isEmpty()) {
                byte[] payload = new byte[random.nextInt(300)];
                random.nextBytes(payload);
                record = JournalRecord.add(i, (byte) random.nextInt(4), payload);
                live.add((long) i);
            } else if (dice < 8) {
                record = JournalRecord.update(live.get(random.nextInt(live.size())), (byte) 9,
                        bytes("update " + i));
            } else {
                record = JournalRecord.delete(live.remove(random.nextInt(live.size())));
            }
            journal.append(record);
            written.add(record);
            model.apply(record);
            if (i % 50 == 49) {
                journal.sync();
            }
        }
        journal.sync();

        List<JournalRecord> replayed = reopenAndReplay();

        assertThat(JournalModel.liveOf(replayed)).isEqualTo(model.live());
        assertThat(describe(written)).containsSubsequence(describe(replayed));
        // live records come back in the order they were added
        List<Long> addOrder = replayed.stream().filter(r -> r.kind() == RecordKind.ADD && model.isLive(r.id()))
                .map(JournalRecord::id).collect(Collectors.toCollection(ArrayList::new));
        assertThat(new ArrayList<>(new LinkedHashSet<>(addOrder))).containsExactlyElementsOf(live.stream().sorted()
                .collect(Collectors.toList()));
        // and a second reopen sees the same
        assertThat(JournalModel.liveOf(reopenAndReplay())).isEqualTo(model.live());
    }
}
