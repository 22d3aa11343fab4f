package io.buslane.journal.file;

import java.util.Arrays;
import java.util.function.LongFunction;

/**
 * Not thread-safe. A map from primitive {@code long} keys to non-null values, with open addressing and linear
 * probing: two parallel arrays and no object per entry, so an entry costs 12 bytes per slot (a {@code long} key and a
 * compressed reference) instead of the ~48 bytes of a {@code HashMap<Long, V>} node and its boxed key.
 *
 * <p>A slot is empty when its value is null, so every key (including 0 and negative ones) can be stored. Removal
 * shifts the following entries of the probe run back (no tombstones), so lookups never slow down with churn. The
 * table doubles above 3/4 full and halves below 1/8 full (never below {@link #MIN_CAPACITY} slots), so a map that
 * held a large backlog gives the memory back once it drains.
 *
 * @param <V> the value type
 */
final class LongHashMap<V> {

    static final int MIN_CAPACITY = 16;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private long[] keys;
    private Object[] values;
    private int size;
    /** log2 of the capacity: the hash takes this many high bits of the mixed key. */
    private int bits;

    LongHashMap() {
        allocate(MIN_CAPACITY);
    }

    int size() {
        return size;
    }

    /** Slots in the table (for tests and memory estimates). */
    int capacity() {
        return keys.length;
    }

    @SuppressWarnings("unchecked")
    V get(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key); ; i = (i + 1) & mask) {
            Object v = values[i];
            if (v == null) {
                return null;
            }
            if (keys[i] == key) {
                return (V) v;
            }
        }
    }

    /** The value of {@code key}, created by {@code factory} (which must not return null) when absent. */
    @SuppressWarnings("unchecked")
    V computeIfAbsent(long key, LongFunction<V> factory) {
        int mask = keys.length - 1;
        int i = slot(key);
        for (; ; i = (i + 1) & mask) {
            Object v = values[i];
            if (v == null) {
                break;
            }
            if (keys[i] == key) {
                return (V) v;
            }
        }
        V created = factory.apply(key);
        if (created == null) {
            throw new NullPointerException("factory returned null for key " + key);
        }
        keys[i] = key;
        values[i] = created;
        if (++size > (keys.length >>> 2) * 3) {
            rehash(keys.length << 1);
        }
        return created;
    }

    /** Stores {@code value} (non-null) under {@code key}; returns the previous value or null. */
    @SuppressWarnings("unchecked")
    V put(long key, V value) {
        if (value == null) {
            throw new NullPointerException("value");
        }
        int mask = keys.length - 1;
        int i = slot(key);
        for (; ; i = (i + 1) & mask) {
            Object v = values[i];
            if (v == null) {
                break;
            }
            if (keys[i] == key) {
                values[i] = value;
                return (V) v;
            }
        }
        keys[i] = key;
        values[i] = value;
        if (++size > (keys.length >>> 2) * 3) {
            rehash(keys.length << 1);
        }
        return null;
    }

    /** Removes {@code key}; returns its value, or null if it was absent. */
    @SuppressWarnings("unchecked")
    V remove(long key) {
        int mask = keys.length - 1;
        int i = slot(key);
        for (; ; i = (i + 1) & mask) {
            Object v = values[i];
            if (v == null) {
                return null;
            }
            if (keys[i] == key) {
                shiftBack(i);
                size--;
                if (keys.length > MIN_CAPACITY && size < keys.length >>> 3) {
                    rehash(keys.length >>> 1);
                }
                return (V) v;
            }
        }
    }

    /** Empties slot {@code hole} and moves later entries of its probe run into it where their home allows. */
    private void shiftBack(int hole) {
        int mask = keys.length - 1;
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            Object v = values[i];
            if (v == null) {
                break;
            }
            int home = slot(keys[i]);
            // the entry at i may move to the hole unless its home lies cyclically in (hole, i]
            boolean homeInRange = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
            if (!homeInRange) {
                keys[hole] = keys[i];
                values[hole] = v;
                hole = i;
            }
        }
        keys[hole] = 0;
        values[hole] = null;
    }

    private int slot(long key) {
        return (int) ((key * GOLDEN) >>> (64 - bits));
    }

    private void allocate(int capacity) {
        keys = new long[capacity];
        values = new Object[capacity];
        bits = Integer.numberOfTrailingZeros(capacity);
    }

    private void rehash(int capacity) {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        allocate(capacity);
        int mask = capacity - 1;
        for (int j = 0; j < oldKeys.length; j++) {
            Object v = oldValues[j];
            if (v != null) {
                int i = slot(oldKeys[j]);
                while (values[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                values[i] = v;
            }
        }
    }

    @Override
    public String toString() {
        return "LongHashMap[size=" + size + ", capacity=" + keys.length + "]";
    }

    /** For tests: the keys present, in table order. */
    long[] keysForTest() {
        long[] out = new long[size];
        int n = 0;
        for (int i = 0; i < keys.length; i++) {
            if (values[i] != null) {
                out[n++] = keys[i];
            }
        }
        return Arrays.copyOf(out, n);
    }
}
