package io.buslane.bench.broker;

import io.buslane.bench.broker.BenchBroker.Kind;
import io.buslane.bench.broker.Results.Better;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The side-by-side broker benchmark (bench/run.sh): Buslane (the packaged jar) and an embedded Apache Artemis
 * 2.55.0 ({@link ArtemisMain}), each its own JVM with the same heap on loopback, driven by the same protonj2 client
 * ({@link AmqpLoad}) with durable 1 KiB messages. Workloads 1 to 4 run over several rounds with the brokers
 * alternating and a fresh broker (fresh data directory) per round; figures are medians. Broker CPU is the
 * process's utime + stime from /proc before and after each measured window.
 *
 * <p>Arguments: {@code [--quick] [--jar <buslane.jar>] [--work <dir>] [--docs <benchmarks.md>] [--no-docs]
 * [--only 0,1,2,3,4,5,6,7,8,9,10]} (0 is the client ceiling; 7 and 8 run together; 10 is sessions at scale,
 * {@link SessionBench}).
 */
public final class BrokerBench {

    static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [
                      { "Name": "w1" }, { "Name": "w1x4" }, { "Name": "w2sat" }, { "Name": "w2rate" },
                      { "Name": "w3" }, { "Name": "sdk" },
                      { "Name": "backlog", "Properties": { "MaxSizeInMegabytes": 5120 } },
                      { "Name": "sched", "Properties": { "MaxSizeInMegabytes": 5120 } },
                      { "Name": "sched-warmup", "Properties": {} },
                      { "Name": "sessions", "Properties": { "RequiresSession": true, "LockDuration": "PT1M" } },
                      { "Name": "plain", "Properties": { "MaxSizeInMegabytes": 5120 } },
                      { "Name": "accept", "Properties": { "RequiresSession": true, "LockDuration": "PT1M",
                                                          "MaxSizeInMegabytes": 5120 } },
                      { "Name": "idle", "Properties": { "RequiresSession": true } },
                      { "Name": "sdk-sessions", "Properties": { "RequiresSession": true } }
                    ],
                    "Topics": [
                      { "Name": "bench-topic", "Subscriptions": [
                          { "Name": "s1" }, { "Name": "s2" }, { "Name": "s3" }, { "Name": "s4" } ] }
                    ]
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    private final BenchConfig cfg;
    private final Results results = new Results();
    private final Set<Integer> only;
    private final Path configJson;
    private long artemisBufferTimeoutNs;
    final List<String> failures = new java.util.ArrayList<>();
    private int instance;
    /** False during a warm-up pass: {@link #window} only warms up, {@link #record} records nothing. */
    private boolean measuring = true;
    /** The warm-up pass under way (1, 2, ...), while {@link #measuring} is false. */
    private int warmPass;

    private BrokerBench(BenchConfig cfg, Set<Integer> only) throws IOException {
        this.cfg = cfg;
        this.only = only;
        Files.createDirectories(cfg.workDir);
        this.configJson = cfg.workDir.resolve("buslane-config.json");
        Files.writeString(configJson, CONFIG);
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        boolean docs = true;
        Path jar = Path.of("buslane-server/target/buslane.jar");
        Path work = Path.of("bench/target/broker-bench");
        Path docsFile = Path.of("docs/benchmarks.md");
        Set<Integer> only = new TreeSet<>(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--no-docs" -> docs = false;
                case "--jar" -> jar = Path.of(args[++i]);
                case "--work" -> work = Path.of(args[++i]);
                case "--docs" -> docsFile = Path.of(args[++i]);
                case "--only" -> {
                    only.clear();
                    for (String w : args[++i].split(",")) {
                        only.add(Integer.parseInt(w.trim()));
                    }
                }
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        BenchConfig cfg = new BenchConfig(quick, jar.toAbsolutePath(), work.toAbsolutePath(), docsFile);
        long start = System.nanoTime();
        BrokerBench bench = new BrokerBench(cfg, only);
        bench.run();
        System.out.println();
        for (Results.Entry e : bench.results.entries()) {
            System.out.println(e.resultLine());
        }
        for (String f : bench.failures) {
            System.out.println("FAILED " + f);
        }
        System.out.printf(Locale.ROOT, "Benchmark time: %.0f s%n", (System.nanoTime() - start) / 1e9);
        if (docs) {
            Report.write(docsFile, cfg, bench.results, bench.failures, bench.facts(),
                    System.getenv().getOrDefault("BENCH_COMMAND",
                    "bench/run.sh" + (quick ? " --quick" : "")));
        }
        System.exit(0);
    }

    private void run() throws Exception {
        artemisBufferTimeoutNs = DiskSync.meanSyncNanos(cfg.workDir, cfg.quick ? 200 : 1000);
        System.out.printf(Locale.ROOT, "Disk sync (4 KiB write + fsync): %.3f ms -> Artemis journal-buffer-timeout "
                + "%d ns%n", artemisBufferTimeoutNs / 1e6, artemisBufferTimeoutNs);
        if (only.contains(0)) {
            phase("client ceiling", this::clientCeiling);
        }
        if (only.stream().anyMatch(w -> w >= 1 && w <= 4)) {
            for (int round = 0; round < cfg.rounds; round++) {
                Kind[] order = round % 2 == 0 ? new Kind[] {Kind.BUSLANE, Kind.ARTEMIS}
                        : new Kind[] {Kind.ARTEMIS, Kind.BUSLANE};
                for (Kind kind : order) {
                    if (!cfg.brokers.contains(kind.label)) {
                        continue;
                    }
                    String name = "round " + (round + 1) + " of " + cfg.rounds + ": " + kind.label;
                    phase(name, () -> {
                        try (BenchBroker b = fresh(kind)) {
                            warmUp(b);
                            core(b, true);
                        }
                    });
                }
            }
        }
        if (only.contains(7) || only.contains(8)) {
            for (Kind kind : new Kind[] {Kind.BUSLANE, Kind.ARTEMIS}) {
                phase("backlog and recovery: " + kind.label, () -> {
                    try (BenchBroker b = fresh(kind)) {
                        backlogAndRecovery(b);
                    }
                });
            }
        }
        if (only.contains(5)) {
            phase("sessions", () -> {
                try (BenchBroker b = fresh(Kind.BUSLANE)) {
                    sessions(b);
                }
            });
        }
        if (only.contains(9)) {
            phase("Java SDK", () -> {
                try (BenchBroker b = fresh(Kind.BUSLANE)) {
                    sdk(b);
                }
            });
        }
        if (only.contains(10)) {
            SessionBench sessions = new SessionBench(cfg, results, configJson, heap -> fresh(Kind.BUSLANE, heap));
            // BENCH_SESSION_PARTS=accept,idle runs some parts only (traffic, accept, idle, sdk)
            Set<String> parts = Set.of(System.getenv().getOrDefault("BENCH_SESSION_PARTS", "traffic,accept,idle,sdk")
                    .split(","));
            if (parts.contains("traffic")) {
                phase("sessions at scale: traffic against plain", sessions::traffic);
            }
            if (parts.contains("accept")) {
                phase("sessions at scale: accept next", sessions::acceptAtScale);
            }
            if (parts.contains("idle")) {
                phase("sessions at scale: idle sessions", sessions::idleSessions);
            }
            if (parts.contains("sdk")) {
                phase("sessions at scale: the Java SDK's session processor", sessions::sdkProcessor);
            }
        }
        if (only.contains(6)) {
            phase("scheduled", () -> {
                try (BenchBroker b = fresh(Kind.BUSLANE)) {
                    scheduled(b);
                }
            });
        }
        targets();
    }

    interface Phase {
        void run() throws Exception;
    }

    /** Runs one phase; a failure is reported (and listed in the docs) and the run goes on with the next. */
    private void phase(String name, Phase body) {
        System.out.println("== " + name);
        try {
            body.run();
        } catch (Exception | Error e) {
            System.out.println("FAILED " + name + ": " + e);
            e.printStackTrace(System.out);
            failures.add(name + ": " + e);
        }
    }

    private void targets() {
        for (String w : List.of("pipelined_send_1conn", "pipelined_send_4conn", "end_to_end", "fanout_4subs")) {
            results.target(w, "cpu_us_per_msg", "ratio ≥ 3", true, r -> r >= 3);
            results.target(w, "msgs_per_s", "ratio ≥ 1.5 (or client ceiling)", true, r -> r >= 1.5);
        }
        results.target("end_to_end_5k_rate", "p99_ms", "ratio ≥ 3", true, r -> r >= 3);
        results.target("one_at_a_time_send", "p99_ms", "Buslane ≤ 1 ms", false, v -> v <= 1.0);
        results.target("scheduled", "activation_lag_p99_ms", "≤ 10 ms", false, v -> v <= 10);
        results.target("scheduled", "heap_bytes_per_msg", "≤ 300 B", false, v -> v <= 300);
        results.target("scheduled", "heap_bytes_per_msg_marginal", "≤ 300 B", false, v -> v <= 300);
        results.target("receive_backlog", "cpu_growth_large_vs_1k", "≤ 1.25", false, v -> v <= 1.25);
        results.target("receive_backlog", "throughput_drop_1k_vs_large", "≤ 1.25", false, v -> v <= 1.25);
        results.target("restart_recovery", "recovery_s", "Buslane < 5 s", false, v -> v < 5);
    }

    private BenchBroker fresh(Kind kind) throws Exception {
        return fresh(kind, cfg.heap);
    }

    private BenchBroker fresh(Kind kind, String heap) throws Exception {
        // One broker at a time: the previous instances' data goes (their logs stay, next to the directories).
        try (Stream<Path> old = Files.list(cfg.workDir)) {
            for (Path p : old.filter(Files::isDirectory).toList()) {
                deleteTree(p);
            }
        }
        Path dir = cfg.workDir.resolve(kind.label + "-" + (++instance));
        BenchBroker b = switch (kind) {
            case BUSLANE -> BenchBroker.buslane(cfg, dir, configJson, heap);
            case ARTEMIS -> BenchBroker.artemis(cfg, dir, artemisBufferTimeoutNs);
            case SINK -> BenchBroker.sink(cfg, dir);
        };
        return new Cleanup(b).start();
    }

    /** Deletes the data directory when the broker is closed (the disk is shared by every round). */
    private static final class Cleanup {
        final BenchBroker b;

        Cleanup(BenchBroker b) {
            this.b = b;
        }

        BenchBroker start() throws Exception {
            b.start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    b.stop();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            return b;
        }
    }

    // ---------------------------------------------------------------------------------------------- workloads

    /** Measures {@code counter} / {@code divisor} per second and the broker's CPU µs per unit over one window. */
    private double[] window(BenchBroker b, AmqpLoad load, AtomicLong counter, double divisor)
            throws InterruptedException {
        sleepChecked(load, cfg.warmupMs);
        if (!measuring) {
            return new double[] {Double.NaN, Double.NaN};
        }
        long c0 = counter.get();
        long[] jg0 = b.jitAndGcMicros();
        long cpu0 = b.cpuMicros();
        long t0 = System.nanoTime();
        sleepChecked(load, cfg.measureMs);
        long c1 = counter.get();
        long cpu1 = b.cpuMicros();
        long[] jg1 = b.jitAndGcMicros();
        long t1 = System.nanoTime();
        double units = (c1 - c0) / divisor;
        if (cpu1 > cpu0) {
            System.out.printf(Locale.ROOT, "    (%s's CPU in this window: %.1f %% JIT compiler threads, %.1f %% GC "
                    + "threads)%n", b.kind.label, 100.0 * (jg1[0] - jg0[0]) / (cpu1 - cpu0),
                    100.0 * (jg1[1] - jg0[1]) / (cpu1 - cpu0));
            // for bench/profile.sh: which samples of a system-wide perf recording (-k CLOCK_MONOTONIC, the clock
            // of System.nanoTime on Linux) fall in this window
            System.out.printf(Locale.ROOT, "    (window: pid %d, monotonic %.6f,%.6f s, %.0f units)%n", b.pid(),
                    t0 / 1e9, t1 / 1e9, units);
        }
        return new double[] {units / ((t1 - t0) / 1e9), units == 0 ? Double.NaN : (cpu1 - cpu0) / units};
    }

    /** Sleeps {@code ms}, failing early when one of the load's threads failed. */
    static void sleepChecked(AmqpLoad load, long ms) throws InterruptedException {
        long end = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < end) {
            load.check();
            Thread.sleep(Math.min(50, Math.max(1, (end - System.nanoTime()) / 1_000_000L)));
        }
    }

    private void clientCeiling() throws Exception {
        System.out.println("Client ceiling against a no-op sink");
        try (BenchBroker sink = fresh(Kind.SINK)) {
            for (int conns : new int[] {1, 4}) {
                try (AmqpLoad load = new AmqpLoad(sink.port)) {
                    load.pipelinedSenders(conns, "ceiling", cfg.window, 0, 0, false);
                    double[] m = window(sink, load, load.sent, 1);
                    results.add("pipelined_send_" + conns + "conn", "msgs_per_s", Better.HIGHER, "sink", m[0]);
                    System.out.printf(Locale.ROOT, "  (the sink's own CPU: %.1f µs per message)%n", m[1]);
                }
            }
        }
    }

    /**
     * Unmeasured passes of workloads 1 to 4 on a fresh broker (each figure only for its warm-up time, nothing
     * recorded), so that the broker's JIT has compiled the paths of every workload before any is measured, the same
     * for both brokers: otherwise the compiler threads' CPU (a fifth of the broker's in the first ten seconds) lands
     * in whichever figures come first. One pass was not always enough (Artemis: 10 to 20 % of its CPU in the measured
     * windows was still its compiler threads), so a pass is repeated while the compiler threads took more than
     * {@link BenchConfig#warmJitShare} of the broker's CPU, up to {@link BenchConfig#maxWarmupPasses} passes.
     */
    private void warmUp(BenchBroker b) throws Exception {
        for (int pass = 1; ; pass++) {
            warmPass = pass;
            long cpu0 = b.cpuMicros();
            long jit0 = b.jitAndGcMicros()[0];
            core(b, false);
            double share = (b.jitAndGcMicros()[0] - jit0) / (double) Math.max(1, b.cpuMicros() - cpu0);
            System.out.printf(Locale.ROOT, "    (warm-up pass %d: JIT compiler threads %.1f %% of %s's CPU)%n", pass,
                    100 * share, b.kind.label);
            if (share < cfg.warmJitShare || pass >= cfg.maxWarmupPasses) {
                return;
            }
        }
    }

    private void core(BenchBroker b, boolean measured) throws Exception {
        measuring = measured;
        if (!measured) {
            System.out.println("  (warm-up pass: every workload for " + cfg.warmupMs + " ms, not measured)");
        }
        try {
            coreWorkloads(b);
        } finally {
            measuring = true;
        }
    }

    private void record(String workload, String metric, Better better, String broker, double value) {
        if (measuring) {
            results.add(workload, metric, better, broker, value);
        }
    }

    private void coreWorkloads(BenchBroker b) throws Exception {
        String who = b.kind.label;
        if (only.contains(2)) {
            try (AmqpLoad load = new AmqpLoad(b.port)) {
                load.receiver("w2sat", false, 0);
                load.pipelinedSenders(1, "w2sat", cfg.window, cfg.inFlight, 0, false);
                double[] m = window(b, load, load.received, 1);
                record("end_to_end", "msgs_per_s", Better.HIGHER, who, m[0]);
                record("end_to_end", "cpu_us_per_msg", Better.LOWER, who, m[1]);
            }
            try (AmqpLoad load = new AmqpLoad(b.port)) {
                load.receiver("w2rate", true, System.nanoTime() + cfg.warmupMs * 1_000_000L);
                load.fixedRateSender("w2rate", cfg.fixedRate);
                double[] m = window(b, load, load.received, 1);
                record("end_to_end_5k_rate", "msgs_per_s", Better.HIGHER, who, m[0]);
                record("end_to_end_5k_rate", "cpu_us_per_msg", Better.LOWER, who, m[1]);
                record("end_to_end_5k_rate", "p50_ms", Better.LOWER, who, load.latency.ms(50));
                record("end_to_end_5k_rate", "p99_ms", Better.LOWER, who, load.latency.ms(99));
            }
        }
        if (only.contains(3)) {
            try (AmqpLoad load = new AmqpLoad(b.port)) {
                load.oneAtATimeSender("w3", System.nanoTime() + cfg.warmupMs * 1_000_000L);
                double[] m = window(b, load, load.sent, 1);
                record("one_at_a_time_send", "msgs_per_s", Better.HIGHER, who, m[0]);
                record("one_at_a_time_send", "p50_ms", Better.LOWER, who, load.latency.ms(50));
                record("one_at_a_time_send", "p99_ms", Better.LOWER, who, load.latency.ms(99));
            }
        }
        if (only.contains(4)) {
            try (AmqpLoad load = new AmqpLoad(b.port)) {
                load.fanout = ArtemisMain.SUBSCRIPTIONS;
                var c = load.connect();
                for (int i = 1; i <= ArtemisMain.SUBSCRIPTIONS; i++) {
                    String address = b.kind == Kind.ARTEMIS ? ArtemisMain.TOPIC + "::s" + i
                            : ArtemisMain.TOPIC + "/Subscriptions/s" + i;
                    load.receiver(c, address, false, 0, load.received);
                }
                load.pipelinedSenders(1, ArtemisMain.TOPIC, cfg.window, cfg.inFlight, 0, b.kind == Kind.ARTEMIS);
                double[] m = window(b, load, load.received, ArtemisMain.SUBSCRIPTIONS);
                record("fanout_4subs", "msgs_per_s", Better.HIGHER, who, m[0]);
                record("fanout_4subs", "cpu_us_per_msg", Better.LOWER, who, m[1]);
            }
        }
        // last: the pipelined sends leave their messages queued (about 1.6 million in a full round), and that
        // backlog would otherwise sit in the heap of the broker (or its paging store) during the other workloads;
        // warmed up in the first warm-up pass only (the other workloads' senders take the same paths)
        if (only.contains(1) && (measuring || warmPass == 1)) {
            for (int conns : new int[] {1, 4}) {
                try (AmqpLoad load = new AmqpLoad(b.port)) {
                    load.pipelinedSenders(conns, conns == 1 ? "w1" : "w1x4", cfg.window, 0, 0, false);
                    double[] m = window(b, load, load.sent, 1);
                    record("pipelined_send_" + conns + "conn", "msgs_per_s", Better.HIGHER, who, m[0]);
                    record("pipelined_send_" + conns + "conn", "cpu_us_per_msg", Better.LOWER, who, m[1]);
                }
            }
        }
    }

    /** Workloads 7 and 8 on one broker: receive with a small then a large backlog in front, then restart. */
    private void backlogAndRecovery(BenchBroker b) throws Exception {
        String who = b.kind.label;
        preload(b, cfg.smallBacklog);
        double[] small = backlogWindow(b, cfg.smallBacklog);
        results.add("receive_backlog_1k", "msgs_per_s", Better.HIGHER, who, small[0]);
        results.add("receive_backlog_1k", "cpu_us_per_msg", Better.LOWER, who, small[1]);
        long t0 = System.nanoTime();
        preload(b, cfg.largeBacklog - cfg.smallBacklog);
        System.out.printf(Locale.ROOT, "  preloaded %d messages in %.1f s%n", cfg.largeBacklog - cfg.smallBacklog,
                (System.nanoTime() - t0) / 1e9);
        double[] large = backlogWindow(b, cfg.largeBacklog);
        String label = "receive_backlog_" + (cfg.largeBacklog >= 1_000_000 ? cfg.largeBacklog / 1_000_000 + "m"
                : cfg.largeBacklog / 1000 + "k");
        results.add(label, "msgs_per_s", Better.HIGHER, who, large[0]);
        results.add(label, "cpu_us_per_msg", Better.LOWER, who, large[1]);
        results.add("receive_backlog", "cpu_growth_large_vs_1k", Better.LOWER, who, large[1] / small[1]);
        results.add("receive_backlog", "throughput_drop_1k_vs_large", Better.LOWER, who, small[0] / large[0]);

        if (only.contains(8)) {
            b.stop();
            long start = System.nanoTime();
            b.launchOnly();
            long deadline = start + 300_000_000_000L;
            boolean got = false;
            while (!got && System.nanoTime() < deadline) {
                if (!b.alive()) {
                    throw new IllegalStateException(who + " died during recovery:\n" + b.logTail());
                }
                if (!b.canConnect()) {
                    Thread.sleep(5);
                    continue;
                }
                try (AmqpLoad probe = new AmqpLoad(b.port)) {
                    probe.receiver("backlog", false, 0);
                    got = probe.awaitReceived(1, 10_000);
                } catch (Exception e) {
                    Thread.sleep(20);
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            results.add("restart_recovery", "recovery_s", Better.LOWER, who, got ? seconds : Double.NaN);
            System.out.printf(Locale.ROOT, "  %s: first message of ~%d stored received %.2f s after process start%n",
                    who, cfg.largeBacklog, seconds);
        }
    }

    private void preload(BenchBroker b, int count) throws Exception {
        try (AmqpLoad load = new AmqpLoad(b.port)) {
            load.pipelinedSenders(1, "backlog", cfg.window, 0, count, false);
            if (!load.awaitSent(count, 900_000)) {
                throw new IllegalStateException("preload of " + count + " did not finish");
            }
        }
    }

    /**
     * End-to-end on a queue holding {@code backlog} messages: the receiver takes the oldest (the backlog's front)
     * but never lets the depth fall below {@code backlog}; the sender keeps it under backlog + the in-flight cap.
     */
    private double[] backlogWindow(BenchBroker b, int backlog) throws Exception {
        try (AmqpLoad load = new AmqpLoad(b.port)) {
            load.preloaded = backlog;
            load.backlogFloor = backlog;
            load.receiver("backlog", false, 0);
            load.pipelinedSenders(1, "backlog", cfg.window, backlog + cfg.inFlight, 0, false);
            return window(b, load, load.received, 1);
        }
    }

    /** Workload 5: sessions × 10 messages through session receivers (4 connections, next-available session). */
    private void sessions(BenchBroker b) throws Exception {
        int total = cfg.sessions * cfg.messagesPerSession;
        try (AmqpLoad load = new AmqpLoad(b.port)) {
            long t0 = System.nanoTime();
            load.sendSessions("sessions", cfg.sessions, cfg.messagesPerSession, cfg.window);
            double sendSecs = (System.nanoTime() - t0) / 1e9;
            results.add("sessions_" + cfg.sessions + "x10", "send_msgs_per_s", Better.HIGHER, "buslane",
                    total / sendSecs);
            AtomicLong done = new AtomicLong();
            long cpu0 = b.cpuMicros();
            long t1 = System.nanoTime();
            load.sessionReceivers("sessions", 4, cfg.sessions, cfg.messagesPerSession, done);
            long deadline = System.nanoTime() + 600_000_000_000L;
            while (done.get() < cfg.sessions && System.nanoTime() < deadline) {
                load.check();
                Thread.sleep(5);
            }
            double secs = (System.nanoTime() - t1) / 1e9;
            long cpu1 = b.cpuMicros();
            String w = "sessions_" + cfg.sessions + "x10";
            results.add(w, "sessions_per_s", Better.HIGHER, "buslane", done.get() / secs);
            results.add(w, "msgs_per_s", Better.HIGHER, "buslane", load.received.get() / secs);
            results.add(w, "cpu_us_per_msg", Better.LOWER, "buslane", (cpu1 - cpu0) / (double) load.received.get());
        }
    }

    /** Workload 9: the official Java SDK against Buslane. */
    private void sdk(BenchBroker b) {
        SdkLoad.Result r = SdkLoad.run(b.port, "sdk", cfg.sdkMessages, b::cpuMicros);
        results.add("java_sdk_batch_send", "msgs_per_s", Better.HIGHER, "buslane", r.sendPerSec());
        results.add("java_sdk_batch_send", "cpu_us_per_msg", Better.LOWER, "buslane", r.sendCpuUs());
        results.add("java_sdk_receive_complete", "msgs_per_s", Better.HIGHER, "buslane", r.receivePerSec());
        results.add("java_sdk_receive_complete", "cpu_us_per_msg", Better.LOWER, "buslane", r.receiveCpuUs());
    }

    /**
     * Workload 6: scheduled messages due over a spread; activation lag; heap per scheduled message, both overall
     * (live heap after all are scheduled minus before, over the count: includes the shards' resident body budget)
     * and marginal (between the half and all: once the budget is full, the per-message index only).
     */
    private void scheduled(BenchBroker b) throws Exception {
        double rate = results.entries().stream()
                .filter(e -> e.workload.equals("pipelined_send_1conn") && e.metric.equals("msgs_per_s"))
                .mapToDouble(e -> e.median("buslane")).filter(v -> !Double.isNaN(v)).findFirst().orElse(15_000);
        long sendEstimateMs = (long) (cfg.scheduled / (rate * 0.6) * 1000);
        long leadMs = sendEstimateMs + (cfg.quick ? 8_000 : 25_000);
        // warm-up, not measured: the activation, delivery and completion paths compiled, as in a running broker
        try (AmqpLoad warm = new AmqpLoad(b.port)) {
            int n = cfg.quick ? 5_000 : 30_000;
            warm.receiver("sched-warmup", false, Long.MIN_VALUE);
            warm.sendScheduled("sched-warmup", 0, n, n, System.currentTimeMillis() + 500, 3_000, cfg.window);
            if (!warm.awaitReceived(n, 60_000)) {
                System.out.println("  WARNING: scheduled warm-up incomplete: " + warm.received.get() + " of " + n);
            }
        }
        long heap0 = b.liveHeapBytes();
        try (AmqpLoad load = new AmqpLoad(b.port)) {
            load.receiver("sched", true, Long.MIN_VALUE);
            long firstDue = System.currentTimeMillis() + leadMs;
            long t0 = System.nanoTime();
            int half = cfg.scheduled / 2;
            load.sendScheduled("sched", 0, half, cfg.scheduled, firstDue, cfg.scheduleSpreadMs, cfg.window);
            long t1 = System.nanoTime();
            long heapHalf = b.liveHeapBytes();
            long t2 = System.nanoTime();
            load.sendScheduled("sched", half, cfg.scheduled, cfg.scheduled, firstDue, cfg.scheduleSpreadMs,
                    cfg.window);
            double sendSecs = ((t1 - t0) + (System.nanoTime() - t2)) / 1e9;
            long heap1 = b.liveHeapBytes();
            boolean beforeDue = System.currentTimeMillis() < firstDue && load.received.get() == 0;
            System.out.printf(Locale.ROOT, "  scheduled %d in %.1f s; live heap %d -> %d (half) -> %d bytes%s%n",
                    cfg.scheduled, sendSecs, heap0, heapHalf, heap1,
                    beforeDue ? "" : " (WARNING: measured after activation began)");
            String w = "scheduled";
            results.add(w, "schedule_send_msgs_per_s", Better.HIGHER, "buslane", cfg.scheduled / sendSecs);
            results.add(w, "heap_bytes_per_msg", Better.LOWER, "buslane",
                    beforeDue ? (heap1 - heap0) / (double) cfg.scheduled : Double.NaN);
            results.add(w, "heap_bytes_per_msg_marginal", Better.LOWER, "buslane",
                    beforeDue ? (heap1 - heapHalf) / (double) (cfg.scheduled - half) : Double.NaN);
            boolean all = load.awaitReceived(cfg.scheduled, Math.max(0, firstDue - System.currentTimeMillis())
                    + cfg.scheduleSpreadMs + 120_000);
            if (!all) {
                System.out.println("  WARNING: only " + load.received.get() + " of " + cfg.scheduled + " activated");
            }
            String dump = System.getenv("BENCH_LAG_DUMP");
            if (dump != null) {
                load.latency.dump(java.nio.file.Path.of(dump));
            }
            results.add(w, "activation_lag_p50_ms", Better.LOWER, "buslane", load.latency.ms(50));
            results.add(w, "activation_lag_p99_ms", Better.LOWER, "buslane", load.latency.ms(99));
            results.add(w, "activation_lag_max_ms", Better.LOWER, "buslane", load.latency.ms(100));
        }
    }

    // ---------------------------------------------------------------------------------------------- facts

    private Map<String, String> facts() {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("commit", "commit " + System.getenv().getOrDefault("BENCH_COMMIT", "unknown"));
        f.put("CPUs (`nproc`)", Integer.toString(Runtime.getRuntime().availableProcessors()));
        f.put("CPU model", System.getenv().getOrDefault("BENCH_CPU", "unknown"));
        f.put("Memory (`free -h`, total)", System.getenv().getOrDefault("BENCH_MEMORY", "unknown"));
        f.put("JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        f.put("Disk (`df -T`)", System.getenv().getOrDefault("BENCH_DISK", "unknown"));
        f.put("Disk sync (4 KiB write + fsync, mean)", String.format(Locale.ROOT, "%.3f ms",
                artemisBufferTimeoutNs / 1e6));
        f.put("Brokers", "each its own JVM, -Xms" + cfg.heap + " -Xmx" + cfg.heap + ", on 127.0.0.1; Buslane: "
                + "packaged jar, --shards " + cfg.shards + " --sync always; Artemis 2.55.0 embedded: NIO journal, "
                + "persistence on, journal-sync-(non)transactional true, journal-buffer-timeout "
                + artemisBufferTimeoutNs + " ns (measured as `artemis create` does), AMQP acceptor only");
        f.put("Client", "Qpid protonj2-client 1.1.0 in one JVM (the same for both), durable 1 KiB messages, "
                + "pipelined window " + cfg.window + " per connection, end-to-end in-flight cap " + cfg.inFlight
                + ", peek-lock receivers (credit 1000) accepting every delivery");
        return f;
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }

}
