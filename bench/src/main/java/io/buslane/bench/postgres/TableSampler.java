package io.buslane.bench.postgres;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * Samples {@code buslane_record} every {@link #INTERVAL_MS} during the table-size run: its total size, dead rows,
 * and whether an autovacuum worker is processing it ({@code pg_stat_progress_vacuum}), so that the sends' latency
 * can be compared inside and outside autovacuum's passes.
 */
final class TableSampler implements AutoCloseable {

    static final long INTERVAL_MS = 250;

    private final PgServer pg;
    private final String db;
    private final Connection c;
    private final Thread thread;
    private volatile boolean stop;
    private long peakBytes;
    private long peakDead;
    private final List<Long> vacuumAt = new ArrayList<>();
    private final long autovacuumsBefore;
    private volatile Exception failure;

    TableSampler(PgServer pg, String db) throws Exception {
        this.pg = pg;
        this.db = db;
        this.c = pg.connect(db);
        this.autovacuumsBefore = autovacuums();
        this.thread = new Thread(this::loop, "table-sampler");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    private long autovacuums() throws Exception {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_stat_clear_snapshot()");
            return PostgresBench.queryLong(c, "SELECT coalesce(sum(autovacuum_count), 0) FROM pg_stat_user_tables"
                    + " WHERE relname = 'buslane_record'");
        }
    }

    private void loop() {
        try (Statement s = c.createStatement()) {
            while (!stop) {
                long now = System.nanoTime();
                s.execute("SELECT pg_stat_clear_snapshot()");
                try (ResultSet rs = s.executeQuery("SELECT pg_total_relation_size('buslane_record'),"
                        + " (SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables"
                        + " WHERE relname = 'buslane_record'),"
                        + " (SELECT count(*) FROM pg_stat_progress_vacuum WHERE relid = 'buslane_record'::regclass)")) {
                    rs.next();
                    synchronized (this) {
                        peakBytes = Math.max(peakBytes, rs.getLong(1));
                        peakDead = Math.max(peakDead, rs.getLong(2));
                        if (rs.getLong(3) > 0) {
                            vacuumAt.add(now);
                        }
                    }
                }
                Thread.sleep(INTERVAL_MS);
            }
        } catch (Exception e) {
            failure = e;
        }
    }

    void stop() throws Exception {
        stop = true;
        thread.join(10_000);
        if (failure != null) {
            throw failure;
        }
    }

    /** The table at the end of the run, and the probe's latency inside and outside autovacuum's passes. */
    PostgresBench.TableSize result(long messages, double seconds, double maxSendMs, LatencyLog probe)
            throws Exception {
        Thread.sleep(1500); // statistics settle
        long endBytes = PostgresBench.queryLong(c, "SELECT pg_total_relation_size('buslane_record')");
        long tableOnly = PostgresBench.queryLong(c, "SELECT pg_relation_size('buslane_record')");
        long endRows = PostgresBench.queryLong(c, "SELECT count(*) FROM buslane_record");
        long live = PostgresBench.queryLong(c, "SELECT coalesce(sum(octet_length(payload) + 32), 0)"
                + " FROM buslane_record");
        long autovacuums = autovacuums() - autovacuumsBefore;
        long[] during;
        synchronized (this) {
            during = vacuumAt.stream().mapToLong(Long::longValue).toArray();
        }
        long half = INTERVAL_MS * 1_000_000L;
        java.util.function.LongPredicate inVacuum = t -> {
            int i = java.util.Arrays.binarySearch(during, t);
            int next = i >= 0 ? i : -i - 1;
            return i >= 0 || next < during.length && during[next] - t <= half
                    || next > 0 && t - during[next - 1] <= half;
        };
        int vacuumSeconds = (int) Math.round(during.length * INTERVAL_MS / 1000.0);
        return new PostgresBench.TableSize(messages, seconds, peakBytes, endBytes, endRows, live, autovacuums,
                vacuumSeconds, maxSendMs, probe.ms(50), probe.ms(99), probe.ms(100), probe.maxMs(inVacuum),
                probe.maxMs(inVacuum.negate()), peakDead, tableOnly);
    }

    @Override
    public void close() throws Exception {
        stop = true;
        thread.join(10_000);
        c.close();
    }

}
