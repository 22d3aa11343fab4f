package io.buslane.engine.dedup;

import java.util.Arrays;

/**
 * Where a {@link DedupWindow} keeps the keys it moved out of the heap: immutable runs of (hash high, hash low, time)
 * sorted by hash. Runs are a cache rebuilt from the journal's key blocks on every start, so they need no sync and
 * are never read back after a restart. Confined to the shard thread.
 */
public interface DedupRunStore {

    /** Starts a new run; keys must be added in ascending (high, low) order (signed comparison). */
    Writer create();

    /** Writes one run. */
    interface Writer {
        void add(long hi, long lo, long timeMs);

        /** Ends the run (null when no key was added). */
        Run finish();
    }

    /** An immutable sorted run of keys. */
    interface Run {
        long count();

        long hi(long index);

        long lo(long index);

        long time(long index);

        /** Bytes the run occupies (on disk, or in the heap for the in-memory store). */
        long bytes();

        /** Frees the run (deletes its file). */
        void delete();
    }

    /** Keeps runs in the heap: for in-memory journals (tests, the in-memory harness) where nothing is on disk. */
    static DedupRunStore inHeap() {
        return () -> new Writer() {
            private long[] keys = new long[48];
            private int n;

            @Override
            public void add(long hi, long lo, long timeMs) {
                if (n * 3 == keys.length) {
                    keys = Arrays.copyOf(keys, keys.length * 2);
                }
                keys[n * 3] = hi;
                keys[n * 3 + 1] = lo;
                keys[n * 3 + 2] = timeMs;
                n++;
            }

            @Override
            public Run finish() {
                if (n == 0) {
                    return null;
                }
                long[] k = Arrays.copyOf(keys, n * 3);
                int count = n;
                keys = null;
                return new Run() {
                    @Override
                    public long count() {
                        return count;
                    }

                    @Override
                    public long hi(long index) {
                        return k[(int) index * 3];
                    }

                    @Override
                    public long lo(long index) {
                        return k[(int) index * 3 + 1];
                    }

                    @Override
                    public long time(long index) {
                        return k[(int) index * 3 + 2];
                    }

                    @Override
                    public long bytes() {
                        return (long) k.length * 8;
                    }

                    @Override
                    public void delete() {
                    }
                };
            }
        };
    }
}
