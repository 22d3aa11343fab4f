package io.buslane.bench.postgres;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** What the PostgreSQL and the cluster benchmark's reports share: formatting, the environment, the docs section. */
final class ReportText {

    private ReportText() {
    }

    static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    /** An environment variable (the run scripts describe the machine in BENCH_*), or the fallback. */
    static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }

    /**
     * Replaces the generated part of a section of {@code docs}, between {@code begin} and {@code end}, with
     * {@code generated} (which carries the markers); or adds the section under {@code heading} before "Measured by
     * hand" when the markers are missing.
     */
    static void writeSection(Path docs, String heading, String begin, String end, String generated) throws Exception {
        String text = Files.exists(docs) ? Files.readString(docs) : "# Benchmarks\n";
        int b = text.indexOf(begin);
        int e = text.indexOf(end);
        if (b >= 0 && e > b) {
            text = text.substring(0, b) + generated + text.substring(e + end.length() + 1);
        } else {
            String section = heading + "\n\n" + generated + "\n";
            int at = text.indexOf("## Measured by hand");
            text = at >= 0 ? text.substring(0, at) + section + text.substring(at) : text + "\n" + section;
        }
        Files.writeString(docs, text);
    }
}
