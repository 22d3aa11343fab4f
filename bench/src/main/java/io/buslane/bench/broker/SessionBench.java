package io.buslane.bench.broker;

import io.buslane.bench.broker.Results.Better;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Workload 10, sessions at scale (issue #23), Buslane only, each part on a fresh broker:
 * <ol>
 *   <li>{@code session_traffic}: the same number of 1 KiB messages sent and then received as plain messages and as
 *       sessions × 10 messages; the sessions by a processor of 4 connections × 8 slots (32 sessions held at once,
 *       each slot accepting the next available session, receiving its 10 messages, completing them, detaching).
 *       Broker CPU per message over send and receive, for both; the ratio is the target (≤ 1.5).</li>
 *   <li>{@code session_accept}: accepting the next available session with a small and with a large number of
 *       sessions holding one message each (a refill sender keeps the number where it is: one new session per session
 *       done), the same processor with one message per session. Sessions per second and broker CPU per session
 *       (its refill send included), and the growth from small to large (target ≤ 1.25).</li>
 *   <li>{@code idle_sessions}: sessions with 1 KiB of state and no messages, written through the engine by
 *       {@link IdleSessionsSetup} (which also times listing pages over them); then the packaged broker restarts on
 *       them: the time until a session receiver on the last session is attached, and the live heap per idle session
 *       (against an empty broker's).</li>
 *   <li>{@code java_sdk_session_processor}: the official Java SDK's {@code ServiceBusProcessorClient} for sessions
 *       ({@link SdkLoad#sessionProcessor}) on sessions × 10 messages.</li>
 * </ol>
 */
final class SessionBench {

    /** A fresh Buslane with the given heap (the previous instances' data deleted). */
    interface Brokers {
        BenchBroker fresh(String heap) throws Exception;
    }

    static final int CONNECTIONS = 4;
    static final int SLOTS = 8;
    /**
     * The heap of the brokers holding a million sessions ({@code BENCH_LARGE_HEAP}, default 6g). With 3g, the
     * million sessions with a message each (about 550 MB live) left G1 so little room that its share of the broker's
     * CPU went from 19 % to 37 % and the cost per accepted session grew 1.9 times; with 6g, 1.1 to 1.2 times.
     */
    static final String LARGE_HEAP = System.getenv().getOrDefault("BENCH_LARGE_HEAP", "6g");

    private final BenchConfig cfg;
    private final Results results;
    private final Path configJson;
    private final Brokers brokers;

    SessionBench(BenchConfig cfg, Results results, Path configJson, Brokers brokers) {
        this.cfg = cfg;
        this.results = results;
        this.configJson = configJson;
        this.brokers = brokers;
    }

    // ------------------------------------------------------------------------------------------ session traffic

    void traffic() throws Exception {
        int sessions = cfg.sessions;
        int per = cfg.messagesPerSession;
        long total = (long) sessions * per;
        try (BenchBroker b = brokers.fresh(cfg.heap)) {
            warmUp(b, 4, "traffic", pass -> {
                plainPass(b, total / 5);
                sessionPass(b, "w" + pass + "-", sessions / 5, per);
            });
            double[] plain = plainPass(b, total);
            double[] withSessions = sessionPass(b, "s-", sessions, per);
            String w = "session_traffic_" + sessions + "x" + per;
            results.add(w, "plain_msgs_per_s", Better.HIGHER, "buslane", plain[0]);
            results.add(w, "plain_cpu_us_per_msg", Better.LOWER, "buslane", plain[1]);
            results.add(w, "sessions_per_s", Better.HIGHER, "buslane", withSessions[0] / per);
            results.add(w, "msgs_per_s", Better.HIGHER, "buslane", withSessions[0]);
            results.add(w, "cpu_us_per_msg", Better.LOWER, "buslane", withSessions[1]);
            results.add(w, "cpu_vs_plain", Better.LOWER, "buslane", withSessions[1] / plain[1]);
            results.target(w, "cpu_vs_plain", "≤ 1.5", false, v -> v <= 1.5);
        }
    }

    /** Sends {@code total} plain messages, then receives them on 4 connections: {receive msgs/s, CPU µs/msg}. */
    private double[] plainPass(BenchBroker b, long total) throws Exception {
        long cpu0 = b.cpuMicros();
        long t1;
        try (AmqpLoad load = new AmqpLoad(b.port)) {
            load.pipelinedSenders(1, "plain", cfg.window, 0, total, false);
            if (!load.awaitSent(total, 600_000)) {
                throw new IllegalStateException("sent " + load.sent.get() + " of " + total);
            }
            t1 = System.nanoTime();
            for (int c = 0; c < CONNECTIONS; c++) {
                load.receiver(load.connect(), "plain", false, 0, load.received);
            }
            if (!load.awaitReceived(total, 600_000)) {
                throw new IllegalStateException("received " + load.received.get() + " of " + total);
            }
        }
        double secs = (System.nanoTime() - t1) / 1e9;
        return new double[] {total / secs, (b.cpuMicros() - cpu0) / (double) total};
    }

    /** Sends sessions × per messages, then processes them: {receive msgs/s, CPU µs/msg over both}. */
    private double[] sessionPass(BenchBroker b, String prefix, int sessions, int per) throws Exception {
        long total = (long) sessions * per;
        long cpu0 = b.cpuMicros();
        long t1;
        try (AmqpLoad load = new AmqpLoad(b.port)) {
            load.sendSessions("sessions", prefix, 0, sessions, per, cfg.window);
            t1 = System.nanoTime();
            AtomicLong done = new AtomicLong();
            load.sessionProcessors("sessions", CONNECTIONS, SLOTS, per, sessions, done);
            long deadline = System.nanoTime() + 600_000_000_000L;
            while (done.get() < sessions && System.nanoTime() < deadline) {
                load.check();
                Thread.sleep(5);
            }
            if (done.get() < sessions) {
                throw new IllegalStateException("processed " + done.get() + " of " + sessions + " sessions");
            }
        }
        double secs = (System.nanoTime() - t1) / 1e9;
        return new double[] {total / secs, (b.cpuMicros() - cpu0) / (double) total};
    }

    // ------------------------------------------------------------------------------------------ accept next

    void acceptAtScale() throws Exception {
        int small = cfg.acceptSmall;
        int large = cfg.acceptLarge;
        AtomicLong next = new AtomicLong();
        try (BenchBroker b = brokers.fresh(LARGE_HEAP)) {
            prefill(b, next, small);
            warmUp(b, 5, "accept", pass -> acceptWindow(b, next, false));
            double[] s = medianWindow(b, next);
            long heapSmall = b.liveHeapBytes();
            long t0 = System.nanoTime();
            prefill(b, next, large - small);
            System.out.printf(Locale.ROOT, "  prefilled %d more sessions in %.1f s%n", large - small,
                    (System.nanoTime() - t0) / 1e9);
            double[] l = medianWindow(b, next);
            long heapLarge = b.liveHeapBytes();
            System.out.printf(Locale.ROOT, "  live heap with %d sessions holding a message: %d bytes; with %d: %d%n",
                    small, heapSmall, large, heapLarge);
            results.add("session_accept", "heap_bytes_per_session_with_message", Better.LOWER, "buslane",
                    (heapLarge - heapSmall) / (double) (large - small));
            String ws = "session_accept_" + label(small);
            String wl = "session_accept_" + label(large);
            results.add(ws, "sessions_per_s", Better.HIGHER, "buslane", s[0]);
            results.add(ws, "cpu_us_per_session", Better.LOWER, "buslane", s[1]);
            results.add(ws, "client_cpu_us_per_session", Better.LOWER, "buslane", s[2]);
            results.add(wl, "sessions_per_s", Better.HIGHER, "buslane", l[0]);
            results.add(wl, "cpu_us_per_session", Better.LOWER, "buslane", l[1]);
            results.add(wl, "client_cpu_us_per_session", Better.LOWER, "buslane", l[2]);
            results.add("session_accept", "cpu_growth_large_vs_small", Better.LOWER, "buslane", l[1] / s[1]);
            results.target(ws, "sessions_per_s", "≥ 10,000", false, v -> v >= 10_000);
            results.target("session_accept", "cpu_growth_large_vs_small", "≤ 1.25", false, v -> v <= 1.25);
        }
    }

    /** Three measured windows: the median of each figure (the machine's noise moved single windows by 30 %). */
    private double[] medianWindow(BenchBroker b, AtomicLong next) throws Exception {
        double[][] w = new double[3][];
        for (int i = 0; i < w.length; i++) {
            w[i] = acceptWindow(b, next, true);
        }
        double[] median = new double[w[0].length];
        for (int k = 0; k < median.length; k++) {
            double[] v = {w[0][k], w[1][k], w[2][k]};
            java.util.Arrays.sort(v);
            median[k] = v[1];
        }
        return median;
    }

    private void prefill(BenchBroker b, AtomicLong next, int sessions) throws Exception {
        try (AmqpLoad load = new AmqpLoad(b.port)) {
            load.sendSessions("accept", "a-", next.get(), sessions, 1, cfg.window);
            next.addAndGet(sessions);
        }
    }

    /**
     * The processor with one message per session while the refill keeps the sessions with messages at their
     * number: {sessions/s, broker CPU µs per session} over the measured window (after the warm-up).
     */
    private double[] acceptWindow(BenchBroker b, AtomicLong next, boolean measured) throws Exception {
        try (AmqpLoad load = new AmqpLoad(b.port)) {
            AtomicLong done = new AtomicLong();
            load.refillSessions("accept", "a-", next, done, cfg.window);
            load.sessionProcessors("accept", CONNECTIONS, SLOTS, 1, Long.MAX_VALUE, done);
            BrokerBench.sleepChecked(load, cfg.warmupMs * (measured ? 1 : 3));
            if (!measured) {
                return null;
            }
            long d0 = done.get();
            long cpu0 = b.cpuMicros();
            long client0 = CLIENT_CPU.getProcessCpuTime();
            long[] jg0 = b.jitAndGcMicros();
            long t0 = System.nanoTime();
            BrokerBench.sleepChecked(load, cfg.measureMs);
            long d1 = done.get();
            long cpu1 = b.cpuMicros();
            long client1 = CLIENT_CPU.getProcessCpuTime();
            long[] jg1 = b.jitAndGcMicros();
            double secs = (System.nanoTime() - t0) / 1e9;
            double n = Math.max(1, d1 - d0);
            System.out.printf(Locale.ROOT, "    (broker CPU in this window: %.1f %% JIT compiler threads, %.1f %% GC "
                    + "threads)%n", 100.0 * (jg1[0] - jg0[0]) / (cpu1 - cpu0),
                    100.0 * (jg1[1] - jg0[1]) / (cpu1 - cpu0));
            System.out.printf(Locale.ROOT, "    (window: pid %d, monotonic %.6f,%.6f s, %d units)%n", b.pid(),
                    t0 / 1e9, System.nanoTime() / 1e9, d1 - d0);
            return new double[] {(d1 - d0) / secs, (cpu1 - cpu0) / n, (client1 - client0) / 1e3 / n};
        }
    }

    // ------------------------------------------------------------------------------------------ idle sessions

    void idleSessions() throws Exception {
        int count = cfg.idleSessions;
        long baseline;
        try (BenchBroker empty = brokers.fresh(LARGE_HEAP)) {
            baseline = empty.liveHeapBytes();
        }
        Path dir = cfg.workDir.resolve("idle-sessions");
        BrokerBench.deleteTree(dir);
        String w = "idle_sessions_" + label(count);
        for (String[] kv : setUp(dir, count)) {
            String metric = kv[0];
            double v = Double.parseDouble(kv[1]);
            results.add(w, metric, metric.endsWith("_ms") ? Better.LOWER : Better.HIGHER, "buslane", v);
        }
        try (BenchBroker b = BenchBroker.buslane(cfg, dir, configJson, LARGE_HEAP)) {
            long start = System.nanoTime();
            b.launchOnly();
            String last = "i-" + (count - 1);
            boolean attached = false;
            long deadline = start + 300_000_000_000L;
            while (!attached && System.nanoTime() < deadline) {
                if (!b.alive()) {
                    throw new IllegalStateException("the broker died during recovery:\n" + b.logTail());
                }
                if (!b.canConnect()) {
                    Thread.sleep(5);
                    continue;
                }
                try (AmqpLoad probe = new AmqpLoad(b.port)) {
                    attached = probe.acceptNamedSession("idle", last, 10_000);
                } catch (Exception e) {
                    Thread.sleep(20);
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            results.add(w, "restart_s", Better.LOWER, "buslane", attached ? seconds : Double.NaN);
            results.target(w, "restart_s", "< 5 s", false, v -> v < 5);
            long heap = b.liveHeapBytes();
            System.out.printf(Locale.ROOT, "  %d idle sessions: restarted in %.2f s; live heap %d (empty broker %d)%n",
                    count, seconds, heap, baseline);
            results.add(w, "heap_bytes_per_session", Better.LOWER, "buslane", (heap - baseline) / (double) count);
        } finally {
            BrokerBench.deleteTree(dir);
        }
    }

    /** Runs {@link IdleSessionsSetup} in a JVM of its own on the broker's classpath; its SETUP key/values. */
    private List<String[]> setUp(Path dir, int count) throws Exception {
        Path benchClasses = Path.of(IdleSessionsSetup.class.getProtectionDomain().getCodeSource().getLocation()
                .toURI());
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx4g",
                "-cp", cfg.buslaneJar + java.io.File.pathSeparator + benchClasses,
                IdleSessionsSetup.class.getName(), dir.toString(), configJson.toString(), "idle", "i-",
                Integer.toString(count), "1024", Integer.toString(cfg.shards));
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        List<String[]> out = new ArrayList<>();
        StringBuilder log = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("SETUP ")) {
                    System.out.println("  " + line);
                    out.add(line.substring(6).split("=", 2));
                } else if (log.length() < 20_000) {
                    log.append(line).append('\n');
                }
            }
        }
        if (!p.waitFor(30, TimeUnit.MINUTES) || p.exitValue() != 0 || out.isEmpty()) {
            throw new IllegalStateException("the idle-session set-up failed:\n" + log);
        }
        System.out.printf(Locale.ROOT, "  set up %d idle sessions in %.1f s%n", count, (System.nanoTime() - t0) / 1e9);
        return out;
    }

    // ------------------------------------------------------------------------------------------ the Java SDK

    void sdkProcessor() throws Exception {
        int sessions = cfg.sdkSessions;
        int per = cfg.messagesPerSession;
        try (BenchBroker b = brokers.fresh(cfg.heap)) {
            try (AmqpLoad load = new AmqpLoad(b.port)) {
                load.sendSessions("sdk-sessions", "w-", 0, Math.max(50, sessions / 10), per, cfg.window);
                load.sendSessions("sdk-sessions", "s-", 0, sessions, per, cfg.window);
            }
            SdkLoad.SessionResult r = SdkLoad.sessionProcessor(b.port, "sdk-sessions", Math.max(50, sessions / 10)
                    * (long) per, (long) sessions * per, 32, b::cpuMicros);
            String w = "java_sdk_session_processor";
            results.add(w, "msgs_per_s", Better.HIGHER, "buslane", r.msgsPerSec());
            results.add(w, "sessions_per_s", Better.HIGHER, "buslane", r.msgsPerSec() / per);
            results.add(w, "broker_cpu_us_per_msg", Better.LOWER, "buslane", r.brokerCpuUs());
            results.add(w, "client_cpu_us_per_msg", Better.LOWER, "buslane", r.clientCpuUs());
        }
    }

    // ------------------------------------------------------------------------------------------ helpers

    /** This JVM's CPU time: the load client's (the bench JVM runs nothing else meanwhile). */
    private static final com.sun.management.OperatingSystemMXBean CLIENT_CPU =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                    .getOperatingSystemMXBean();

    /** One unmeasured pass of a workload (numbered from 1). */
    private interface Pass {
        void run(int pass) throws Exception;
    }

    /**
     * Runs unmeasured passes, at most {@code maxPasses}, until the broker's JIT compiler threads took less than
     * {@link BenchConfig#warmJitShare} of its CPU in one (each pass's share printed).
     */
    private void warmUp(BenchBroker b, int maxPasses, String what, Pass pass) throws Exception {
        for (int p = 1; p <= maxPasses; p++) {
            long cpu0 = b.cpuMicros();
            long jit0 = b.jitAndGcMicros()[0];
            pass.run(p);
            double share = (b.jitAndGcMicros()[0] - jit0) / (double) Math.max(1, b.cpuMicros() - cpu0);
            System.out.printf(Locale.ROOT, "    (%s warm-up pass %d: JIT compiler threads %.1f %% of the broker's "
                    + "CPU)%n", what, p, 100 * share);
            if (share < cfg.warmJitShare) {
                return;
            }
        }
    }

    private static String label(long n) {
        return n >= 1_000_000 && n % 1_000_000 == 0 ? n / 1_000_000 + "m" : n >= 1000 && n % 1000 == 0
                ? n / 1000 + "k" : Long.toString(n);
    }
}
