package io.buslane.testsupport;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The packaged broker ({@code buslane-server/target/buslane.jar}) running as a child process on loopback, on free
 * ports (or chosen ones), with its own data directory, optional Config.json, extra arguments and JVM options, its
 * output appended to a log file across restarts. {@link Builder#start()} waits for {@code GET /health} to answer
 * 200 before returning. It can be stopped gracefully, killed ({@code kill -9}), restarted on the same data and
 * ports, and its log read.
 *
 * <p>It can also run another program the same way ({@link Builder#program}): a class on a class path that prints a
 * ready line and then listens on {@link #amqpPort()} (the benchmarks' Artemis peer and no-op sink).
 *
 * <p>Uses nothing but the JDK: the modules that run the broker as a child process (the conformance suite, the
 * console tests, the benchmarks) must not see the broker's libraries, Netty 4.2 among them.
 */
public final class BrokerProcess implements AutoCloseable {

    /** The system property naming the broker jar. */
    public static final String JAR_PROPERTY = "buslane.jar";
    /** The broker jar when {@value #JAR_PROPERTY} is not set (relative to a module directory of the build). */
    public static final String DEFAULT_JAR = "../buslane-server/target/buslane.jar";

    private static final int LOG_TAIL_CHARS = 4000;

    private final String label;
    private final boolean isBroker;
    private final List<String> command;
    private final int amqpPort;
    private final int httpPort;
    private final Path dataDir;
    private final Path log;
    private final String readyMarker;
    private final Duration startTimeout;
    private final Duration stopTimeout;
    private final Duration pollInterval;
    private Process process;

    private BrokerProcess(Builder b, List<String> command, int amqpPort, int httpPort, Path dataDir, Path log) {
        this.label = b.label;
        this.isBroker = b.mainClass == null;
        this.command = List.copyOf(command);
        this.amqpPort = amqpPort;
        this.httpPort = httpPort;
        this.dataDir = dataDir;
        this.log = log;
        this.readyMarker = b.readyMarker;
        this.startTimeout = b.startTimeout;
        this.stopTimeout = b.stopTimeout;
        this.pollInterval = b.pollInterval;
    }

    /** A builder for a broker with the defaults: free ports, a fresh data directory, {@code -Xmx512m}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Starts a broker with a fresh data directory and the given Config.json (null for the starter topology). */
    public static BrokerProcess start(String configJson) throws Exception {
        return builder().config(configJson).start();
    }

    /**
     * Starts a broker like {@link #start(String)} with extra command-line arguments appended (e.g.
     * {@code "--insecure"}); they are kept for restarts.
     */
    public static BrokerProcess startWithArgs(String configJson, String... extraArgs) throws Exception {
        return builder().config(configJson).args(extraArgs).start();
    }

    /** Everything a {@link BrokerProcess} is started with. Not thread-safe. */
    public static final class Builder {
        private Path jar;
        private String classpath;
        private String mainClass;
        private final List<String> programArgs = new ArrayList<>();
        private final List<String> jvmOptions = new ArrayList<>(List.of("-Xmx512m"));
        private final List<String> args = new ArrayList<>();
        private String configJson;
        private Path configFile;
        private Path dataDir;
        private Path log;
        private int amqpPort;
        private int httpPort;
        private String readyMarker;
        private String tempPrefix = "buslane-";
        private String label = "The broker";
        private Duration startTimeout = Duration.ofSeconds(60);
        private Duration stopTimeout = Duration.ofSeconds(20);
        private Duration pollInterval = Duration.ofMillis(50);

        private Builder() {
        }

        /** The broker jar (default: the system property {@value #JAR_PROPERTY}, else {@value #DEFAULT_JAR}). */
        public Builder jar(Path jar) {
            this.jar = jar;
            return this;
        }

        /** The JVM's options, replacing the default {@code -Xmx512m}; blank entries are ignored. */
        public Builder jvmOptions(String... options) {
            return jvmOptions(List.of(options));
        }

        /** The JVM's options, replacing the default {@code -Xmx512m}; blank entries are ignored. */
        public Builder jvmOptions(List<String> options) {
            jvmOptions.clear();
            for (String o : options) {
                if (o != null && !o.isBlank()) {
                    jvmOptions.add(o.trim());
                }
            }
            return this;
        }

        /** Broker arguments appended after the ports, data directory and config (e.g. {@code --insecure}). */
        public Builder args(String... extra) {
            args.addAll(List.of(extra));
            return this;
        }

        /** The Config.json text, written to a temporary file (null: the starter topology). */
        public Builder config(String json) {
            this.configJson = json;
            return this;
        }

        /** A Config.json file (null: the starter topology). */
        public Builder configFile(Path file) {
            this.configFile = file;
            return this;
        }

        /** The data directory (default: a fresh temporary one); created if missing. */
        public Builder dataDir(Path dir) {
            this.dataDir = dir;
            return this;
        }

        /** The file the process's output is appended to (default: a fresh temporary one). */
        public Builder log(Path file) {
            this.log = file;
            return this;
        }

        /** The AMQP port (default 0: a free one, chosen now and kept across restarts). */
        public Builder amqpPort(int port) {
            this.amqpPort = port;
            return this;
        }

        /** The HTTP port (default 0: a free one, chosen now and kept across restarts). */
        public Builder httpPort(int port) {
            this.httpPort = port;
            return this;
        }

        /** The prefix of the temporary data directory, log and config files (default {@code buslane-}). */
        public Builder tempPrefix(String prefix) {
            this.tempPrefix = prefix;
            return this;
        }

        /** How long start-up may take before it fails (default 60 s). */
        public Builder startTimeout(Duration timeout) {
            this.startTimeout = timeout;
            return this;
        }

        /** How long a graceful stop may take before the process is killed (default 20 s). */
        public Builder stopTimeout(Duration timeout) {
            this.stopTimeout = timeout;
            return this;
        }

        /** How often start-up is polled (default 50 ms). */
        public Builder pollInterval(Duration interval) {
            this.pollInterval = interval;
            return this;
        }

        /**
         * Runs {@code mainClass} from {@code classpath} with {@code programArgs} instead of the broker jar. It is
         * ready once its output contains the {@link #readyWhenLogContains ready line} and {@link #amqpPort(int)}
         * accepts a connection; the broker's ports, data directory and config are not passed to it.
         *
         * @param label names the process in error messages
         */
        public Builder program(String label, String classpath, String mainClass, String... programArgs) {
            this.label = label;
            this.classpath = classpath;
            this.mainClass = mainClass;
            this.programArgs.clear();
            this.programArgs.addAll(List.of(programArgs));
            return this;
        }

        /** The line a {@link #program} prints once it serves. */
        public Builder readyWhenLogContains(String marker) {
            this.readyMarker = marker;
            return this;
        }

        /** Resolves the ports, data directory, log and config; starts nothing. */
        public BrokerProcess build() throws IOException {
            int amqp = amqpPort != 0 ? amqpPort : freePort();
            int http = httpPort != 0 ? httpPort : mainClass == null ? freePort() : -1;
            Path dir = dataDir != null ? dataDir : Files.createTempDirectory(tempPrefix + "data-");
            Path logFile = log != null ? log : Files.createTempFile(tempPrefix, ".log");
            List<String> cmd = new ArrayList<>();
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.addAll(jvmOptions);
            if (mainClass != null) {
                Objects.requireNonNull(readyMarker, "a program needs readyWhenLogContains");
                cmd.addAll(List.of("-cp", classpath, mainClass));
                cmd.addAll(programArgs);
            } else {
                Path config = configFile;
                if (config == null && configJson != null) {
                    config = Files.createTempFile(tempPrefix + "config-", ".json");
                    Files.writeString(config, configJson);
                }
                String jarPath = jar != null ? jar.toString() : System.getProperty(JAR_PROPERTY, DEFAULT_JAR);
                cmd.addAll(List.of("-jar", jarPath, "--host", "127.0.0.1", "--amqp-port", Integer.toString(amqp),
                        "--http-port", Integer.toString(http), "--data-dir", dir.toString()));
                if (config != null) {
                    cmd.add("--config");
                    cmd.add(config.toString());
                }
                cmd.addAll(args);
            }
            return new BrokerProcess(this, cmd, amqp, http, dir, logFile);
        }

        /** {@link #build()}, then {@link BrokerProcess#launch()}: returns once the process serves. */
        public BrokerProcess start() throws Exception {
            BrokerProcess p = build();
            p.launch();
            return p;
        }
    }

    /**
     * Starts the process (again, after {@link #kill()} or {@link #stop()}: same data, ports and arguments) and
     * waits until it serves: the broker once {@code GET /health} answers 200, a {@link Builder#program} once it has
     * printed its ready line and accepts connections. Fails with the log if it exits or the time runs out.
     */
    public void launch() throws Exception {
        launchOnly();
        long deadline = System.nanoTime() + startTimeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(label + " exited with " + process.exitValue() + ":\n" + log());
            }
            if (ready()) {
                return;
            }
            process.waitFor(pollInterval.toMillis(), TimeUnit.MILLISECONDS); // polls start-up; returns if it exits
        }
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        throw new IllegalStateException(label + " did not become ready within " + startTimeout.toSeconds() + " s:\n"
                + logTail(64_000));
    }

    /** Starts the process again on the same data and ports (after {@link #kill()}); waits for health. */
    public void relaunch() throws Exception {
        launch();
    }

    /** Starts the process on the same data, ports and arguments; does not wait for it to serve. */
    public void launchOnly() throws IOException {
        if (isBroker) {
            Path jar = Path.of(command.get(command.indexOf("-jar") + 1));
            if (!Files.exists(jar)) {
                throw new IllegalStateException("The broker jar " + jar + " is missing: run mvn package first.");
            }
        }
        Files.createDirectories(dataDir);
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    }

    private boolean ready() throws IOException {
        if (readyMarker != null) {
            return log().contains(readyMarker) && canConnect();
        }
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(baseUrl() + "/health").toURL().openConnection();
            c.setConnectTimeout(500);
            c.setReadTimeout(2000);
            return c.getResponseCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether the AMQP port accepts a TCP connection now. */
    public boolean canConnect() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", amqpPort), 500);
            return true;
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

    /** The HTTP port (-1 for a {@link Builder#program}). */
    public int httpPort() {
        return httpPort;
    }

    /** {@code http://127.0.0.1:<httpPort>}. */
    public String baseUrl() {
        return "http://127.0.0.1:" + httpPort;
    }

    /** The data directory the broker runs on. */
    public Path dataDir() {
        return dataDir;
    }

    /** The command line the process is started with. */
    public List<String> command() {
        return command;
    }

    /** The process id of the running (or last) process. */
    public long pid() {
        return process.pid();
    }

    /** Whether the process is running. */
    public boolean alive() {
        return process != null && process.isAlive();
    }

    /** Kills the process without letting it shut down (kill -9) and starts it again on the same data. */
    public void crashAndRestart() throws Exception {
        kill();
        launch();
    }

    /** Kills the process without letting it shut down (kill -9) and waits for it to exit; does not restart it. */
    public void kill() throws Exception {
        if (process != null) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** Stops the process gracefully and starts it again on the same data. */
    public void restart() throws Exception {
        stop();
        launch();
    }

    /**
     * Stops the process gracefully (SIGTERM: a clean shutdown) and waits for it; kills it if it has not exited
     * within the stop timeout.
     */
    public void stop() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(stopTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Everything the process has written (all restarts appended); undecodable bytes are replaced. */
    public String log() {
        try {
            return new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** The last {@code chars} characters of the process's output (all restarts appended). */
    public String logTail(int chars) {
        String all = log();
        return all.length() <= chars ? all : "..." + all.substring(all.length() - chars);
    }

    /** The last 4,000 characters of the process's output. */
    public String logTail() {
        return logTail(LOG_TAIL_CHARS);
    }

    /** The file the process's output is appended to. */
    public Path logFile() {
        return log;
    }

    /** A port that was free a moment ago on this machine. */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** {@link #stop()}. */
    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
