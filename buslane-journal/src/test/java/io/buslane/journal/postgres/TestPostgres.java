package io.buslane.journal.postgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A throwaway PostgreSQL server for tests, from the binaries of Debian's {@code postgresql} package: {@code initdb}
 * into a temporary directory, {@code pg_ctl} on a free port of 127.0.0.1, trust authentication for the user
 * {@code buslane}. PostgreSQL refuses to run as root, so as root the server runs as the {@code postgres} user
 * (through {@code runuser}). One server per JVM ({@link #shared()}), stopped at exit; each test takes a fresh
 * database from it ({@link #newDatabase()}). Tests that stop and start the server itself start their own
 * ({@link #startPrivate()}).
 *
 * <p>When the binaries are absent, {@link #availability()} says why; tests skip with that message, unless
 * {@code BUSLANE_REQUIRE_POSTGRES=1} (as {@code .ci/run} sets it), which makes them fail instead.
 */
public final class TestPostgres implements AutoCloseable {

    private static final AtomicInteger DATABASES = new AtomicInteger();
    private static TestPostgres shared;

    private final Path bin;
    private final Path dir;
    private final int port;
    private final boolean asPostgresUser;
    private final List<String> settings;
    private boolean running;

    private TestPostgres(Path bin, Path dir, int port, boolean asPostgresUser, List<String> settings) {
        this.bin = bin;
        this.dir = dir;
        this.port = port;
        this.asPostgresUser = asPostgresUser;
        this.settings = settings;
    }

    /** The directory of PostgreSQL's server binaries, or null when not installed. */
    public static Path binaries() {
        Path lib = Paths.get("/usr/lib/postgresql");
        if (Files.isDirectory(lib)) {
            try (Stream<Path> versions = Files.list(lib)) {
                Path newest = versions.map(v -> v.resolve("bin"))
                        .filter(b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("pg_ctl")))
                        .max(Comparator.comparing(b -> versionOf(b.getParent().getFileName().toString())))
                        .orElse(null);
                if (newest != null) {
                    return newest;
                }
            } catch (IOException e) {
                return null;
            }
        }
        return null;
    }

    private static int versionOf(String name) {
        try {
            return Integer.parseInt(name);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Null when a server can be started here, otherwise why not. */
    public static String availability() {
        if (binaries() == null) {
            return "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb; apt-get install postgresql)";
        }
        if (isRoot() && !Files.isExecutable(Paths.get("/usr/sbin/runuser"))
                && !Files.isExecutable(Paths.get("/sbin/runuser"))) {
            return "running as root without runuser: PostgreSQL refuses to run as root";
        }
        return null;
    }

    /** True when CI asked for a failure instead of a skip. */
    public static boolean required() {
        return "1".equals(System.getenv("BUSLANE_REQUIRE_POSTGRES"));
    }

    /**
     * The shared server, or a skipped test (a failed one when {@link #required()}) when PostgreSQL is not here.
     */
    public static TestPostgres sharedOrSkip() {
        assumeAvailable();
        return shared();
    }

    /** Skips the calling test (fails it when {@link #required()}) when PostgreSQL cannot be started here. */
    public static void assumeAvailable() {
        String why = availability();
        if (why != null) {
            if (required()) {
                org.junit.jupiter.api.Assertions.fail(why + " (BUSLANE_REQUIRE_POSTGRES=1 makes this a failure)");
            }
            org.junit.jupiter.api.Assumptions.abort(why);
        }
    }

    /** The JVM's shared server, started on first use (settings for fast tests: no fsync). */
    public static synchronized TestPostgres shared() {
        if (shared == null) {
            shared = start(List.of("fsync=off", "synchronous_commit=off", "full_page_writes=off"));
            TestPostgres s = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(s::close, "test-postgres-stop"));
        }
        return shared;
    }

    /** A server of the caller's own, with durable settings (fsync on), to stop and start at will. */
    public static TestPostgres startPrivate() {
        return start(List.of());
    }

    /**
     * Starts a server with these {@code postgresql.conf} settings ({@code name=value}).
     *
     * @throws IllegalStateException when PostgreSQL cannot be started here
     */
    public static TestPostgres start(List<String> settings) {
        String why = availability();
        if (why != null) {
            throw new IllegalStateException(why);
        }
        try {
            boolean root = isRoot();
            Path dir = Files.createTempDirectory("buslane-pg-");
            if (root) {
                run(List.of("chown", "postgres:postgres", dir.toString()), false, 30);
            }
            TestPostgres pg = new TestPostgres(binaries(), dir, freePort(), root, List.copyOf(settings));
            pg.initdb();
            pg.startServer();
            return pg;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A hot standby of {@code primary}: a base backup of it ({@code pg_basebackup -R}, WAL streamed) started on its
     * own port, streaming the primary's WAL from then on. {@link #promote()} makes it a primary.
     */
    public static TestPostgres startStandbyOf(TestPostgres primary) {
        try {
            boolean root = isRoot();
            Path dir = Files.createTempDirectory("buslane-pg-standby-");
            if (root) {
                run(List.of("chown", "postgres:postgres", dir.toString()), false, 30);
            }
            TestPostgres pg = new TestPostgres(binaries(), dir, freePort(), root, List.of());
            pg.exec(List.of(pg.bin.resolve("pg_basebackup").toString(), "-h", "127.0.0.1", "-p",
                    String.valueOf(primary.port), "-U", "buslane", "-D", dir.resolve("data").toString(), "-R",
                    "-X", "stream", "-c", "fast"), 120);
            pg.startServer();
            return pg;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs one SQL statement with {@code psql} on the {@code postgres} database; returns what it printed. */
    public String sql(String statement) {
        List<String> command = new ArrayList<>();
        if (asPostgresUser) {
            command.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        command.addAll(List.of(bin.resolve("psql").toString(), "-h", "127.0.0.1", "-p", String.valueOf(port), "-U",
                "buslane", "-d", "postgres", "-At", "-c", statement));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("psql failed: " + statement + "\n" + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Kills the server's postmaster with SIGKILL, as a host loss would (its backends end when they notice). */
    public synchronized void kill() {
        try {
            String pid = Files.readAllLines(dir.resolve("data").resolve("postmaster.pid")).get(0).trim();
            run(List.of("kill", "-9", pid), false, 30);
            running = false;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Promotes a standby to a primary ({@code pg_ctl promote}, waiting until it accepts writes). */
    public void promote() {
        exec(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-w", "-t", "60",
                "promote"), 90);
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private void initdb() {
        exec(List.of(bin.resolve("initdb").toString(), "-D", dir.resolve("data").toString(), "-U", "buslane",
                "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"), 120);
    }

    private void startServer() {
        StringBuilder options = new StringBuilder("-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1"
                + " -c max_connections=200");
        for (String s : settings) {
            options.append(" -c ").append(s);
        }
        exec(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-o",
                options.toString(), "-l", dir.resolve("server.log").toString(), "-w", "-t", "60", "start"), 90);
        running = true;
    }

    /** Stops the server at once (immediate shutdown: the next start recovers from its WAL, as after a crash). */
    public synchronized void stop() {
        if (running) {
            exec(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-m", "immediate",
                    "-w", "stop"), 60);
            running = false;
        }
    }

    /** Starts the server again on the same port and data. */
    public synchronized void restart() {
        if (!running) {
            startServer();
        }
    }

    public int port() {
        return port;
    }

    /** Creates a new empty database and returns its JDBC URL (user {@code buslane}, no password). */
    public String newDatabase() {
        String name = "test_" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet();
        exec(List.of(bin.resolve("createdb").toString(), "-h", "127.0.0.1", "-p", String.valueOf(port), "-U",
                "buslane", name), 60);
        return jdbcUrl(name);
    }

    /** The JDBC URL of a database of this server. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=buslane";
    }

    /** The {@code --storage} URL of Buslane for a JDBC URL of this server. */
    public static String storageUrl(String jdbcUrl) {
        String rest = jdbcUrl.substring("jdbc:postgresql://".length(), jdbcUrl.indexOf('?'));
        return "postgresql://buslane@" + rest;
    }

    /** The server's log, for a failing test's message. */
    public String log() {
        try {
            return Files.readString(dir.resolve("server.log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private void exec(List<String> command, int timeoutSeconds) {
        run(command, asPostgresUser, timeoutSeconds);
    }

    private static void run(List<String> command, boolean asPostgres, int timeoutSeconds) {
        List<String> full = new ArrayList<>();
        if (asPostgres) {
            full.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        full.addAll(command);
        try {
            Process p = new ProcessBuilder(full).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("timed out: " + full);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("failed (" + p.exitValue() + "): " + full + "\n"
                        + new String(out, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            stop();
        } catch (RuntimeException e) {
            // best effort at exit
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
