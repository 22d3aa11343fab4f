package io.buslane.conformance;

import io.buslane.journal.postgres.TestPostgres;
import io.buslane.testsupport.BrokerProcess;
import io.buslane.testsupport.TestCa;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Cluster mode as processes: three packaged brokers on one PostgreSQL database share the shards (rendezvous
 * placement, each shard served by exactly one node), see each other's namespace changes, and when the node serving
 * a queue is killed with kill -9 a survivor serves it again with every acknowledged message, within the issue's
 * 10 s at default settings; a clean shutdown hands the shards over at once. ClusterSdkTest drives the official
 * Java SDK through one node on entities the others serve.
 */
class ClusterProcessTest {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [ { "Name": "sbemulatorns", "Queues": [ { "Name": "cq" },
                  { "Name": "lq", "Properties": { "LockDuration": "PT5S", "DefaultMessageTimeToLive": "PT1S",
                    "DeadLetteringOnMessageExpiration": true } } ] } ],
                "Logging": { "Type": "Console" }
              }
            }
            """;
    private static final int SHARDS = 6;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static BrokerProcess node(String storage, String id) throws Exception {
        return ClusterProbe.node(CONFIG, storage, id, SHARDS);
    }

    private static Set<Integer> served(BrokerProcess b) {
        return ClusterProbe.served(b);
    }

    private static int send(BrokerProcess b, String queue, String body) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(b.baseUrl() + "/" + queue + "/messages"))
                    .header("Authorization", ConformanceBase.sasToken("http://localhost/" + queue))
                    .timeout(Duration.ofSeconds(10))
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString())
                    .statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    /** A peek-lock through REST, waiting up to {@code waitSeconds}: its status (201 when a message was locked). */
    private static CompletableFuture<Integer> peekLock(BrokerProcess b, String queue, int waitSeconds)
            throws Exception {
        return HTTP.sendAsync(HttpRequest.newBuilder(URI.create(b.baseUrl() + "/" + queue
                                + "/messages/head?timeout=" + waitSeconds))
                        .header("Authorization", ConformanceBase.sasToken("http://localhost/" + queue))
                        .timeout(Duration.ofSeconds(waitSeconds + 60))
                        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString())
                .thenApply(HttpResponse::statusCode).exceptionally(e -> -1);
    }

    /** The entity's description from the administration API (with its runtime counts), or "" when unanswered. */
    private static String description(BrokerProcess b, String entity) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(b.baseUrl() + "/" + entity + "?api-version=2021-05"))
                    .header("Authorization", ConformanceBase.sasToken("http://localhost/" + entity))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (Exception e) {
            return "";
        }
    }

    private static void signal(BrokerProcess b, String signal) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + signal, Long.toString(b.pid())).start().waitFor()).isZero();
    }

    /** Receive-and-delete until the queue is empty; the bodies. */
    private static List<String> drain(BrokerProcess b, String queue) throws Exception {
        List<String> out = new ArrayList<>();
        while (true) {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(b.baseUrl() + "/" + queue
                            + "/messages/head?timeout=1"))
                    .header("Authorization", ConformanceBase.sasToken("http://localhost/" + queue))
                    .timeout(Duration.ofSeconds(10)).DELETE().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                assertThat(r.statusCode()).isEqualTo(204);
                return out;
            }
            out.add(r.body());
        }
    }

    /**
     * The node among {@code nodes} that serves {@code queue}, polling until one does and accepts a send there
     * ({@code probe}); null when none does in time.
     */
    private static BrokerProcess servingNode(List<BrokerProcess> nodes, String queue, String probe, Duration within)
            throws Exception {
        try {
            return await().atMost(within).pollInterval(Duration.ofMillis(100)).until(() -> {
                BrokerProcess b = ClusterProbe.ownerOf(nodes, queue);
                return b != null && send(b, queue, probe) == 201 ? b : null;
            }, Objects::nonNull);
        } catch (ConditionTimeoutException none) {
            return null;
        }
    }

    private static void awaitSpread(List<BrokerProcess> nodes) throws Exception {
        ClusterProbe.awaitSpread(nodes, SHARDS);
    }

    @Test
    void threeNodesShareTheShardsAndAKilledNodesQueueIsServedAgainWithEveryAcknowledgedMessage() throws Exception {
        String storage = TestPostgres.storageUrl(TestPostgres.sharedOrSkip().newDatabase());
        try (BrokerProcess a = node(storage, "node-a");
             BrokerProcess b = node(storage, "node-b");
             BrokerProcess c = node(storage, "node-c")) {
            List<BrokerProcess> nodes = List.of(a, b, c);
            awaitSpread(nodes);
            for (BrokerProcess n : nodes) {
                assertThat(served(n)).as("every node serves a share").isNotEmpty();
            }

            // a namespace change made through one node is seen by the others within a second or so
            int created = HTTP.send(HttpRequest.newBuilder(URI.create(b.baseUrl() + "/made-on-b"))
                    .header("Authorization", ConformanceBase.sasToken("http://localhost/made-on-b"))
                    .header("Content-Type", "application/atom+xml")
                    .PUT(HttpRequest.BodyPublishers.ofString("<entry xmlns=\"http://www.w3.org/2005/Atom\"><content "
                            + "type=\"application/xml\"><QueueDescription xmlns=\"http://schemas.microsoft.com/"
                            + "netservices/2010/10/servicebus/connect\"/></content></entry>", StandardCharsets.UTF_8))
                    .build(), HttpResponse.BodyHandlers.ofString()).statusCode();
            assertThat(created).isEqualTo(201);
            assertThat(servingNode(nodes, "made-on-b", "first", Duration.ofSeconds(5))).isNotNull();

            BrokerProcess owner = servingNode(nodes, "cq", "probe-0", Duration.ofSeconds(10));
            assertThat(owner).isNotNull();
            // routing: a send through a node that does not serve the queue is carried to the one that does
            BrokerProcess other = nodes.stream().filter(n -> n != owner).findFirst().orElseThrow();
            assertThat(send(other, "cq", "through-another-node")).isEqualTo(201);
            Set<String> acked = new HashSet<>();
            acked.add("through-another-node");
            for (int i = 0; i < 50; i++) {
                assertThat(send(owner, "cq", "m-" + i)).isEqualTo(201);
                acked.add("m-" + i);
            }
            owner.kill();
            long killedAt = System.nanoTime();
            List<BrokerProcess> survivors = nodes.stream().filter(n -> n != owner).toList();
            BrokerProcess next = servingNode(survivors, "cq", "probe-1", Duration.ofSeconds(30));
            Duration failover = Duration.ofNanos(System.nanoTime() - killedAt);
            System.out.println("CLUSTER failover after kill -9: " + failover.toMillis() + " ms");
            assertThat(next).as("a survivor serves the queue again").isNotNull();
            assertThat(failover).as("failover time with default settings").isLessThan(Duration.ofSeconds(10));

            List<String> got = drain(next, "cq");
            assertThat(got).containsAll(acked).contains("probe-0", "probe-1");
            assertThat(got).doesNotHaveDuplicates();

            // a clean shutdown gives the shards back at once: the last node serves the queue well within a lease
            assertThat(send(next, "cq", "kept")).isEqualTo(201);
            next.stop();
            long stoppedAt = System.nanoTime();
            BrokerProcess last = survivors.stream().filter(n -> n != next).findFirst().orElseThrow();
            assertThat(servingNode(List.of(last), "cq", "probe-2", Duration.ofSeconds(10))).isNotNull();
            Duration handover = Duration.ofNanos(System.nanoTime() - stoppedAt);
            System.out.println("CLUSTER handover after a clean shutdown: " + handover.toMillis() + " ms");
            assertThat(handover).isLessThan(Duration.ofSeconds(4));
            assertThat(drain(last, "cq")).containsExactlyInAnyOrder("kept", "probe-2");
        }
    }

    @Test
    void aNodeCutOffFromTheDatabaseStopsServingBeforeAnotherTakesItsShardsAndRejoinsWhenTheCutHeals()
            throws Exception {
        TestPostgres pg = TestPostgres.sharedOrSkip();
        String jdbc = pg.newDatabase();
        String database = jdbc.substring(jdbc.lastIndexOf('/') + 1, jdbc.indexOf('?'));
        try (TcpProxy proxy = new TcpProxy("127.0.0.1", pg.port());
             BrokerProcess a = node("postgresql://buslane@127.0.0.1:" + proxy.port() + "/" + database, "node-a");
             BrokerProcess b = node(TestPostgres.storageUrl(jdbc), "node-b")) {
            awaitSpread(List.of(a, b));
            Set<Integer> aHad = served(a);
            BrokerProcess owner = servingNode(List.of(a, b), "cq", "before", Duration.ofSeconds(10));
            assertThat(owner).isNotNull();

            proxy.sever();
            long cutAt = System.nanoTime();
            long aStoppedNs = -1;
            long bTookNs = -1;
            long deadline = cutAt + Duration.ofSeconds(20).toNanos();
            while (System.nanoTime() < deadline && (aStoppedNs < 0 || bTookNs < 0)) {
                Set<Integer> aServes = ClusterProbe.servedIfAnswered(a); // its /health answers 503 meanwhile
                if (aStoppedNs < 0 && aServes != null && aServes.isEmpty()) {
                    aStoppedNs = System.nanoTime() - cutAt;
                }
                if (bTookNs < 0 && served(b).containsAll(aHad)) {
                    bTookNs = System.nanoTime() - cutAt;
                }
                Thread.sleep(50);
            }
            System.out.println("CLUSTER cut off: node-a stopped serving after " + aStoppedNs / 1_000_000
                    + " ms, node-b took its shards after " + bTookNs / 1_000_000 + " ms");
            assertThat(aStoppedNs).as("the cut-off node stops serving its shards").isPositive();
            assertThat(bTookNs).as("the other node takes them").isPositive();
            assertThat(aStoppedNs).as("fencing: it stops before anyone else takes them").isLessThan(bTookNs);
            assertThat(send(b, "cq", "during")).isEqualTo(201);

            proxy.heal();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
                    assertThat(served(a)).as("the healed node serves its share again").isEqualTo(aHad));
            BrokerProcess now = servingNode(List.of(a, b), "cq", "after", Duration.ofSeconds(10));
            assertThat(drain(now, "cq")).containsExactlyInAnyOrder("before", "during", "after");
        }
    }

    /**
     * The database goes silent for the node serving a queue (packets dropped, nothing closed: its calls hang until
     * their own timeouts): it stops handing out messages and serving its shards before the other node can take
     * them, as it does when its connections are reset (the test above). Each peek-lock it answered, it answered
     * before the other node took the shard, so no message was locked by both at once.
     */
    @Test
    void aNodeWhoseDatabaseGoesSilentStopsDeliveringAndServingBeforeAnotherTakesItsShards() throws Exception {
        TestPostgres pg = TestPostgres.sharedOrSkip();
        String jdbc = pg.newDatabase();
        String database = jdbc.substring(jdbc.lastIndexOf('/') + 1, jdbc.indexOf('?'));
        try (TcpProxy pa = new TcpProxy("127.0.0.1", pg.port());
             TcpProxy pb = new TcpProxy("127.0.0.1", pg.port());
             BrokerProcess a = node("postgresql://buslane@127.0.0.1:" + pa.port() + "/" + database, "node-a");
             BrokerProcess b = node("postgresql://buslane@127.0.0.1:" + pb.port() + "/" + database, "node-b")) {
            awaitSpread(List.of(a, b));
            BrokerProcess owner = servingNode(List.of(a, b), "cq", "m-0", Duration.ofSeconds(10));
            assertThat(owner).isNotNull();
            BrokerProcess other = owner == a ? b : a;
            for (int i = 1; i < 80; i++) {
                assertThat(send(owner, "cq", "m-" + i)).isEqualTo(201);
            }
            Set<Integer> ownerHad = served(owner);

            (owner == a ? pa : pb).blackHole();
            long cutAt = System.nanoTime();
            AtomicLong stoppedMs = new AtomicLong(-1);
            AtomicLong tookMs = new AtomicLong(-1);
            Thread watch = new Thread(() -> { // who serves what, apart from the receives below (they may wait)
                while (tookMs.get() < 0 || stoppedMs.get() < 0) {
                    long atMs = (System.nanoTime() - cutAt) / 1_000_000;
                    Set<Integer> ownerServes = ClusterProbe.servedIfAnswered(owner);
                    if (stoppedMs.get() < 0 && ownerServes != null && ownerServes.isEmpty()) {
                        stoppedMs.set(atMs);
                    }
                    Set<Integer> otherServes = ClusterProbe.servedIfAnswered(other);
                    if (tookMs.get() < 0 && otherServes != null && otherServes.containsAll(ownerHad)) {
                        tookMs.set(atMs);
                    }
                    if (atMs > 25_000) {
                        return;
                    }
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "cluster-watch");
            watch.start();
            List<Long> lockedByOwnerAtMs = new ArrayList<>();
            long deadline = cutAt + Duration.ofSeconds(25).toNanos();
            while (System.nanoTime() < deadline && (tookMs.get() < 0
                    || (System.nanoTime() - cutAt) / 1_000_000 < tookMs.get() + 2_000)) {
                if (peekLock(owner, "cq", 1).get(30, TimeUnit.SECONDS) == 201) {
                    lockedByOwnerAtMs.add((System.nanoTime() - cutAt) / 1_000_000);
                }
                Thread.sleep(250); // slower than the messages last: the owner always has one to hand out
            }
            watch.join(30_000);
            System.out.println("CLUSTER silent database: the owner locked " + lockedByOwnerAtMs.size()
                    + " messages, the last " + (lockedByOwnerAtMs.isEmpty() ? -1
                    : lockedByOwnerAtMs.get(lockedByOwnerAtMs.size() - 1)) + " ms after the cut; it stopped serving"
                    + " after " + stoppedMs + " ms, the other node took its shards after " + tookMs + " ms");
            assertThat(tookMs.get()).as("the other node takes the shards").isPositive();
            assertThat(stoppedMs.get()).as("the cut-off node stops serving its shards").isPositive();
            assertThat(stoppedMs.get()).as("fencing: it stops before anyone else takes them")
                    .isLessThan(tookMs.get());
            long took = tookMs.get();
            assertThat(lockedByOwnerAtMs).as("messages the cut-off node locked after the other node took them")
                    .allMatch(t -> t < took);
        }
    }

    /**
     * A node paused (SIGSTOP) past its lease while a receiver waits on it: the other node takes its shards and
     * empties the queue; when the paused node resumes, the locks it held have run out meanwhile, and it must not hand
     * those messages to the waiting receiver (the service never delivers a deleted message again). The messages are
     * in the dead-letter queue, where a lock running out changes nothing that is stored, so no failing commit stops
     * the stale delivery: only the lease check before each delivery does.
     */
    @Test
    void aNodeResumedAfterAPausePastItsLeaseDeliversNothingTheOtherNodeServedMeanwhile() throws Exception {
        TestPostgres pg = TestPostgres.sharedOrSkip();
        String jdbc = pg.newDatabase();
        String dlq = "lq/$DeadLetterQueue";
        try (BrokerProcess a = node(TestPostgres.storageUrl(jdbc), "node-a");
             BrokerProcess b = node(TestPostgres.storageUrl(jdbc), "node-b")) {
            awaitSpread(List.of(a, b));
            BrokerProcess owner = servingNode(List.of(a, b), "lq", "m-0", Duration.ofSeconds(10));
            assertThat(owner).isNotNull();
            BrokerProcess other = owner == a ? b : a;
            for (int i = 1; i < 20; i++) {
                assertThat(send(owner, "lq", "m-" + i)).isEqualTo(201);
            }
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                    .until(() -> description(owner, "lq").contains("DeadLetterMessageCount>20<"));
            List<CompletableFuture<Integer>> locking = new ArrayList<>();
            for (int i = 0; i < 20; i++) { // all at once, well within their 5 s locks
                locking.add(peekLock(owner, dlq, 10));
            }
            for (CompletableFuture<Integer> l : locking) {
                assertThat(l.get(30, TimeUnit.SECONDS)).isEqualTo(201);
            }
            Set<Integer> ownerHad = served(owner);
            CompletableFuture<Integer> waiting = peekLock(owner, dlq, 60);
            Thread.sleep(500); // the receive is attached on the owner
            assertThat(waiting).as("the receiver waits: every message is locked").isNotDone();
            signal(owner, "STOP");
            try {
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                        .until(() -> served(other).containsAll(ownerHad));
                assertThat(drain(other, dlq)).as("every message, its locks gone with the paused node").hasSize(20);
                Thread.sleep(1_000);
            } finally {
                signal(owner, "CONT");
            }
            assertThat(waiting.get(90, TimeUnit.SECONDS)).as("the resumed node hands out a message the other node"
                    + " delivered and deleted while it was paused").isNotEqualTo(201);
            for (int i = 0; i < 3; i++) {
                assertThat(peekLock(owner, dlq, 1).get(30, TimeUnit.SECONDS)).isNotEqualTo(201);
            }
        }
    }

    private static final String TOPOLOGY = """
            {
              "UserConfig": {
                "Namespaces": [ { "Name": "sbemulatorns",
                  "Queues": [ { "Name": "q-peek" }, { "Name": "q-sessions", "Properties": { "RequiresSession": true } },
                              { "Name": "q-dedup", "Properties": { "RequiresDuplicateDetection": true } },
                              { "Name": "q-forward", "Properties": { "ForwardTo": "q-peek" } } ],
                  "Topics": [ { "Name": "t", "Subscriptions": [ { "Name": "all" }, { "Name": "red", "Rules": [
                      { "Name": "red", "Properties": { "FilterType": "Sql",
                        "SqlFilter": { "SqlExpression": "color = 'red'" } } } ] } ] } ] } ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    /**
     * Nodes whose channel is mutual TLS (certificates of a cluster CA, TLS 1.3) carry operations to each other as on
     * plain TCP: a send through the node that does not serve the queue is stored by the one that does.
     */
    @Test
    void nodesOnMutualTlsCarryOperationsToEachOther() throws Exception {
        TestCa ca = TestCa.create();
        String storage = TestPostgres.storageUrl(TestPostgres.sharedOrSkip().newDatabase());
        Path[] certA = ca.issue("node-a", "127.0.0.1", 30);
        Path[] certB = ca.issue("node-b", "127.0.0.1", 30);
        try (BrokerProcess a = ClusterProbe.node(CONFIG, storage, "node-a", SHARDS, tlsArgs(certA, ca));
             BrokerProcess b = ClusterProbe.node(CONFIG, storage, "node-b", SHARDS, tlsArgs(certB, ca))) {
            List<BrokerProcess> nodes = List.of(a, b);
            awaitSpread(nodes);
            BrokerProcess owner = servingNode(nodes, "cq", "probe-tls", Duration.ofSeconds(10));
            assertThat(owner).isNotNull();
            BrokerProcess other = owner == a ? b : a;
            assertThat(send(other, "cq", "carried over tls")).isEqualTo(201);
            assertThat(drain(owner, "cq")).contains("carried over tls");
        }
    }

    /**
     * A node the others reach at an address that is not its own (here a forwarding proxy, as NAT or a service
     * address would be) listens on {@code --cluster-bind}: without it the node cannot start (nothing on this machine
     * has that address), with it operations are carried to it through the advertised address.
     */
    @Test
    void aNodeBehindAnotherAddressListensOnItsBindAndIsReachedThroughTheAdvertisedOne() throws Exception {
        String storage = TestPostgres.storageUrl(TestPostgres.sharedOrSkip().newDatabase());
        int bindPort = BrokerProcess.freePort();
        try (TcpProxy nat = new TcpProxy("127.0.0.1", bindPort);
             BrokerProcess a = ClusterProbe.node(CONFIG, storage, "node-a", SHARDS);
             BrokerProcess unbound = BrokerProcess.builder().config(CONFIG).args("--storage", storage, "--node-id",
                     "node-x", "--cluster-address", "192.0.2.10:" + bindPort, "--cluster-secret", ClusterProbe.SECRET,
                     "--shards", String.valueOf(SHARDS)).build();
             BrokerProcess b = BrokerProcess.builder().config(CONFIG).args("--storage", storage, "--node-id",
                     "node-b", "--cluster-address", "127.0.0.1:" + nat.port(), "--cluster-bind",
                     "127.0.0.1:" + bindPort, "--cluster-secret", ClusterProbe.SECRET,
                     "--shards", String.valueOf(SHARDS)).build()) {
            assertThatThrownBy(unbound::launch).hasMessageContaining("Cannot listen on 192.0.2.10:" + bindPort);
            b.launch();
            List<BrokerProcess> nodes = List.of(a, b);
            awaitSpread(nodes);
            BrokerProcess owner = servingNode(nodes, "cq", "probe-bind", Duration.ofSeconds(10));
            assertThat(owner).isNotNull();
            if (owner == b) {
                assertThat(send(a, "cq", "carried to the bound node")).isEqualTo(201);
                assertThat(drain(b, "cq")).contains("carried to the bound node");
            } else {
                assertThat(send(b, "cq", "carried from the bound node")).isEqualTo(201);
                assertThat(drain(a, "cq")).contains("carried from the bound node");
            }
            assertThat(b.log()).contains("node-b").doesNotContain("resolves to the loopback address");
        }
    }

    private static String[] tlsArgs(Path[] cert, TestCa ca) {
        return new String[] {"--cluster-tls-cert", cert[0].toString(), "--cluster-tls-key", cert[1].toString(),
            "--cluster-tls-ca", ca.caCert().toString()};
    }

    /**
     * Two processes must never act as one node: a second process started with a live node's {@code --node-id} is
     * refused (after waiting for the id's heartbeat to age out, which a live node keeps renewing), and the first
     * serves on undisturbed; the same node killed with {@code kill -9} gets its id back once its old heartbeat has
     * aged out. Before incarnation ids the second took the first's shards as if it were the same node.
     */
    @Test
    void aSecondProcessWithALiveNodesIdIsRefusedAndAKilledNodeGetsItsIdBack() throws Exception {
        String storage = TestPostgres.storageUrl(TestPostgres.sharedOrSkip().newDatabase());
        try (BrokerProcess a = node(storage, "node-a");
             BrokerProcess twin = ClusterProbe.unstarted(CONFIG, storage, "node-a", SHARDS)) {
            Set<Integer> all = served(a);
            assertThat(all).hasSize(SHARDS);
            assertThatThrownBy(twin::launch).hasMessageContaining("'node-a' is in use by a live process");
            assertThat(served(a)).as("the first serves on").isEqualTo(all);
            assertThat(send(a, "cq", "after the twin")).isEqualTo(201);

            a.crashAndRestart();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .until(() -> served(a).size() == SHARDS);
            assertThat(drain(a, "cq")).contains("after the twin");
        }
    }

    /**
     * The natural deployment: every node started with the same Config.json at the same instant, on one database
     * (twice over): each applies the topology without failing on what another created a moment before, none waits
     * on a lease another keeps renewing, and the shards spread over all three; every entity is there once.
     */
    @Test
    void threeNodesStartedTogetherWithOneConfigAllServe() throws Exception {
        TestPostgres pg = TestPostgres.sharedOrSkip();
        for (int attempt = 0; attempt < 2; attempt++) {
            String storage = TestPostgres.storageUrl(pg.newDatabase());
            List<BrokerProcess> nodes = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    nodes.add(ClusterProbe.unstarted(TOPOLOGY, storage, "node-" + i, SHARDS));
                }
                List<CompletableFuture<Void>> starting = new ArrayList<>();
                for (BrokerProcess n : nodes) {
                    starting.add(CompletableFuture.runAsync(() -> {
                        try {
                            n.launch();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }));
                }
                for (CompletableFuture<Void> s : starting) {
                    s.get(120, TimeUnit.SECONDS);
                }
                awaitSpread(nodes);
                // each node's routing follows the spread within a round (until then: 503, retriable)
                for (String q : List.of("q-peek", "q-sessions", "q-dedup", "q-forward")) {
                    await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                            assertThat(description(nodes.get(0), q)).as(q).contains("<title type=\"text\">" + q));
                }
                await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
                        .until(() -> send(nodes.get(1), "q-peek", "through node-1") == 201);
                List<String> got = new ArrayList<>();
                await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                        .until(() -> got.addAll(drain(nodes.get(2), "q-peek")) || !got.isEmpty());
                assertThat(got).containsExactly("through node-1");
            } finally {
                for (BrokerProcess n : nodes) {
                    n.close();
                }
            }
        }
    }
}
