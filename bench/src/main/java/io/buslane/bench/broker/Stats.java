package io.buslane.bench.broker;

import java.util.Arrays;
import java.util.List;

/** Stateless. Percentiles and medians. */
final class Stats {

    private Stats() {
    }

    /** The p-th percentile (0..100, nearest rank) of the first {@code n} values; sorts them in place. */
    static double percentile(long[] values, int n, double p) {
        if (n == 0) {
            return Double.NaN;
        }
        Arrays.sort(values, 0, n);
        int rank = (int) Math.ceil(p / 100.0 * n);
        return values[Math.max(0, Math.min(n - 1, rank - 1))];
    }

    static double median(List<Double> values) {
        double[] v = values.stream().filter(d -> !d.isNaN()).mapToDouble(Double::doubleValue).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** A growable array of latencies in nanoseconds, filled by one thread at a time. */
    static final class Recorder {
        private long[] values = new long[1 << 16];
        private int n;

        synchronized void record(long nanos) {
            if (n == values.length) {
                values = Arrays.copyOf(values, n * 2);
            }
            values[n++] = nanos;
        }

        synchronized int count() {
            return n;
        }

        /** Writes the values in recording order, one per line in nanoseconds (a timeline for diagnosis). */
        synchronized void dump(java.nio.file.Path file) throws java.io.IOException {
            StringBuilder b = new StringBuilder(n * 8);
            for (int i = 0; i < n; i++) {
                b.append(values[i]).append('\n');
            }
            java.nio.file.Files.writeString(file, b);
        }

        /** Percentile in milliseconds. */
        synchronized double ms(double p) {
            return percentile(values, n, p) / 1e6;
        }
    }
}
