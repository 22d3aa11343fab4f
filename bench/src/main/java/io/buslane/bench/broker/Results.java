package io.buslane.bench.broker;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.DoublePredicate;

/**
 * Every measurement of a run: per (workload, metric) the values per broker over rounds, reduced to medians, and
 * the RESULT lines {@code RESULT <workload> <metric> buslane=<x> artemis=<y> ratio=<r>} where r > 1 always means
 * Buslane is better (x/y where higher is better, y/x where lower is better).
 */
final class Results {

    enum Better { HIGHER, LOWER }

    static final class Entry {
        final String workload;
        final String metric;
        final Better better;
        final Map<String, List<Double>> values = new LinkedHashMap<>();
        String target;
        /** On the ratio (when Artemis was measured) or on Buslane's own figure. */
        DoublePredicate targetMet;
        boolean targetOnRatio;

        Entry(String workload, String metric, Better better) {
            this.workload = workload;
            this.metric = metric;
            this.better = better;
        }

        double median(String broker) {
            List<Double> v = values.get(broker);
            return v == null ? Double.NaN : Stats.median(v);
        }

        double ratio() {
            double b = median("buslane");
            double a = median("artemis");
            if (Double.isNaN(a) || Double.isNaN(b) || a == 0 || b == 0) {
                return Double.NaN;
            }
            return better == Better.HIGHER ? b / a : a / b;
        }

        /** "yes", "no" or "" (no target). */
        String met() {
            if (targetMet == null) {
                return "";
            }
            double v = targetOnRatio ? ratio() : median("buslane");
            return Double.isNaN(v) ? "n/a" : targetMet.test(v) ? "yes" : "no";
        }

        String resultLine() {
            String ceiling = values.containsKey("sink")
                    ? "\nRESULT " + workload + " client_ceiling_" + metric + " sink=" + fmt(median("sink")) : "";
            String a = values.containsKey("artemis") ? fmt(median("artemis")) : "-";
            double r = ratio();
            return "RESULT " + workload + " " + metric + " buslane=" + fmt(median("buslane")) + " artemis=" + a
                    + " ratio=" + (Double.isNaN(r) ? "-" : String.format(Locale.ROOT, "%.2f", r)) + ceiling;
        }
    }

    private final Map<String, Entry> entries = new LinkedHashMap<>();

    synchronized Entry entry(String workload, String metric, Better better) {
        return entries.computeIfAbsent(workload + " " + metric, k -> new Entry(workload, metric, better));
    }

    synchronized void add(String workload, String metric, Better better, String broker, double value) {
        entry(workload, metric, better).values.computeIfAbsent(broker, k -> new ArrayList<>()).add(value);
        System.out.printf(Locale.ROOT, "  %-28s %-24s %-8s %s%n", workload, metric, broker, fmt(value));
    }

    /** A target on the ratio (e.g. ≥ 3) or on Buslane's own value (e.g. ≤ 1 ms). */
    synchronized void target(String workload, String metric, String description, boolean onRatio, DoublePredicate met) {
        Entry e = entries.get(workload + " " + metric);
        if (e != null) {
            e.target = description;
            e.targetMet = met;
            e.targetOnRatio = onRatio;
        }
    }

    synchronized List<Entry> entries() {
        return new ArrayList<>(entries.values());
    }

    static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        double a = Math.abs(v);
        if (a >= 1000) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        if (a >= 0.1) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }
}
