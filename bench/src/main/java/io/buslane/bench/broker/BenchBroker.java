package io.buslane.bench.broker;

import io.buslane.testsupport.BrokerProcess;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One broker (or the no-op sink) as its own JVM on loopback, run by the shared {@link BrokerProcess} of
 * buslane-test-support (launched, awaited, stopped, relaunched on the same data directory), plus what the
 * benchmark measures of it: CPU time of the process from {@code /proc/<pid>/stat}, of its JIT and GC threads, and
 * live heap from {@code jcmd GC.class_histogram}.
 */
final class BenchBroker implements AutoCloseable {

    enum Kind {
        BUSLANE("buslane"), ARTEMIS("artemis"), SINK("sink");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /** Clock ticks per second of {@code /proc/<pid>/stat} (getconf CLK_TCK; 100 on Linux). */
    static final long CLK_TCK = clockTicks();

    final Kind kind;
    final int port;
    private final BrokerProcess process;

    private BenchBroker(Kind kind, BrokerProcess process) {
        this.kind = kind;
        this.process = process;
        this.port = process.amqpPort();
    }

    static BenchBroker buslane(BenchConfig cfg, Path dataDir, Path configJson) throws Exception {
        return buslane(cfg, dataDir, configJson, cfg.heap);
    }

    /** Buslane with another heap than the others' (the million-session workloads). */
    static BenchBroker buslane(BenchConfig cfg, Path dataDir, Path configJson, String heap) throws Exception {
        return new BenchBroker(Kind.BUSLANE, common(cfg, cfg.buslaneJvmOptions, dataDir, heap).jar(cfg.buslaneJar)
                .configFile(configJson).args("--shards", Integer.toString(cfg.shards), "--sync", "always").build());
    }

    static BenchBroker artemis(BenchConfig cfg, Path dataDir, long bufferTimeoutNs) throws Exception {
        int port = BrokerProcess.freePort();
        return new BenchBroker(Kind.ARTEMIS, common(cfg, cfg.artemisJvmOptions, dataDir).amqpPort(port)
                .program(Kind.ARTEMIS.label, System.getProperty("java.class.path"), ArtemisMain.class.getName(),
                        Integer.toString(port), dataDir.toString(), Long.toString(bufferTimeoutNs))
                .readyWhenLogContains(ArtemisMain.READY).build());
    }

    static BenchBroker sink(BenchConfig cfg, Path dataDir) throws Exception {
        int port = BrokerProcess.freePort();
        return new BenchBroker(Kind.SINK, common(cfg, "", dataDir).amqpPort(port)
                .program(Kind.SINK.label, System.getProperty("java.class.path"), NoopSink.class.getName(),
                        Integer.toString(port))
                .readyWhenLogContains(NoopSink.READY).build());
    }

    /** The same heap for every process, headless, the extra options; the log next to the data directory. */
    private static BrokerProcess.Builder common(BenchConfig cfg, String extraJvmOptions, Path dataDir) {
        return common(cfg, extraJvmOptions, dataDir, cfg.heap);
    }

    private static BrokerProcess.Builder common(BenchConfig cfg, String extraJvmOptions, Path dataDir, String heap) {
        List<String> jvm = new ArrayList<>(List.of("-Xms" + heap, "-Xmx" + heap, "-Djava.awt.headless=true"));
        jvm.addAll(List.of(extraJvmOptions.trim().split("\\s+")));
        return BrokerProcess.builder().jvmOptions(jvm).dataDir(dataDir)
                .log(dataDir.resolveSibling(dataDir.getFileName() + ".log"))
                .startTimeout(Duration.ofSeconds(180)).stopTimeout(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(10));
    }

    /** Launches the process and waits until it serves (Buslane: GET /health = 200; others: their ready line). */
    BenchBroker start() throws Exception {
        process.launch();
        return this;
    }

    boolean canConnect() {
        return process.canConnect();
    }

    long pid() {
        return process.pid();
    }

    /** User + system CPU time of the process so far, in microseconds. */
    long cpuMicros() {
        try {
            return cpuTicks(Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat")))
                    * 1_000_000L / CLK_TCK;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc stat of " + kind.label, e);
        }
    }

    /**
     * CPU time (user + system) used so far by the JVM's JIT compiler threads ({@code C1/C2 CompilerThread*}) and by
     * its garbage collector's threads (G1's workers, concurrent markers and refinement), in microseconds: {jit, gc}.
     * A thread that has ended no longer counts, so the difference of two readings is a lower bound.
     */
    long[] jitAndGcMicros() {
        long jit = 0;
        long gc = 0;
        try (var tasks = Files.list(Path.of("/proc", Long.toString(process.pid()), "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    boolean isJit = comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler");
                    boolean isGc = comm.startsWith("G1 ") || comm.startsWith("GC Thread");
                    if (isJit || isGc) {
                        long t = cpuTicks(stat);
                        if (isJit) {
                            jit += t;
                        } else {
                            gc += t;
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list the threads of " + kind.label, e);
        }
        return new long[] {jit * 1_000_000L / CLK_TCK, gc * 1_000_000L / CLK_TCK};
    }

    /** User + system clock ticks of a {@code /proc/.../stat} line (a process's or a thread's). */
    private static long cpuTicks(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // after "pid (comm) ": state=f[0], ..., utime=f[11], stime=f[12] (fields 14 and 15 of stat)
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    /** Bytes of live objects on the heap after a full GC ({@code jcmd <pid> GC.class_histogram}, its Total line). */
    long liveHeapBytes() throws Exception {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid()), "GC.class_histogram")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(120, TimeUnit.SECONDS);
        for (String line : out.split("\n")) {
            String t = line.trim();
            if (t.startsWith("Total")) {
                String[] parts = t.split("\\s+");
                return Long.parseLong(parts[2]);
            }
        }
        throw new IllegalStateException("no Total line from jcmd GC.class_histogram:\n" + out);
    }

    /** Stops the process (SIGTERM: a clean shutdown) and waits for it. */
    void stop() throws InterruptedException {
        process.stop();
    }

    /** Starts the same command again on the same data and ports; does not wait for readiness. */
    void launchOnly() throws IOException {
        process.launchOnly();
    }

    boolean alive() {
        return process.alive();
    }

    String logTail() {
        return process.logTail();
    }

    Path dataDir() {
        return process.dataDir();
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }

    private static long clockTicks() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            p.waitFor();
            return Long.parseLong(out);
        } catch (Exception e) {
            return 100;
        }
    }
}
