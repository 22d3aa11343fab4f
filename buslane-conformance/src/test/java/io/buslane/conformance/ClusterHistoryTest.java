package io.buslane.conformance;

import io.buslane.journal.postgres.TestPostgres;
import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.random.RandomGenerator;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A randomized history check of cluster mode under a nemesis: producers and consumers on three nodes while, one at
 * a time and at random, a node is killed with kill -9 and restarted, a node is paused with SIGSTOP (sometimes past
 * its lease) and resumed, PostgreSQL is restarted, a node's database connection is black-holed or reset, or (once)
 * the PostgreSQL primary is killed and its synchronous standby promoted; for a bounded time. The recorded history
 * (acknowledged sends, deliveries with their sequence numbers, enqueued times and locks, acknowledged completions,
 * the nemesis' disruptions) is then checked: no acknowledged message is lost, no completed message comes back, no
 * sequence number names two messages, no message is locked twice at once (a second delivery while the first
 * delivery's lock still ran, with no disruption of the nemesis that could have ended that lock), and the enqueued
 * times of a queue follow its sequence numbers. The availability (the longest time without an acknowledged send
 * per queue) is printed. Clients use the REST data plane through any live node, chosen at random per call: sends,
 * receives and completions are carried to the node serving the queue. Beside them the official Java SDK works on a
 * session queue through random live nodes too ({@link SdkSessionHistory}: a client is built on a node and moves to
 * another when a call fails), which adds per-session order and exclusive session locks to the checks.
 * {@code -Dbuslane.nemesisSeconds=N} runs longer (a soak),
 * {@code -Dbuslane.nemesisSeed=S} replays a run; the seed is printed.
 */
class ClusterHistoryTest {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [ { "Name": "sbemulatorns", "Queues": [
                  { "Name": "h0", "Properties": { "LockDuration": "PT5S", "MaxDeliveryCount": 1000,
                    "RequiresDuplicateDetection": true } },
                  { "Name": "h1", "Properties": { "LockDuration": "PT5S", "MaxDeliveryCount": 1000,
                    "RequiresDuplicateDetection": true } },
                  { "Name": "h2", "Properties": { "LockDuration": "PT5S", "MaxDeliveryCount": 1000,
                    "RequiresDuplicateDetection": true } },
                  { "Name": "h3", "Properties": { "LockDuration": "PT5S", "MaxDeliveryCount": 1000,
                    "RequiresDuplicateDetection": true } },
                  { "Name": "hs", "Properties": { "LockDuration": "PT5S", "MaxDeliveryCount": 1000,
                    "RequiresDuplicateDetection": true, "RequiresSession": true } } ] } ],
                "Logging": { "Type": "Console" }
              }
            }
            """;
    private static final List<String> QUEUES = List.of("h0", "h1", "h2", "h3");
    private static final int SHARDS = 6;
    private static final Duration RUN = Duration.ofSeconds(Long.getLong("buslane.nemesisSeconds",
            Long.getLong("buslane.clusterHistorySeconds", 180)));
    private static final long SEED = Long.getLong("buslane.nemesisSeed", 42);
    /** The REST dates have whole seconds: a lock is taken to run until its LockedUntilUtc, less this. */
    private static final long DATE_MARGIN_MS = 1_500;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final Pattern SEQ = Pattern.compile("\"SequenceNumber\":(\\d+)");
    private static final Pattern ENQUEUED = Pattern.compile("\"EnqueuedTimeUtc\":\"([^\"]+)\"");
    private static final Pattern LOCKED_UNTIL = Pattern.compile("\"LockedUntilUtc\":\"([^\"]+)\"");

    /**
     * One delivery: which message, its sequence number, when it was handed out (nanoTime, and wall-clock ms), its
     * enqueued time and the end of its lock (wall-clock ms from the broker's REST dates; -1: none).
     */
    private record Delivery(String queue, String body, long seq, long atNs, long atMs, long enqueuedMs,
                            long lockedUntilMs) {
    }

    /**
     * A moment the nemesis disrupted the cluster (nanoTime): a kill, a restart, a pause, a resume, PostgreSQL stopped
     * or started. Locks may end there (with a node, or when shards move); a second delivery counts as excused by it
     * only from {@code graceNs} after it: a node resumed from a pause must hand out nothing before it rejoined.
     */
    private record Disruption(String what, long atNs, long graceNs) {
    }

    /** The nodes' lease (their default in a cluster): a fault's effects reach this far after it. */
    private static final long LEASE_NS = Duration.ofSeconds(5).toNanos();
    private static final long RESUMED_GRACE_NS = Duration.ofSeconds(1).toNanos();

    private final ConcurrentLinkedQueue<Disruption> disruptions = new ConcurrentLinkedQueue<>();
    /** Acknowledged sends' times (nanoTime), by queue: the availability. */
    private final Map<String, ConcurrentLinkedQueue<Long>> ackedAtNs = new ConcurrentHashMap<>();

    private final Map<String, Long> completedAtNs = new ConcurrentHashMap<>();
    /**
     * Completions whose answer was lost with a killed node (none, or a 5xx from the node that carried it to the
     * killed one): they may or may not have taken effect.
     */
    private final Set<String> completionsInDoubt = ConcurrentHashMap.newKeySet();
    private final Set<String> acked = ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedQueue<Delivery> deliveries = new ConcurrentLinkedQueue<>();
    /** Completions refused (4xx), by message: a failed check prints them for a missing message. */
    private final Map<String, List<String>> refusedCompletions = new ConcurrentHashMap<>();

    private static BrokerProcess node(String storage, String id) throws Exception {
        return ClusterProbe.node(CONFIG, storage, id, SHARDS);
    }

    private static HttpResponse<String> call(BrokerProcess b, String method, String path, String body) {
        return call(b, method, path, body, Duration.ofSeconds(5));
    }

    private static HttpResponse<String> call(BrokerProcess b, String method, String path, String body,
                                             Duration timeout) {
        try {
            String entity = path.substring(1, path.indexOf('/', 1));
            HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(b.baseUrl() + path))
                    .timeout(timeout)
                    .header("Authorization", ConformanceBase.sasToken("http://localhost/" + entity));
            if (body != null) {
                // the body is the message id too: a send retried after an ambiguous failure is stored once
                r.header("BrokerProperties", "{\"MessageId\":\"" + body + "\"}");
            }
            r.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
            return HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * The node a client goes through: any live node, at random (each carries the operation to the
     * node that serves the queue's shard), or null when none is up.
     */
    private static BrokerProcess anyNode(List<BrokerProcess> nodes, RandomGenerator random) {
        List<BrokerProcess> alive = nodes.stream().filter(BrokerProcess::alive).toList();
        return alive.isEmpty() ? null : alive.get(random.nextInt(alive.size()));
    }

    private void record(String queue, HttpResponse<String> r) {
        String props = r.headers().firstValue("BrokerProperties").orElse("");
        Matcher m = SEQ.matcher(props);
        deliveries.add(new Delivery(queue, r.body(), m.find() ? Long.parseLong(m.group(1)) : -1, System.nanoTime(),
                System.currentTimeMillis(), date(ENQUEUED, props), date(LOCKED_UNTIL, props)));
    }

    private static long date(Pattern p, String props) {
        Matcher m = p.matcher(props);
        return m.find() ? ZonedDateTime.parse(m.group(1), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant()
                .toEpochMilli() : -1;
    }

    @Test
    void underANemesisNothingIsLostResurrectedLockedTwiceOrNumberedTwice() throws Exception {
        System.out.println("CLUSTER nemesis: seed " + SEED + " (-Dbuslane.nemesisSeed), " + RUN.toSeconds() + " s");
        try (TestPostgres pg = TestPostgres.startPrivate()) {
            String jdbc = pg.newDatabase();
            String database = jdbc.substring(jdbc.lastIndexOf('/') + 1, jdbc.indexOf('?'));
            TestPostgres standby = TestPostgres.startStandbyOf(pg);
            pg.sql("ALTER SYSTEM SET synchronous_standby_names = '*'"); // a commit waits for the standby's disk
            pg.sql("SELECT pg_reload_conf()");
            await().atMost(Duration.ofSeconds(30)).until(() -> pg.sql("SELECT string_agg(sync_state, ',') FROM "
                    + "pg_stat_replication").equals("sync"));
            Database db = new Database(pg, standby);
            List<BrokerProcess> nodes = new ArrayList<>();
            List<TcpProxy[]> links = new ArrayList<>();
            try {
                for (String id : List.of("node-a", "node-b", "node-c")) {
                    // each node reaches both servers through proxies of its own, which the nemesis cuts; the
                    // storage URL names both, the driver connecting to the one that is the primary
                    TcpProxy[] link = {new TcpProxy("127.0.0.1", pg.port()), new TcpProxy("127.0.0.1", standby.port())};
                    links.add(link);
                    nodes.add(node("postgresql://buslane@127.0.0.1:" + link[0].port() + ",127.0.0.1:" + link[1].port()
                            + "/" + database + "?targetServerType=primary&hostRecheckSeconds=1", id));
                }
                AtomicBoolean running = new AtomicBoolean(true);
                AtomicInteger sent = new AtomicInteger();
                List<Thread> threads = new ArrayList<>();
                for (int p = 0; p < 3; p++) {
                    int producer = p;
                    threads.add(new Thread(() -> produce(nodes, producer, running, sent), "producer-" + p));
                }
                for (int c = 0; c < 3; c++) {
                    int consumer = c;
                    threads.add(new Thread(() -> consume(nodes, consumer, running), "consumer-" + c));
                }
                SdkSessionHistory sessions = new SdkSessionHistory(() -> anyNode(nodes,
                        ThreadLocalRandom.current()), "hs", 4, 2);
                threads.forEach(Thread::start);
                sessions.start();
                long startNs = System.nanoTime();
                Map<String, Integer> done = nemesis(nodes, links, db, new SplittableRandom(SEED));
                running.set(false);
                long stoppedNs = System.nanoTime();
                for (Thread t : threads) {
                    t.join(30_000);
                }
                sessions.stopAndCheck(Duration.ofSeconds(60), (first, again) -> disruptions.stream().anyMatch(
                        e -> e.atNs() >= first - LEASE_NS && e.atNs() + e.graceNs() <= again));
                long joinedNs = System.nanoTime();
                drainEverything(nodes);
                System.out.println("CLUSTER history phases: clients stopped in " + (joinedNs - stoppedNs) / 1_000_000
                        + " ms, drained in " + (System.nanoTime() - joinedNs) / 1_000_000 + " ms");
                printAvailability(startNs, stoppedNs);
                check(done, sent.get());
            } finally {
                for (BrokerProcess b : nodes) {
                    b.close();
                }
                for (TcpProxy[] link : links) {
                    link[0].close();
                    link[1].close();
                }
                standby.close();
            }
        }
    }

    /** The primary and its synchronous standby; after a failover, the promoted standby alone. */
    private static final class Database {
        private final TestPostgres standby;
        private TestPostgres primary;
        private boolean failedOver;

        Database(TestPostgres primary, TestPostgres standby) {
            this.primary = primary;
            this.standby = standby;
        }
    }

    /**
     * Until the run's time is up (and at least one of each), one fault at a time, 3 to 6 s apart: kill -9 of a node
     * and its restart 1 to 3 s later; SIGSTOP of a node for 2 to 9 s (past its 5 s lease about half the time) and
     * SIGCONT; a PostgreSQL restart after 1 to 4 s down; a node's database connection black-holed (packets dropped,
     * nothing closed) for 2 to 9 s; a node's database connections reset and refused for 1 to 5 s; once, the primary
     * killed with kill -9 and its synchronous standby promoted 1 to 4 s later. Returns how many of each.
     */
    private Map<String, Integer> nemesis(List<BrokerProcess> nodes, List<TcpProxy[]> links, Database db,
                                         SplittableRandom chaos) throws Exception {
        List<String> kinds = List.of("kill", "pause", "postgres", "black-hole", "reset", "failover");
        Map<String, Integer> done = new HashMap<>();
        kinds.forEach(k -> done.put(k, 0));
        long end = System.nanoTime() + RUN.toNanos();
        int step = 0;
        while (step < kinds.size() || System.nanoTime() < end) {
            Thread.sleep(3_000 + chaos.nextInt(3_000));
            int victimIndex = chaos.nextInt(nodes.size());
            BrokerProcess victim = nodes.get(victimIndex);
            TcpProxy[] link = links.get(victimIndex);
            // the first steps are one of each, in a seeded order; then at random (one failover per run)
            String kind = kinds.get(step < kinds.size() ? (int) Math.floorMod(SEED + step, (long) kinds.size())
                    : chaos.nextInt(kinds.size()));
            if (kind.equals("failover") && db.failedOver) {
                kind = "postgres";
            }
            step++;
            switch (kind) {
                case "kill" -> {
                    disrupt("kill");
                    victim.kill();
                    Thread.sleep(1_000 + chaos.nextInt(2_000));
                    // from here, not from when it reports ready: a rejoining node takes its shards back while it
                    // starts, and the node that served them meanwhile hands them over with their locks lost
                    disrupt("restarting");
                    victim.launch();
                    disrupt("restarted");
                }
                case "pause" -> {
                    disrupt("pause");
                    signal(victim, "STOP");
                    Thread.sleep(2_000 + chaos.nextInt(7_000));
                    signal(victim, "CONT");
                    disruptions.add(new Disruption("resume", System.nanoTime(), RESUMED_GRACE_NS));
                }
                case "postgres" -> {
                    disrupt("postgres stopped");
                    db.primary.stop();
                    Thread.sleep(1_000 + chaos.nextInt(3_000));
                    db.primary.restart();
                    disrupt("postgres started");
                }
                case "failover" -> {
                    disrupt("primary killed");
                    db.primary.kill(); // kill -9 of its postmaster, as a host loss
                    Thread.sleep(1_000 + chaos.nextInt(3_000));
                    db.standby.promote();
                    db.primary = db.standby;
                    db.failedOver = true;
                    disrupt("standby promoted");
                }
                case "black-hole" -> {
                    disrupt("database black-holed");
                    link[0].blackHole();
                    link[1].blackHole();
                    Thread.sleep(2_000 + chaos.nextInt(7_000));
                    link[0].heal();
                    link[1].heal();
                    disrupt("database healed");
                }
                default -> {
                    disrupt("database reset");
                    link[0].sever();
                    link[1].sever();
                    Thread.sleep(1_000 + chaos.nextInt(4_000));
                    link[0].heal();
                    link[1].heal();
                    disrupt("database healed");
                }
            }
            done.merge(kind, 1, Integer::sum);
        }
        return done;
    }

    private void disrupt(String what) {
        disruptions.add(new Disruption(what, System.nanoTime(), 0));
    }

    private static void signal(BrokerProcess b, String signal) throws Exception {
        new ProcessBuilder("kill", "-" + signal, Long.toString(b.pid())).start().waitFor();
    }

    private void printAvailability(long startNs, long stoppedNs) {
        StringBuilder out = new StringBuilder("CLUSTER availability: longest time without an acknowledged send:");
        for (String queue : QUEUES) {
            List<Long> times = new ArrayList<>(ackedAtNs.getOrDefault(queue, new ConcurrentLinkedQueue<>()));
            times.add(startNs);
            times.add(stoppedNs);
            times.sort(Long::compare);
            long longest = 0;
            for (int i = 1; i < times.size(); i++) {
                longest = Math.max(longest, times.get(i) - times.get(i - 1));
            }
            out.append(' ').append(queue).append(' ').append(longest / 1_000_000).append(" ms");
        }
        System.out.println(out);
    }

    private void produce(List<BrokerProcess> nodes, int producer, AtomicBoolean running, AtomicInteger sent) {
        SplittableRandom random = new SplittableRandom(producer);
        int n = 0;
        while (running.get()) {
            String queue = QUEUES.get(random.nextInt(QUEUES.size()));
            String body = queue + ":p" + producer + ":" + n++;
            boolean stored = false;
            for (int attempt = 0; attempt < 50 && running.get() && !stored; attempt++) {
                BrokerProcess b = anyNode(nodes, random);
                HttpResponse<String> r = b == null ? null : call(b, "POST", "/" + queue + "/messages", body);
                if (r != null && r.statusCode() == 201) {
                    acked.add(body);
                    ackedAtNs.computeIfAbsent(queue, k -> new ConcurrentLinkedQueue<>()).add(System.nanoTime());
                    sent.incrementAndGet();
                    stored = true;
                    sleep(15); // slower than the consumers: the backlog to drain at the end stays small
                } else {
                    sleep(100);
                }
            }
        }
    }

    private void consume(List<BrokerProcess> nodes, int consumer, AtomicBoolean running) {
        SplittableRandom random = new SplittableRandom(100 + consumer);
        while (running.get()) {
            String queue = QUEUES.get(random.nextInt(QUEUES.size()));
            BrokerProcess b = anyNode(nodes, random);
            // consumer 0 waits long (as an SDK receiver's link stays attached): its poll may outlast a pause of the
            // node it waits on, which then must hand it nothing that another node served meanwhile
            int waitSeconds = consumer == 0 ? 12 : 1;
            HttpResponse<String> r = b == null ? null : call(b, "POST", "/" + queue + "/messages/head?timeout="
                    + waitSeconds, null, Duration.ofSeconds(waitSeconds + 5));
            if (r == null || (r.statusCode() != 201 && r.statusCode() != 204)) {
                sleep(100);
                continue;
            }
            if (r.statusCode() == 204) {
                continue;
            }
            record(queue, r);
            String lock = r.headers().firstValue("Location").orElseThrow();
            HttpResponse<String> done = call(b, "DELETE", URI.create(lock).getPath(), null);
            if (done != null && done.statusCode() == 200) {
                completedAtNs.put(r.body(), System.nanoTime());
            } else if (done == null || done.statusCode() >= 500) {
                // no answer, or the node carrying it lost the serving node mid-call: it may have taken effect
                completionsInDoubt.add(r.body());
            } else {
                refusedCompletions.computeIfAbsent(r.body(), k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                        .add(done.statusCode() + " " + done.body());
            }
        }
    }

    /**
     * Receive-and-delete everything left, through any node, once every shard is served again (the cluster has
     * recovered from the last fault: within a minute, or the run fails for availability).
     */
    private void drainEverything(List<BrokerProcess> nodes) throws InterruptedException {
        long recovering = System.nanoTime();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .alias("every shard served again after the nemesis").until(() -> {
                    Set<Integer> served = new HashSet<>();
                    nodes.forEach(n -> served.addAll(ClusterProbe.served(n)));
                    return served.size() == SHARDS;
                });
        System.out.println("CLUSTER recovered: every shard served " + (System.nanoTime() - recovering) / 1_000_000
                + " ms after the last fault");
        List<Thread> drains = new ArrayList<>();
        for (String queue : QUEUES) {
            Thread t = new Thread(() -> drain(nodes, queue), "drain-" + queue);
            drains.add(t);
            t.start();
        }
        for (Thread t : drains) {
            t.join(90_000);
        }
    }

    private void drain(List<BrokerProcess> nodes, String queue) {
        SplittableRandom random = new SplittableRandom(queue.hashCode());
        long startNs = System.nanoTime();
        long deadline = startNs + Duration.ofSeconds(60).toNanos();
        int empty = 0;
        int failures = 0;
        while (empty < 2 && System.nanoTime() < deadline) { // two empty answers 3 s apart outlast a 5 s lock
            BrokerProcess b = anyNode(nodes, random);
            HttpResponse<String> r = b == null ? null : call(b, "DELETE", "/" + queue + "/messages/head?timeout=3",
                    null);
            if (r != null && r.statusCode() == 200) {
                record(queue, r);
                completedAtNs.put(r.body(), System.nanoTime());
                empty = 0;
            } else if (r != null && r.statusCode() == 204) {
                empty++; // locks of killed consumers' deliveries run out within the 5 s lock duration
            } else {
                failures++;
                sleep(200);
            }
        }
        System.out.println("CLUSTER drain " + queue + ": " + (System.nanoTime() - startNs) / 1_000_000 + " ms, "
                + failures + " failed calls");
    }

    private void check(Map<String, Integer> faults, int sent) {
        List<Delivery> all = new ArrayList<>(deliveries);
        System.out.println("CLUSTER history: " + sent + " sends acknowledged, " + all.size() + " deliveries, "
                + completedAtNs.size() + " completions, faults " + faults);
        assertThat(faults.values()).as("every kind of fault happened").allMatch(n -> n > 0);
        assertThat(sent).isGreaterThan(50);
        // nothing acknowledged is lost: every acknowledged send was completed or drained
        Set<String> missing = new HashSet<>(acked);
        missing.removeAll(completedAtNs.keySet());
        missing.removeAll(completionsInDoubt);
        for (String m : missing) {
            System.out.println("CLUSTER missing " + m + ": deliveries " + all.stream().filter(d -> d.body().equals(m))
                    .map(d -> "#" + d.seq()).toList() + ", refused completions " + refusedCompletions.get(m));
        }
        assertThat(missing).as("acknowledged messages never delivered to completion").isEmpty();
        // nothing completed comes back: no delivery of a message after its completion was acknowledged
        List<Delivery> resurrected = all.stream().filter(d -> completedAtNs.containsKey(d.body())
                && d.atNs() > completedAtNs.get(d.body())).toList();
        assertThat(resurrected).as("deliveries after an acknowledged completion").isEmpty();
        // a sequence number names one message per queue
        Map<String, String> bodyOf = new HashMap<>();
        for (Delivery d : all) {
            assertThat(d.seq()).isNotNegative();
            String before = bodyOf.putIfAbsent(d.queue() + "#" + d.seq(), d.body());
            assertThat(before == null || before.equals(d.body()))
                    .as("sequence number %d of %s names %s and %s", d.seq(), d.queue(), before, d.body()).isTrue();
        }
        assertThat(lockedTwice(all)).as("a message delivered again while its first delivery's lock ran").isEmpty();
        assertThat(enqueuedOutOfOrder(all)).as("enqueued times against sequence numbers").isEmpty();
    }

    /**
     * Second deliveries of a message made while the lock of the one before still ran (by its LockedUntilUtc, less
     * the dates' rounding), unless a disruption could have ended that lock: one no longer than a lease before the
     * first delivery, and at least its grace before the second.
     */
    private List<String> lockedTwice(List<Delivery> all) {
        Map<String, List<Delivery>> byMessage = new HashMap<>();
        for (Delivery d : all) {
            byMessage.computeIfAbsent(d.queue() + "/" + d.body(), k -> new ArrayList<>()).add(d);
        }
        List<String> out = new ArrayList<>();
        for (List<Delivery> ds : byMessage.values()) {
            ds.sort((x, y) -> Long.compare(x.atNs(), y.atNs()));
            for (int i = 1; i < ds.size(); i++) {
                Delivery first = ds.get(i - 1);
                Delivery again = ds.get(i);
                boolean lockRan = first.lockedUntilMs() > 0 && again.atMs() + DATE_MARGIN_MS < first.lockedUntilMs();
                boolean excused = disruptions.stream().anyMatch(e -> e.atNs() >= first.atNs() - LEASE_NS
                        && e.atNs() + e.graceNs() <= again.atNs());
                if (lockRan && !excused) {
                    out.add(again.body() + " (#" + again.seq() + ") at " + again.atMs() + ", locked until "
                            + first.lockedUntilMs() + " by the delivery at " + first.atMs());
                }
            }
        }
        return out;
    }

    /** Pairs of deliveries of a queue whose enqueued times run against their sequence numbers. */
    private static List<String> enqueuedOutOfOrder(List<Delivery> all) {
        Map<String, Map<Long, Long>> enqueuedBySeq = new HashMap<>();
        for (Delivery d : all) {
            if (d.enqueuedMs() > 0) {
                enqueuedBySeq.computeIfAbsent(d.queue(), k -> new TreeMap<>()).put(d.seq(), d.enqueuedMs());
            }
        }
        List<String> out = new ArrayList<>();
        enqueuedBySeq.forEach((queue, bySeq) -> {
            long seqBefore = -1;
            long before = Long.MIN_VALUE;
            for (Map.Entry<Long, Long> e : bySeq.entrySet()) {
                if (e.getValue() < before) {
                    out.add(queue + " #" + seqBefore + " at " + before + ", #" + e.getKey() + " at " + e.getValue());
                }
                seqBefore = e.getKey();
                before = e.getValue();
            }
        });
        return out;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
