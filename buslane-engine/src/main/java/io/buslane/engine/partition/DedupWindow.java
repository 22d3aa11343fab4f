package io.buslane.engine.partition;

import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The keys a partition remembered within a time window, for duplicate detection (MessageId, plus the partition key
 * on partitioned entities) and for idempotent auto-forwarding (the source's transfer key). Confined to its shard
 * thread.
 *
 * <p>A key is held as its 128-bit hash (two independent 64-bit hashes of its UTF-16 text), never as text: the chance
 * that two different keys collide within one window is about {@code n² / 2¹²⁹} for {@code n} remembered keys, i.e.
 * negligible even for billions of keys. Keys sit in a ring ordered by arrival (hash high, hash low, time: 24 bytes)
 * and an open-addressing index of ring slots (an {@code int} per slot, at most half full). Memory is 32 bytes per
 * remembered key when the ring is full and at most 64 right after it doubled. Expiry pops the ring's head while its
 * time plus the window has passed.
 *
 * <p>Durability: keys added since the last checkpoint are {@link #drainPending pending}; the journal writes them
 * as one block record per partition per duty cycle, and deletes a block once its newest key has expired. The
 * blocks written are tracked here as (record id, newest time).
 */
public final class DedupWindow {

    /** Kind of window: duplicate detection by MessageId. */
    public static final byte DUPLICATES = 0;
    /** Kind of window: transfer keys of forwarded messages. */
    public static final byte TRANSFERS = 1;

    private final byte kind;
    private long windowMs;
    private long[] hi;
    private long[] lo;
    private long[] time;
    private int ringMask;
    private long head;
    private long tail;
    private int[] table;
    private int tableMask;
    private long pendingFrom;
    private final ArrayDeque<long[]> blocks = new ArrayDeque<>();
    /** After a replay, restored times are raised to the first expiry's clock (transfer windows only). */
    private boolean clampRestored;

    public DedupWindow(byte kind, long windowMs) {
        this.kind = kind;
        this.windowMs = windowMs;
        allocate(16);
    }

    private void allocate(int capacity) {
        hi = new long[capacity];
        lo = new long[capacity];
        time = new long[capacity];
        ringMask = capacity - 1;
        table = new int[capacity * 2];
        tableMask = capacity * 2 - 1;
    }

    public byte kind() {
        return kind;
    }

    public long windowMs() {
        return windowMs;
    }

    public void setWindowMs(long windowMs) {
        this.windowMs = windowMs;
    }

    /** Keys remembered now. */
    public int size() {
        return (int) (tail - head);
    }

    /** Bytes of heap held by the structure (arrays only). */
    public long heapBytes() {
        return (long) hi.length * 24 + (long) table.length * 4;
    }

    // ------------------------------------------------------------------------------------------------ hashing

    /** The 128-bit hash of a key, as {high, low}. */
    public static long[] hash(String key) {
        long h1 = 0xcbf29ce484222325L;
        long h2 = 0x9E3779B97F4A7C15L ^ key.length();
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            h1 = (h1 ^ c) * 0x100000001b3L;
            h2 = (h2 ^ c) * 0xC6A4A7935BD1E995L;
            h2 ^= h2 >>> 47;
        }
        return new long[] {fmix(h1 ^ key.length()), fmix(h2 + 0x632BE59BD9B4E019L)};
    }

    private static long fmix(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }

    // ------------------------------------------------------------------------------------------------ keys

    public boolean contains(long h, long l) {
        return find(h, l) >= 0;
    }

    /** Remembers a key (as pending) unless it is remembered already; returns false for a duplicate. */
    public boolean add(long h, long l, long timeMs) {
        if (find(h, l) >= 0) {
            return false;
        }
        append(h, l, timeMs);
        return true;
    }

    /** Restores a key from the journal (not pending). */
    public void restore(long h, long l, long timeMs) {
        if (find(h, l) < 0) {
            append(h, l, timeMs);
            pendingFrom = tail;
        }
        if (kind == TRANSFERS) {
            clampRestored = true;
        }
    }

    private void append(long h, long l, long timeMs) {
        if (tail - head == hi.length) {
            grow();
        }
        int slot = (int) (tail & ringMask);
        hi[slot] = h;
        lo[slot] = l;
        time[slot] = timeMs;
        tail++;
        insertIndex(h, slot);
    }

    private int find(long h, long l) {
        int i = (int) h & tableMask;
        while (true) {
            int v = table[i];
            if (v == 0) {
                return -1;
            }
            int slot = v - 1;
            if (hi[slot] == h && lo[slot] == l) {
                return slot;
            }
            i = (i + 1) & tableMask;
        }
    }

    private void insertIndex(long h, int slot) {
        int i = (int) h & tableMask;
        while (table[i] != 0) {
            i = (i + 1) & tableMask;
        }
        table[i] = slot + 1;
    }

    private void removeIndex(int slot) {
        int i = (int) hi[slot] & tableMask;
        while (table[i] != slot + 1) {
            i = (i + 1) & tableMask;
        }
        // backward-shift deletion keeps every probe chain unbroken
        int j = i;
        while (true) {
            table[i] = 0;
            while (true) {
                j = (j + 1) & tableMask;
                if (table[j] == 0) {
                    return;
                }
                int home = (int) hi[table[j] - 1] & tableMask;
                boolean movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
                if (movable) {
                    break;
                }
            }
            table[i] = table[j];
            i = j;
        }
    }

    private void grow() {
        int n = size();
        long[] oh = hi;
        long[] ol = lo;
        long[] ot = time;
        int om = ringMask;
        long pendingOffset = pendingFrom - head;
        allocate(hi.length * 2);
        for (int k = 0; k < n; k++) {
            int from = (int) ((head + k) & om);
            hi[k] = oh[from];
            lo[k] = ol[from];
            time[k] = ot[from];
            insertIndex(hi[k], k);
        }
        head = 0;
        tail = n;
        pendingFrom = Math.max(0, pendingOffset);
    }

    /** Forgets the keys whose time plus the window has passed. */
    public void expire(long nowMs) {
        if (clampRestored) {
            clampRestored = false;
            for (long p = head; p < tail; p++) {
                int slot = (int) (p & ringMask);
                time[slot] = Math.max(time[slot], nowMs);
            }
            for (long[] b : blocks) {
                b[1] = Math.max(b[1], nowMs);
            }
        }
        while (head < tail) {
            int slot = (int) (head & ringMask);
            if (!expired(time[slot], nowMs)) {
                break;
            }
            removeIndex(slot);
            head++;
        }
        if (pendingFrom < head) {
            pendingFrom = head;
        }
    }

    private boolean expired(long t, long nowMs) {
        long until = t + windowMs;
        return until >= t && until <= nowMs;
    }

    /** Orders the ring by time after a replay (compaction may have moved old blocks behind newer ones). */
    public void sortAfterReplay() {
        int n = size();
        Integer[] order = new Integer[n];
        long[] h = new long[n];
        long[] l = new long[n];
        long[] t = new long[n];
        for (int k = 0; k < n; k++) {
            int slot = (int) ((head + k) & ringMask);
            h[k] = hi[slot];
            l[k] = lo[slot];
            t[k] = time[slot];
            order[k] = k;
        }
        Arrays.sort(order, (a, b) -> Long.compare(t[a], t[b]));
        int cap = hi.length;
        allocate(cap);
        head = 0;
        tail = 0;
        for (int k = 0; k < n; k++) {
            int o = order[k];
            append(h[o], l[o], t[o]);
        }
        pendingFrom = tail;
        long[][] sorted = blocks.toArray(new long[0][]);
        Arrays.sort(sorted, (a, b) -> Long.compare(a[1], b[1]));
        blocks.clear();
        blocks.addAll(Arrays.asList(sorted));
    }

    // ------------------------------------------------------------------------------------------------ journal

    /** Receives pending keys. */
    public interface KeySink {
        void key(long hi, long lo, long timeMs);
    }

    public int pendingCount() {
        return (int) (tail - pendingFrom);
    }

    /** Hands over the keys added since the last drain; returns the newest time among them. */
    public long drainPending(KeySink sink) {
        long newest = Long.MIN_VALUE;
        for (long p = pendingFrom; p < tail; p++) {
            int slot = (int) (p & ringMask);
            sink.key(hi[slot], lo[slot], time[slot]);
            newest = Math.max(newest, time[slot]);
        }
        pendingFrom = tail;
        return newest;
    }

    /** A block record holding keys up to {@code newestMs} was written (or replayed). */
    public void blockWritten(long recordId, long newestMs) {
        blocks.addLast(new long[] {recordId, newestMs});
    }

    /** Receives the record ids of blocks whose keys have all expired, and forgets them. */
    public void expiredBlocks(long nowMs, java.util.function.LongConsumer sink) {
        while (!blocks.isEmpty() && expired(blocks.peekFirst()[1], nowMs)) {
            sink.accept(blocks.pollFirst()[0]);
        }
    }

    /** Receives the record ids of every block (the window is being dropped), and forgets them. */
    public void allBlocks(java.util.function.LongConsumer sink) {
        while (!blocks.isEmpty()) {
            sink.accept(blocks.pollFirst()[0]);
        }
    }
}
