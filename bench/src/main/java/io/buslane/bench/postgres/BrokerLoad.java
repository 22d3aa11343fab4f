package io.buslane.bench.postgres;

import org.apache.qpid.protonj2.client.Client;
import org.apache.qpid.protonj2.client.Connection;
import org.apache.qpid.protonj2.client.ConnectionOptions;
import org.apache.qpid.protonj2.client.Delivery;
import org.apache.qpid.protonj2.client.Message;
import org.apache.qpid.protonj2.client.Receiver;
import org.apache.qpid.protonj2.client.ReceiverOptions;
import org.apache.qpid.protonj2.client.Sender;
import org.apache.qpid.protonj2.client.Tracker;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The AMQP side of the PostgreSQL benchmark: the client and options of the broker benchmark's {@code AmqpLoad}
 * (Qpid protonj2-client 1.1.0, durable 1 KiB messages, up to {@link #WINDOW} unsettled transfers per sender
 * connection, peek-lock receivers with credit {@link #WINDOW} that accept every delivery), run for a fixed number
 * of messages rather than a time window, so that every system moves the same messages.
 */
final class BrokerLoad implements AutoCloseable {

    static final int BODY_BYTES = 1024;
    static final int WINDOW = 1000;

    private final Client client = Client.create();
    /** The brokers' AMQP ports: connection k goes to {@code ports[k % ports.length]} (round-robin). */
    private final int[] ports;
    private int nextPort;
    private final List<Connection> connections = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    final AtomicLong claimed = new AtomicLong();
    final AtomicLong sent = new AtomicLong();
    final AtomicLong received = new AtomicLong();
    /** Sends the broker settled without accepting them (e.g. server-busy): each is sent again, as an SDK retries. */
    final AtomicLong refused = new AtomicLong();
    final AtomicReference<String> firstRefusal = new AtomicReference<>();
    /** Refused sends not sent again yet. */
    private final AtomicLong resend = new AtomicLong();
    /** Longest send-to-settlement time of a pipelined send (the oldest unsettled transfer, awaited). */
    final AtomicLong maxSendNanos = new AtomicLong();
    /** One-at-a-time probe sends: settled count and their latencies. */
    final AtomicLong probeSent = new AtomicLong();
    final LatencyLog probe = new LatencyLog();
    /** Senders claim no more messages after this {@link System#nanoTime()} (default: never). */
    volatile long deadlineNanos = Long.MAX_VALUE;

    BrokerLoad(int... ports) {
        this.ports = ports.clone();
    }

    /** The next connection goes to {@code ports[index % ports.length]}, and the ones after it round-robin on. */
    BrokerLoad nextOn(int index) {
        synchronized (connections) {
            nextPort = index;
        }
        return this;
    }

    private Connection connect() throws Exception {
        ConnectionOptions o = new ConnectionOptions();
        o.user("RootManageSharedAccessKey");
        o.password("SAS_KEY_VALUE");
        o.saslOptions().addAllowedMechanism("PLAIN");
        int port;
        synchronized (connections) {
            port = ports[nextPort++ % ports.length];
        }
        Connection c = client.connect("127.0.0.1", port, o);
        c.openFuture().get(30, TimeUnit.SECONDS);
        synchronized (connections) {
            connections.add(c);
        }
        return c;
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

    interface Body {
        void run() throws Exception;
    }

    private Thread spawn(String name, Body body) {
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

    /**
     * Opens {@code count} sender connections (not started yet): together they send {@code limit} messages, each
     * keeping up to {@link #WINDOW} unsettled; with {@code gate} > 0 they wait while that many are sent and not yet
     * received.
     */
    List<Thread> senders(String queue, int count, long limit, long gate) throws Exception {
        List<Thread> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Sender sender = connect().openSender(queue);
            sender.openFuture().get(30, TimeUnit.SECONDS);
            list.add(spawn("sender-" + i, () -> {
                ArrayDeque<Tracker> unsettled = new ArrayDeque<>(WINDOW);
                ArrayDeque<Long> sentAt = new ArrayDeque<>(WINDOW);
                while (!stop.get() && System.nanoTime() < deadlineNanos
                        && (takeResend() || claimed.incrementAndGet() <= limit)) {
                    while (gate > 0 && claimed.get() - received.get() > gate && !stop.get()) {
                        LockSupport.parkNanos(20_000);
                    }
                    long now = System.nanoTime();
                    unsettled.add(sender.send(message(now)));
                    sentAt.add(now);
                    if (unsettled.size() >= WINDOW) {
                        settleOldest(unsettled, sentAt);
                    }
                }
                while (!stop.get() && (!unsettled.isEmpty() || resend.get() > 0)) {
                    if (!unsettled.isEmpty()) {
                        settleOldest(unsettled, sentAt);
                    } else if (takeResend()) {
                        long now = System.nanoTime();
                        unsettled.add(sender.send(message(now)));
                        sentAt.add(now);
                    }
                }
            }));
        }
        return list;
    }

    private boolean takeResend() {
        long r;
        do {
            r = resend.get();
            if (r <= 0) {
                return false;
            }
        } while (!resend.compareAndSet(r, r - 1));
        return true;
    }

    private void settleOldest(ArrayDeque<Tracker> unsettled, ArrayDeque<Long> sentAt) throws Exception {
        Tracker t = unsettled.poll().awaitSettlement(120, TimeUnit.SECONDS);
        long took = System.nanoTime() - sentAt.poll();
        if (!t.remoteSettled()) {
            throw new IllegalStateException("a send was not settled within 120 s");
        }
        maxSendNanos.accumulateAndGet(took, Math::max);
        if (t.remoteState() == null || !t.remoteState().isAccepted()) {
            refused.incrementAndGet();
            firstRefusal.compareAndSet(null, String.valueOf(t.remoteState()));
            resend.incrementAndGet();
            return;
        }
        sent.incrementAndGet();
    }

    /** Opens {@code count} peek-lock receivers, each on its own connection (not started yet). */
    List<Thread> receivers(String queue, int count) throws Exception {
        List<Thread> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Receiver r = connect().openSession().openReceiver(queue,
                    new ReceiverOptions().creditWindow(WINDOW).autoAccept(false));
            r.openFuture().get(30, TimeUnit.SECONDS);
            list.add(spawn("receiver-" + i, () -> {
                while (!stop.get()) {
                    Delivery d = r.receive(100, TimeUnit.MILLISECONDS);
                    if (d != null) {
                        d.accept();
                        received.incrementAndGet();
                    }
                }
            }));
        }
        return list;
    }

    /** A sender of one message at a time, each awaited, recording its latency (not started yet). */
    Thread probe(String queue, CountDownLatch done) throws Exception {
        return probe(queue, done, Long.MAX_VALUE, 1_000_000);
    }

    /**
     * A sender of one message at a time (up to {@code limit}), each awaited, recording its latency in {@link #probe},
     * pausing {@code pauseNanos} between sends (not started yet).
     */
    Thread probe(String queue, CountDownLatch done, long limit, long pauseNanos) throws Exception {
        Sender sender = connect().openSender(queue);
        sender.openFuture().get(30, TimeUnit.SECONDS);
        return spawn("probe", () -> {
            while (!stop.get() && done.getCount() > 0 && probeSent.get() < limit) {
                long t0 = System.nanoTime();
                Tracker t = sender.send(message(t0)).awaitSettlement(120, TimeUnit.SECONDS);
                if (!t.remoteSettled()) {
                    throw new IllegalStateException("a probe send was not settled within 120 s");
                }
                probe.record(t0, System.nanoTime() - t0);
                probeSent.incrementAndGet();
                if (pauseNanos > 0) {
                    LockSupport.parkNanos(pauseNanos);
                }
            }
        });
    }

    /**
     * A peek-lock receiver of one message at a time (not started yet): it grants one credit, waits for the delivery,
     * accepts it (settled: the completion is not awaited, as {@link #receivers}) and records the time from the credit
     * to the delivery in {@link #probe}, {@code limit} times.
     */
    Thread oneAtATimeReceiver(String queue, long limit) throws Exception {
        Receiver r = connect().openSession().openReceiver(queue,
                new ReceiverOptions().creditWindow(0).autoAccept(false));
        r.openFuture().get(30, TimeUnit.SECONDS);
        return spawn("probe-receiver", () -> {
            while (!stop.get() && received.get() < limit) {
                long t0 = System.nanoTime();
                r.addCredit(1);
                Delivery d = r.receive(60, TimeUnit.SECONDS);
                if (d == null) {
                    throw new IllegalStateException("no delivery within 60 s");
                }
                probe.record(t0, System.nanoTime() - t0);
                d.accept();
                received.incrementAndGet();
            }
        });
    }

    static void start(List<Thread> list) {
        list.forEach(Thread::start);
    }

    /** Waits for the threads to end, checking for failures. */
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

    /** Waits until {@code count} deliveries were accepted. */
    void awaitReceived(long count, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (received.get() < count) {
            check();
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("received " + received.get() + " of " + count + " within "
                        + timeoutMs / 1000 + " s");
            }
            Thread.sleep(2);
        }
    }

    void check() {
        Throwable f = failure.get();
        if (f != null) {
            throw new IllegalStateException("a load thread failed: " + f, f);
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join(30_000);
        }
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
