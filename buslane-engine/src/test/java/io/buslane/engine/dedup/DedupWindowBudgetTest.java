package io.buslane.engine.dedup;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** The duplicate-detection window within a heap budget: keys beyond it move to sorted runs (issue #6). */
public class DedupWindowBudgetTest {

    /**
     * Drives a window as the journal does (a block per checkpoint, expired blocks deleted, spills replacing blocks)
     * and keeps the "journal": the live block records and their keys.
     */
    public static final class Driver {
        public final DedupWindow window;
        public final DedupRunStore store;
        public final Map<Long, long[]> journal = new HashMap<>();
        private long nextId = 1;

        public Driver(DedupWindow window, DedupRunStore store) {
            this.window = window;
            this.store = store;
        }

        public void checkpoint(long nowMs) {
            window.expire(nowMs);
            window.expiredBlocks(nowMs, id -> assertThat(journal.remove(id)).isNotNull());
            if (window.pendingCount() > 0) {
                List<Long> keys = new ArrayList<>();
                long newest = window.drainPending((h, l, t) -> {
                    keys.add(h);
                    keys.add(l);
                    keys.add(t);
                });
                long id = nextId++;
                journal.put(id, keys.stream().mapToLong(Long::longValue).toArray());
                window.blockWritten(id, newest);
            }
            if (window.needsSpill()) {
                window.spill(store, (replaced, hi, lo, time, n) -> {
                    long id = -1;
                    if (n > 0) {
                        long[] keys = new long[n * 3];
                        for (int i = 0; i < n; i++) {
                            keys[i * 3] = hi[i];
                            keys[i * 3 + 1] = lo[i];
                            keys[i * 3 + 2] = time[i];
                        }
                        id = nextId++;
                        journal.put(id, keys);
                    }
                    for (long r : replaced) {
                        assertThat(journal.remove(r)).as("replaced block %d", r).isNotNull();
                    }
                    return id;
                });
            }
            window.maintain(store, false);
        }

        /** A new window restored from the journal, as a replay does (spilling as the budget requires). */
        public DedupWindow replay(long windowMs, long budget) {
            DedupWindow w = new DedupWindow(window.kind(), windowMs, budget);
            journal.keySet().stream().sorted().forEach(id -> {
                long[] keys = journal.get(id);
                long newest = Long.MIN_VALUE;
                for (int i = 0; i + 2 < keys.length; i += 3) {
                    w.restore(keys[i], keys[i + 1], keys[i + 2]);
                    newest = Math.max(newest, keys[i + 2]);
                }
                w.blockWritten(id, newest);
                if (w.needsSpill()) {
                    w.spill(store, null);
                }
                w.maintain(store, true);
            });
            w.sortAfterReplay();
            return w;
        }
    }

    private static long[] key(int i) {
        return DedupWindow.hash("message-" + i);
    }

    @Test
    void lookupsStayExactWithinABudgetFarBelowTheWindow() {
        long budget = 4 * 1024; // 128 ring slots
        long windowMs = 20_000;
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, windowMs, budget);
        assertThat(w.maxCapacity()).isEqualTo(128);
        Driver d = new Driver(w, DedupRunStore.inHeap());
        int total = 60_000; // one key per ms, a checkpoint every 10 keys
        int maxRuns = 0;
        for (int i = 0; i < total; i++) {
            long[] k = key(i);
            w.expire(i); // as a send does
            assertThat(w.add(k[0], k[1], i)).isTrue();
            assertThat(w.add(k[0], k[1], i)).isFalse();
            if (i % 10 == 9) {
                d.checkpoint(i);
                assertThat(w.heapBytes()).isLessThanOrEqualTo(budget);
                assertThat(w.runCount()).isLessThanOrEqualTo(DedupWindow.MAX_RUNS);
                maxRuns = Math.max(maxRuns, w.runCount());
            }
            if (i % 997 == 0) {
                // an old id still within the window is a duplicate; one just outside it is not
                long[] old = key(Math.max(0, i - (int) windowMs + 1));
                assertThat(w.contains(old[0], old[1])).isTrue();
                if (i >= windowMs) {
                    long[] gone = key(i - (int) windowMs);
                    assertThat(w.contains(gone[0], gone[1])).isFalse();
                }
            }
        }
        assertThat(maxRuns).isGreaterThan(1);
        long now = total - 1;
        w.expire(now);
        for (int i = 0; i < total; i++) {
            long[] k = key(i);
            assertThat(w.contains(k[0], k[1])).as("key %d", i).isEqualTo(i > now - windowMs);
        }
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 10_000; i++) {
            long[] k = DedupWindow.hash("fresh-" + random.nextLong());
            assertThat(w.contains(k[0], k[1])).isFalse();
        }
        // runs hold little more than the window; block records stay few (one per spill, not per checkpoint)
        assertThat(w.runKeys()).isLessThanOrEqualTo(3 * windowMs);
        assertThat(d.journal.size()).isLessThan((int) windowMs / 10 / 2);
        assertThat(w.blockCount()).isEqualTo(d.journal.size());
        // the journal's blocks hold exactly the live keys
        long live = d.journal.values().stream().mapToLong(k -> {
            long n = 0;
            for (int i = 2; i < k.length; i += 3) {
                n += k[i] > now - windowMs ? 1 : 0;
            }
            return n;
        }).sum();
        assertThat(live).isEqualTo(windowMs);
    }

    @Test
    void expiredIdsAreForgottenAndRunsDeleted() {
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, 1_000, 4 * 1024);
        Driver d = new Driver(w, DedupRunStore.inHeap());
        for (int i = 0; i < 5_000; i++) {
            long[] k = key(i);
            w.add(k[0], k[1], 0);
            if (i % 10 == 9) {
                d.checkpoint(0);
            }
        }
        assertThat(w.runCount()).isPositive();
        d.checkpoint(999);
        long[] k0 = key(0);
        assertThat(w.contains(k0[0], k0[1])).isTrue();
        d.checkpoint(1_000);
        assertThat(w.contains(k0[0], k0[1])).isFalse();
        assertThat(w.runCount()).isZero();
        assertThat(w.size()).isZero();
        assertThat(d.journal).isEmpty();
        assertThat(w.add(k0[0], k0[1], 1_000)).isTrue();
    }

    @Test
    void aReplayRebuildsTheSpilledWindowFromTheBlocksWithinTheBudget() {
        long budget = 4 * 1024;
        long windowMs = 5_000;
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, windowMs, budget);
        Driver d = new Driver(w, DedupRunStore.inHeap());
        int total = 12_000;
        for (int i = 0; i < total; i++) {
            long[] k = key(i);
            w.add(k[0], k[1], i);
            if (i % 10 == 9) {
                d.checkpoint(i);
            }
        }
        DedupWindow restored = d.replay(windowMs, budget);
        assertThat(restored.heapBytes()).isLessThanOrEqualTo(budget);
        assertThat(restored.runCount()).isLessThanOrEqualTo(DedupWindow.MAX_RUNS);
        long now = total - 1;
        restored.expire(now);
        for (int i = 0; i < total; i++) {
            long[] k = key(i);
            assertThat(restored.contains(k[0], k[1])).as("key %d", i).isEqualTo(i > now - windowMs);
        }
    }

    @Test
    void aReplacementBlockReplayedWithTheBlocksItReplacedRestoresTheSameKeys() {
        // a crash between the replacement's ADD and the deletions: both are replayed
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, 1_000, 4 * 1024);
        long[] a = key(1);
        w.restore(a[0], a[1], 10);
        w.blockWritten(1, 10);
        w.restore(a[0], a[1], 10);
        w.blockWritten(2, 10);
        w.expire(500);
        assertThat(w.contains(a[0], a[1])).isTrue();
        w.expire(1_010);
        assertThat(w.contains(a[0], a[1])).isFalse();
    }

    @Test
    void aKeyReAddedAfterExpiryWinsOverItsStaleCopyInAReplay() {
        // blocks replayed out of time order (compaction) hold an expired copy and a live one of the same key
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, 1_000, 4 * 1024);
        long[] a = key(1);
        w.restore(a[0], a[1], 1_500);
        w.blockWritten(2, 1_500);
        w.restore(a[0], a[1], 100);
        w.blockWritten(1, 100);
        w.expire(2_000);
        assertThat(w.contains(a[0], a[1])).isTrue();
        w.expire(2_500);
        assertThat(w.contains(a[0], a[1])).isFalse();
    }

    @Test
    void theCostPerIdIs32BytesOfHeapInTheRingAnd24InARun() {
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, Long.MAX_VALUE / 2, 1 << 20);
        Driver d = new Driver(w, DedupRunStore.inHeap());
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            long[] k = key(i);
            w.add(k[0], k[1], i);
            if (i % 100 == 99) {
                d.checkpoint(i);
            }
        }
        assertThat(w.heapBytes()).isEqualTo((long) w.maxCapacity() * DedupWindow.BYTES_PER_SLOT);
        assertThat(w.heapBytes()).isLessThanOrEqualTo(1 << 20);
        assertThat(w.size() + w.runKeys()).isEqualTo(n);
        assertThat(w.runBytes()).isEqualTo(24 * w.runKeys());
    }

    @Test
    void aFailingRunStoreLosesNoKey() {
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, 100_000, 4 * 1024);
        boolean[] failing = {true};
        DedupRunStore heap = DedupRunStore.inHeap();
        DedupRunStore flaky = () -> {
            DedupRunStore.Writer inner = heap.create();
            return new DedupRunStore.Writer() {
                @Override
                public void add(long hi, long lo, long timeMs) {
                    inner.add(hi, lo, timeMs);
                }

                @Override
                public DedupRunStore.Run finish() {
                    if (failing[0]) {
                        throw new java.io.UncheckedIOException(new java.io.IOException("disk full"));
                    }
                    return inner.finish();
                }
            };
        };
        Driver d = new Driver(w, flaky);
        for (int i = 0; i < 100; i++) {
            long[] k = key(i);
            w.add(k[0], k[1], i);
        }
        int blocks = 0;
        try {
            d.checkpoint(100);
        } catch (java.io.UncheckedIOException expected) {
            blocks = w.blockCount();
        }
        assertThat(blocks).isEqualTo(1);
        assertThat(w.runCount()).isZero();
        assertThat(d.journal).hasSize(1);
        for (int i = 0; i < 100; i++) {
            long[] k = key(i);
            assertThat(w.contains(k[0], k[1])).isTrue();
        }
        failing[0] = false;
        d.checkpoint(101);
        assertThat(w.runCount()).isEqualTo(1);
        assertThat(w.size()).isLessThanOrEqualTo(w.maxCapacity() / 4);
        for (int i = 0; i < 100; i++) {
            long[] k = key(i);
            assertThat(w.contains(k[0], k[1])).isTrue();
        }
        assertThat(d.replay(100_000, 4 * 1024).runCount()).isEqualTo(1);
    }

    @Test
    void restoredTransferKeysInRunsAreRememberedForAWindowFromTheRestart() {
        DedupWindow w = new DedupWindow(DedupWindow.TRANSFERS, 1_000, 4 * 1024);
        DedupRunStore store = DedupRunStore.inHeap();
        for (int b = 0; b < 10; b++) {
            for (int i = b * 20; i < b * 20 + 20; i++) {
                long[] k = key(i);
                w.restore(k[0], k[1], 0);
            }
            w.blockWritten(b + 1, 0);
            if (w.needsSpill()) {
                w.spill(store, null);
            }
            w.maintain(store, true);
        }
        assertThat(w.runCount()).isPositive();
        w.expire(5_000); // the first expiry after the replay: restored times are raised to it
        List<Long> deleted = new ArrayList<>();
        w.expiredBlocks(5_000, deleted::add);
        assertThat(deleted).isEmpty();
        for (int i = 0; i < 200; i++) {
            long[] k = key(i);
            assertThat(w.contains(k[0], k[1])).as("key %d", i).isTrue();
        }
        w.expire(6_000);
        w.expiredBlocks(6_000, deleted::add);
        assertThat(deleted).hasSize(10);
        for (int i = 0; i < 200; i++) {
            long[] k = key(i);
            assertThat(w.contains(k[0], k[1])).isFalse();
        }
        assertThat(w.runCount()).isZero();
    }
}
