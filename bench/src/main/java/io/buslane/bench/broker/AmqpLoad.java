package io.buslane.bench.broker;

import org.apache.qpid.protonj2.client.Client;
import org.apache.qpid.protonj2.client.Connection;
import org.apache.qpid.protonj2.client.ConnectionOptions;
import org.apache.qpid.protonj2.client.Delivery;
import org.apache.qpid.protonj2.client.Message;
import org.apache.qpid.protonj2.client.Receiver;
import org.apache.qpid.protonj2.client.ReceiverOptions;
import org.apache.qpid.protonj2.client.Sender;
import org.apache.qpid.protonj2.client.SenderOptions;
import org.apache.qpid.protonj2.client.Tracker;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The load client: Qpid protonj2-client 1.1.0, the same code and options against every broker. Durable messages
 * with a 1 KiB body whose first 8 bytes carry the send (or due) time in {@link System#nanoTime()}; peek-lock
 * receivers that accept (complete) every delivery. Every method runs its threads until {@link #stop()}; the
 * caller measures counters over a window (see {@link BrokerBench}).
 */
final class AmqpLoad implements AutoCloseable {

    static final int BODY_BYTES = 1024;
    static final String SESSION_FILTER = "com.microsoft:session-filter";
    static final String SCHEDULED_ENQUEUE_TIME = "x-opt-scheduled-enqueue-time";

    private final Client client = Client.create();
    private final int port;
    private final List<Connection> connections = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private volatile Throwable failure;
    /** Deliveries per sent message (4 for the fan-out topic): the end-to-end gate divides received by it. */
    volatile int fanout = 1;
    /**
     * Backlog mode: messages already on the queue before this load started; receivers keep at least
     * {@code backlogFloor} of them (plus what this load sent) unreceived, so the queue depth stays between the
     * floor and floor + the sender's gate. -1: off.
     */
    volatile long preloaded;
    volatile long backlogFloor = -1;

    /** Settled sends. */
    final AtomicLong sent = new AtomicLong();
    /** Accepted deliveries (all receivers together). */
    final AtomicLong received = new AtomicLong();
    /** Latencies: end-to-end (fixed rate), send to settlement (one at a time) or activation lag (scheduled). */
    final Stats.Recorder latency = new Stats.Recorder();

    AmqpLoad(int port) {
        this.port = port;
    }

    Connection connect() throws Exception {
        ConnectionOptions o = new ConnectionOptions();
        o.user("RootManageSharedAccessKey");
        o.password("SAS_KEY_VALUE");
        o.saslOptions().addAllowedMechanism("PLAIN");
        Connection c = client.connect("127.0.0.1", port, o);
        c.openFuture().get(30, TimeUnit.SECONDS);
        synchronized (connections) {
            connections.add(c);
        }
        return c;
    }

    /** A sender on a connection of its own, open. */
    private Sender openSender(String address) throws Exception {
        Sender sender = connect().openSender(address);
        sender.openFuture().get(30, TimeUnit.SECONDS);
        return sender;
    }

    static Message<byte[]> message(long stamp) {
        byte[] body = new byte[BODY_BYTES];
        ByteBuffer.wrap(body).putLong(stamp);
        Message<byte[]> m = Message.create(body);
        try {
            m.durable(true);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return m;
    }

    static long stamp(Delivery d) throws Exception {
        Object body = d.message().body();
        return body instanceof byte[] b && b.length >= 8 ? ByteBuffer.wrap(b).getLong() : 0L;
    }

    private void spawn(String name, ThrowingRunnable body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                if (!stop.get()) {
                    failure = e;
                    e.printStackTrace();
                }
            }
        }, name);
        t.setDaemon(true);
        threads.add(t);
        t.start();
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static SenderOptions senderOptions(boolean topicCapability) {
        SenderOptions so = new SenderOptions();
        if (topicCapability) {
            so.targetOptions().capabilities("topic");
        }
        return so;
    }

    // ------------------------------------------------------------------------------------------- senders

    /**
     * Pipelined sends on {@code connections} connections, each with up to {@link BenchConfig#window} unsettled
     * transfers; {@code gate} > 0 caps messages sent and not yet received (end-to-end), {@code limit} > 0 stops
     * after that many sends in total.
     */
    void pipelinedSenders(int connectionCount, String address, int window, long gate, long limit,
                          boolean topicCapability) throws Exception {
        AtomicLong claimed = new AtomicLong();
        for (int i = 0; i < connectionCount; i++) {
            Connection c = connect();
            Sender sender = c.openSender(address, senderOptions(topicCapability));
            sender.openFuture().get(30, TimeUnit.SECONDS);
            spawn("sender-" + i, () -> {
                ArrayDeque<Tracker> unsettled = new ArrayDeque<>(window);
                while (!stop.get()) {
                    if (limit > 0 && claimed.incrementAndGet() > limit) {
                        break;
                    }
                    while (gate > 0 && preloaded + sent.get() + unsettled.size() - received.get() / fanout >= gate
                            && !stop.get()) {
                        LockSupport.parkNanos(20_000);
                    }
                    unsettled.add(sender.send(message(System.nanoTime())));
                    if (unsettled.size() >= window) {
                        unsettled.poll().awaitSettlement();
                        sent.incrementAndGet();
                    }
                }
                while (!unsettled.isEmpty()) {
                    unsettled.poll().awaitSettlement(60, TimeUnit.SECONDS);
                    sent.incrementAndGet();
                }
            });
        }
    }

    /** Sends at a fixed rate (scheduled send times, so a stall shows in the latency: no coordinated omission). */
    void fixedRateSender(String address, int perSecond) throws Exception {
        Sender sender = openSender(address);
        spawn("rate-sender", () -> {
            long interval = 1_000_000_000L / perSecond;
            long start = System.nanoTime();
            ArrayDeque<Tracker> unsettled = new ArrayDeque<>();
            for (long i = 0; !stop.get(); i++) {
                long due = start + i * interval;
                long wait;
                while ((wait = due - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(Math.min(wait, 100_000));
                }
                unsettled.add(sender.send(message(due)));
                while (!unsettled.isEmpty() && unsettled.peek().remoteSettled()) {
                    unsettled.poll();
                    sent.incrementAndGet();
                }
            }
        });
    }

    /** One send at a time, each awaited; records send-to-settlement latency once {@code recordAfterNanos} passed. */
    void oneAtATimeSender(String address, long recordAfterNanos) throws Exception {
        Sender sender = openSender(address);
        spawn("sync-sender", () -> {
            while (!stop.get()) {
                long t0 = System.nanoTime();
                sender.send(message(t0)).awaitSettlement(30, TimeUnit.SECONDS);
                long t1 = System.nanoTime();
                sent.incrementAndGet();
                if (t0 >= recordAfterNanos) {
                    latency.record(t1 - t0);
                }
            }
        });
    }

    private Sender scheduleSender;
    /** Epoch nanoseconds at {@link #scheduleBaseNano}. */
    private long scheduleBaseWall;
    private long scheduleBaseNano;

    /**
     * Sends messages {@code from} to {@code to} (exclusive) of {@code count} scheduled {@code firstDueMs} (epoch ms)
     * onwards, evenly spread over {@code spreadMs}; the body carries the due time in this JVM's nanoTime. Blocks
     * until all are settled.
     */
    void sendScheduled(String address, int from, int to, int count, long firstDueMs, long spreadMs, int window)
            throws Exception {
        if (scheduleSender == null) {
            scheduleSender = openSender(address);
            // the wall clock to the microsecond (currentTimeMillis truncates: up to 1 ms of error in the lag)
            java.time.Instant now = java.time.Instant.now();
            scheduleBaseNano = System.nanoTime();
            scheduleBaseWall = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        }
        Sender sender = scheduleSender;
        long baseWall = scheduleBaseWall;
        long baseNano = scheduleBaseNano;
        ArrayDeque<Tracker> unsettled = new ArrayDeque<>(window);
        for (int i = from; i < to; i++) {
            long dueMs = firstDueMs + (long) ((double) spreadMs * i / count);
            long dueNano = baseNano + (dueMs * 1_000_000L - baseWall);
            Message<byte[]> m = message(dueNano);
            m.annotation(SCHEDULED_ENQUEUE_TIME, new Date(dueMs));
            unsettled.add(sender.send(m));
            if (unsettled.size() >= window) {
                unsettled.poll().awaitSettlement(60, TimeUnit.SECONDS);
                sent.incrementAndGet();
            }
        }
        while (!unsettled.isEmpty()) {
            unsettled.poll().awaitSettlement(60, TimeUnit.SECONDS);
            sent.incrementAndGet();
        }
    }

    /** Sends {@code sessions × perSession} messages, session id {@code s-<n>}, round-robin over sessions. */
    void sendSessions(String address, int sessions, int perSession, int window) throws Exception {
        sendSessions(address, "s-", 0, sessions, perSession, window);
    }

    /**
     * Sends {@code sessions × perSession} messages to sessions {@code <prefix><first>} onwards, round-robin over the
     * sessions (each session's messages spread over the whole send); blocks until all are settled.
     */
    void sendSessions(String address, String prefix, long first, long sessions, int perSession, int window)
            throws Exception {
        Sender sender = openSender(address);
        ArrayDeque<Tracker> unsettled = new ArrayDeque<>(window);
        for (int k = 0; k < perSession; k++) {
            for (long s = first; s < first + sessions; s++) {
                Message<byte[]> m = message(System.nanoTime());
                m.groupId(prefix + s);
                unsettled.add(sender.send(m));
                if (unsettled.size() >= window) {
                    unsettled.poll().awaitSettlement(60, TimeUnit.SECONDS);
                    sent.incrementAndGet();
                }
            }
        }
        while (!unsettled.isEmpty()) {
            unsettled.poll().awaitSettlement(60, TimeUnit.SECONDS);
            sent.incrementAndGet();
        }
    }

    // ------------------------------------------------------------------------------------------- receivers

    /**
     * A peek-lock receiver (credit window 1000) on its own connection that accepts every delivery; with
     * {@code recordLatency} it records now − the body's stamp for messages stamped after {@code recordAfterNanos}.
     */
    void receiver(String address, boolean recordLatency, long recordAfterNanos) throws Exception {
        receiver(connect(), address, recordLatency, recordAfterNanos, received);
    }

    void receiver(Connection c, String address, boolean recordLatency, long recordAfterNanos, AtomicLong counter)
            throws Exception {
        // One AMQP session per receiver, as the Service Bus SDKs do (protonj2's default session window, about 1,600
        // transfers, would otherwise be shared by every receiver on the connection).
        Receiver r = c.openSession().openReceiver(address,
                new ReceiverOptions().creditWindow(1000).autoAccept(false));
        r.openFuture().get(30, TimeUnit.SECONDS);
        spawn("receiver-" + address, () -> {
            while (!stop.get()) {
                if (backlogFloor >= 0 && preloaded + sent.get() - counter.get() <= backlogFloor) {
                    LockSupport.parkNanos(20_000);
                    continue;
                }
                Delivery d = r.receive(100, TimeUnit.MILLISECONDS);
                if (d == null) {
                    continue;
                }
                if (recordLatency) {
                    long now = System.nanoTime();
                    long stamp = stamp(d);
                    if (stamp >= recordAfterNanos) {
                        latency.record(now - stamp);
                    }
                }
                d.accept();
                counter.incrementAndGet();
            }
        });
    }

    /**
     * {@code workers} threads, each on its own connection, each repeatedly attaching a session receiver for the
     * next available session, receiving and accepting {@code perSession} messages, and detaching; until
     * {@code sessions} sessions are done. Counts sessions in {@code sessionsDone}.
     */
    void sessionReceivers(String address, int workers, int sessions, int perSession, AtomicLong sessionsDone)
            throws Exception {
        AtomicLong claimed = new AtomicLong();
        for (int w = 0; w < workers; w++) {
            Connection c = connect();
            spawn("session-worker-" + w, () -> {
                while (!stop.get() && claimed.incrementAndGet() <= sessions) {
                    Receiver r = c.openReceiver(address, sessionReceiverOptions(perSession, null));
                    r.openFuture().get(30, TimeUnit.SECONDS);
                    for (int i = 0; i < perSession; i++) {
                        Delivery d = r.receive(30, TimeUnit.SECONDS);
                        if (d == null) {
                            throw new IllegalStateException("session receiver got " + i + " of " + perSession);
                        }
                        d.accept();
                        received.incrementAndGet();
                    }
                    r.closeAsync();
                    sessionsDone.incrementAndGet();
                }
            });
        }
    }

    /**
     * A session processor as the SDKs run one: {@code connections} connections with {@code slots} slots each, each
     * slot on its own AMQP session, repeatedly accepting the next available session (attach with an empty session
     * filter), receiving and accepting {@code perSession} messages (credit {@code perSession}) and detaching. Counts
     * sessions in {@code sessionsDone} and messages in {@link #received}; runs until {@link #stop()} or until
     * {@code limit} sessions were claimed.
     */
    void sessionProcessors(String address, int connections, int slots, int perSession, long limit,
                           AtomicLong sessionsDone) throws Exception {
        AtomicLong claimed = new AtomicLong();
        for (int c = 0; c < connections; c++) {
            Connection connection = connect();
            for (int slot = 0; slot < slots; slot++) {
                spawn("session-slot-" + c + "-" + slot, () -> {
                    org.apache.qpid.protonj2.client.Session session = connection.openSession();
                    session.openFuture().get(30, TimeUnit.SECONDS);
                    while (!stop.get() && claimed.incrementAndGet() <= limit) {
                        Receiver r = session.openReceiver(address, sessionReceiverOptions(perSession, null));
                        if (!awaitOpen(r)) {
                            return;
                        }
                        for (int i = 0; i < perSession; i++) {
                            Delivery d = receiveOrStop(r);
                            if (d == null) {
                                return;
                            }
                            d.accept();
                            received.incrementAndGet();
                        }
                        r.closeAsync();
                        sessionsDone.incrementAndGet();
                    }
                });
            }
        }
    }

    /** Attaches a session receiver for {@code sessionId} and detaches it: true when attached within the timeout. */
    boolean acceptNamedSession(String address, String sessionId, long timeoutMs) throws Exception {
        Receiver r = connect().openSession().openReceiver(address, sessionReceiverOptions(1, sessionId));
        r.openFuture().get(timeoutMs, TimeUnit.MILLISECONDS);
        r.closeAsync();
        return true;
    }

    /** A peek-lock session receiver's options: the named session, or with null the next available one. */
    private static ReceiverOptions sessionReceiverOptions(int credit, String sessionId) {
        ReceiverOptions ro = new ReceiverOptions().creditWindow(credit).autoAccept(false);
        Map<String, Object> filters = new HashMap<>();
        filters.put(SESSION_FILTER, sessionId);
        ro.sourceOptions().filters(filters);
        return ro;
    }

    /** Waits for a receiver's attach to be answered, or for {@link #stop()}: false when stopped first. */
    private boolean awaitOpen(Receiver r) throws Exception {
        while (true) {
            try {
                r.openFuture().get(100, TimeUnit.MILLISECONDS);
                return true;
            } catch (java.util.concurrent.TimeoutException e) {
                if (stop.get()) {
                    return false;
                }
            } catch (java.util.concurrent.ExecutionException e) {
                if (stop.get()) {
                    return false;
                }
                throw e;
            }
        }
    }

    /** The next delivery (within 30 s, else fails), or null when stopped first. */
    private Delivery receiveOrStop(Receiver r) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!stop.get()) {
            Delivery d = r.receive(100, TimeUnit.MILLISECONDS);
            if (d != null) {
                return d;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("a session receiver waited 30 s for a message of its session");
            }
        }
        return null;
    }

    /**
     * Keeps the number of sessions with messages where it is: for each session {@code sessionsDone} counts, one
     * message to a new session {@code <prefix><next>} (pipelined on a connection of its own, window {@code window}).
     */
    void refillSessions(String address, String prefix, AtomicLong next, AtomicLong sessionsDone, int window)
            throws Exception {
        Sender sender = openSender(address);
        spawn("session-refill", () -> {
            ArrayDeque<Tracker> unsettled = new ArrayDeque<>(window);
            long issued = 0;
            while (!stop.get()) {
                while (!unsettled.isEmpty() && unsettled.peek().remoteSettled()) {
                    unsettled.poll();
                    sent.incrementAndGet();
                }
                if (issued < sessionsDone.get() && unsettled.size() < window) {
                    Message<byte[]> m = message(System.nanoTime());
                    m.groupId(prefix + next.getAndIncrement());
                    unsettled.add(sender.send(m));
                    issued++;
                } else {
                    LockSupport.parkNanos(50_000);
                }
            }
        });
    }

    /** Receives (accepts) until {@code count} deliveries arrived on {@code address}, or the timeout; true if all. */
    boolean awaitReceived(long count, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (received.get() < count && System.nanoTime() < deadline) {
            check();
            Thread.sleep(5);
        }
        return received.get() >= count;
    }

    boolean awaitSent(long count, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (sent.get() < count && System.nanoTime() < deadline) {
            check();
            Thread.sleep(5);
        }
        return sent.get() >= count;
    }

    void check() {
        Throwable f = failure;
        if (f != null) {
            throw new IllegalStateException("a load thread failed: " + f, f);
        }
    }

    void stop() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
        synchronized (connections) {
            for (Connection c : connections) {
                try {
                    c.closeAsync();
                } catch (RuntimeException e) {
                    // closing anyway
                }
            }
        }
        client.closeAsync();
    }
}
