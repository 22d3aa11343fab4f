package io.buslane.engine.partition;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * Messages ready for delivery, in sequence order: new arrivals in a FIFO (they arrive in sequence order) and
 * returned messages (abandoned, lock expired, released) in a heap, so a returned message goes out before later
 * ones. Entries leave lazily: an entry taken elsewhere (expired, deleted, moved) is skipped when it reaches the
 * head. An entry removed with {@link #remove} is never added back to the same queue (it has left the sub-queue),
 * so a stale copy can never be mistaken for a live one.
 * Confined to its shard thread.
 *
 * <p>Every session has one, so it starts small: a two-slot FIFO, and no heap until a message is returned.
 */
final class ReadyQueue {

    static final byte NOWHERE = 0;
    static final byte IN_FIFO = 1;
    static final byte IN_HEAP = 2;

    private static final Comparator<Entry> BY_SEQUENCE = (a, b) -> Long.compareUnsigned(a.seq, b.seq);

    private final ArrayDeque<Entry> fifo = new ArrayDeque<>(1);
    /** Created by the first returned message. */
    private PriorityQueue<Entry> returned;
    private int size;

    void addNew(Entry e) {
        e.readyIn = this;
        e.readyPlace = IN_FIFO;
        fifo.addLast(e);
        size++;
    }

    void addReturned(Entry e) {
        e.readyIn = this;
        e.readyPlace = IN_HEAP;
        if (returned == null) {
            returned = new PriorityQueue<>(4, BY_SEQUENCE);
        }
        returned.add(e);
        size++;
    }

    /** Marks an entry as no longer ready (it is physically dropped when it reaches the head). */
    void remove(Entry e) {
        if (e.readyIn == this && e.readyPlace != NOWHERE) {
            e.readyPlace = NOWHERE;
            e.readyIn = null;
            size--;
        }
    }

    /** The next ready entry without taking it, or null. */
    Entry peek() {
        Entry f = cleanFifo();
        Entry r = cleanHeap();
        if (f == null) {
            return r;
        }
        if (r == null) {
            return f;
        }
        return Long.compareUnsigned(r.seq, f.seq) < 0 ? r : f;
    }

    /** Takes the next ready entry, or returns null. */
    Entry poll() {
        Entry e = peek();
        if (e == null) {
            return null;
        }
        if (e.readyPlace == IN_FIFO) {
            fifo.pollFirst();
        } else {
            returned.poll();
        }
        e.readyPlace = NOWHERE;
        e.readyIn = null;
        size--;
        return e;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    private Entry cleanFifo() {
        Entry e;
        while ((e = fifo.peekFirst()) != null && (e.readyIn != this || e.readyPlace != IN_FIFO)) {
            fifo.pollFirst();
        }
        return e;
    }

    private Entry cleanHeap() {
        if (returned == null) {
            return null;
        }
        Entry e;
        while ((e = returned.peek()) != null && (e.readyIn != this || e.readyPlace != IN_HEAP)) {
            returned.poll();
        }
        return e;
    }
}
