package io.buslane.engine.partition;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * A sorted map from sequence number to value for a sub-queue's messages, kept as two parallel arrays (the numbers and
 * the values) in ascending order: 12 bytes per entry and no object per entry, where a {@code TreeMap<Long, …>} takes a
 * node and a boxed key (about 56 bytes, two objects the collector must copy). Sequence numbers almost always arrive in
 * ascending order, so a put is an append; a removal leaves a hole (the number stays, the value is null) that the
 * ends skip at once and that a compaction drops once holes outnumber the entries, so the arrays stay within about
 * twice the entries. Lookups are binary searches. Not thread-safe (confined to the shard thread); an iterator must not
 * outlive a change.
 *
 * @param <T> the value type
 */
final class SeqIndex<T> implements Iterable<T> {

    private static final int INITIAL = 16;
    /** Holes tolerated beyond the entry count before a compaction. */
    private static final int SLACK = 64;

    private long[] seqs = new long[INITIAL];
    private Object[] values = new Object[INITIAL];
    /** Slots in use are [head, tail); the slots at head and at tail - 1 always hold a value (when not empty). */
    private int head;
    private int tail;
    private int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Associates {@code value} (not null) with {@code seq}, replacing any value it had. */
    void put(long seq, T value) {
        if (value == null) {
            throw new NullPointerException("value");
        }
        if (size == 0) {
            head = 0;
            tail = 0;
            append(seq, value);
            return;
        }
        if (seq > seqs[tail - 1]) {
            append(seq, value);
            return;
        }
        int i = search(seq);
        if (i < tail && seqs[i] == seq) {
            if (values[i] == null) {
                size++;
            }
            values[i] = value;
            return;
        }
        if (i > head && values[i - 1] == null) { // a hole just below: its number is smaller, reuse the slot
            seqs[i - 1] = seq;
            values[i - 1] = value;
            size++;
            return;
        }
        if (i == head && head > 0) { // before the first entry, with room below it
            head--;
            seqs[head] = seq;
            values[head] = value;
            size++;
            return;
        }
        if (tail == seqs.length) {
            makeRoom();
            i = search(seq);
        }
        System.arraycopy(seqs, i, seqs, i + 1, tail - i);
        System.arraycopy(values, i, values, i + 1, tail - i);
        seqs[i] = seq;
        values[i] = value;
        tail++;
        size++;
    }

    private void append(long seq, T value) {
        if (tail == seqs.length) {
            makeRoom();
        }
        seqs[tail] = seq;
        values[tail] = value;
        tail++;
        size++;
    }

    /** Makes at least one free slot at the end: drops the holes, and doubles the arrays if that is not enough. */
    private void makeRoom() {
        int capacity = seqs.length;
        if (size + 1 > capacity / 2) {
            capacity *= 2;
        }
        if (capacity == seqs.length) {
            makeRoomInPlace();
            return;
        }
        long[] s = new long[capacity];
        Object[] v = new Object[capacity];
        int n = compactInto(s, v);
        seqs = s;
        values = v;
        head = 0;
        tail = n;
    }

    /** Copies the entries of [head, tail), holes left out, to the start of the given arrays; returns how many. */
    private int compactInto(long[] s, Object[] v) {
        int n = 0;
        for (int i = head; i < tail; i++) {
            if (values[i] != null) {
                s[n] = seqs[i];
                v[n] = values[i];
                n++;
            }
        }
        return n;
    }

    @SuppressWarnings("unchecked")
    T get(long seq) {
        if (size == 0) {
            return null;
        }
        int i = search(seq);
        return i < tail && seqs[i] == seq ? (T) values[i] : null;
    }

    /** Removes the value of {@code seq}; returns it, or null if there was none. */
    @SuppressWarnings("unchecked")
    T remove(long seq) {
        if (size == 0) {
            return null;
        }
        int i = search(seq);
        if (i >= tail || seqs[i] != seq || values[i] == null) {
            return null;
        }
        T old = (T) values[i];
        values[i] = null;
        size--;
        if (size == 0) {
            head = 0;
            tail = 0;
            return old;
        }
        while (values[head] == null) {
            head++;
        }
        while (values[tail - 1] == null) {
            tail--;
        }
        if (tail - head > 2 * size + SLACK) {
            makeRoomInPlace();
        }
        return old;
    }

    private void makeRoomInPlace() {
        int n = compactInto(seqs, values);
        Arrays.fill(values, n, tail, null);
        head = 0;
        tail = n;
        if (seqs.length > INITIAL && n < seqs.length / 8) { // give back most of a drained backlog's arrays
            int capacity = Math.max(INITIAL, Integer.highestOneBit(Math.max(1, n)) * 4);
            seqs = Arrays.copyOf(seqs, capacity);
            values = Arrays.copyOf(values, capacity);
        }
    }

    /** The first slot in [head, tail) whose number is >= seq, or tail. */
    private int search(long seq) {
        int lo = head;
        int hi = tail;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (seqs[mid] < seq) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The values in ascending order of sequence number. */
    @Override
    public Iterator<T> iterator() {
        return from(Long.MIN_VALUE).iterator();
    }

    /** The values numbered {@code fromSeq} or more, ascending (a view: do not change the index meanwhile). */
    Iterable<T> from(long fromSeq) {
        return () -> new Iterator<>() {
            private int next = size == 0 ? tail : skipHoles(search(fromSeq));

            @Override
            public boolean hasNext() {
                return next < tail;
            }

            @Override
            @SuppressWarnings("unchecked")
            public T next() {
                if (next >= tail) {
                    throw new NoSuchElementException();
                }
                T v = (T) values[next];
                next = skipHoles(next + 1);
                return v;
            }
        };
    }

    private int skipHoles(int i) {
        while (i < tail && values[i] == null) {
            i++;
        }
        return i;
    }

    /** A copy of the values in ascending order (for loops that change the index). */
    List<T> snapshot() {
        List<T> out = new ArrayList<>(size);
        for (T v : this) {
            out.add(v);
        }
        return out;
    }
}
