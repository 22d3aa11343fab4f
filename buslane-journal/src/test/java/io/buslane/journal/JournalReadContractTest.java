package io.buslane.journal;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The {@link Journal#read(long, RecordKind)} contract, run against each implementation by a subclass: the live ADD
 * or UPDATE of an id as of the last sync, across segment rolls, reopening and (for implementations that compact)
 * compaction.
 */
public abstract class JournalReadContractTest {

    private Journal journal;

    /** Opens the journal under test, seeing whatever an earlier instance synced. Called again after each close. */
    protected abstract Journal openJournal();

    /** Compacts as much as the implementation can (every dead record), or does nothing. */
    protected abstract void compactFully(Journal journal);

    /** Reopens and replays, calling {@code handler} for each record. */
    protected final Journal reopen(ReplayHandler handler) {
        if (journal != null) {
            journal.close();
        }
        journal = openJournal();
        journal.replay(handler);
        return journal;
    }

    protected final Journal reopen() {
        return reopen(r -> { });
    }

    @AfterEach
    void closeJournal() {
        if (journal != null) {
            journal.close();
            journal = null;
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }

    private String readAdd(long id) {
        return text(journal.read(id));
    }

    private String readUpdate(long id) {
        JournalRecord r = journal.read(id, RecordKind.UPDATE);
        return r == null ? null : r.type() + ":" + text(r.payload());
    }

    @Test
    void readsTheLiveAddOfASyncedId() {
        reopen();
        journal.append(JournalRecord.add(7, (byte) 3, bytes("seven")));
        journal.append(JournalRecord.add(8, (byte) 4, bytes("eight")));
        journal.sync();

        JournalRecord record = journal.read(7, RecordKind.ADD);

        assertThat(record.kind()).isEqualTo(RecordKind.ADD);
        assertThat(record.id()).isEqualTo(7);
        assertThat(record.type()).isEqualTo((byte) 3);
        assertThat(text(record.payload())).isEqualTo("seven");
        assertThat(readAdd(8)).isEqualTo("eight");
        assertThat(journal.read(9)).isNull();
        assertThat(journal.read(7, RecordKind.UPDATE)).isNull();
    }

    @Test
    void seesTheStateOfTheLastSync() {
        reopen();
        journal.append(JournalRecord.add(1, (byte) 1, bytes("one")));
        assertThat(journal.read(1)).as("appended, not synced").isNull();
        journal.sync();
        assertThat(readAdd(1)).isEqualTo("one");

        journal.append(JournalRecord.delete(1));
        assertThat(readAdd(1)).as("deleted, not synced").isEqualTo("one");
        journal.sync();
        assertThat(journal.read(1)).isNull();
    }

    @Test
    void readsTheLatestUpdateUntilADelete() {
        reopen();
        journal.append(JournalRecord.add(1, (byte) 1, bytes("one")));
        journal.append(JournalRecord.update(1, (byte) 2, bytes("first")));
        journal.append(JournalRecord.update(1, (byte) 5, bytes("second")));
        journal.sync();

        assertThat(readUpdate(1)).isEqualTo("5:second");
        assertThat(readAdd(1)).isEqualTo("one");

        journal.append(JournalRecord.delete(1));
        journal.sync();
        assertThat(journal.read(1, RecordKind.UPDATE)).isNull();
        assertThat(journal.read(1, RecordKind.ADD)).isNull();
    }

    @Test
    void anIdAddedAgainAfterItsDeleteReadsItsNewAdd() {
        reopen();
        journal.append(JournalRecord.add(1, (byte) 1, bytes("first life")));
        journal.append(JournalRecord.update(1, (byte) 2, bytes("first life, updated")));
        journal.append(JournalRecord.delete(1));
        journal.append(JournalRecord.add(1, (byte) 1, bytes("second life")));
        journal.sync();

        assertThat(readAdd(1)).isEqualTo("second life");
        assertThat(journal.read(1, RecordKind.UPDATE)).isNull();
        reopen();
        assertThat(readAdd(1)).isEqualTo("second life");
        assertThat(journal.read(1, RecordKind.UPDATE)).isNull();
    }

    @Test
    void deleteRecordsCannotBeRead() {
        reopen();
        assertThatThrownBy(() -> journal.read(1, RecordKind.DELETE)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void readsAfterReopenAndInsideTheReplayHandler() {
        reopen();
        journal.append(JournalRecord.add(1, (byte) 1, bytes("one")));
        journal.append(JournalRecord.add(2, (byte) 1, bytes("two")));
        journal.append(JournalRecord.update(1, (byte) 2, bytes("one updated")));
        journal.append(JournalRecord.add(3, (byte) 1, bytes("three")));
        journal.append(JournalRecord.delete(2));
        journal.sync();

        List<String> seenDuringReplay = new ArrayList<>();
        Journal[] current = new Journal[1];
        boolean[] twoReplayed = new boolean[1];
        reopen(record -> {
            if (record.id() == 2 && record.kind() == RecordKind.ADD) {
                twoReplayed[0] = true; // unless compaction dropped it with its DELETE
            }
            if (record.id() == 3) {
                // every record replayed before this one is readable
                seenDuringReplay.add(text(current[0].read(1)));
                JournalRecord update = current[0].read(1, RecordKind.UPDATE);
                seenDuringReplay.add(update == null ? null : text(update.payload()));
                seenDuringReplay.add(text(current[0].read(2)));
            }
        }, current);

        assertThat(seenDuringReplay).containsExactly("one", "one updated", twoReplayed[0] ? "two" : null);
        assertThat(readAdd(1)).isEqualTo("one");
        assertThat(readUpdate(1)).isEqualTo("2:one updated");
        assertThat(journal.read(2)).isNull();
        assertThat(readAdd(3)).isEqualTo("three");
    }

    private void reopen(ReplayHandler handler, Journal[] current) {
        if (journal != null) {
            journal.close();
        }
        journal = openJournal();
        current[0] = journal;
        journal.replay(handler);
    }

    @Test
    void largeAndEmptyPayloadsReadBack() {
        reopen();
        byte[] large = new byte[300_000];
        new SplittableRandom(3).nextBytes(large);
        journal.append(JournalRecord.add(1, (byte) 1, large));
        journal.append(JournalRecord.add(2, (byte) 1, new byte[0]));
        journal.append(JournalRecord.update(2, (byte) 1, large));
        journal.sync();

        assertThat(journal.read(1)).isEqualTo(large);
        assertThat(journal.read(2)).isEmpty();
        assertThat(journal.read(2, RecordKind.UPDATE).payload()).isEqualTo(large);
        reopen();
        assertThat(journal.read(1)).isEqualTo(large);
    }

    /**
     * Random ADD/UPDATE/DELETE mixes with ids reused, many segment rolls, compaction and reopening: after every sync
     * each id reads back exactly its live ADD and UPDATE per the model.
     */
    @Test
    void randomOperationsReadBackTheModelAcrossRollsCompactionAndReopen() {
        reopen();
        SplittableRandom random = new SplittableRandom(11);
        Map<Long, String> adds = new HashMap<>();
        Map<Long, String> updates = new HashMap<>();
        Map<Long, String> pendingAdds = new HashMap<>(adds);
        Map<Long, String> pendingUpdates = new HashMap<>(updates);
        int idSpace = 200;
        for (int step = 0; step < 4000; step++) {
            long id = random.nextInt(idSpace);
            boolean live = pendingAdds.containsKey(id);
            int dice = random.nextInt(10);
            JournalRecord record;
            if (!live) {
                String payload = "add " + step + " " + "x".repeat(random.nextInt(200));
                record = JournalRecord.add(id, (byte) 1, bytes(payload));
                pendingAdds.put(id, payload);
            } else if (dice < 6) {
                String payload = "update " + step;
                record = JournalRecord.update(id, (byte) 2, bytes(payload));
                pendingUpdates.put(id, payload);
            } else {
                record = JournalRecord.delete(id);
                pendingAdds.remove(id);
                pendingUpdates.remove(id);
            }
            journal.append(record);
            if (random.nextInt(10) == 0) {
                journal.sync();
                adds = new HashMap<>(pendingAdds);
                updates = new HashMap<>(pendingUpdates);
                checkAll(idSpace, adds, updates);
            }
            if (step % 1000 == 999) {
                journal.sync();
                adds = new HashMap<>(pendingAdds);
                updates = new HashMap<>(pendingUpdates);
                compactFully(journal);
                checkAll(idSpace, adds, updates);
                reopen();
                checkAll(idSpace, adds, updates);
            }
        }
    }

    private void checkAll(int idSpace, Map<Long, String> adds, Map<Long, String> updates) {
        for (long id = 0; id < idSpace; id++) {
            assertThat(readAdd(id)).as("ADD of %d", id).isEqualTo(adds.get(id));
            JournalRecord update = journal.read(id, RecordKind.UPDATE);
            assertThat(update == null ? null : text(update.payload())).as("UPDATE of %d", id)
                    .isEqualTo(updates.get(id));
        }
    }
}
