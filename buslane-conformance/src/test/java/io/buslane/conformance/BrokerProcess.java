package io.buslane.conformance;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The packaged broker ({@code buslane-server/target/buslane.jar}) running as a child process on free ports, with
 * its own data directory and optional Config.json. Waits for {@code GET /health} before returning.
 */
public final class BrokerProcess implements AutoCloseable {

    private final Path dataDir;
    private final Path config;
    private final int amqpPort;
    private final int httpPort;
    private final Path log;
    private final List<String> extraArgs = new ArrayList<>();
    private Process process;

    private BrokerProcess(Path dataDir, Path config) throws IOException {
        this.dataDir = dataDir;
        this.config = config;
        this.amqpPort = freePort();
        this.httpPort = freePort();
        this.log = Files.createTempFile("buslane-", ".log");
    }

    /** Starts a broker with a fresh data directory and the given Config.json (null for the starter topology). */
    public static BrokerProcess start(String configJson) throws Exception {
        Path dir = Files.createTempDirectory("buslane-data-");
        Path config = null;
        if (configJson != null) {
            config = Files.createTempFile("buslane-config-", ".json");
            Files.writeString(config, configJson);
        }
        BrokerProcess b = new BrokerProcess(dir, config);
        b.launch();
        return b;
    }

    /**
     * Starts a broker like {@link #start(String)} with extra command-line arguments appended (e.g.
     * {@code "--insecure"}); they are kept for restarts.
     */
    public static BrokerProcess startWithArgs(String configJson, String... extraArgs) throws Exception {
        Path dir = Files.createTempDirectory("buslane-data-");
        Path config = null;
        if (configJson != null) {
            config = Files.createTempFile("buslane-config-", ".json");
            Files.writeString(config, configJson);
        }
        BrokerProcess b = new BrokerProcess(dir, config);
        b.extraArgs.addAll(List.of(extraArgs));
        b.launch();
        return b;
    }

    private void launch() throws Exception {
        String jar = System.getProperty("buslane.jar", "../buslane-server/target/buslane.jar");
        if (!Files.exists(Path.of(jar))) {
            throw new IllegalStateException("The broker jar " + jar + " is missing: run mvn package first.");
        }
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-jar", jar, "--host", "127.0.0.1", "--amqp-port", Integer.toString(amqpPort),
                "--http-port", Integer.toString(httpPort), "--data-dir", dataDir.toString()));
        if (config != null) {
            cmd.add("--config");
            cmd.add(config.toString());
        }
        cmd.addAll(extraArgs);
        process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("The broker exited with " + process.exitValue() + ":\n" + log());
            }
            if (healthy()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("The broker did not become healthy within 60 s:\n" + log());
    }

    private boolean healthy() {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + httpPort + "/health").toURL()
                    .openConnection();
            c.setConnectTimeout(500);
            c.setReadTimeout(500);
            return c.getResponseCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    /** The emulator-style connection string for this broker. */
    public String connectionString() {
        return "Endpoint=sb://localhost:" + amqpPort + ";SharedAccessKeyName=RootManageSharedAccessKey;"
                + "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
    }

    public int amqpPort() {
        return amqpPort;
    }

    public int httpPort() {
        return httpPort;
    }

    /** Kills the process without letting it shut down (kill -9) and starts it again on the same data. */
    public void crashAndRestart() throws Exception {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        launch();
    }

    /** Kills the process without letting it shut down (kill -9) and waits for it to exit; does not restart it. */
    public void kill() throws Exception {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }

    /** Starts the process again on the same data and ports (after {@link #kill()}); waits for health. */
    public void relaunch() throws Exception {
        launch();
    }

    /** The data directory the broker runs on. */
    public Path dataDir() {
        return dataDir;
    }

    /** The last {@code chars} characters of the broker's output (all restarts appended). */
    public String logTail(int chars) {
        String all = log();
        return all.length() <= chars ? all : "..." + all.substring(all.length() - chars);
    }

    /** Stops the process gracefully and starts it again on the same data. */
    public void restart() throws Exception {
        process.destroy();
        process.waitFor(30, TimeUnit.SECONDS);
        launch();
    }

    public String log() {
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
        if (process != null) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
