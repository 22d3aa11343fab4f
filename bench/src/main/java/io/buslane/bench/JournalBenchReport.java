package io.buslane.bench;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs {@link JournalAppendBenchmark} and {@link RawFileChannelBenchmark} (extra JMH command-line options pass
 * through, e.g. {@code -prof jfr}), prints one line per batch size
 * {@code RESULT journal_append batch=<n> journal=<records/s> ceiling=<records/s> ratio=<journal/ceiling>} and,
 * when the system property {@code buslane.bench.docs} names a file, rewrites the part of it between
 * {@value #BEGIN} and {@value #END} with a table of the figures and the machine they were measured on.
 *
 * <p>The machine comes from environment variables that {@code bench/run-journal.sh} fills with the output of
 * {@code nproc}, {@code free}, {@code java -version} and {@code df -T}: {@code BENCH_NPROC}, {@code BENCH_MEMORY},
 * {@code BENCH_JDK}, {@code BENCH_DISK}, {@code BENCH_COMMIT}.
 */
public final class JournalBenchReport {

    static final String BEGIN = "<!-- journal:begin -->";
    static final String END = "<!-- journal:end -->";
    /** The journal must reach this fraction of the ceiling at every batch size. */
    static final double TARGET_RATIO = 0.70;

    private static final Pattern METHOD = Pattern.compile("\\.(JournalAppendBenchmark|RawFileChannelBenchmark)"
            + "\\.batch(\\d+)$");

    private JournalBenchReport() {
    }

    /** One batch size: the journal's and the ceiling's primary results. */
    private static final class Row {
        Result<?> journal;
        Result<?> ceiling;
    }

    public static void main(String[] args) throws RunnerException, IOException {
        CommandLineOptions cmd;
        try {
            cmd = new CommandLineOptions(args);
        } catch (CommandLineOptionException e) {
            System.err.println("Bad JMH options: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (cmd.shouldHelp()) {
            cmd.showHelp();
            return;
        }
        ChainedOptionsBuilder builder = new OptionsBuilder().parent(cmd);
        if (cmd.getIncludes().isEmpty()) {
            builder.include(JournalAppendBenchmark.class.getName() + "\\.")
                    .include(RawFileChannelBenchmark.class.getName() + "\\.");
        }
        String dir = System.getProperty(BenchFiles.DIR_PROPERTY);
        if (dir != null) {
            List<String> jvmArgs = new ArrayList<>(cmd.getJvmArgsAppend().orElse(List.of()));
            jvmArgs.add("-D" + BenchFiles.DIR_PROPERTY + "=" + dir);
            builder.jvmArgsAppend(jvmArgs.toArray(new String[0]));
        }
        Collection<RunResult> results = new Runner(builder.build()).run();

        Map<Integer, Row> rows = new TreeMap<>();
        BenchmarkParams params = null;
        for (RunResult result : results) {
            Matcher m = METHOD.matcher(result.getParams().getBenchmark());
            if (!m.find()) {
                continue;
            }
            params = result.getParams();
            Row row = rows.computeIfAbsent(Integer.parseInt(m.group(2)), b -> new Row());
            if (m.group(1).equals("JournalAppendBenchmark")) {
                row.journal = result.getPrimaryResult();
            } else {
                row.ceiling = result.getPrimaryResult();
            }
        }

        System.out.println();
        boolean complete = !rows.isEmpty();
        for (Map.Entry<Integer, Row> e : rows.entrySet()) {
            Row row = e.getValue();
            if (row.journal == null || row.ceiling == null) {
                complete = false;
                continue;
            }
            System.out.printf(Locale.ROOT, "RESULT journal_append batch=%d journal=%.0f ceiling=%.0f ratio=%.3f%n",
                    e.getKey(), row.journal.getScore(), row.ceiling.getScore(),
                    row.journal.getScore() / row.ceiling.getScore());
        }

        String docs = System.getProperty("buslane.bench.docs");
        if (docs == null) {
            return;
        }
        if (!complete) {
            System.err.println("Not updating " + docs + ": the run lacks a journal or a ceiling figure");
            System.exit(1);
        }
        Path path = Paths.get(docs);
        String section = section(rows, params);
        String text = Files.exists(path) ? Files.readString(path, StandardCharsets.UTF_8) : "";
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        String updated;
        if (begin >= 0 && end > begin) {
            updated = text.substring(0, begin) + section + text.substring(end + END.length());
        } else {
            updated = text + (text.isEmpty() || text.endsWith("\n") ? "" : "\n") + "\n" + section + "\n";
        }
        Files.writeString(path, updated, StandardCharsets.UTF_8);
        System.out.println("Updated the journal section of " + path);
    }

    private static String section(Map<Integer, Row> rows, BenchmarkParams params) {
        StringBuilder s = new StringBuilder();
        s.append(BEGIN).append('\n');
        s.append("<!-- Generated by bench/run-journal.sh: do not edit by hand, run it again. -->\n\n");
        s.append(String.format(Locale.ROOT,
                "Measured %s, %s. JMH %s, %d fork, %d warm-up and %d measurement iterations of %s per figure; "
                        + "± is JMH's 99.9%% confidence half-width.%n%n",
                ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")),
                env("BENCH_COMMIT", "commit unknown"), params.getJmhVersion(), params.getForks(),
                params.getWarmup().getCount(), params.getMeasurement().getCount(),
                params.getMeasurement().getTime()));
        s.append("| Batch (records per sync) | Journal (records/s) | Ceiling (records/s) | Ceiling syncs/s "
                + "| Journal / ceiling | ≥ 70 % |\n");
        s.append("|---:|---:|---:|---:|---:|:---:|\n");
        for (Map.Entry<Integer, Row> e : rows.entrySet()) {
            Row row = e.getValue();
            double ratio = row.journal.getScore() / row.ceiling.getScore();
            s.append(String.format(Locale.ROOT, "| %d | %s | %s | %,.0f | %.2f | %s |%n", e.getKey(),
                    scoreText(row.journal), scoreText(row.ceiling), row.ceiling.getScore() / e.getKey(), ratio,
                    ratio >= TARGET_RATIO ? "yes" : "**no**"));
        }
        s.append("\nMachine:\n\n");
        s.append("- CPUs (`nproc`): ").append(env("BENCH_NPROC", "?")).append('\n');
        s.append("- Memory (`free -h`, total): ").append(env("BENCH_MEMORY", "?")).append('\n');
        s.append("- JDK (`java -version`): ").append(env("BENCH_JDK", System.getProperty("java.vm.name") + " "
                + System.getProperty("java.runtime.version"))).append('\n');
        s.append("- Benchmark files on (`df -T`):\n\n");
        s.append("  ```\n");
        for (String line : env("BENCH_DISK", "?").split("\n")) {
            s.append("  ").append(line).append('\n');
        }
        s.append("  ```\n");
        s.append(END);
        return s.toString();
    }

    private static String scoreText(Result<?> r) {
        double error = r.getScoreError();
        return Double.isNaN(error)
                ? String.format(Locale.ROOT, "%,.0f", r.getScore())
                : String.format(Locale.ROOT, "%,.0f ± %,.0f", r.getScore(), error);
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value.strip();
    }
}
