package io.buslane.bench.postgres;

import io.buslane.testsupport.BrokerProcess;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;

/**
 * The PostgreSQL storage benchmark (bench/run-postgres.sh, issue #19): on one machine and one PostgreSQL cluster
 * with its default durable settings, the same durable 1 KiB messages through (a) Buslane on PostgreSQL, (b) Buslane
 * on its file journal and (c) a hand-built {@code FOR UPDATE SKIP LOCKED} queue over pgjdbc ({@link HandQueue}):
 * pipelined sends, and end-to-end send → peek-lock receive → complete, with the same message count and the same
 * number of sending and receiving threads; then the restart time of a Buslane-on-PostgreSQL broker killed with
 * {@code kill -9} while holding a large backlog, and the size of its table after many messages sent and completed.
 *
 * <p>Arguments: {@code --pg-port P --pg-data DIR [--quick] [--jar buslane.jar] [--work DIR] [--docs FILE]
 * [--no-docs] [--table-messages N]}.
 */
public final class PostgresBench {

    static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [
                      { "Name": "warm" }, { "Name": "e2e" },
                      { "Name": "warm-send", "Properties": { "MaxSizeInMegabytes": 5120 } },
                      { "Name": "send", "Properties": { "MaxSizeInMegabytes": 5120 } },
                      { "Name": "backlog", "Properties": { "MaxSizeInMegabytes": 5120 } },
                      { "Name": "churn", "Properties": { "MaxSizeInMegabytes": 5120 } }
                    ]
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;
    static final String PG = "Buslane on PostgreSQL";
    static final String FILE = "Buslane on files";
    static final String HAND = "hand-built SKIP LOCKED queue";

    final boolean quick;
    final Path jar;
    final Path work;
    final PgServer pg;
    /** Messages of each throughput workload (the same for the three systems). */
    final long messages;
    final long warmup;
    final int senders = 4;
    final int receivers = 4;
    /** End-to-end: at most this many messages sent and not yet received. */
    final long inFlight = 5000;
    /** Rows per INSERT and per DELETE ... RETURNING of the hand-built queue. */
    final int batch;
    final long recoveryMessages;
    final long tableMessages;
    /** The table-size run's senders stop after this long even if fewer messages were sent. */
    final long tableMaxSeconds;
    final String heap = "1g";
    final List<Row> rows = new ArrayList<>();
    final List<String> diagnostics = new ArrayList<>();
    final List<String> failures = new ArrayList<>();
    /** Which parts run: pg, file, hand, recovery, table (default all). */
    java.util.Set<String> only = java.util.Set.of("pg", "file", "hand", "recovery", "table");
    Recovery recovery;
    /** When the table-size run's longest probe send started, in seconds from the run's start. */
    double maxProbeAtS = Double.NaN;
    /** The table-size run's longest probe send after its first 5 seconds, in milliseconds. */
    double maxProbeAfter5s = Double.NaN;
    TableSize tableSize;
    private final Path configJson;

    /** One measured workload of one system. */
    record Row(String workload, String system, long messages, double seconds, double javaCpuS, double pgCpuS,
               double clientCpuS, double jitCpuS, long commits, long walBytes, long walSyncs, double maxSendMs) {
        double rate() {
            return messages / seconds;
        }

        /** Cores busy on average: the broker (or application), the cluster and the load client together. */
        double coresBusy() {
            return (javaCpuS + pgCpuS + (system.equals(HAND) ? 0 : clientCpuS)) / seconds;
        }
    }

    /** The kill -9 restart with a backlog. */
    record Recovery(long messages, double loadSeconds, long rows, long tableBytes, double restartSeconds,
                    double firstReceiveMs, double replayQueryMs, String replayPlan, double pgCpuS, double javaCpuS) {
    }

    /** The table after many messages sent and completed. */
    record TableSize(long messages, double seconds, long peakBytes, long endBytes, long endRows, long liveBytes,
                     long autovacuums, int vacuumSeconds, double maxSendMs, double probeP50, double probeP99,
                     double probeMax, double probeMaxDuringVacuum, double probeMaxOutsideVacuum, long peakDead,
                     long tableOnlyBytes) {
    }

    PostgresBench(boolean quick, Path jar, Path work, PgServer pg, long tableMessages) throws Exception {
        this.quick = quick;
        this.jar = jar;
        this.work = work;
        this.pg = pg;
        this.messages = quick ? 50_000 : 200_000;
        this.warmup = quick ? 20_000 : 100_000;
        this.batch = 100;
        this.recoveryMessages = quick ? 100_000 : 1_000_000;
        this.tableMessages = tableMessages > 0 ? tableMessages : quick ? 100_000 : 10_000_000;
        this.tableMaxSeconds = quick ? 60 : 660;
        Files.createDirectories(work);
        this.configJson = work.resolve("config.json");
        Files.writeString(configJson, CONFIG);
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        boolean docs = true;
        Path jar = Path.of("buslane-server/target/buslane.jar");
        Path work = Path.of("bench/target/postgres-bench");
        Path docsFile = Path.of("docs/benchmarks.md");
        int pgPort = 0;
        Path pgData = null;
        long tableMessages = 0;
        String only = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--no-docs" -> docs = false;
                case "--jar" -> jar = Path.of(args[++i]);
                case "--work" -> work = Path.of(args[++i]);
                case "--docs" -> docsFile = Path.of(args[++i]);
                case "--pg-port" -> pgPort = Integer.parseInt(args[++i]);
                case "--pg-data" -> pgData = Path.of(args[++i]);
                case "--table-messages" -> tableMessages = Long.parseLong(args[++i].replace("_", ""));
                case "--only" -> only = args[++i];
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (pgPort == 0 || pgData == null) {
            throw new IllegalArgumentException("--pg-port and --pg-data are required (bench/run-postgres.sh)");
        }
        long start = System.nanoTime();
        PostgresBench bench = new PostgresBench(quick, jar.toAbsolutePath(), work.toAbsolutePath(),
                new PgServer(pgPort, pgData), tableMessages);
        if (only != null) {
            bench.only = java.util.Set.of(only.split(","));
        }
        bench.run();
        PgReport report = new PgReport(bench);
        System.out.println();
        report.resultLines().forEach(System.out::println);
        bench.failures.forEach(f -> System.out.println("FAILED " + f));
        System.out.printf(Locale.ROOT, "Benchmark time: %.0f s%n", (System.nanoTime() - start) / 1e9);
        if (docs) {
            report.write(docsFile);
            System.out.println("Wrote the PostgreSQL section of " + docsFile);
        }
        System.exit(0);
    }

    interface Phase {
        void run() throws Exception;
    }

    private void phase(String part, String name, Phase body) {
        if (!only.contains(part)) {
            return;
        }
        System.out.println("== " + name + " (" + java.time.LocalTime.now().withNano(0) + ")");
        try {
            body.run();
        } catch (Exception | Error e) {
            System.out.println("FAILED " + name + ": " + e);
            e.printStackTrace(System.out);
            failures.add(name + ": " + e);
        }
    }

    void run() {
        phase("pg", PG, () -> {
            pg.createDatabase("bus_throughput");
            try (BrokerProcess b = broker("pg", 2, "bus_throughput")) {
                throughputOnBroker(PG, b, "bus_throughput");
            }
        });
        phase("file", FILE, () -> {
            try (BrokerProcess b = broker("file", 2, null)) {
                throughputOnBroker(FILE, b, null);
            }
        });
        phase("hand", HAND, this::throughputHandBuilt);
        phase("recovery", "recovery", this::recovery);
        phase("table", "table size", this::tableSize);
    }

    /** A fresh broker (fresh data directory), on database {@code db} or on files when it is null; started. */
    BrokerProcess broker(String name, int shards, String db) throws Exception {
        List<String> args = new ArrayList<>(List.of("--shards", Integer.toString(shards), "--sync", "always"));
        if (db != null) {
            args.addAll(List.of("--storage", pg.storageUrl(db)));
        }
        return launchBroker(jar, work, configJson, name, heap, args);
    }

    /**
     * A fresh broker process named {@code name} (data directory and log in {@code work}), the packaged jar with
     * {@code -Xms/-Xmx heap}, the {@code BENCH_BUSLANE_JVM_OPTS} (NAME in them becomes {@code name}), the config
     * file and {@code args}; started (its {@code /health} answered 200).
     */
    static BrokerProcess launchBroker(Path jar, Path work, Path config, String name, String heap, List<String> args)
            throws Exception {
        Path dir = work.resolve("broker-" + name);
        deleteTree(dir);
        List<String> jvm = new ArrayList<>(List.of("-Xms" + heap, "-Xmx" + heap, "-Djava.awt.headless=true"));
        String extra = System.getenv().getOrDefault("BENCH_BUSLANE_JVM_OPTS", "").replace("NAME", name).trim();
        if (!extra.isEmpty()) {
            jvm.addAll(List.of(extra.split("\\s+")));
        }
        BrokerProcess p = BrokerProcess.builder().jar(jar).jvmOptions(jvm).dataDir(dir)
                .log(work.resolve("broker-" + name + ".log")).configFile(config)
                .args(args.toArray(new String[0])).startTimeout(Duration.ofSeconds(180))
                .stopTimeout(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).build();
        p.launch();
        return p;
    }

    static void deleteTree(Path dir) throws Exception {
        if (Files.exists(dir)) {
            try (var walk = Files.walk(dir)) {
                for (Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
                    Files.delete(p);
                }
            }
        }
    }

    /** What a measured body returns: the longest send it saw, in milliseconds. */
    interface Measured {
        double run() throws Exception;
    }

    /** Runs {@code body} and records its row: time, CPU of {@code javaPid} and of the cluster, commits, WAL. */
    Row measure(String workload, String system, String db, long count, String javaPid, Measured body)
            throws Exception {
        String statsDb = db != null ? db : "postgres";
        if (db != null) {
            pg.resetStatements(db);
        }
        PgServer.Snapshot s0 = pg.snapshot(statsDb, false);
        long j0 = PgServer.processCpuMicros(javaPid);
        long c0 = PgServer.processCpuMicros("self");
        long jit0 = PgServer.jitCpuMicros(javaPid);
        long t0 = System.nanoTime();
        double maxSendMs = body.run();
        long t1 = System.nanoTime();
        long j1 = PgServer.processCpuMicros(javaPid);
        long c1 = PgServer.processCpuMicros("self");
        long jit1 = PgServer.jitCpuMicros(javaPid);
        long pgCpu1 = pg.cpuMicros();
        PgServer.Snapshot s1 = pg.snapshot(statsDb, true);
        Row row = new Row(workload, system, count, (t1 - t0) / 1e9, (j1 - j0) / 1e6, (pgCpu1 - s0.cpuMicros()) / 1e6,
                (c1 - c0) / 1e6, (jit1 - jit0) / 1e6, s1.commits() - s0.commits(), s1.walBytes() - s0.walBytes(),
                s1.walSyncs() - s0.walSyncs(), maxSendMs);
        rows.add(row);
        System.out.printf(Locale.ROOT, "%s, %s: %d msgs in %.2f s = %.0f msgs/s; java %.1f s CPU, postgres %.1f s CPU;"
                + " %d commits, %.0f WAL bytes/msg, %d WAL syncs; max send %.1f ms; %.2f cores busy; JIT %.1f s%n",
                workload, system, count, row.seconds(), row.rate(), row.javaCpuS(), row.pgCpuS(), row.commits(),
                (double) row.walBytes() / count, row.walSyncs(), maxSendMs, row.coresBusy(), row.jitCpuS());
        if (db != null) {
            List<String> top = pg.topStatements(db, 4);
            diagnostics.add(workload + ", " + system + ": " + String.join("; ", top));
            top.forEach(s -> System.out.println("   " + s));
        }
        return row;
    }

    /**
     * Unmeasured end-to-end (and, {@code withSends}, send-only) passes through queues "warm" and "warm-send", so
     * that the broker's JIT compiled its paths: repeated (up to {@code passes}) while its JIT compiler threads took
     * more than 5 % of its CPU.
     */
    void warmUp(BrokerProcess b, int passes, boolean withSends) throws Exception {
        String pid = Long.toString(b.pid());
        for (int pass = 1; pass <= passes; pass++) {
            long cpu0 = PgServer.processCpuMicros(pid);
            long jit0 = PgServer.jitCpuMicros(pid);
            try (BrokerLoad warm = new BrokerLoad(b.amqpPort())) {
                List<Thread> r = warm.receivers("warm", receivers);
                List<Thread> s = warm.senders("warm", senders, warmup, inFlight);
                BrokerLoad.start(r);
                BrokerLoad.start(s);
                warm.join(s, 300_000);
                warm.awaitReceived(warmup, 300_000);
            }
            if (withSends) {
                try (BrokerLoad warm = new BrokerLoad(b.amqpPort())) {
                    List<Thread> s = warm.senders("warm-send", senders, warmup / 2, 0);
                    BrokerLoad.start(s);
                    warm.join(s, 300_000);
                }
            }
            double jitShare = (double) (PgServer.jitCpuMicros(pid) - jit0)
                    / Math.max(1, PgServer.processCpuMicros(pid) - cpu0);
            System.out.printf(Locale.ROOT, "warm-up pass %d: JIT %.0f %% of the broker's CPU%n", pass,
                    jitShare * 100);
            if (jitShare <= 0.05) {
                break;
            }
        }
    }

    /** Unmeasured warm-up, then end-to-end, then pipelined sends (which leave their messages queued). */
    void throughputOnBroker(String system, BrokerProcess b, String db) throws Exception {
        String pid = Long.toString(b.pid());
        warmUp(b, quick ? 1 : 3, true);
        measure("end_to_end", system, db, messages, pid, () -> {
            try (BrokerLoad load = new BrokerLoad(b.amqpPort())) {
                List<Thread> r = load.receivers("e2e", receivers);
                List<Thread> s = load.senders("e2e", senders, messages, inFlight);
                BrokerLoad.start(r);
                BrokerLoad.start(s);
                load.join(s, 900_000);
                load.awaitReceived(messages, 900_000);
                return load.maxSendNanos.get() / 1e6;
            }
        });
        measure("pipelined_send", system, db, messages, pid, () -> {
            try (BrokerLoad load = new BrokerLoad(b.amqpPort())) {
                List<Thread> s = load.senders("send", senders, messages, 0);
                BrokerLoad.start(s);
                load.join(s, 900_000);
                return load.maxSendNanos.get() / 1e6;
            }
        });
    }

    void throughputHandBuilt() throws Exception {
        String db = "hand_queue";
        pg.createDatabase(db);
        try (HandQueue warm = new HandQueue(pg, db, batch)) {
            List<Thread> c = warm.consumers(receivers);
            List<Thread> p = warm.producers(senders, warmup, inFlight);
            BrokerLoad.start(c);
            BrokerLoad.start(p);
            warm.join(p, 300_000);
            warm.awaitReceived(warmup, 300_000);
        }
        measure("end_to_end", HAND, db, messages, "self", () -> {
            try (HandQueue q = new HandQueue(pg, db, batch)) {
                List<Thread> c = q.consumers(receivers);
                List<Thread> p = q.producers(senders, messages, inFlight);
                BrokerLoad.start(c);
                BrokerLoad.start(p);
                q.join(p, 900_000);
                q.awaitReceived(messages, 900_000);
                diagnostics.add("end_to_end, " + HAND + ": " + q.emptyPolls.get() + " empty polls (1 ms pause each)");
                return q.maxInsertNanos.get() / 1e6;
            }
        });
        measure("pipelined_send", HAND, db, messages, "self", () -> {
            try (HandQueue q = new HandQueue(pg, db, batch)) {
                List<Thread> p = q.producers(senders, messages, 0);
                BrokerLoad.start(p);
                q.join(p, 900_000);
                return q.maxInsertNanos.get() / 1e6;
            }
        });
    }

    static long queryLong(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Loads the backlog through the broker, kills it with kill -9, and times the restart to /health 200. */
    void recovery() throws Exception {
        String db = "bus_recovery";
        pg.createDatabase(db);
        BrokerProcess b = broker("recovery", 1, db);
        try {
            long t0 = System.nanoTime();
            try (BrokerLoad load = new BrokerLoad(b.amqpPort())) {
                List<Thread> s = load.senders("backlog", senders, recoveryMessages, 0);
                BrokerLoad.start(s);
                load.join(s, 1_200_000);
            }
            double loadSeconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf(Locale.ROOT, "loaded %d messages in %.1f s (%.0f msgs/s)%n", recoveryMessages,
                    loadSeconds, recoveryMessages / loadSeconds);
            b.kill();
            long rowCount;
            long bytes;
            try (Connection c = pg.connect(db)) {
                rowCount = queryLong(c, "SELECT count(*) FROM buslane_record");
                bytes = queryLong(c, "SELECT pg_total_relation_size('buslane_record')");
            }
            pg.resetStatements(db);
            long pgCpu0 = pg.cpuMicros();
            long r0 = System.nanoTime();
            b.launch();
            double restart = (System.nanoTime() - r0) / 1e9;
            double pgCpu = (pg.cpuMicros() - pgCpu0) / 1e6;
            double javaCpu = PgServer.processCpuMicros(Long.toString(b.pid())) / 1e6;
            System.out.printf(Locale.ROOT, "restart after kill -9 with %d rows (%d MB): %.2f s to /health 200 "
                    + "(broker JVM %.1f s CPU, postgres %.1f s CPU)%n", rowCount, bytes >> 20, restart, javaCpu, pgCpu);
            double firstMs;
            try (BrokerLoad load = new BrokerLoad(b.amqpPort())) {
                long f0 = System.nanoTime();
                List<Thread> r = load.receivers("backlog", 1);
                BrokerLoad.start(r);
                load.awaitReceived(1, 60_000);
                firstMs = (System.nanoTime() - f0) / 1e6;
            }
            List<String> top = pg.topStatements(db, 20).stream().filter(x -> x.contains("SELECT position, record_id"))
                    .toList();
            diagnostics.add("restart after kill -9, the broker's replay query: " + String.join("; ", top));
            top.forEach(x -> System.out.println("   " + x));
            b.stop();
            String[] plan = replayPlan(db);
            System.out.println("replay query alone: " + plan[0] + " ms, " + plan[1]);
            recovery = new Recovery(recoveryMessages, loadSeconds, rowCount, bytes, restart, firstMs,
                    Double.parseDouble(plan[0]), plan[1], pgCpu, javaCpu);
        } finally {
            b.stop();
        }
    }

    /**
     * The replay query of the shard journal under EXPLAIN ANALYZE (broker stopped): {ms, its plan's nodes and sort
     * method, joined}.
     */
    String[] replayPlan(String db) throws Exception {
        try (Connection c = pg.connect(db); Statement s = c.createStatement()) {
            long journal = queryLong(c, "SELECT journal_id FROM buslane_journal WHERE name = 'shard-0'");
            List<String> plan = new ArrayList<>();
            double ms = Double.NaN;
            try (ResultSet rs = s.executeQuery("EXPLAIN (ANALYZE, BUFFERS) SELECT position, record_id, kind, type,"
                    + " payload FROM buslane_record WHERE journal_id = " + journal + " ORDER BY position")) {
                while (rs.next()) {
                    String line = rs.getString(1).trim().replaceFirst("^-> +", "");
                    if (line.startsWith("Execution Time:")) {
                        ms = Double.parseDouble(line.replaceAll("[^0-9.]", ""));
                    } else if (line.contains("Scan") || line.startsWith("Sort") || line.startsWith("Gather")) {
                        plan.add(line.replaceAll("\\(cost=[^)]*\\) ", ""));
                    }
                }
            }
            s.execute("SET enable_sort = off");
            try (ResultSet rs = s.executeQuery("EXPLAIN (ANALYZE) SELECT position, record_id, kind, type, payload"
                    + " FROM buslane_record WHERE journal_id = " + journal + " ORDER BY position")) {
                String first = null;
                while (rs.next()) {
                    String line = rs.getString(1).trim();
                    first = first == null ? line.replaceAll("\\(cost=[^)]*\\) ", "") : first;
                    if (line.startsWith("Execution Time:")) {
                        plan.add("with enable_sort = off: " + first + ", " + line);
                    }
                }
            }
            return new String[] {Double.toString(ms), String.join("; ", plan)};
        }
    }

    void tableSize() throws Exception {
        String db = "bus_table";
        pg.createDatabase(db);
        try (BrokerProcess b = broker("table", 1, db)) {
            warmUp(b, 1, false);
            tableSize(b, db);
        }
    }

    private void tableSize(BrokerProcess b, String db) throws Exception {
        pg.resetStatements(db);
        try (TableSampler sampler = new TableSampler(pg, db)) {
            long t0 = System.nanoTime();
            double maxSend;
            long probes;
            long count;
            CountDownLatch done = new CountDownLatch(1);
            try (BrokerLoad load = new BrokerLoad(b.amqpPort())) {
                load.deadlineNanos = t0 + tableMaxSeconds * 1_000_000_000L;
                List<Thread> r = load.receivers("churn", receivers);
                List<Thread> s = load.senders("churn", senders, tableMessages, inFlight);
                Thread probe = load.probe("churn", done);
                BrokerLoad.start(r);
                BrokerLoad.start(s);
                probe.start();
                sampler.start();
                load.join(s, 3_600_000);
                done.countDown();
                probe.join(130_000);
                probes = load.probeSent.get();
                count = load.sent.get();
                load.awaitReceived(count + probes, 600_000);
                maxSend = load.maxSendNanos.get() / 1e6;
                double seconds = (System.nanoTime() - t0) / 1e9;
                sampler.stop();
                tableSize = sampler.result(count, seconds, maxSend, load.probe);
                maxProbeAtS = (load.probe.startOfMax() - t0) / 1e9;
                long after5s = t0 + 5_000_000_000L;
                maxProbeAfter5s = load.probe.maxMs(t -> t >= after5s);
                List<String> top = pg.topStatements(db, 3);
                diagnostics.add("table size, " + PG + ": " + String.join("; ", top));
                top.forEach(x -> System.out.println("   " + x));
                System.out.printf(Locale.ROOT, "longest probe send started %.1f s into the run%n", maxProbeAtS);
            }
            System.out.printf(Locale.ROOT, "table size: %d messages (+%d probes) in %.1f s; peak %d MB, end %d MB "
                    + "(%d rows, %d live payload bytes); %d autovacuums; max send %.1f ms, probe max %.1f ms%n",
                    count, probes, tableSize.seconds(), tableSize.peakBytes() >> 20,
                    tableSize.endBytes() >> 20, tableSize.endRows(), tableSize.liveBytes(), tableSize.autovacuums(),
                    maxSend, tableSize.probeMax());
        }
    }
}
