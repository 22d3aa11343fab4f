package io.buslane.bench.postgres;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The throwaway PostgreSQL cluster that bench/run-postgres.sh started (user {@code buslane}, trust auth, on
 * 127.0.0.1): databases, and what the benchmark reads of it. CPU time of the whole cluster comes from
 * {@code /proc}: the postmaster's own and reaped children's time plus every live child's; commits and WAL from
 * {@code pg_stat_database} and {@code pg_stat_wal}; statements from {@code pg_stat_statements}.
 */
final class PgServer {

    /** Clock ticks per second of {@code /proc/<pid>/stat}. */
    private static final long CLK_TCK = 100;

    final int port;
    private final Path dataDir;

    PgServer(int port, Path dataDir) {
        this.port = port;
        this.dataDir = dataDir;
    }

    String jdbcUrl(String db) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + db + "?user=buslane";
    }

    /** The broker's {@code --storage} URL for a database. */
    String storageUrl(String db) {
        return "postgresql://buslane@127.0.0.1:" + port + "/" + db;
    }

    Connection connect(String db) throws SQLException {
        return DriverManager.getConnection(jdbcUrl(db));
    }

    /** Drops (if present) and creates a database, with pg_stat_statements in it. */
    void createDatabase(String db) throws SQLException {
        try (Connection c = connect("postgres"); Statement s = c.createStatement()) {
            s.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
            s.execute("CREATE DATABASE " + db);
        }
        try (Connection c = connect(db); Statement s = c.createStatement()) {
            s.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        }
    }

    /** A setting's value ({@code SHOW}). */
    String setting(String name) throws SQLException {
        try (Connection c = connect("postgres"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW " + name)) {
            rs.next();
            return rs.getString(1);
        }
    }

    String version() throws SQLException {
        try (Connection c = connect("postgres"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT version()")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** Counters of the cluster at one moment. */
    record Snapshot(long cpuMicros, long commits, long walBytes, long walSyncs, long walRecords) {
    }

    /**
     * The cluster's counters for database {@code db}. Backends report their statistics about once a second, so a
     * reading taken at the end of a workload waits for that first ({@code settle}).
     */
    Snapshot snapshot(String db, boolean settle) throws Exception {
        if (settle) {
            Thread.sleep(1200);
        }
        try (Connection c = connect(db); Statement s = c.createStatement()) {
            s.execute("SELECT pg_stat_clear_snapshot()");
            long commits;
            try (ResultSet rs = s.executeQuery("SELECT xact_commit FROM pg_stat_database WHERE datname = '"
                    + db + "'")) {
                rs.next();
                commits = rs.getLong(1);
            }
            try (ResultSet rs = s.executeQuery("SELECT wal_bytes, wal_sync, wal_records FROM pg_stat_wal")) {
                rs.next();
                return new Snapshot(cpuMicros(), commits, rs.getLong(1), rs.getLong(2), rs.getLong(3));
            }
        }
    }

    void resetStatements(String db) throws SQLException {
        try (Connection c = connect(db); Statement s = c.createStatement()) {
            s.execute("SELECT pg_stat_statements_reset()");
        }
    }

    /** The statements that ran most often since the last reset: calls, rows, mean ms, the query's start. */
    List<String> topStatements(String db, int limit) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = connect(db); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT calls, rows, mean_exec_time, wal_bytes, query, max_exec_time"
                     + " FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '" + db
                     + "') AND query NOT LIKE '%pg_stat%' AND query NOT LIKE 'SHOW%'"
                     + " ORDER BY calls DESC LIMIT " + limit)) {
            while (rs.next()) {
                String q = rs.getString(5).replaceAll("\\s+", " ");
                out.add(String.format(Locale.ROOT, "%d calls, %d rows, %.3f ms mean, %.1f ms max, %.0f WAL bytes/call:"
                        + " `%s`", rs.getLong(1), rs.getLong(2), rs.getDouble(3), rs.getDouble(6),
                        rs.getLong(1) == 0 ? 0.0 : rs.getDouble(4) / rs.getLong(1),
                        q.length() > 90 ? q.substring(0, 90) + " ..." : q));
            }
        }
        return out;
    }

    /** User + system CPU time of the whole cluster so far, in microseconds. */
    long cpuMicros() throws IOException {
        long postmaster = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
        long ticks = 0;
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String name = p.getFileName().toString();
                if (!Character.isDigit(name.charAt(0))) {
                    continue;
                }
                try {
                    String stat = Files.readString(p.resolve("stat"), StandardCharsets.US_ASCII);
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    // after "pid (comm) ": state=f[0], ppid=f[1], utime=f[11], stime=f[12], cutime=f[13], cstime=f[14]
                    long pid = Long.parseLong(name);
                    if (pid == postmaster) {
                        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13])
                                + Long.parseLong(f[14]);
                    } else if (Long.parseLong(f[1]) == postmaster) {
                        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                    }
                } catch (IOException | RuntimeException e) {
                    // the process ended meanwhile
                }
            }
        }
        return ticks * 1_000_000L / CLK_TCK;
    }

    /** User + system CPU time of a process so far ({@code self} for this JVM), in microseconds. */
    static long processCpuMicros(String pid) {
        try {
            String stat = Files.readString(Path.of("/proc", pid, "stat"), StandardCharsets.US_ASCII);
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 1_000_000L / CLK_TCK;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc/" + pid + "/stat", e);
        }
    }

    /**
     * CPU time so far of a JVM's JIT compiler threads ({@code C1/C2 CompilerThread*}), in microseconds; threads that
     * ended no longer count.
     */
    static long jitCpuMicros(String pid) {
        long ticks = 0;
        try (var tasks = Files.list(Path.of("/proc", pid, "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String stat = Files.readString(task.resolve("stat"), StandardCharsets.US_ASCII);
                    String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    if (comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler")) {
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                    }
                } catch (IOException | RuntimeException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (IOException e) {
            return 0;
        }
        return ticks * 1_000_000L / CLK_TCK;
    }
}
