package io.buslane.bench.postgres;

import java.util.Arrays;

/** Latencies with the time they started ({@link System#nanoTime()}), for percentiles and for time windows. */
final class LatencyLog {

    private long[] starts = new long[1 << 14];
    private long[] values = new long[1 << 14];
    private int n;

    synchronized void record(long startNanos, long latencyNanos) {
        if (n == values.length) {
            starts = Arrays.copyOf(starts, n * 2);
            values = Arrays.copyOf(values, n * 2);
        }
        starts[n] = startNanos;
        values[n++] = latencyNanos;
    }

    synchronized int count() {
        return n;
    }

    /** The p-th percentile (nearest rank) in milliseconds; NaN when empty. */
    synchronized double ms(double p) {
        if (n == 0) {
            return Double.NaN;
        }
        long[] v = Arrays.copyOf(values, n);
        Arrays.sort(v);
        int rank = (int) Math.ceil(p / 100.0 * n);
        return v[Math.max(0, Math.min(n - 1, rank - 1))] / 1e6;
    }

    /** The longest latency, in milliseconds, of the sends whose start time passes {@code started}; NaN if none. */
    synchronized double maxMs(java.util.function.LongPredicate started) {
        long max = -1;
        for (int i = 0; i < n; i++) {
            if (started.test(starts[i])) {
                max = Math.max(max, values[i]);
            }
        }
        return max < 0 ? Double.NaN : max / 1e6;
    }

    /** The start time of the longest latency (0 when empty). */
    synchronized long startOfMax() {
        int at = -1;
        for (int i = 0; i < n; i++) {
            if (at < 0 || values[i] > values[at]) {
                at = i;
            }
        }
        return at < 0 ? 0 : starts[at];
    }
}
