package io.buslane.engine.partition;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link LockTable} against a {@code HashMap} model: random locks, lookups and removals, growth and shrinking. */
class LockTableTest {

    private static Entry locked(UUID token) {
        Entry e = new Entry(1, 1, 0, Long.MAX_VALUE, null, 0);
        e.lockToken = token;
        return e;
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void behavesLikeAMapFromTokenToEntry(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        // few distinct most significant halves: many tokens share a home slot, so probe runs and the backward shift
        // at removal are exercised, not only the common case
        long[] msbs = new long[seed % 2 == 0 ? 7 : 100_000];
        for (int i = 0; i < msbs.length; i++) {
            msbs[i] = random.nextLong();
        }
        LockTable table = new LockTable();
        Map<UUID, Entry> model = new HashMap<>();
        List<UUID> tokens = new ArrayList<>();
        for (int step = 0; step < 60_000; step++) {
            int op = random.nextInt(10);
            if (op < 5 || tokens.isEmpty()) {
                UUID token = new UUID(msbs[random.nextInt(msbs.length)], random.nextLong());
                Entry e = locked(token);
                table.put(e);
                model.put(token, e);
                tokens.add(token);
            } else if (op < 8) {
                UUID token = tokens.remove(random.nextInt(tokens.size()));
                assertThat(table.remove(token)).isSameAs(model.remove(token));
            } else {
                UUID token = random.nextBoolean() ? tokens.get(random.nextInt(tokens.size()))
                        : new UUID(msbs[random.nextInt(msbs.length)], random.nextLong());
                assertThat(table.get(token)).isSameAs(model.get(token));
                assertThat(table.containsKey(token)).isEqualTo(model.containsKey(token));
            }
            assertThat(table.size()).isEqualTo(model.size());
            if (step % 5_000 == 0 || tokens.size() < 3) {
                for (UUID t : tokens) {
                    assertThat(table.get(t)).isSameAs(model.get(t));
                }
            }
        }
        // drain completely: every removal finds its entry, the table ends empty
        for (UUID t : tokens) {
            assertThat(table.remove(t)).isSameAs(model.remove(t));
        }
        assertThat(table.size()).isZero();
        Set<Entry> left = new HashSet<>();
        table.forEach(left::add);
        assertThat(left).isEmpty();
    }

    @Test
    void forEachVisitsEveryLockedEntryOnce() {
        LockTable table = new LockTable();
        Set<Entry> expected = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            Entry e = locked(UUID.randomUUID());
            table.put(e);
            expected.add(e);
        }
        List<Entry> seen = new ArrayList<>();
        table.forEach(seen::add);
        assertThat(seen).hasSize(1000).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(table.remove(UUID.randomUUID())).isNull();
    }
}
