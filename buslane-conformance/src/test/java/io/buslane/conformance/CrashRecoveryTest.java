package io.buslane.conformance;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import com.azure.messaging.servicebus.models.ServiceBusMessageState;
import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The journal's crash test: the packaged broker runs as a child process while client threads send, schedule,
 * receive-and-complete and write session state against a queue and a session queue; at a random moment the broker is
 * killed with {@code kill -9} (sometimes again right after it recovered) and restarted on the same data directory,
 * several times per seed. After every restart the test checks, with the official SDK and by peeking everything, the
 * invariants a durable broker owes its clients:
 *
 * <ol>
 *   <li><b>no acknowledged message lost</b>: every message whose send (or schedule) returned successfully and that
 *       was not completed is still there (peeked, as active or scheduled), exactly once;</li>
 *   <li><b>no completed message back</b>: a message whose {@code complete} returned successfully is neither peeked
 *       nor ever delivered again;</li>
 *   <li><b>no sequence number reused</b>: sequence numbers are unique, a sequence number always names the same
 *       message, a message keeps its sequence number, and every message sent after a restart gets a sequence number
 *       greater than every sequence number seen before the crash;</li>
 *   <li><b>scheduled messages still fire</b>: a scheduled message whose time passed is active shortly after the
 *       restart, and at the end every outstanding message, scheduled ones included, is received;</li>
 *   <li><b>session state intact</b>: a session's state is the last value whose write returned successfully (or the
 *       value of a write that was in flight when the broker died);</li>
 *   <li>and every body delivered or peeked is the one sent (bodies are derived from the message id).</li>
 * </ol>
 *
 * <p>The second seed adds large messages (32 to 224 KB) so that the shard journal rolls its 16 MiB segments and
 * compacts them between kills (the broker has no option for smaller segments); the run's summary on stdout reports
 * the segments, compactions and torn tails seen.
 *
 * <p>With {@code -Dbuslane.conformance.storage=postgresql} (the module's {@code postgresql} execution) the broker
 * keeps its journals in a fresh PostgreSQL database per seed instead ({@link ConformanceStorage}): the kills then
 * interrupt group commits in flight to the database, and each restart (the same node id: host and AMQP port) takes
 * the journals back; the data directory holds no segments, and the large bodies are volume only.
 *
 * <p>An operation in flight when the broker dies may fail although its records reached the journal: a message whose
 * send failed may be there, a message whose complete failed may be gone, a session state whose write failed may
 * be the new one. Only the invariants above are asserted. Client retries are off so that the SDK never resends a
 * message on its own (which would legitimately duplicate it).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@ExtendWith(QuietSdkLogs.class) // the crashes drop many connections, each of which the SDK logs
class CrashRecoveryTest {

    private static final String QUEUE = "crash-queue";
    private static final String SESSION_QUEUE = "crash-sessions";
    private static final List<String> SESSIONS = List.of("sess-0", "sess-1", "sess-2");

    /** Crash cycles per seed. */
    private static final int CYCLES = 6;

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [
                      { "Name": "crash-queue", "Properties": { "LockDuration": "PT30S", "MaxDeliveryCount": 1000 } },
                      { "Name": "crash-sessions", "Properties": { "RequiresSession": true, "LockDuration": "PT30S",
                                                                  "MaxDeliveryCount": 1000 } }
                    ]
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    /**
     * One broker per seed, {@value #CYCLES} crash cycles, then a last crash and a drain of everything outstanding. The
     * second seed sends large bodies too, so that the queue's shard rolls 16 MiB journal segments and compacts them
     * while being killed: replay then reads compacted segments, and bodies are read back from them.
     */
    @ParameterizedTest(name = "seed {0}, large bodies: {1}")
    @CsvSource({"1592590337, false", "424242, true"})
    void acknowledgedWorkSurvivesRepeatedKillMinus9(long seed, boolean largeBodies) throws Exception {
        SplittableRandom rnd = new SplittableRandom(seed);
        BrokerProcess broker = BrokerProcess.startWithArgs(CONFIG, ConformanceStorage.brokerArgs());
        boolean passed = false;
        try {
            Run run = new Run(broker, seed, largeBodies);
            long t0 = System.nanoTime();
            try {
                for (int cycle = 1; cycle <= CYCLES; cycle++) {
                    run.cycle(cycle, rnd.split());
                }
                run.finalDrain(rnd.split());
            } catch (Exception e) {
                // e.g. the restarted broker refusing a probe or a peek: report it with the history and the log
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                run.violation("the test itself failed: %s", trace);
                run.failIfViolated("(an operation on the restarted broker threw)");
            }
            run.progress("seed %d done in %d ms; %s; journal: %s", seed,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), run.totals(), journalSummary(broker));
            System.out.println(String.join("\n", run.progress));
            // the run must have exercised what it claims to check, not passed on failures alone
            assertThat(run.queue.acked.size()).as("acknowledged sends on %s: %s", QUEUE, run.totals())
                    .isGreaterThanOrEqualTo(40);
            assertThat(run.queue.completed.size()).as("completions on %s", QUEUE).isGreaterThanOrEqualTo(15);
            assertThat(run.queue.scheduledDue.size()).as("scheduled messages").isGreaterThanOrEqualTo(3);
            assertThat(run.scheduledFired.get()).as("scheduled messages delivered").isGreaterThanOrEqualTo(3);
            assertThat(run.sessions.acked.size()).as("acknowledged sends on %s", SESSION_QUEUE)
                    .isGreaterThanOrEqualTo(10);
            assertThat(run.stateWrites.get()).as("session state writes").isGreaterThanOrEqualTo(3);
            passed = true;
        } finally {
            broker.close();
            if (passed) {
                deleteRecursively(broker.dataDir()); // kept for inspection when the test fails
            }
        }
    }

    /** Segment files per journal and the compactions the broker logged (on PostgreSQL: the storage). */
    private static String journalSummary(BrokerProcess broker) throws IOException {
        if (ConformanceStorage.postgresql()) {
            return "on PostgreSQL (" + broker.command().get(broker.command().indexOf("--storage") + 1) + ")";
        }
        Map<String, Long> segments = new TreeMap<>();
        try (var files = Files.walk(broker.dataDir())) {
            files.filter(f -> f.toString().endsWith(".seg")).forEach(f -> segments.merge(
                    f.getParent().getFileName().toString(), 1L, Long::sum));
        }
        long compactions = broker.log().lines().filter(l -> l.contains("Compacted ")).count();
        long interrupted = broker.log().lines().filter(l -> l.contains("that a crash interrupted")
                || l.contains("interrupted before its manifest") || l.contains("manifest in")).count();
        long torn = broker.log().lines().filter(l -> l.contains("Truncated the torn tail")).count();
        return "segments " + segments + ", compactions logged " + compactions + ", interrupted compactions "
                + "recovered " + interrupted + ", torn tails truncated " + torn;
    }

    private static void deleteRecursively(Path dir) {
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // best effort
        }
    }

    // ============================================================================================ the model

    /** What the clients were told about one entity, and what they observed of it. */
    static final class Ledger {
        final String entity;
        /** id -> epoch (number of restarts so far) when its send or schedule was attempted. */
        final Map<String, Integer> attempted = new ConcurrentHashMap<>();
        /** Sends and schedules that returned successfully. */
        final Set<String> acked = ConcurrentHashMap.newKeySet();
        /** Completes that returned successfully. */
        final Set<String> completed = ConcurrentHashMap.newKeySet();
        /** Completes that were attempted (successful or not). */
        final Set<String> completeAttempted = ConcurrentHashMap.newKeySet();
        /** Scheduled messages: id -> scheduled enqueue time (epoch ms). */
        final Map<String, Long> scheduledDue = new ConcurrentHashMap<>();
        /** Every sequence number ever observed -> the message id it belonged to. */
        final Map<Long, String> seqToId = new ConcurrentHashMap<>();
        /** id -> sequence number it was first observed with as an active message. */
        final Map<String, Long> activeSeq = new ConcurrentHashMap<>();
        /** The highest sequence number observed. */
        final AtomicLong maxSeen = new AtomicLong();
        /** epoch -> the highest sequence number observed before the crash that started it. */
        final Map<Integer, Long> floors = new ConcurrentHashMap<>();

        Ledger(String entity) {
            this.entity = entity;
        }
    }

    /** A session's last confirmed state and the writes in flight since (whose outcome is unknown). */
    static final class SessionStateModel {
        byte[] confirmed;
        final List<byte[]> pending = new ArrayList<>();

        synchronized boolean allows(byte[] v) {
            if (Arrays.equals(v, confirmed)) {
                return true;
            }
            return pending.stream().anyMatch(p -> Arrays.equals(p, v));
        }

        synchronized String describe() {
            return "confirmed=" + str(confirmed) + ", in flight=" + pending.stream().map(CrashRecoveryTest::str)
                    .toList();
        }
    }

    /**
     * The body of message {@code id}, derived from the id alone so that any delivery can be checked: small for
     * ordinary ids, 32 to 224 KB for {@code big-} ids.
     */
    static byte[] body(String id) {
        byte[] seed = ("body of " + id + ";").getBytes(StandardCharsets.UTF_8);
        if (!id.startsWith("big-")) {
            return seed;
        }
        int size = 32 * 1024 + Math.floorMod(id.hashCode() * 0x9E3779B1, 192 * 1024);
        byte[] out = new byte[size];
        for (int i = 0; i < size; i++) {
            out[i] = (byte) (seed[i % seed.length] + i / seed.length);
        }
        return out;
    }

    static String str(byte[] v) {
        return v == null ? "null" : "'" + new String(v, StandardCharsets.UTF_8) + "'";
    }

    /** One run (one seed): one broker, the ledgers and the violations found. */
    static final class Run {
        final BrokerProcess broker;
        final long seed;
        /**
         * Whether a fourth thread sends large messages (32 to 224 KB) to the queue, 40 % of the first sender's
         * sends are large too, and a second receiver completes: volume, to roll and compact journal segments.
         */
        final boolean largeBodies;
        final Ledger queue = new Ledger(QUEUE);
        final Ledger sessions = new Ledger(SESSION_QUEUE);
        final Map<String, SessionStateModel> states = new ConcurrentHashMap<>();
        final List<String> violations = new CopyOnWriteArrayList<>();
        final List<String> progress = new CopyOnWriteArrayList<>();
        final AtomicLong ids = new AtomicLong();
        final AtomicInteger stateWrites = new AtomicInteger();
        final Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
        final AtomicInteger scheduledFired = new AtomicInteger();
        /** Acknowledged scheduled messages that were not due yet when the broker was killed (summed over crashes). */
        final AtomicLong scheduledAcrossCrashes = new AtomicLong();
        /** Number of restarts so far. */
        volatile int epoch;
        volatile int cycle;

        Run(BrokerProcess broker, long seed, boolean largeBodies) {
            this.broker = broker;
            this.seed = seed;
            this.largeBodies = largeBodies;
            SESSIONS.forEach(s -> states.put(s, new SessionStateModel()));
        }

        void progress(String format, Object... args) {
            progress.add(String.format(format, args));
        }

        void violation(String format, Object... args) {
            violations.add("[seed " + seed + ", cycle " + cycle + ", epoch " + epoch + "] " + String.format(format,
                    args));
        }

        void error(String where, Throwable t) {
            errors.computeIfAbsent(where + ":" + t.getClass().getSimpleName(), k -> new AtomicInteger())
                    .incrementAndGet();
        }

        String totals() {
            return String.format("%s: attempted=%d acked=%d completed=%d completeAttempted=%d scheduled=%d "
                            + "maxSeq=%d; %s: attempted=%d acked=%d completed=%d maxSeq=%d; state writes=%d; "
                            + "scheduled pending at a kill=%d; client errors=%s",
                    QUEUE, queue.attempted.size(), queue.acked.size(), queue.completed.size(),
                    queue.completeAttempted.size(), queue.scheduledDue.size(), queue.maxSeen.get(), SESSION_QUEUE,
                    sessions.attempted.size(), sessions.acked.size(), sessions.completed.size(),
                    sessions.maxSeen.get(), stateWrites.get(), scheduledAcrossCrashes.get(), new TreeMap<>(errors));
        }

        /** Fails the test with every violation found so far, the run's history and the broker's log tail. */
        void failIfViolated(String phase) {
            if (violations.isEmpty()) {
                return;
            }
            StringBuilder sb = new StringBuilder();
            sb.append(violations.size()).append(" crash-recovery invariant violation(s) ").append(phase)
                    .append(" (seed ").append(seed).append(", data dir ").append(broker.dataDir()).append(", storage ")
                    .append(ConformanceStorage.name()).append("):\n");
            violations.stream().limit(40).forEach(v -> sb.append("  - ").append(v).append('\n'));
            if (violations.size() > 40) {
                sb.append("  ... ").append(violations.size() - 40).append(" more\n");
            }
            sb.append("History:\n");
            progress.forEach(p -> sb.append("  ").append(p).append('\n'));
            sb.append("Totals: ").append(totals()).append('\n');
            sb.append("Broker log tail:\n").append(broker.logTail(6000));
            fail(sb.toString());
        }

        ServiceBusClientBuilder builder() {
            // no retries: the SDK must never resend a message on its own (that would legitimately duplicate it)
            return new ServiceBusClientBuilder().connectionString(broker.connectionString())
                    .retryOptions(new AmqpRetryOptions().setTryTimeout(Duration.ofSeconds(4)).setMaxRetries(0));
        }

        // -------------------------------------------------------------------------------------- observations

        /** Records that {@code id} was seen with {@code seq} in {@code state}, checking the sequence invariants. */
        void observe(Ledger l, String id, long seq, ServiceBusMessageState state, String where) {
            Integer attemptEpoch = id == null ? null : l.attempted.get(id);
            if (attemptEpoch == null) {
                violation("%s: %s message id=%s seq=%d that no client ever sent", l.entity, where, id, seq);
                return;
            }
            String prev = l.seqToId.putIfAbsent(seq, id);
            if (prev != null && !prev.equals(id)) {
                violation("%s: sequence number %d REUSED: it belonged to message %s, now %s names message %s",
                        l.entity, seq, prev, where, id);
            }
            if (state == ServiceBusMessageState.ACTIVE) {
                Long first = l.activeSeq.putIfAbsent(id, seq);
                if (first != null && first != seq) {
                    violation("%s: message %s was active with sequence number %d, now %s with %d "
                            + "(a second copy, or renumbered on replay)", l.entity, id, first, where, seq);
                }
            }
            Long floor = l.floors.get(attemptEpoch);
            if (attemptEpoch > 0 && floor != null && seq <= floor) {
                violation("%s: message %s, sent after restart #%d, got sequence number %d <= %d, the highest "
                        + "sequence number seen before that crash (sequence numbers REUSED)", l.entity, id,
                        attemptEpoch, seq, floor);
            }
            l.maxSeen.accumulateAndGet(seq, Math::max);
        }

        /** A delivery to a receiver: a completed message must never be delivered again. */
        void delivered(Ledger l, ServiceBusReceivedMessage m, String where) {
            observe(l, m.getMessageId(), m.getSequenceNumber(), ServiceBusMessageState.ACTIVE, where);
            checkBody(l, m, where);
            if (l.completed.contains(m.getMessageId())) {
                violation("%s: COMPLETED message %s (seq %d, delivery count %d) was delivered again (%s)", l.entity,
                        m.getMessageId(), m.getSequenceNumber(), m.getDeliveryCount(), where);
            }
            if (l.scheduledDue.containsKey(m.getMessageId())) {
                scheduledFired.incrementAndGet();
            }
        }

        /** The body must be the one sent: a record read back from the journal must be the record written. */
        void checkBody(Ledger l, ServiceBusReceivedMessage m, String where) {
            if (m.getMessageId() == null) {
                return;
            }
            byte[] got = m.getBody().toBytes();
            byte[] expected = body(m.getMessageId());
            if (!Arrays.equals(got, expected)) {
                violation("%s: message %s (seq %d) %s with a CORRUPTED body: %d bytes, expected %d%s", l.entity,
                        m.getMessageId(), m.getSequenceNumber(), where, got.length, expected.length,
                        got.length == expected.length ? " (same length, different content)" : "");
            }
        }

        /** Completes, recording the attempt before and the success after. */
        void complete(Ledger l, ServiceBusReceiverClient r, ServiceBusReceivedMessage m) {
            l.completeAttempted.add(m.getMessageId());
            r.complete(m);
            l.completed.add(m.getMessageId());
        }

        // -------------------------------------------------------------------------------------- one cycle

        void cycle(int n, SplittableRandom rnd) throws Exception {
            this.cycle = n;
            long c0 = System.nanoTime();
            ServiceBusClientBuilder b = builder();
            List<AutoCloseable> clients = new CopyOnWriteArrayList<>();
            ServiceBusSenderClient qSender = track(clients, b.sender().queueName(QUEUE).buildClient());
            ServiceBusSenderClient sSender = track(clients, b.sender().queueName(SESSION_QUEUE).buildClient());
            ServiceBusReceiverClient qReceiver = track(clients, b.receiver().queueName(QUEUE)
                    .maxAutoLockRenewDuration(Duration.ZERO).buildClient());

            AtomicBoolean stop = new AtomicBoolean();
            // SplittableRandom is not thread-safe: each worker gets its own, split here
            SplittableRandom senderRnd = rnd.split();
            SplittableRandom receiverRnd = rnd.split();
            SplittableRandom sessionRnd = rnd.split();
            List<Thread> workers = new ArrayList<>(List.of(
                    worker("sender-" + n, () -> senderLoop(stop, senderRnd, qSender, sSender)),
                    worker("receiver-" + n, () -> receiverLoop(stop, receiverRnd, qReceiver)),
                    worker("sessions-" + n, () -> sessionLoop(stop, sessionRnd, b, clients))));
            if (largeBodies) {
                // volume, and a second consumer so that most of it is completed: sealed segments mostly dead
                ServiceBusSenderClient bulk = track(clients, b.sender().queueName(QUEUE).buildClient());
                ServiceBusReceiverClient second = track(clients, b.receiver().queueName(QUEUE)
                        .maxAutoLockRenewDuration(Duration.ZERO).buildClient());
                workers.add(worker("bulk-" + n, () -> bulkLoop(stop, bulk)));
                SplittableRandom secondRnd = rnd.split();
                workers.add(worker("receiver2-" + n, () -> receiverLoop(stop, secondRnd, second)));
            }
            int ackedBefore = queue.acked.size() + sessions.acked.size();
            int completedBefore = queue.completed.size() + sessions.completed.size();
            workers.forEach(Thread::start);

            long workMs = 300 + rnd.nextInt(2200);
            Thread.sleep(workMs);
            crash(rnd);
            boolean again = rnd.nextInt(4) == 0;
            long againMs = 0;
            if (again) {
                // and once more shortly after the restart: during the first cycles of the recovered broker
                againMs = rnd.nextInt(400);
                Thread.sleep(againMs);
                crash(rnd);
            }
            // the old clients may reconnect to the restarted broker and carry on for a moment
            Thread.sleep(rnd.nextInt(800));
            stop.set(true);
            boolean joined = true;
            for (Thread t : workers) {
                t.join(20_000);
                joined &= !t.isAlive();
            }
            closeAll(clients);
            progress("cycle %d: crash after %d ms of work%s; %d acked, %d completed this cycle; workers %s; %d ms",
                    n, workMs, again ? " and again " + againMs + " ms after the restart" : "",
                    queue.acked.size() + sessions.acked.size() - ackedBefore,
                    queue.completed.size() + sessions.completed.size() - completedBefore,
                    joined ? "stopped" : "STILL RUNNING", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - c0));
            verify(joined);
            failIfViolated("after the restart of cycle " + n);
        }

        /** kill -9, note the highest sequence numbers the clients saw, restart on the same data. */
        void crash(SplittableRandom rnd) throws Exception {
            long now = System.currentTimeMillis();
            long pendingScheduled = queue.scheduledDue.entrySet().stream()
                    .filter(e -> e.getValue() > now && queue.acked.contains(e.getKey())).count();
            scheduledAcrossCrashes.addAndGet(pendingScheduled);
            broker.kill();
            // let client threads record what the dead broker told them before it died
            Thread.sleep(200);
            int next = epoch + 1;
            queue.floors.put(next, queue.maxSeen.get());
            sessions.floors.put(next, sessions.maxSeen.get());
            broker.relaunch();
            epoch = next;
        }

        private static <T extends AutoCloseable> T track(List<AutoCloseable> clients, T c) {
            clients.add(c);
            return c;
        }

        private static Thread worker(String name, Runnable body) {
            Thread t = new Thread(body, "crash-test-" + name);
            t.setDaemon(true);
            return t;
        }

        private static void closeAll(List<AutoCloseable> clients) throws InterruptedException {
            ExecutorService ex = Executors.newFixedThreadPool(4);
            for (AutoCloseable c : clients) {
                ex.submit(() -> {
                    try {
                        c.close();
                    } catch (Exception ignored) {
                        // best effort
                    }
                });
            }
            ex.shutdown();
            ex.awaitTermination(10, TimeUnit.SECONDS);
            clients.clear();
        }

        private static void pause(long ms) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        // -------------------------------------------------------------------------------------- the workers

        /** Large messages only, one per send: volume, so that the journal rolls segments and compacts them. */
        void bulkLoop(AtomicBoolean stop, ServiceBusSenderClient sender) {
            while (!stop.get()) {
                String id = "big-" + ids.incrementAndGet();
                queue.attempted.put(id, epoch);
                try {
                    sender.sendMessage(new ServiceBusMessage(body(id)).setMessageId(id));
                    queue.acked.add(id);
                } catch (RuntimeException e) {
                    error("bulk-send", e);
                    pause(50);
                }
            }
        }

        void senderLoop(AtomicBoolean stop, SplittableRandom rnd,
                        ServiceBusSenderClient qSender, ServiceBusSenderClient sSender) {
            while (!stop.get()) {
                int dice = rnd.nextInt(100);
                try {
                    if (dice < 55) {
                        List<ServiceBusMessage> batch = new ArrayList<>();
                        List<String> batchIds = new ArrayList<>();
                        // a large message goes alone (a batch must fit the 256 KB link limit)
                        boolean large = largeBodies && rnd.nextInt(100) < 40;
                        int count = large ? 1 : 1 + rnd.nextInt(4);
                        for (int i = 0; i < count; i++) {
                            String id = (large ? "big-" : "q-") + ids.incrementAndGet();
                            queue.attempted.put(id, epoch);
                            batchIds.add(id);
                            batch.add(new ServiceBusMessage(body(id)).setMessageId(id));
                        }
                        qSender.sendMessages(batch);
                        queue.acked.addAll(batchIds);
                    } else if (dice < 70) {
                        String id = "sched-" + ids.incrementAndGet();
                        OffsetDateTime at = OffsetDateTime.now(ZoneOffset.UTC).plusNanos(
                                TimeUnit.MILLISECONDS.toNanos(1000 + rnd.nextInt(4000))).truncatedTo(ChronoUnit.MILLIS);
                        queue.attempted.put(id, epoch);
                        queue.scheduledDue.put(id, at.toInstant().toEpochMilli());
                        Long seq = qSender.scheduleMessage(new ServiceBusMessage(body(id)).setMessageId(id), at);
                        queue.acked.add(id);
                        observe(queue, id, seq, ServiceBusMessageState.SCHEDULED, "returned by scheduleMessage");
                    } else {
                        List<ServiceBusMessage> batch = new ArrayList<>();
                        List<String> batchIds = new ArrayList<>();
                        int count = 1 + rnd.nextInt(3);
                        for (int i = 0; i < count; i++) {
                            String session = SESSIONS.get(rnd.nextInt(SESSIONS.size()));
                            String id = session + "-m-" + ids.incrementAndGet();
                            sessions.attempted.put(id, epoch);
                            batchIds.add(id);
                            batch.add(new ServiceBusMessage(body(id)).setMessageId(id).setSessionId(session));
                        }
                        sSender.sendMessages(batch);
                        sessions.acked.addAll(batchIds);
                    }
                } catch (RuntimeException e) {
                    error("send", e);
                    pause(50);
                }
            }
        }

        void receiverLoop(AtomicBoolean stop, SplittableRandom rnd,
                          ServiceBusReceiverClient receiver) {
            while (!stop.get()) {
                try {
                    for (ServiceBusReceivedMessage m : receiver.receiveMessages(1 + rnd.nextInt(8),
                            Duration.ofMillis(400))) {
                        delivered(queue, m, "received");
                        if (rnd.nextInt(100) < 10 || stop.get()) {
                            continue; // stays locked until the crash releases it
                        }
                        try {
                            complete(queue, receiver, m);
                        } catch (RuntimeException e) {
                            error("complete", e);
                        }
                    }
                } catch (RuntimeException e) {
                    error("receive", e);
                    pause(50);
                }
            }
        }

        void sessionLoop(AtomicBoolean stop, SplittableRandom rnd,
                         ServiceBusClientBuilder b, List<AutoCloseable> clients) {
            while (!stop.get()) {
                String session = SESSIONS.get(rnd.nextInt(SESSIONS.size()));
                SessionStateModel model = states.get(session);
                // a client per accept: the SDK may hand back a cached, just-closed link to the same session
                ServiceBusSessionReceiverClient client = b.sessionReceiver().queueName(SESSION_QUEUE)
                        .disableAutoComplete().maxAutoLockRenewDuration(Duration.ZERO).buildClient();
                clients.add(client);
                try {
                    ServiceBusReceiverClient r = client.acceptSession(session);
                    clients.add(r);
                    try {
                        byte[] state = r.getSessionState();
                        if (!model.allows(state)) {
                            violation("%s: session %s state read by the worker is %s, expected %s", SESSION_QUEUE,
                                    session, str(state), model.describe());
                        }
                        if (rnd.nextInt(100) < 70) {
                            byte[] next = ("c" + cycle + "-e" + epoch + "-" + ids.incrementAndGet())
                                    .getBytes(StandardCharsets.UTF_8);
                            synchronized (model) {
                                model.pending.add(next);
                            }
                            r.setSessionState(next);
                            synchronized (model) {
                                model.confirmed = next;
                                model.pending.clear();
                            }
                            stateWrites.incrementAndGet();
                        }
                        for (ServiceBusReceivedMessage m : r.receiveMessages(1 + rnd.nextInt(4),
                                Duration.ofMillis(300))) {
                            delivered(sessions, m, "received in session " + session);
                            if (!session.equals(m.getSessionId())) {
                                violation("%s: message %s of session %s delivered to a receiver of session %s",
                                        SESSION_QUEUE, m.getMessageId(), m.getSessionId(), session);
                            }
                            if (rnd.nextInt(100) < 10 || stop.get()) {
                                continue;
                            }
                            try {
                                complete(sessions, r, m);
                            } catch (RuntimeException e) {
                                error("session-complete", e);
                            }
                        }
                    } finally {
                        r.close();
                    }
                } catch (RuntimeException e) {
                    error("session", e);
                    pause(50);
                } finally {
                    client.close();
                }
            }
        }

        // -------------------------------------------------------------------------------------- verification

        /** A peeked message. */
        record Peeked(String id, long seq, ServiceBusMessageState state, OffsetDateTime scheduledAt, String session) {
        }

        private static List<Peeked> peekAll(ServiceBusReceiverClient r) {
            return peekAll(r, null);
        }

        private static List<Peeked> peekAll(ServiceBusReceiverClient r,
                                            Consumer<ServiceBusReceivedMessage> onEach) {
            List<Peeked> all = new ArrayList<>();
            long from = 1;
            while (all.size() < 1_000_000) {
                List<ServiceBusReceivedMessage> page = new ArrayList<>();
                r.peekMessages(100, from).forEach(page::add);
                if (page.isEmpty()) {
                    break;
                }
                for (ServiceBusReceivedMessage m : page) {
                    if (onEach != null) {
                        onEach.accept(m);
                    }
                    all.add(new Peeked(m.getMessageId(), m.getSequenceNumber(), m.getState(),
                            m.getScheduledEnqueueTime(), m.getSessionId()));
                }
                from = page.get(page.size() - 1).getSequenceNumber() + 1;
            }
            return all;
        }

        /** Checks every invariant on the restarted broker (the workers have stopped, unless {@code quiet} is false). */
        void verify(boolean quiet) throws Exception {
            ServiceBusClientBuilder b = builder();
            try (ServiceBusSenderClient qs = b.sender().queueName(QUEUE).buildClient();
                 ServiceBusSenderClient ss = b.sender().queueName(SESSION_QUEUE).buildClient();
                 ServiceBusReceiverClient qr = b.receiver().queueName(QUEUE)
                         .maxAutoLockRenewDuration(Duration.ZERO).buildClient();
                 ServiceBusReceiverClient sr = b.receiver().queueName(SESSION_QUEUE)
                         .maxAutoLockRenewDuration(Duration.ZERO).buildClient()) {
                // a probe per entity: sent after the restart, it must get a fresh sequence number
                String qProbe = "probe-q-" + cycle + "-" + ids.incrementAndGet();
                queue.attempted.put(qProbe, epoch);
                qs.sendMessage(new ServiceBusMessage(body(qProbe)).setMessageId(qProbe));
                queue.acked.add(qProbe);
                String sProbe = SESSIONS.get(0) + "-probe-" + cycle + "-" + ids.incrementAndGet();
                sessions.attempted.put(sProbe, epoch);
                ss.sendMessage(new ServiceBusMessage(body(sProbe)).setMessageId(sProbe).setSessionId(SESSIONS.get(0)));
                sessions.acked.add(sProbe);

                List<Peeked> qPeeked = checkContents(queue, qr);
                List<Peeked> sPeeked = checkContents(sessions, sr);
                if (qPeeked.stream().noneMatch(p -> p.id.equals(qProbe))
                        || sPeeked.stream().noneMatch(p -> p.id.equals(sProbe))) {
                    violation("the probes %s and %s, sent after the restart, were not both peeked", qProbe, sProbe);
                }
                checkScheduledFire(qr, qPeeked);
                progress("  verified: %s holds %d (%d scheduled), %s holds %d; maxSeq %d / %d", QUEUE,
                        qPeeked.size(), qPeeked.stream().filter(p -> p.state == ServiceBusMessageState.SCHEDULED)
                                .count(), SESSION_QUEUE, sPeeked.size(), queue.maxSeen.get(),
                        sessions.maxSeen.get());
            }
            checkSessionStates(b, quiet);
        }

        /** Peeks the whole entity and checks presence, absence and sequence numbers. */
        List<Peeked> checkContents(Ledger l, ServiceBusReceiverClient r) {
            // acked before the peek must be there; completed before the peek must not
            Set<String> ackedBefore = new HashSet<>(l.acked);
            Set<String> completedBefore = new HashSet<>(l.completed);
            List<Peeked> peeked = peekAll(r, m -> checkBody(l, m, "peeked"));
            // completes that returned after the peek started may explain an absence too
            Set<String> completeAttempted = new HashSet<>(l.completeAttempted);

            Map<String, List<Long>> seqsById = new LinkedHashMap<>();
            Map<Long, List<String>> idsBySeq = new TreeMap<>();
            for (Peeked p : peeked) {
                seqsById.computeIfAbsent(p.id, k -> new ArrayList<>()).add(p.seq);
                idsBySeq.computeIfAbsent(p.seq, k -> new ArrayList<>()).add(p.id);
                observe(l, p.id, p.seq, p.state, "peeked (" + p.state + ")");
            }
            Map<String, List<Peeked>> duplicates = duplicates(peeked);
            // A peek is paged, not a snapshot: a scheduled message that fires between two pages is seen on the first
            // as scheduled (old sequence number) and on a later one as active (new, higher sequence number). Such a
            // pair only counts if it is there again in fresh peeks.
            for (int again = 0; again < 2 && duplicates.values().stream().anyMatch(CrashRecoveryTest.Run::firing);
                 again++) {
                Map<String, List<Peeked>> fresh = duplicates(peekAll(r));
                duplicates.entrySet().removeIf(d -> firing(d.getValue()) && !fresh.containsKey(d.getKey()));
            }
            duplicates.forEach((id, copies) -> violation("%s: message %s is present %d times: %s (acknowledged: %s; "
                    + "ledger: %s)", l.entity, id, copies.size(), copies, ackedBefore.contains(id), describe(l, id)));
            idsBySeq.forEach((seq, ids) -> {
                if (ids.size() > 1) {
                    violation("%s: sequence number %d is used by %d messages: %s", l.entity, seq, ids.size(), ids);
                }
            });
            List<String> back = completedBefore.stream().filter(seqsById::containsKey).sorted().toList();
            for (String id : back) {
                violation("%s: COMPLETED message %s is back after the restart, with sequence number %s", l.entity, id,
                        seqsById.get(id));
            }
            List<String> lost = ackedBefore.stream()
                    .filter(id -> !seqsById.containsKey(id) && !completeAttempted.contains(id)).sorted().toList();
            if (!lost.isEmpty()) {
                violation("%s: %d ACKNOWLEDGED message(s) LOST (never completed, not present after the restart): %s",
                        l.entity, lost.size(), lost.stream().map(id -> id + describe(l, id)).limit(30).toList());
            }
            return peeked;
        }

        private static Map<String, List<Peeked>> duplicates(List<Peeked> peeked) {
            Map<String, List<Peeked>> byId = new LinkedHashMap<>();
            peeked.forEach(p -> byId.computeIfAbsent(p.id, k -> new ArrayList<>()).add(p));
            byId.values().removeIf(copies -> copies.size() < 2);
            return byId;
        }

        /** Two copies, the scheduled one before the active one: what a peek sees of a message firing meanwhile. */
        private static boolean firing(List<Peeked> copies) {
            return copies.size() == 2 && copies.get(0).state == ServiceBusMessageState.SCHEDULED
                    && copies.get(1).state == ServiceBusMessageState.ACTIVE && copies.get(0).seq < copies.get(1).seq;
        }

        private static String describe(Ledger l, String id) {
            StringBuilder sb = new StringBuilder("{sent in epoch ").append(l.attempted.get(id));
            Long active = l.activeSeq.get(id);
            if (active != null) {
                sb.append(", seen active as seq ").append(active);
            }
            List<Long> seqs = l.seqToId.entrySet().stream().filter(e -> e.getValue().equals(id)).map(Map.Entry::getKey)
                    .sorted().toList();
            if (!seqs.isEmpty()) {
                sb.append(", seqs seen ").append(seqs);
            }
            Long due = l.scheduledDue.get(id);
            if (due != null) {
                sb.append(", scheduled for ").append(Instant.ofEpochMilli(due));
            }
            return sb.append('}').toString();
        }

        /** A scheduled message whose time passed must become active shortly after the restart. */
        void checkScheduledFire(ServiceBusReceiverClient r, List<Peeked> peeked) throws InterruptedException {
            long deadline = System.currentTimeMillis() + 8_000;
            List<Peeked> overdue = overdue(peeked);
            while (!overdue.isEmpty() && System.currentTimeMillis() < deadline) {
                Thread.sleep(500);
                overdue = overdue(peekAll(r));
            }
            for (Peeked p : overdue) {
                violation("%s: scheduled message %s (seq %d) for %s did not fire: still scheduled at %s", QUEUE, p.id,
                        p.seq, p.scheduledAt, OffsetDateTime.now(ZoneOffset.UTC));
            }
        }

        private static List<Peeked> overdue(List<Peeked> peeked) {
            long now = System.currentTimeMillis();
            return peeked.stream().filter(p -> p.state == ServiceBusMessageState.SCHEDULED && p.scheduledAt != null
                    && p.scheduledAt.toInstant().toEpochMilli() < now - 2_000).toList();
        }

        /** Every session's state is its last confirmed value (or an in-flight write's); then that is confirmed. */
        void checkSessionStates(ServiceBusClientBuilder b, boolean quiet) throws InterruptedException {
            for (String session : SESSIONS) {
                SessionStateModel model = states.get(session);
                byte[] state = null;
                RuntimeException last = null;
                boolean read = false;
                for (int attempt = 0; attempt < 5 && !read; attempt++) {
                    try (ServiceBusSessionReceiverClient client = b.sessionReceiver().queueName(SESSION_QUEUE)
                            .disableAutoComplete().maxAutoLockRenewDuration(Duration.ZERO).buildClient();
                         ServiceBusReceiverClient r = client.acceptSession(session)) {
                        state = r.getSessionState();
                        read = true;
                    } catch (RuntimeException e) {
                        last = e;
                        Thread.sleep(1_000);
                    }
                }
                if (!read) {
                    violation("%s: the state of session %s could not be read after the restart: %s", SESSION_QUEUE,
                            session, last);
                    continue;
                }
                synchronized (model) {
                    if (!model.allows(state)) {
                        violation("%s: session %s state LOST/WRONG after the restart: %s, expected %s", SESSION_QUEUE,
                                session, str(state), model.describe());
                    }
                    if (quiet) {
                        // the broker that had the in-flight writes is gone: what is there now is what is durable
                        model.confirmed = state;
                        model.pending.clear();
                    }
                }
            }
        }

        // -------------------------------------------------------------------------------------- the end

        /** Receives everything outstanding: scheduled messages fire, nothing acknowledged is missing. */
        void finalDrain(SplittableRandom rnd) throws Exception {
            this.cycle = CYCLES + 1;
            // a last crash, so that no message is still locked by a worker that reconnected to the broker
            crash(rnd);
            verify(true);
            failIfViolated("after the last restart");
            long lastDue = queue.scheduledDue.values().stream().mapToLong(Long::longValue).max().orElse(0);
            long wait = lastDue + 500 - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            ServiceBusClientBuilder b = builder();
            Set<String> qExpected = outstanding(queue);
            Set<String> qGot = new HashSet<>();
            try (ServiceBusReceiverClient r = b.receiver().queueName(QUEUE).maxAutoLockRenewDuration(Duration.ZERO)
                    .buildClient()) {
                drain(queue, r, qExpected, qGot, "received in the final drain");
                List<Peeked> left = peekAll(r);
                if (!left.isEmpty()) {
                    violation("%s: %d message(s) still there after the final drain: %s", QUEUE, left.size(),
                            left.stream().limit(20).toList());
                }
            }
            Set<String> sExpected = outstanding(sessions);
            Set<String> sGot = new HashSet<>();
            for (String session : SESSIONS) {
                try (ServiceBusSessionReceiverClient client = b.sessionReceiver().queueName(SESSION_QUEUE)
                        .disableAutoComplete().maxAutoLockRenewDuration(Duration.ZERO).buildClient();
                     ServiceBusReceiverClient r = acceptWithRetries(client, session)) {
                    Set<String> expected = sExpected.stream().filter(id -> id.startsWith(session + "-"))
                            .collect(Collectors.toSet());
                    drain(sessions, r, expected, sGot, "received in session " + session + " in the final drain");
                }
            }
            long firedScheduled = qGot.stream().filter(queue.scheduledDue::containsKey).count();
            progress("final drain: %d of %d outstanding received from %s (%d scheduled), %d of %d from %s", qGot.size(),
                    qExpected.size(), QUEUE, firedScheduled, sGot.size(), sExpected.size(), SESSION_QUEUE);
            report(queue, qExpected, qGot);
            report(sessions, sExpected, sGot);
            failIfViolated("in the final drain");
        }

        private static ServiceBusReceiverClient acceptWithRetries(ServiceBusSessionReceiverClient client,
                                                                  String session) throws InterruptedException {
            for (int attempt = 1; ; attempt++) {
                try {
                    return client.acceptSession(session);
                } catch (RuntimeException e) {
                    if (attempt == 5) {
                        throw e;
                    }
                    Thread.sleep(1_000);
                }
            }
        }

        /** Acknowledged, not completed, and no complete attempted (whose outcome would be unknown). */
        private static Set<String> outstanding(Ledger l) {
            Set<String> s = new HashSet<>(l.acked);
            s.removeAll(l.completeAttempted);
            return s;
        }

        private void drain(Ledger l, ServiceBusReceiverClient r, Set<String> expected, Set<String> got,
                           String where) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (System.nanoTime() < deadline) {
                boolean any = false;
                for (ServiceBusReceivedMessage m : r.receiveMessages(50, Duration.ofSeconds(1))) {
                    any = true;
                    delivered(l, m, where);
                    got.add(m.getMessageId());
                    complete(l, r, m);
                }
                if (!any && got.containsAll(expected)) {
                    return;
                }
            }
        }

        private void report(Ledger l, Set<String> expected, Set<String> got) {
            List<String> missing = expected.stream().filter(id -> !got.contains(id)).sorted().toList();
            if (!missing.isEmpty()) {
                violation("%s: %d acknowledged message(s) never delivered in the final drain (lost, or scheduled and "
                        + "never fired): %s", l.entity, missing.size(),
                        missing.stream().map(id -> id + describe(l, id)).limit(30).toList());
            }
        }
    }
}
