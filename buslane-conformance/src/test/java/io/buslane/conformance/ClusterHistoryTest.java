package io.buslane.conformance;

import io.buslane.journal.postgres.TestPostgres;
import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A randomized history check of cluster mode: producers and consumers on several nodes while nodes are killed with
 * kill -9 and restarted, for a bounded time; the recorded history (acknowledged sends, deliveries with their
 * sequence numbers, acknowledged completions) is then checked: no acknowledged message is lost, no completed
 * message comes back, and no sequence number names two messages. Clients use the REST data plane through any live
 * node, chosen at random per call: sends, receives and completions are carried to the node serving the queue.
 * (Per-session order through a kill is checked by ClusterSdkTest, with the SDK's session receiver.)
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
                    "RequiresDuplicateDetection": true } } ] } ],
                "Logging": { "Type": "Console" }
              }
            }
            """;
    private static final List<String> QUEUES = List.of("h0", "h1", "h2", "h3");
    private static final Duration RUN = Duration.ofSeconds(Long.getLong("buslane.clusterHistorySeconds", 20));
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final Pattern SEQ = Pattern.compile("\"SequenceNumber\":(\\d+)");

    /** One delivery: which message, its sequence number, and when (nanoTime) it was handed out. */
    private record Delivery(String queue, String body, long seq, long atNs) {
    }

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
        return ClusterProbe.node(CONFIG, storage, id, 6);
    }

    private static HttpResponse<String> call(BrokerProcess b, String method, String path, String body) {
        try {
            String entity = path.substring(1, path.indexOf('/', 1));
            HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(b.baseUrl() + path))
                    .timeout(Duration.ofSeconds(5))
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
    private static BrokerProcess anyNode(List<BrokerProcess> nodes, SplittableRandom random) {
        List<BrokerProcess> alive = nodes.stream().filter(BrokerProcess::alive).toList();
        return alive.isEmpty() ? null : alive.get(random.nextInt(alive.size()));
    }

    private void record(String queue, HttpResponse<String> r) {
        Matcher m = SEQ.matcher(r.headers().firstValue("BrokerProperties").orElse(""));
        deliveries.add(new Delivery(queue, r.body(), m.find() ? Long.parseLong(m.group(1)) : -1, System.nanoTime()));
    }

    @Test
    void randomKillsAndRestartsLoseNothingResurrectNothingAndNeverReuseASequenceNumber() throws Exception {
        String storage = TestPostgres.storageUrl(TestPostgres.sharedOrSkip().newDatabase());
        List<BrokerProcess> nodes = new ArrayList<>();
        try {
            for (String id : List.of("node-a", "node-b", "node-c")) {
                nodes.add(node(storage, id));
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
            threads.forEach(Thread::start);
            SplittableRandom chaos = new SplittableRandom(42);
            int kills = 0;
            long end = System.nanoTime() + RUN.toNanos();
            while (System.nanoTime() < end) {
                Thread.sleep(4_000 + chaos.nextInt(3_000));
                BrokerProcess victim = nodes.get(chaos.nextInt(nodes.size()));
                victim.kill();
                kills++;
                Thread.sleep(1_000 + chaos.nextInt(2_000));
                victim.launch();
            }
            running.set(false);
            long stoppedNs = System.nanoTime();
            for (Thread t : threads) {
                t.join(30_000);
            }
            long joinedNs = System.nanoTime();
            drainEverything(nodes);
            System.out.println("CLUSTER history phases: clients stopped in " + (joinedNs - stoppedNs) / 1_000_000
                    + " ms, drained in " + (System.nanoTime() - joinedNs) / 1_000_000 + " ms");
            check(kills, sent.get());
        } finally {
            for (BrokerProcess b : nodes) {
                b.close();
            }
        }
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
            HttpResponse<String> r = b == null ? null : call(b, "POST", "/" + queue + "/messages/head?timeout=1",
                    null);
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

    /** Receive-and-delete everything left, through any node. */
    private void drainEverything(List<BrokerProcess> nodes) throws InterruptedException {
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

    private void check(int kills, int sent) {
        List<Delivery> all = new ArrayList<>(deliveries);
        System.out.println("CLUSTER history: " + sent + " sends acknowledged, " + all.size() + " deliveries, "
                + completedAtNs.size() + " completions, " + kills + " kills");
        assertThat(kills).isPositive();
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
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
