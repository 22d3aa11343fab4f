package io.buslane.bench.postgres;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The queue people build by hand on PostgreSQL, over pgjdbc: one table; producers insert batches with one
 * multi-row {@code INSERT} per transaction; consumers take a batch with
 * {@code DELETE ... WHERE id IN (SELECT id ... ORDER BY id LIMIT n FOR UPDATE SKIP LOCKED) RETURNING} inside a
 * transaction and commit once the batch is handled (the row locks are the peek-lock, the commit the completion).
 * Each thread has its own connection; every commit is durable with the server's default settings.
 */
final class HandQueue implements AutoCloseable {

    static final String TABLE = "CREATE TABLE hand_queue (id bigserial PRIMARY KEY,"
            + " enqueued_at timestamptz NOT NULL DEFAULT now(), body bytea NOT NULL)";
    static final String TAKE = "DELETE FROM hand_queue WHERE id IN (SELECT id FROM hand_queue ORDER BY id"
            + " LIMIT ? FOR UPDATE SKIP LOCKED) RETURNING id, body";

    private final PgServer pg;
    private final String db;
    private final int batch;
    private final List<Connection> connections = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    final AtomicLong claimed = new AtomicLong();
    final AtomicLong sent = new AtomicLong();
    final AtomicLong received = new AtomicLong();
    final AtomicLong emptyPolls = new AtomicLong();
    final AtomicLong maxInsertNanos = new AtomicLong();

    HandQueue(PgServer pg, String db, int batch) throws Exception {
        this.pg = pg;
        this.db = db;
        this.batch = batch;
        try (Connection c = pg.connect(db); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS hand_queue");
            s.execute(TABLE);
        }
    }

    private Connection connect() throws Exception {
        Connection c = pg.connect(db);
        synchronized (connections) {
            connections.add(c);
        }
        return c;
    }

    private Thread spawn(String name, BrokerLoad.Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                if (!stop.get()) {
                    failure.compareAndSet(null, e);
                }
            }
        }, name);
        t.setDaemon(true);
        threads.add(t);
        return t;
    }

    private static String insertSql(int rows) {
        StringBuilder b = new StringBuilder("INSERT INTO hand_queue (body) VALUES (?)");
        for (int i = 1; i < rows; i++) {
            b.append(",(?)");
        }
        return b.toString();
    }

    /**
     * {@code count} producer threads (not started yet) that together insert {@code limit} messages of
     * {@link BrokerLoad#BODY_BYTES}, {@link #batch} per statement (autocommit: one transaction each); with
     * {@code gate} > 0 they wait while that many are inserted and not yet taken.
     */
    List<Thread> producers(int count, long limit, long gate) throws Exception {
        List<Thread> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Connection c = connect();
            list.add(spawn("producer-" + i, () -> {
                PreparedStatement full = c.prepareStatement(insertSql(batch));
                while (!stop.get()) {
                    long from = claimed.getAndAdd(batch);
                    int rows = (int) Math.min(batch, limit - from);
                    if (rows <= 0) {
                        break;
                    }
                    while (gate > 0 && from + rows - received.get() > gate && !stop.get()) {
                        LockSupport.parkNanos(20_000);
                    }
                    PreparedStatement ps = rows == batch ? full : c.prepareStatement(insertSql(rows));
                    long now = System.nanoTime();
                    for (int r = 0; r < rows; r++) {
                        byte[] body = new byte[BrokerLoad.BODY_BYTES];
                        ByteBuffer.wrap(body).putLong(now);
                        ps.setBytes(r + 1, body);
                    }
                    ps.executeUpdate();
                    maxInsertNanos.accumulateAndGet(System.nanoTime() - now, Math::max);
                    sent.addAndGet(rows);
                }
            }));
        }
        return list;
    }

    /** {@code count} consumer threads (not started yet), each taking up to {@link #batch} rows per transaction. */
    List<Thread> consumers(int count) throws Exception {
        List<Thread> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Connection c = connect();
            c.setAutoCommit(false);
            list.add(spawn("consumer-" + i, () -> {
                PreparedStatement take = c.prepareStatement(TAKE);
                take.setInt(1, batch);
                while (!stop.get()) {
                    int got = 0;
                    try (ResultSet rs = take.executeQuery()) {
                        while (rs.next()) {
                            rs.getLong(1);
                            rs.getBytes(2); // the application would handle the message here
                            got++;
                        }
                    }
                    c.commit();
                    received.addAndGet(got);
                    if (got == 0) {
                        emptyPolls.incrementAndGet();
                        LockSupport.parkNanos(1_000_000); // an empty queue: poll again in 1 ms
                    }
                }
            }));
        }
        return list;
    }

    void join(List<Thread> list, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        for (Thread t : list) {
            while (t.isAlive()) {
                check();
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("load did not finish within " + timeoutMs / 1000 + " s");
                }
                t.join(20);
            }
        }
        check();
    }

    void awaitReceived(long count, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (received.get() < count) {
            check();
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("took " + received.get() + " of " + count + " within "
                        + timeoutMs / 1000 + " s");
            }
            Thread.sleep(2);
        }
    }

    void check() {
        Throwable f = failure.get();
        if (f != null) {
            throw new IllegalStateException("a queue thread failed: " + f, f);
        }
    }

    @Override
    public void close() throws Exception {
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
        }
        synchronized (connections) {
            for (Connection c : connections) {
                c.close();
            }
        }
    }
}
