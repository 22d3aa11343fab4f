package io.buslane.engine.partition;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

class SeqIndexTest {

    @Test
    void appendsLookupsAndRemovalsInOrder() {
        SeqIndex<String> index = new SeqIndex<>();
        for (long s = 1; s <= 100; s++) {
            index.put(s, "m" + s);
        }
        assertThat(index.size()).isEqualTo(100);
        assertThat(index.get(42)).isEqualTo("m42");
        assertThat(index.get(0)).isNull();
        assertThat(index.get(101)).isNull();
        assertThat(index.remove(42)).isEqualTo("m42");
        assertThat(index.remove(42)).isNull();
        assertThat(index.get(42)).isNull();
        assertThat(index.from(41)).containsExactly(values(41, 41, 43, 100).toArray(new String[0]));
        assertThat(index.from(101)).isEmpty();
        for (long s = 1; s <= 100; s++) {
            index.remove(s);
        }
        assertThat(index.isEmpty()).isTrue();
        assertThat(index).isEmpty();
        index.put(7, "again");
        assertThat(index).containsExactly("again");
    }

    @Test
    void aNumberBelowOrBetweenTheOthersIsInsertedInOrder() {
        SeqIndex<String> index = new SeqIndex<>();
        index.put(10, "a");
        index.put(30, "c");
        index.put(20, "b"); // between
        index.put(5, "z"); // below the first
        index.put(30, "c2"); // replaces
        assertThat(index).containsExactly("z", "a", "b", "c2");
        index.remove(20);
        index.put(25, "b2"); // into the hole's neighbourhood
        index.put(20, "b1");
        assertThat(index).containsExactly("z", "a", "b1", "b2", "c2");
        assertThat(index.snapshot()).containsExactly("z", "a", "b1", "b2", "c2");
        assertThat(index.size()).isEqualTo(5);
    }

    /** Random puts (mostly ascending, some out of order), removals (mostly near the head) and range scans. */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void behavesLikeATreeMap(long seed) {
        Random rnd = new Random(seed);
        SeqIndex<Long> index = new SeqIndex<>();
        TreeMap<Long, Long> model = new TreeMap<>();
        long next = 1;
        for (int step = 0; step < 60_000; step++) {
            int op = rnd.nextInt(100);
            if (op < 45) {
                long seq = rnd.nextInt(20) == 0 && next > 1 ? 1 + (long) rnd.nextInt((int) next) : next++;
                long value = rnd.nextLong();
                index.put(seq, value);
                model.put(seq, value);
            } else if (op < 85 && !model.isEmpty()) {
                long seq = rnd.nextInt(4) == 0 ? model.firstKey()
                        : model.firstKey() + rnd.nextInt((int) Math.max(1, model.lastKey() - model.firstKey() + 1));
                assertThat(index.remove(seq)).isEqualTo(model.remove(seq));
            } else if (op < 95) {
                long seq = rnd.nextInt((int) next + 2);
                assertThat(index.get(seq)).isEqualTo(model.get(seq));
            } else {
                long from = rnd.nextInt((int) next + 2);
                List<Long> got = new ArrayList<>();
                for (Long v : index.from(from)) {
                    got.add(v);
                    if (got.size() == 50) {
                        break;
                    }
                }
                List<Long> want = new ArrayList<>(model.tailMap(from, true).values());
                assertThat(got).isEqualTo(want.subList(0, Math.min(50, want.size())));
            }
            assertThat(index.size()).isEqualTo(model.size());
        }
        assertThat(index.snapshot()).isEqualTo(new ArrayList<>(model.values()));
    }

    private static List<String> values(long... ranges) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < ranges.length; i += 2) {
            for (long s = ranges[i]; s <= ranges[i + 1]; s++) {
                out.add("m" + s);
            }
        }
        return out;
    }
}
