package io.buslane.engine.dedup;

import net.openhft.hashing.LongTupleHashFunction;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.LongConsumer;

/**
 * The keys a partition remembered within a time window, for duplicate detection (MessageId, plus the partition key
 * on partitioned entities) and for idempotent auto-forwarding (the source's transfer key). Confined to its shard
 * thread.
 *
 * <p>A key is held as its 128-bit hash, never as text: XXH3-128 of its UTF-16LE text (through the allocation-free
 * zero-allocation-hashing library), of which the lowest bit is replaced by a tag: 0 for this hash, 1 for a key
 * remembered by the broker's first, home-made hash (FNV-1a and a multiplicative hash, each mixed; found in key blocks
 * written before the change, {@link #legacyHash}). While such a key may still be live, a lookup also asks for the
 * key's legacy hash, so an upgrade never lets a duplicate through; once the newest legacy key has expired, only the
 * new hash is computed. With 127 bits of a well-studied hash, two different keys collide within one window with
 * probability about {@code n² / 2¹²⁸} for {@code n} remembered keys, negligible even for billions of keys. Every
 * stored key carries its time, and a lookup only counts a stored key whose time plus the window has not passed, so
 * answers are exact whatever order keys were stored in.
 *
 * <p>Memory is bounded by a heap budget given to each window ({@link #DEFAULT_HEAP_BUDGET_BYTES} unless the
 * engine's configuration says otherwise: {@code EngineConfig.dedupHeapBytesPerWindow}, system property
 * {@code buslane.dedupHeapBytes}). The newest keys sit in a ring ordered by arrival (hash
 * high, hash low, time: 24 bytes) and an open-addressing index of ring slots (an {@code int} per slot, at most half
 * full): 32 bytes per slot, the ring's capacity being the largest power of two that fits the budget. When a
 * checkpoint finds the ring more than half full, its oldest keys are moved out of the heap into an immutable run
 * sorted by hash ({@link DedupRunStore}: 24 bytes per key, a file in the data directory), until the ring is a
 * quarter full. Runs are merged like an LSM tree (the two newest while the newer is the bigger, and at most
 * {@value #MAX_RUNS} runs, see {@link #maintain}), dropping expired keys as they are rewritten; a run whose newest
 * key expired is deleted. Merges advance a bounded step per checkpoint, so no checkpoint pauses the shard for long;
 * while one runs, runs spilled meanwhile may briefly exceed the limit. A lookup probes the ring, then searches each
 * run from the newest ({@link #lowerBound}: interpolation, then binary search). Only the keys of one checkpoint (or
 * of one replayed block) can push the ring beyond its budget (it then grows, and shrinks back to the budget at the
 * next spill).
 *
 * <p>Durability: keys added since the last checkpoint are {@link #drainPending pending}; the journal writes them
 * as one block record per partition per duty cycle, and deletes a block once its newest key has expired. When keys
 * move to a run, the blocks that held them are replaced by one block holding their live keys ({@link Sealer}), so
 * the number of block records stays proportional to the number of spills, not of checkpoints. The blocks are the
 * source of truth: runs are rebuilt from them on every start (spilling as the budget requires).
 */
public final class DedupWindow {

    /** Kind of window: duplicate detection by MessageId. */
    public static final byte DUPLICATES = 0;
    /** Kind of window: transfer keys of forwarded messages. */
    public static final byte TRANSFERS = 1;

    /** Most runs a window keeps (more are merged). */
    public static final int MAX_RUNS = 8;
    /** Most keys moved into one run (and one replacement block record) at a time. */
    static final int MAX_CHUNK = 1 << 20;
    /** Heap bytes per ring slot: hash high, hash low, time and the index's int (at most half full). */
    public static final int BYTES_PER_SLOT = 32;

    /** The heap budget of a window unless the engine is configured otherwise: 16 MiB. */
    public static final long DEFAULT_HEAP_BUDGET_BYTES = 16L * 1024 * 1024;

    private final byte kind;
    private long windowMs;
    private final int maxCapacity;
    private long[] hi;
    private long[] lo;
    private long[] time;
    private int ringMask;
    private long head;
    private long tail;
    private int[] table;
    private int tableMask;
    private long pendingFrom;
    /** Blocks whose keys are (or were) in the ring, in ring order: {record id, newest time, ring end position}. */
    private final ArrayDeque<long[]> ringBlocks = new ArrayDeque<>();
    /** Blocks whose keys moved to runs, by newest time: {record id, newest time}. */
    private final PriorityQueue<long[]> sealedBlocks = new PriorityQueue<>((a, b) -> Long.compare(a[1], b[1]));
    /** Runs, oldest first. */
    private final List<RunRef> runs = new ArrayList<>();
    /** The time of the last expiry (keys are live unless their time plus the window is at or before it). */
    private long lastNowMs = Long.MIN_VALUE;
    /** The time of the newest key restored under its legacy hash, MIN_VALUE when none was. */
    private long newestLegacyMs = Long.MIN_VALUE;
    /** After a replay, restored times are raised to the first expiry's clock (transfer windows only). */
    private boolean clampRestored;

    private static final class RunRef {
        final DedupRunStore.Run run;
        final long minTime;
        long maxTime;
        /** Times in the run are raised to this (restored transfer keys). */
        long floor = Long.MIN_VALUE;
        final int level;

        RunRef(DedupRunStore.Run run, long minTime, long maxTime, int level) {
            this.run = run;
            this.minTime = minTime;
            this.maxTime = maxTime;
            this.level = level;
        }
    }

    /** A window with the default heap budget. */
    public DedupWindow(byte kind, long windowMs) {
        this(kind, windowMs, DEFAULT_HEAP_BUDGET_BYTES);
    }

    public DedupWindow(byte kind, long windowMs, long heapBudgetBytes) {
        this.kind = kind;
        this.windowMs = windowMs;
        int cap = 16;
        while ((long) cap * 2 * BYTES_PER_SLOT <= heapBudgetBytes && cap < (1 << 29)) {
            cap *= 2;
        }
        this.maxCapacity = cap;
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

    /** Keys held in the heap ring now (including expired ones not yet popped). */
    public int size() {
        return (int) (tail - head);
    }

    /** Bytes of heap held by the ring (arrays only); at most the budget, except while one checkpoint overshoots. */
    public long heapBytes() {
        return (long) hi.length * 24 + (long) table.length * 4;
    }

    /** Ring slots the budget allows. */
    public int maxCapacity() {
        return maxCapacity;
    }

    /** Runs held out of the heap now. */
    public int runCount() {
        return runs.size();
    }

    /** Keys held in runs now (including expired ones not yet merged away). */
    public long runKeys() {
        long n = 0;
        for (RunRef r : runs) {
            n += r.run.count();
        }
        return n;
    }

    /** Bytes held by runs. */
    public long runBytes() {
        long n = 0;
        for (RunRef r : runs) {
            n += r.run.bytes();
        }
        return n;
    }

    /** Block records tracked (in the ring and sealed). */
    public int blockCount() {
        return ringBlocks.size() + sealedBlocks.size();
    }

    // ------------------------------------------------------------------------------------------------ hashing

    private static final LongTupleHashFunction XXH3_128 = LongTupleHashFunction.xx128();

    /**
     * The hash a key is remembered by, as {high, low}: XXH3-128 (seed 0) of the key's UTF-16LE text, the lowest bit
     * of its low half cleared (the tag of the current hash).
     */
    public static long[] hash(String key) {
        long[] r = XXH3_128.hashChars(key); // {low 64 bits, high 64 bits}
        long low = r[0];
        r[0] = r[1];
        r[1] = low & ~1L;
        return r;
    }

    /** True when a stored hash was computed by {@link #legacyHash} (its tag bit is set). */
    public static boolean isLegacy(long low) {
        return (low & 1L) != 0;
    }

    /** A hash read from a key block of the first format, tagged as legacy (its lowest bit set). */
    public static long legacyTagged(long low) {
        return low | 1L;
    }

    /**
     * The hash the first key-block format stored (two 64-bit hashes of the key's UTF-16 code units, FNV-1a and a
     * multiplicative one, each finished by MurmurHash3's mixer), tagged as legacy: only to recognise keys
     * remembered before the change of hash.
     */
    public static long[] legacyHash(String key) {
        long h1 = 0xcbf29ce484222325L;
        long h2 = 0x9E3779B97F4A7C15L ^ key.length();
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            h1 = (h1 ^ c) * 0x100000001b3L;
            h2 = (h2 ^ c) * 0xC6A4A7935BD1E995L;
            h2 ^= h2 >>> 47;
        }
        return new long[] {fmix(h1 ^ key.length()), legacyTagged(fmix(h2 + 0x632BE59BD9B4E019L))};
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

    /** True when a live key with this hash is remembered. */
    public boolean contains(long h, long l) {
        return ringContains(h, l) || runsContain(h, l);
    }

    /** True when a live copy of this key is remembered, under its hash or (while legacy keys live) its old hash. */
    public boolean containsKey(String key) {
        long[] k = hash(key);
        return contains(k[0], k[1]) || containsLegacy(key);
    }

    /** Remembers a key (as pending) unless it is remembered already; returns false for a duplicate. */
    public boolean addKey(String key, long timeMs) {
        long[] k = hash(key);
        if (contains(k[0], k[1]) || containsLegacy(key)) {
            return false;
        }
        append(k[0], k[1], timeMs);
        return true;
    }

    private boolean containsLegacy(String key) {
        if (newestLegacyMs == Long.MIN_VALUE || !live(newestLegacyMs)) {
            return false;
        }
        long[] k = legacyHash(key);
        return contains(k[0], k[1]);
    }

    /** Remembers a key (as pending) unless it is remembered already; returns false for a duplicate. */
    public boolean add(long h, long l, long timeMs) {
        if (contains(h, l)) {
            return false;
        }
        append(h, l, timeMs);
        return true;
    }

    /**
     * Restores a key from the journal (not pending). A key may be restored twice (a replacement block written
     * before the blocks it replaces were deleted): lookups only ask whether some copy is live.
     */
    public void restore(long h, long l, long timeMs) {
        append(h, l, timeMs);
        if (isLegacy(l)) {
            newestLegacyMs = Math.max(newestLegacyMs, timeMs);
        }
        pendingFrom = tail;
        if (kind == TRANSFERS) {
            clampRestored = true;
        }
    }

    private boolean live(long t) {
        return lastNowMs == Long.MIN_VALUE || !expired(t, lastNowMs);
    }

    private void append(long h, long l, long timeMs) {
        if (tail - head == hi.length) {
            resize(hi.length * 2);
        }
        int slot = (int) (tail & ringMask);
        hi[slot] = h;
        lo[slot] = l;
        time[slot] = timeMs;
        tail++;
        insertIndex(h, slot);
    }

    private boolean ringContains(long h, long l) {
        int i = (int) h & tableMask;
        while (true) {
            int v = table[i];
            if (v == 0) {
                return false;
            }
            int slot = v - 1;
            if (hi[slot] == h && lo[slot] == l && live(time[slot])) {
                return true;
            }
            i = (i + 1) & tableMask;
        }
    }

    private boolean runsContain(long h, long l) {
        for (int r = runs.size() - 1; r >= 0; r--) {
            RunRef ref = runs.get(r);
            if (!live(Math.max(ref.maxTime, ref.floor))) {
                continue;
            }
            DedupRunStore.Run run = ref.run;
            long from = lowerBound(run, h, l);
            for (long i = from; i < run.count() && run.hi(i) == h && run.lo(i) == l; i++) {
                if (live(Math.max(run.time(i), ref.floor))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The first index of a run whose key is not below (h, l). Hashes are uniform, so the first probes interpolate
     * (about log log n of them find the place); binary search finishes any range they leave.
     */
    static long lowerBound(DedupRunStore.Run run, long h, long l) {
        long from = 0;
        long to = run.count();
        if (to > 8) {
            // the bounds' hashes are kept as the range narrows: each round reads the probe (far) and the new
            // bound's neighbour (usually the same cache line); the run's first and last keys stay cached
            long first = run.hi(from);
            long last = run.hi(to - 1);
            for (int round = 0; round < 8 && to - from > 8; round++) {
                if (h < first) {
                    return from;
                }
                if (h > last) {
                    return to;
                }
                if (first == last) {
                    break;
                }
                long mid = from + (long) (((double) h - first) / ((double) last - first) * (to - 1 - from));
                mid = Math.max(from, Math.min(to - 1, mid));
                long mh = run.hi(mid);
                if (mh < h || (mh == h && run.lo(mid) < l)) {
                    from = mid + 1;
                    if (from < to) {
                        first = run.hi(from);
                    }
                } else {
                    to = mid;
                    if (from < to) {
                        last = run.hi(to - 1);
                    }
                }
            }
        }
        while (from < to) {
            long mid = (from + to) >>> 1;
            long mh = run.hi(mid);
            if (mh < h || (mh == h && run.lo(mid) < l)) {
                from = mid + 1;
            } else {
                to = mid;
            }
        }
        return from;
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

    /** Re-allocates the ring with {@code capacity} slots; positions stay absolute, so blocks keep their ends. */
    private void resize(int capacity) {
        long[] oh = hi;
        long[] ol = lo;
        long[] ot = time;
        int om = ringMask;
        allocate(capacity);
        for (long p = head; p < tail; p++) {
            int from = (int) (p & om);
            int to = (int) (p & ringMask);
            hi[to] = oh[from];
            lo[to] = ol[from];
            time[to] = ot[from];
            insertIndex(hi[to], to);
        }
    }

    /** Forgets the keys whose time plus the window has passed. */
    public void expire(long nowMs) {
        if (clampRestored) {
            clampRestored = false;
            for (long p = head; p < tail; p++) {
                int slot = (int) (p & ringMask);
                time[slot] = Math.max(time[slot], nowMs);
            }
            for (long[] b : ringBlocks) {
                b[1] = Math.max(b[1], nowMs);
            }
            List<long[]> sealed = new ArrayList<>(sealedBlocks);
            sealedBlocks.clear();
            for (long[] b : sealed) {
                b[1] = Math.max(b[1], nowMs);
                sealedBlocks.add(b);
            }
            for (RunRef r : runs) {
                r.floor = Math.max(r.floor, nowMs);
            }
        }
        lastNowMs = nowMs;
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
        for (int r = runs.size() - 1; r >= 0; r--) {
            RunRef ref = runs.get(r);
            boolean merging = job != null && (job.a == ref || job.b == ref);
            if (!merging && expired(Math.max(ref.maxTime, ref.floor), nowMs)) {
                runs.remove(r).run.delete();
            }
        }
    }

    private boolean expired(long t, long nowMs) {
        long until = t + windowMs;
        return until >= t && until <= nowMs;
    }

    /**
     * Called after a replay. Nothing needs sorting (lookups check each key's time, so replayed blocks may come in
     * any order); kept as the hook where a replayed window settles.
     */
    public void sortAfterReplay() {
    }

    // ------------------------------------------------------------------------------------------------ spilling

    /** Replaces the block records of keys moved to a run by one block; implemented by the journal. */
    public interface Sealer {
        /**
         * Writes one block record holding the given keys (when {@code n > 0}) and deletes the records
         * {@code replaced}; returns the new record's id, or -1 when none was written.
         */
        long seal(long[] replaced, long[] hi, long[] lo, long[] time, int n);
    }

    /** True when the ring holds more than half of the keys its budget allows (a checkpoint should spill). */
    public boolean needsSpill() {
        return size() > maxCapacity / 2;
    }

    /**
     * Moves the oldest keys of the ring, a whole number of written blocks at a time, into runs until the ring is a
     * quarter full (or no written block is left in it), then shrinks the ring back to its budget. Pending keys stay.
     *
     * @param sealer replaces the moved blocks' records by one; null keeps the records as they are (replay)
     */
    public void spill(DedupRunStore store, Sealer sealer) {
        int target = maxCapacity / 4;
        while (size() > target && !ringBlocks.isEmpty()) {
            List<long[]> chosen = new ArrayList<>();
            long end = head;
            while (!ringBlocks.isEmpty() && end - head < size() - target && end - head < MAX_CHUNK) {
                long[] b = ringBlocks.pollFirst();
                chosen.add(b);
                end = Math.max(end, Math.min(b[2], pendingFrom));
            }
            int m = (int) (end - head);
            long[] ch = new long[m];
            long[] cl = new long[m];
            long[] ct = new long[m];
            int n = 0;
            long newest = Long.MIN_VALUE;
            for (long[] b : chosen) {
                newest = Math.max(newest, b[1]);
            }
            for (long p = head; p < end; p++) {
                int slot = (int) (p & ringMask);
                if (live(time[slot])) {
                    ch[n] = hi[slot];
                    cl[n] = lo[slot];
                    ct[n] = time[slot];
                    n++;
                }
            }
            sort(ch, cl, ct, 0, n - 1);
            if (n > 0) {
                DedupRunStore.Run run;
                try {
                    DedupRunStore.Writer w = store.create();
                    for (int i = 0; i < n; i++) {
                        w.add(ch[i], cl[i], ct[i]);
                    }
                    run = w.finish();
                } catch (RuntimeException e) {
                    // the store failed (disk full?): the keys stay in the ring, the blocks as they were
                    for (int i = chosen.size() - 1; i >= 0; i--) {
                        ringBlocks.addFirst(chosen.get(i));
                    }
                    throw e;
                }
                long min = Long.MAX_VALUE;
                long max = Long.MIN_VALUE;
                for (int i = 0; i < n; i++) {
                    min = Math.min(min, ct[i]);
                    max = Math.max(max, ct[i]);
                }
                runs.add(new RunRef(run, min, max, 0));
                mergeCredit += (long) n * MERGE_CREDIT_PER_SPILLED_KEY;
            }
            for (; head < end; head++) {
                removeIndex((int) (head & ringMask));
            }
            if (sealer != null) {
                long[] replaced = new long[chosen.size()];
                for (int i = 0; i < replaced.length; i++) {
                    replaced[i] = chosen.get(i)[0];
                }
                long id = sealer.seal(replaced, ch, cl, ct, n);
                if (id >= 0) {
                    sealedBlocks.add(new long[] {id, newest});
                }
            } else {
                for (long[] b : chosen) {
                    sealedBlocks.add(new long[] {b[0], b[1]});
                }
            }
        }
        if (hi.length > maxCapacity && size() <= maxCapacity) {
            resize(maxCapacity);
        }
    }

    /** Keys a merge may copy per checkpoint, at least. */
    static final long MERGE_STEP_KEYS = 1 << 16;
    /** Keys a merge may copy per checkpoint, at most (bounds the pause a checkpoint adds). */
    static final long MAX_MERGE_STEP_KEYS = 1 << 17;
    /** Merge credit earned per key spilled. */
    static final int MERGE_CREDIT_PER_SPILLED_KEY = 16;

    /** A merge in progress, copied a step per checkpoint; its sources stay searchable until it completes. */
    private static final class MergeJob {
        final RunRef a;
        final RunRef b;
        final int level;
        final DedupRunStore.Writer w;
        long i;
        long j;
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;

        MergeJob(DedupRunStore store, RunRef a, RunRef b, int level) {
            this.a = a;
            this.b = b;
            this.level = level;
            this.w = store.create();
        }
    }

    private MergeJob job;
    private long mergeCredit;

    /** True while runs are being merged. */
    public boolean merging() {
        return job != null;
    }

    /**
     * Advances run merging by one checkpoint's step (call at every checkpoint): at least {@link #MERGE_STEP_KEYS}
     * keys plus {@value #MERGE_CREDIT_PER_SPILLED_KEY} per key spilled since, at most
     * {@link #MAX_MERGE_STEP_KEYS} at a time, or everything when {@code unbounded} (replay).
     */
    public void maintain(DedupRunStore store, boolean unbounded) {
        if (job == null && !plan(store)) {
            mergeCredit = 0;
            return;
        }
        mergeCredit = Math.min(mergeCredit + MERGE_STEP_KEYS, 64 * MAX_MERGE_STEP_KEYS);
        long budget = unbounded ? Long.MAX_VALUE : Math.min(mergeCredit, MAX_MERGE_STEP_KEYS);
        while (budget > 0 && (job != null || plan(store))) {
            long used = step(budget);
            budget -= used;
            mergeCredit -= Math.min(mergeCredit, used);
        }
    }

    /**
     * Starts the next merge, if any is due, keeping runs few and mostly live: rewrites a run whose keys have more
     * than half expired (estimated from its time span), merges the two newest while the newer is at least as big
     * as the older (a binary counter: each key is rewritten about log₂(runs' keys / spill) times), and while there
     * are more than {@value #MAX_RUNS} runs merges the adjacent pair with the fewest keys.
     */
    private boolean plan(DedupRunStore store) {
        if (lastNowMs != Long.MIN_VALUE) {
            long cutoff = lastNowMs - windowMs;
            for (RunRef ref : runs) {
                if (ref.floor == Long.MIN_VALUE && ref.maxTime > ref.minTime && cutoff > ref.minTime
                        && (cutoff - ref.minTime) * 2 > ref.maxTime - ref.minTime) {
                    job = new MergeJob(store, ref, null, ref.level);
                    return true;
                }
            }
        }
        int n = runs.size();
        if (n >= 2 && runs.get(n - 1).run.count() >= runs.get(n - 2).run.count()) {
            job = new MergeJob(store, runs.get(n - 2), runs.get(n - 1), runs.get(n - 2).level + 1);
            return true;
        }
        if (n > MAX_RUNS) {
            int best = 0;
            long bestKeys = Long.MAX_VALUE;
            for (int r = 0; r + 1 < n; r++) {
                long keys = runs.get(r).run.count() + runs.get(r + 1).run.count();
                if (keys < bestKeys) {
                    bestKeys = keys;
                    best = r;
                }
            }
            RunRef a = runs.get(best);
            RunRef b = runs.get(best + 1);
            job = new MergeJob(store, a, b, Math.max(a.level, b.level) + 1);
            return true;
        }
        return false;
    }

    /** Copies up to {@code budget} keys of the merge in progress; a failing store abandons the merge. */
    private long step(long budget) {
        try {
            return copy(budget);
        } catch (RuntimeException e) {
            MergeJob m = job;
            job = null;
            try {
                DedupRunStore.Run partial = m.w.finish();
                if (partial != null) {
                    partial.delete();
                }
            } catch (RuntimeException ignored) {
                // the store is failing already; its directory is emptied at the next start
            }
            throw e;
        }
    }

    /** Copies up to {@code budget} keys of the merge in progress, dropping expired ones; returns the keys read. */
    private long copy(long budget) {
        MergeJob m = job;
        RunRef a = m.a;
        RunRef b = m.b;
        long na = a.run.count();
        long nb = b == null ? 0 : b.run.count();
        long used = 0;
        while ((m.i < na || m.j < nb) && used < budget) {
            boolean takeA;
            if (m.i == na) {
                takeA = false;
            } else if (m.j == nb) {
                takeA = true;
            } else {
                long ha = a.run.hi(m.i);
                long hb = b.run.hi(m.j);
                takeA = ha < hb || (ha == hb && a.run.lo(m.i) <= b.run.lo(m.j));
            }
            RunRef src = takeA ? a : b;
            long k = takeA ? m.i++ : m.j++;
            long t = Math.max(src.run.time(k), src.floor);
            if (live(t)) {
                m.w.add(src.run.hi(k), src.run.lo(k), t);
                m.min = Math.min(m.min, t);
                m.max = Math.max(m.max, t);
            }
            used++;
        }
        if (m.i == na && m.j == nb) {
            job = null;
            DedupRunStore.Run out = m.w.finish();
            int at = runs.indexOf(a);
            runs.remove(a);
            a.run.delete();
            if (b != null) {
                runs.remove(b);
                b.run.delete();
            }
            if (out != null) {
                RunRef merged = new RunRef(out, m.min, m.max, m.level);
                merged.floor = b == null ? a.floor : Math.max(a.floor, b.floor);
                runs.add(at, merged);
            }
        }
        return Math.max(used, 1);
    }

    /** Sorts three parallel arrays by (hi, lo), in place (quicksort, insertion sort for short ranges). */
    private static void sort(long[] h, long[] l, long[] t, int from, int to) {
        while (to - from > 16) {
            int mid = (from + to) >>> 1;
            long ph = h[mid];
            long pl = l[mid];
            int i = from;
            int j = to;
            while (i <= j) {
                while (h[i] < ph || (h[i] == ph && l[i] < pl)) {
                    i++;
                }
                while (h[j] > ph || (h[j] == ph && l[j] > pl)) {
                    j--;
                }
                if (i <= j) {
                    swap(h, l, t, i++, j--);
                }
            }
            if (j - from < to - i) {
                sort(h, l, t, from, j);
                from = i;
            } else {
                sort(h, l, t, i, to);
                to = j;
            }
        }
        for (int i = from + 1; i <= to; i++) {
            for (int j = i; j > from && (h[j - 1] > h[j] || (h[j - 1] == h[j] && l[j - 1] > l[j])); j--) {
                swap(h, l, t, j, j - 1);
            }
        }
    }

    private static void swap(long[] h, long[] l, long[] t, int i, int j) {
        long x = h[i];
        h[i] = h[j];
        h[j] = x;
        x = l[i];
        l[i] = l[j];
        l[j] = x;
        x = t[i];
        t[i] = t[j];
        t[j] = x;
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

    /**
     * A block record holding the keys up to the ring's end, the newest at {@code newestMs}, was written (or
     * replayed).
     */
    public void blockWritten(long recordId, long newestMs) {
        ringBlocks.addLast(new long[] {recordId, newestMs, tail});
    }

    /** Receives the record ids of blocks whose keys have all expired, and forgets them. */
    public void expiredBlocks(long nowMs, LongConsumer sink) {
        while (!ringBlocks.isEmpty() && expired(ringBlocks.peekFirst()[1], nowMs)) {
            sink.accept(ringBlocks.pollFirst()[0]);
        }
        while (!sealedBlocks.isEmpty() && expired(sealedBlocks.peek()[1], nowMs)) {
            sink.accept(sealedBlocks.poll()[0]);
        }
    }

    /** Receives the record ids of every block (the window is being dropped), forgets them and deletes the runs. */
    public void allBlocks(LongConsumer sink) {
        while (!ringBlocks.isEmpty()) {
            sink.accept(ringBlocks.pollFirst()[0]);
        }
        while (!sealedBlocks.isEmpty()) {
            sink.accept(sealedBlocks.poll()[0]);
        }
        if (job != null) {
            DedupRunStore.Run partial = job.w.finish();
            if (partial != null) {
                partial.delete();
            }
            job = null;
        }
        for (RunRef r : runs) {
            r.run.delete();
        }
        runs.clear();
    }
}
