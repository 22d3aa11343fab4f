package io.buslane.engine.partition;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * Confined to its shard thread. Which session states of one shard are held in the heap (issue #23: a million idle
 * sessions with state must not need a million states in memory). A state is resident while its
 * {@link SessionEntry#state} is set and evicted when it is null (its {@link SessionEntry#stateLength} says it
 * exists); an evicted state is read back from its journal record on the next read. After each successful sync,
 * while the resident bytes exceed the budget, the least recently used states are evicted (their records are
 * durable by then); states written in a cycle whose sync failed stay until a later sync succeeds.
 */
public final class ResidentSessionStates {

    /** Bytes of session state a shard keeps in the heap unless configured otherwise (the engine's config). */
    public static final long DEFAULT_BUDGET_BYTES = 64L * 1024 * 1024;

    /** A store that never evicts (dormant shards, tests with their own context). */
    public static ResidentSessionStates unlimited() {
        return new ResidentSessionStates(Long.MAX_VALUE, id -> {
            throw new IllegalStateException("no state is ever evicted here");
        });
    }

    private final long budgetBytes;
    private final LongFunction<byte[]> reader;
    private final LinkedHashMap<SessionEntry, Boolean> lru = new LinkedHashMap<>(16, 0.75f, true);
    /** States written in the current cycle: evictable only once its sync succeeded. */
    private final ArrayList<SessionEntry> cycle = new ArrayList<>();
    /** States of a cycle whose sync failed: their records may not be on disk, so they are never evicted. */
    private final HashSet<SessionEntry> pinned = new HashSet<>();
    private long residentBytes;
    private long reads;

    /**
     * @param reader reads a state back by its record id
     */
    public ResidentSessionStates(long budgetBytes, LongFunction<byte[]> reader) {
        this.budgetBytes = budgetBytes;
        this.reader = reader;
    }

    /** A state just written: resident, most recently used, evictable once this cycle's sync succeeded. */
    void admit(SessionEntry s) {
        put(s);
        cycle.add(s);
    }

    private void put(SessionEntry s) {
        if (lru.put(s, Boolean.TRUE) == null) {
            residentBytes += s.state.length;
        }
    }

    /**
     * A state replayed from its record (durable already): not kept in the heap but read back from its record when
     * first needed, like an evicted one. Keeping the newest within the budget made every state of the shard pass
     * through the heap and the LRU on the way: a restart with a million 1 KiB states took 7.5 s to ready instead of
     * 4.5 s, most of it in the garbage collector (bench workload 10, docs/benchmarks.md). A store that never evicts
     * (it cannot read back) keeps it.
     */
    void admitDurable(SessionEntry s) {
        if (budgetBytes == Long.MAX_VALUE) {
            put(s);
        } else {
            s.state = null;
        }
    }

    /** The state is gone (cleared, replaced, or its session dropped). */
    void forget(SessionEntry s) {
        if (lru.remove(s) != null || pinned.remove(s)) {
            residentBytes -= s.stateLength;
        }
    }

    /** The session's state bytes, read back from the journal if they were evicted. */
    byte[] get(SessionEntry s) {
        if (s.state != null) {
            lru.get(s);
            return s.state;
        }
        byte[] state = reader.apply(s.stateRecordId);
        reads++;
        s.state = state;
        put(s); // read from a durable record: evictable again at once
        return state;
    }

    /**
     * After a sync: when it succeeded, evicts the least recently used states beyond the budget; when it failed, the
     * states written in the cycle are pinned in the heap (their records may be missing).
     */
    public void afterSync(boolean durable) {
        if (!durable) {
            for (SessionEntry s : cycle) {
                if (lru.remove(s) != null) {
                    pinned.add(s);
                }
            }
        }
        cycle.clear();
        if (durable) {
            evictBeyondBudget();
        }
    }

    private void evictBeyondBudget() {
        if (residentBytes <= budgetBytes) {
            return;
        }
        Iterator<Map.Entry<SessionEntry, Boolean>> it = lru.entrySet().iterator();
        while (residentBytes > budgetBytes && it.hasNext()) {
            SessionEntry s = it.next().getKey();
            it.remove();
            residentBytes -= s.stateLength;
            s.state = null;
        }
    }

    /** Bytes of session state held in the heap. */
    public long residentBytes() {
        return residentBytes;
    }

    /** States read back from the journal so far. */
    public long reads() {
        return reads;
    }
}
