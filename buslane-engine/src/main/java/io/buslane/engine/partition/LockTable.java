package io.buslane.engine.partition;

import java.util.UUID;
import java.util.function.Consumer;

/**
 * Confined to its shard thread. The locked entries of one sub-queue by lock token: an open-addressing table of the
 * entries themselves (each carries its {@link Entry#lockToken}), linear probing, backward-shift deletion. A lock is
 * taken, looked up and dropped for every peek-lock delivery, so this replaces a {@code HashMap<UUID, Entry>} and its
 * node per lock (32 bytes, and a pointer chase per lookup).
 *
 * <p>Lock tokens are random (version 4 layout) apart from a few fixed bits, so the slot comes from the token's most
 * significant half, mixed. The table grows at half full and shrinks when an eighth full, so a burst of locks does
 * not keep its memory.
 */
final class LockTable {

    private static final int MIN_CAPACITY = 16;

    private Entry[] slots = new Entry[MIN_CAPACITY];
    private int size;

    int size() {
        return size;
    }

    /** Adds an entry under its (new, unique) lock token. */
    void put(Entry e) {
        UUID token = e.lockToken;
        if (token == null) {
            throw new IllegalArgumentException("entry has no lock token");
        }
        if ((size + 1) * 2 > slots.length) {
            resize(slots.length * 2);
        }
        int mask = slots.length - 1;
        int i = slot(token, mask);
        Entry at;
        while ((at = slots[i]) != null) {
            if (at == e || at.lockToken.equals(token)) {
                slots[i] = e;
                return;
            }
            i = (i + 1) & mask;
        }
        slots[i] = e;
        size++;
    }

    /** The entry locked under {@code token}, or null. */
    Entry get(UUID token) {
        int mask = slots.length - 1;
        int i = slot(token, mask);
        Entry at;
        while ((at = slots[i]) != null) {
            if (at.lockToken.equals(token)) {
                return at;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    boolean containsKey(UUID token) {
        return get(token) != null;
    }

    /** Removes the entry locked under {@code token}; returns it, or null if there was none. */
    Entry remove(UUID token) {
        Entry[] t = slots;
        int mask = t.length - 1;
        int i = slot(token, mask);
        Entry at;
        while ((at = t[i]) != null) {
            if (at.lockToken.equals(token)) {
                shiftBack(i);
                size--;
                if (size * 8 < t.length && t.length > MIN_CAPACITY) {
                    resize(t.length / 2);
                }
                return at;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    /** Calls {@code action} for every entry; the table must not change meanwhile. */
    void forEach(Consumer<Entry> action) {
        for (Entry e : slots) {
            if (e != null) {
                action.accept(e);
            }
        }
    }

    /**
     * Empties slot {@code hole} and moves later entries of its probe run back so that every lookup still finds them.
     */
    private void shiftBack(int hole) {
        Entry[] t = slots;
        int mask = t.length - 1;
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            Entry at = t[i];
            if (at == null) {
                break;
            }
            int home = slot(at.lockToken, mask);
            // move `at` into the hole unless its home lies cyclically in (hole, i]
            boolean homeBetween = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
            if (!homeBetween) {
                t[hole] = at;
                hole = i;
            }
        }
        t[hole] = null;
    }

    private void resize(int capacity) {
        Entry[] old = slots;
        Entry[] t = new Entry[Math.max(MIN_CAPACITY, capacity)];
        int mask = t.length - 1;
        for (Entry e : old) {
            if (e != null) {
                int i = slot(e.lockToken, mask);
                while (t[i] != null) {
                    i = (i + 1) & mask;
                }
                t[i] = e;
            }
        }
        slots = t;
    }

    private static int slot(UUID token, int mask) {
        long h = token.getMostSignificantBits() * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 32) & mask;
    }
}
