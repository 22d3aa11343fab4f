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

    @Test
    void theHashIsXxh3Of128BitsOverUtf16LeWithTheTagBitCleared() {
        // vectors from the reference implementation: printf '%s' KEY | iconv -t utf-16le | xxhsum -H2 (xxHash 0.8.1)
        assertThat(DedupWindow.hash("")).containsExactly(0x99aa06d3014798d8L, 0x6001c324468d497eL);
        assertThat(DedupWindow.hash("a")).containsExactly(0xfe6c33c14011b578L, 0x0d78baac08237ddaL);
        assertThat(DedupWindow.hash("orders-1")).containsExactly(0x6314b3fa75f2e12bL, 0x884486965677d50cL);
        assertThat(DedupWindow.hash("3f2504e0-4f89-11d3-9a0c-0305e82c3301"))
                .containsExactly(0x488e2e114374815cL, 0xdbfb997199a4077cL);
        assertThat(DedupWindow.isLegacy(DedupWindow.hash("orders-1")[1])).isFalse();
    }

    @Test
    void theLegacyHashIsTheFirstFormatsHashTagged() {
        // the value the first format stored for "order-1" (FNV-1a / multiplicative, each mixed), low bit set as tag
        assertThat(DedupWindow.legacyHash("order-1")).containsExactly(0x3b735b5d77ab555dL, 0x86b6494560ae396bL);
        assertThat(DedupWindow.isLegacy(DedupWindow.legacyHash("order-2")[1])).isTrue();
    }

    @Test
    void aKeyRestoredUnderTheLegacyHashIsStillADuplicateUntilItExpires() {
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, WINDOW_MS, 4 * 1024);
        long[] old = DedupWindow.legacyHash("order-1");
        w.restore(old[0], old[1], 100);
        w.sortAfterReplay();
        w.expire(500);
        assertThat(w.containsKey("order-1")).isTrue();
        assertThat(w.addKey("order-1", 500)).isFalse();
        assertThat(w.addKey("order-2", 500)).isTrue();
        assertThat(w.addKey("order-2", 600)).isFalse();
        w.expire(1_100);
        assertThat(w.addKey("order-1", 1_100)).isTrue();
    }
}
