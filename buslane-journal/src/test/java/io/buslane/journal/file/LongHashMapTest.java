package io.buslane.journal.file;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** The primitive map behaves as a {@code HashMap<Long, V>} under random churn, growth and shrinking. */
class LongHashMapTest {

    @Test
    void randomOperationsMatchAHashMap() {
        SplittableRandom random = new SplittableRandom(5);
        LongHashMap<String> map = new LongHashMap<>();
        Map<Long, String> expected = new HashMap<>();
        for (int round = 0; round < 6; round++) {
            // a growing phase over a wide key space, then a draining one: exercises growth and shrinking
            int space = round % 2 == 0 ? 5000 : 64;
            for (int step = 0; step < 40_000; step++) {
                long key = random.nextInt(3) == 0 ? random.nextLong() : random.nextInt(space) - space / 2;
                int op = random.nextInt(10);
                if (op < (round < 4 ? 6 : 2)) {
                    String value = "v" + step;
                    assertThat(map.put(key, value)).isEqualTo(expected.put(key, value));
                } else if (op < 8) {
                    assertThat(map.remove(key)).isEqualTo(expected.remove(key));
                } else {
                    assertThat(map.get(key)).isEqualTo(expected.get(key));
                }
                assertThat(map.size()).isEqualTo(expected.size());
            }
            for (Map.Entry<Long, String> e : expected.entrySet()) {
                assertThat(map.get(e.getKey())).isEqualTo(e.getValue());
            }
            assertThat(map.keysForTest()).hasSize(expected.size());
        }
        for (Long key : expected.keySet().toArray(new Long[0])) {
            assertThat(map.remove(key)).isEqualTo(expected.remove(key));
        }
        assertThat(map.size()).isZero();
        assertThat(map.capacity()).isEqualTo(LongHashMap.MIN_CAPACITY);
    }

    /** Consecutive keys (record ids are handed out in order) take adjacent slots, sixteen at a time. */
    @Test
    void consecutiveKeysTakeAdjacentHomeSlots() {
        LongHashMap<String> map = new LongHashMap<>();
        for (long key = 0; key < 100_000; key++) {
            map.put(key, "v");
        }
        int mask = map.capacity() - 1;
        for (long run = 1_024; run < 1_088; run += 16) {
            int first = map.slotForTest(run);
            for (int i = 1; i < 16; i++) {
                assertThat(map.slotForTest(run + i)).isEqualTo((first + i) & mask);
            }
        }
        // and runs are scattered: 64 runs land on many distinct places
        java.util.Set<Integer> places = new java.util.HashSet<>();
        for (long run = 0; run < 64 * 16; run += 16) {
            places.add(map.slotForTest(run) / 16);
        }
        assertThat(places.size()).isGreaterThan(50);
    }

    @Test
    void computeIfAbsentCreatesOnce() {
        LongHashMap<StringBuilder> map = new LongHashMap<>();
        for (long key = -100; key < 1000; key++) {
            map.computeIfAbsent(key, k -> new StringBuilder()).append('a');
            map.computeIfAbsent(key, k -> new StringBuilder()).append('b');
        }
        assertThat(map.size()).isEqualTo(1100);
        for (long key = -100; key < 1000; key++) {
            assertThat(map.get(key).toString()).isEqualTo("ab");
        }
        assertThat(map.get(0)).isNotNull();
        assertThat(map.get(5000)).isNull();
    }

    @Test
    void sequentialKeysRemovedInOrderKeepLookupsCorrect() {
        LongHashMap<Long> map = new LongHashMap<>();
        for (long key = 16; key < 100_016; key++) {
            map.put(key, key);
        }
        for (long key = 16; key < 100_016; key++) {
            assertThat(map.remove(key)).isEqualTo(key);
            if (key % 9973 == 0) {
                for (long k = key + 1; k < 100_016; k += 997) {
                    assertThat(map.get(k)).isEqualTo(k);
                }
            }
        }
        assertThat(map.size()).isZero();
    }
}
