package io.buslane.engine.dedup;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The duplicate-detection window driven directly with explicit times: no engine, no clock. */
class DedupWindowTest {

    private static final long WINDOW_MS = 1_000;

    @Test
    void aKeyIsADuplicateUntilItsTimePlusTheWindowHasPassed() {
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, WINDOW_MS, 4 * 1024);
        long[] k = DedupWindow.hash("order-1");

        assertThat(w.add(k[0], k[1], 0)).isTrue();
        assertThat(w.add(k[0], k[1], 10)).isFalse();
        w.expire(999);
        assertThat(w.contains(k[0], k[1])).isTrue();
        w.expire(1_000);
        assertThat(w.contains(k[0], k[1])).isFalse();
        assertThat(w.add(k[0], k[1], 1_000)).isTrue();
    }

    @Test
    void restoredKeysExpireByTheirOwnTimesWhateverTheirOrder() {
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, WINDOW_MS, 4 * 1024);
        long[] newer = DedupWindow.hash("newer");
        long[] older = DedupWindow.hash("older");
        w.restore(newer[0], newer[1], 800);
        w.restore(older[0], older[1], 100);
        w.sortAfterReplay();

        w.expire(1_100);
        assertThat(w.contains(older[0], older[1])).isFalse();
        assertThat(w.contains(newer[0], newer[1])).isTrue();
        w.expire(1_800);
        assertThat(w.contains(newer[0], newer[1])).isFalse();
    }

    @Test
    void theHeapBudgetBoundsTheRingAndAsksForASpill() {
        long budget = 4 * 1024;
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, WINDOW_MS, budget);
        assertThat(w.maxCapacity()).isEqualTo((int) (budget / DedupWindow.BYTES_PER_SLOT));
        for (int i = 0; i < w.maxCapacity(); i++) {
            long[] k = DedupWindow.hash("key-" + i);
            w.add(k[0], k[1], i);
        }
        assertThat(w.needsSpill()).isTrue();
        assertThat(w.runCount()).isZero();
    }

    @Test
    void theWindowCanBeShortenedAndKeysFollowTheNewLength() {
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, 10 * WINDOW_MS, 4 * 1024);
        long[] k = DedupWindow.hash("order-2");
        w.add(k[0], k[1], 0);
        w.setWindowMs(WINDOW_MS);
        w.expire(WINDOW_MS);
        assertThat(w.contains(k[0], k[1])).isFalse();
    }
}
