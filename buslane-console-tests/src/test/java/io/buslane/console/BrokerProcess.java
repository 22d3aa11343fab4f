package io.buslane.console;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The packaged broker ({@code buslane-server/target/buslane.jar}) as a child process on free ports with a fresh
 * data directory; waits for {@code GET /health} before returning.
 */
final class BrokerProcess implements AutoCloseable {

    private final Process process;
    private final int httpPort;
    private final Path log;

    private BrokerProcess(Process process, int httpPort, Path log) {
        this.process = process;
        this.httpPort = httpPort;
        this.log = log;
    }

    static BrokerProcess start() throws Exception {
        String jar = System.getProperty("buslane.jar", "../buslane-server/target/buslane.jar");
        if (!Files.exists(Path.of(jar))) {
            throw new IllegalStateException("The broker jar " + jar + " is missing: run mvn package first.");
        }
        Path dataDir = Files.createTempDirectory("buslane-console-data-");
        Path log = Files.createTempFile("buslane-console-", ".log");
        int amqpPort = freePort();
        int httpPort = freePort();
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-jar", jar, "--host", "127.0.0.1", "--amqp-port", Integer.toString(amqpPort), "--http-port",
                Integer.toString(httpPort), "--data-dir", dataDir.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        BrokerProcess b = new BrokerProcess(p, httpPort, log);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException("The broker exited with " + p.exitValue() + ":\n" + b.log());
            }
            if (b.healthy()) {
                return b;
            }
            p.waitFor(50, TimeUnit.MILLISECONDS); // polls process start-up, not broker behaviour
        }
        b.close();
        throw new IllegalStateException("The broker did not become healthy within 60 s:\n" + b.log());
    }

    private boolean healthy() {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(baseUrl() + "/health").toURL().openConnection();
            c.setConnectTimeout(500);
            c.setReadTimeout(500);
            return c.getResponseCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    String baseUrl() {
        return "http://127.0.0.1:" + httpPort;
    }

    String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
