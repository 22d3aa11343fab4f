package io.buslane.bench.broker;

import java.nio.file.Path;

/** What one run measures and for how long: {@code --quick} (under 4 minutes) or the full run (under 26). */
final class BenchConfig {

    final boolean quick;
    /** Rounds of workloads 1 to 4; the brokers alternate which goes first; figures are medians over rounds. */
    final int rounds;
    final long warmupMs;
    /** Unmeasured passes of workloads 1 to 4 on a fresh broker: repeated while its JIT compiler is busy. */
    final int maxWarmupPasses;
    /** A warm-up pass is repeated while the JIT compiler threads took more than this share of the broker's CPU. */
    final double warmJitShare = 0.05;
    final long measureMs;
    /** Pipelined-send window per connection (unsettled transfers in flight). */
    final int window = 1000;
    /** End-to-end: at most this many messages sent and not yet received. */
    final int inFlight = 5000;
    final int fixedRate = 5000;
    final int sessions;
    final int messagesPerSession = 10;
    final int scheduled;
    final long scheduleSpreadMs;
    final int smallBacklog = 1000;
    final int largeBacklog;
    final int sdkMessages;
    /** Workload 10: sessions with one message each, the small and the large number (accept-next). */
    final int acceptSmall = 1000;
    final int acceptLarge;
    /** Workload 10: idle sessions with 1 KiB of state (restart, heap, listing). */
    final int idleSessions;
    /** Workload 10: sessions × 10 messages through the Java SDK's session processor. */
    final int sdkSessions;
    final String heap = "1g";
    final int shards = 2;
    final Path buslaneJar;
    final Path workDir;
    final String buslaneJvmOptions;
    final String artemisJvmOptions;
    /** Which brokers workloads 1 to 4 measure ({@code BENCH_BROKERS}, default both): one alone for A/B runs. */
    final java.util.Set<String> brokers;
    final Path docs;

    BenchConfig(boolean quick, Path buslaneJar, Path workDir, Path docs) {
        this.quick = quick;
        this.rounds = quick ? 1 : 3;
        this.warmupMs = quick ? 1000 : 2000;
        this.maxWarmupPasses = quick ? 1 : 3;
        this.measureMs = quick ? 2500 : 6000;
        this.sessions = quick ? 500 : 10_000;
        this.scheduled = quick ? 50_000 : 1_000_000;
        this.scheduleSpreadMs = quick ? 10_000 : 60_000;
        this.largeBacklog = quick ? 100_000 : 1_000_000;
        this.sdkMessages = quick ? 5_000 : 50_000;
        this.acceptLarge = quick ? 50_000 : 1_000_000;
        this.idleSessions = quick ? 100_000 : 1_000_000;
        this.sdkSessions = quick ? 200 : 1_000;
        this.buslaneJar = buslaneJar;
        this.workDir = workDir;
        this.docs = docs;
        this.buslaneJvmOptions = System.getenv().getOrDefault("BENCH_BUSLANE_JVM_OPTS", "");
        this.artemisJvmOptions = System.getenv().getOrDefault("BENCH_ARTEMIS_JVM_OPTS", "");
        this.brokers = java.util.Set.of(System.getenv().getOrDefault("BENCH_BROKERS", "buslane,artemis").split(","));
    }
}
