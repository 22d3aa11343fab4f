package io.buslane.bench.broker;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One broker (or the no-op sink) as its own JVM on loopback: launched, awaited, measured (CPU time of the process
 * from {@code /proc/<pid>/stat}, live heap from {@code jcmd GC.class_histogram}), stopped, killed or relaunched on
 * the same data directory.
 */
final class BrokerProcess implements AutoCloseable {

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
    private final int httpPort;
    private final Path dataDir;
    private final Path log;
    private final List<String> command;
    private Process process;

    private BrokerProcess(Kind kind, Path dataDir, List<String> command, int port, int httpPort) throws IOException {
        this.kind = kind;
        this.dataDir = dataDir;
        this.command = command;
        this.port = port;
        this.httpPort = httpPort;
        this.log = dataDir.resolveSibling(dataDir.getFileName() + ".log");
    }

    static BrokerProcess buslane(BenchConfig cfg, Path dataDir, Path configJson) throws Exception {
        int port = freePort();
        int http = freePort();
        List<String> cmd = java(cfg, cfg.buslaneJvmOptions);
        cmd.addAll(List.of("-jar", cfg.buslaneJar.toString(), "--host", "127.0.0.1", "--amqp-port",
                Integer.toString(port), "--http-port", Integer.toString(http), "--data-dir", dataDir.toString(),
                "--config", configJson.toString(), "--shards", Integer.toString(cfg.shards), "--sync", "always"));
        return new BrokerProcess(Kind.BUSLANE, dataDir, cmd, port, http);
    }

    static BrokerProcess artemis(BenchConfig cfg, Path dataDir, long bufferTimeoutNs) throws Exception {
        int port = freePort();
        List<String> cmd = java(cfg, cfg.artemisJvmOptions);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ArtemisMain.class.getName(),
                Integer.toString(port), dataDir.toString(), Long.toString(bufferTimeoutNs)));
        return new BrokerProcess(Kind.ARTEMIS, dataDir, cmd, port, -1);
    }

    static BrokerProcess sink(BenchConfig cfg, Path dataDir) throws Exception {
        int port = freePort();
        List<String> cmd = java(cfg, "");
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), NoopSink.class.getName(),
                Integer.toString(port)));
        return new BrokerProcess(Kind.SINK, dataDir, cmd, port, -1);
    }

    private static List<String> java(BenchConfig cfg, String extra) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xms" + cfg.heap);
        cmd.add("-Xmx" + cfg.heap);
        cmd.add("-Djava.awt.headless=true");
        for (String o : extra.trim().split("\\s+")) {
            if (!o.isEmpty()) {
                cmd.add(o);
            }
        }
        return cmd;
    }

    /** Launches the process and waits until it serves (Buslane: GET /health = 200; others: their ready line). */
    BrokerProcess start() throws Exception {
        Files.createDirectories(dataDir);
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(kind.label + " exited with " + process.exitValue() + ":\n" + logTail());
            }
            if (ready()) {
                return this;
            }
            Thread.sleep(10);
        }
        throw new IllegalStateException(kind.label + " did not become ready within 180 s:\n" + logTail());
    }

    private boolean ready() throws IOException {
        if (kind == Kind.BUSLANE) {
            try {
                HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + httpPort + "/health")
                        .toURL().openConnection();
                c.setConnectTimeout(500);
                c.setReadTimeout(2000);
                return c.getResponseCode() == 200;
            } catch (IOException e) {
                return false;
            }
        }
        String marker = kind == Kind.ARTEMIS ? ArtemisMain.READY : NoopSink.READY;
        return Files.exists(log) && Files.readString(log, StandardCharsets.ISO_8859_1).contains(marker) && canConnect();
    }

    boolean canConnect() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
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
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Starts the same command again on the same data and ports; does not wait for readiness. */
    void launchOnly() throws IOException {
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    String logTail() {
        try {
            String all = Files.readString(log, StandardCharsets.ISO_8859_1);
            return all.length() <= 4000 ? all : "..." + all.substring(all.length() - 4000);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    Path dataDir() {
        return dataDir;
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
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
