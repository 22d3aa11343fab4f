package io.buslane.bench.postgres;

import io.buslane.testsupport.BrokerProcess;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The cluster benchmark (bench/run-cluster.sh, issue #20): one, two and three Buslane nodes on one PostgreSQL
 * database (the throwaway cluster of {@link PgServer}), end-to-end AMQP load on six queues with the clients spread
 * round-robin over every node's AMQP port, so that with two or three nodes most operations are carried to the node
 * that serves the queue's shard; then, on two nodes, one-at-a-time sends and receives through the node that serves
 * a queue against the other node (the cost of a forwarded request).
 *
 * <p>Arguments: {@code --pg-port P --pg-data DIR [--quick] [--jar buslane.jar] [--work DIR] [--docs FILE]
 * [--no-docs] [--nodes 1,2,3] [--lease-seconds 15]}.
 */
public final class ClusterBench {

    static final int QUEUES = 6;
    static final int SHARDS = 12;
    /**
     * The nodes' ids, first the one-node cluster's. Placement is rendezvous over the ids and the queues' shards a
     * hash of their entity ids, so both are lumpy with few shards: with ids node-0..node-2 and 6 shards the third
     * node serves no shard and all six queues land on one node. These ids (with 12 shards) put 3 + 3 queues on two
     * nodes (6 + 6 shards) and 2 + 2 + 2 on three (5 + 4 + 3 shards), so that the load is spread over the nodes.
     */
    static final List<String> NODE_IDS = List.of("node-c", "node-g", "node-b");
    static final String SECRET = "bench-cluster-secret-0123456789abcdef";
    static final String LATENCY_QUEUE = "lat";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final Pattern SERVED = Pattern.compile("\"servedShards\":\\[([0-9,]*)]");
    private static final Pattern LIVE = Pattern.compile("\"liveNodes\":\\[([^]]*)]");

    final boolean quick;
    final Path jar;
    final Path work;
    final PgServer pg;
    /** Messages of each end-to-end run (the same for every cluster size), and of its unmeasured warm-up. */
    final long messages;
    final long warmup;
    /** End-to-end: at most this many messages sent and not yet received. */
    final long inFlight = 5000;
    /** One-at-a-time operations per latency run, and unmeasured ones before them. */
    final int latencyOps;
    final int latencyWarmup;
    final String heap = "1g";
    /**
     * The nodes' {@code --lease-seconds}. Not the default 5: under this saturating load on two cores a node's lease
     * renewal once started more than 3.5 s (70 % of 5 s) before its next one succeeded and the node fenced itself
     * (benchmarks.md, "Cluster mode"); {@code --lease-seconds 5} measures with the default.
     */
    int leaseSeconds = 15;
    List<Integer> nodeCounts = List.of(1, 2, 3);
    final List<Row> rows = new ArrayList<>();
    final List<Latency> latencies = new ArrayList<>();
    /** Per cluster size (as {@link #rows}): the nodes' CPU while no client works, in cores. */
    final List<Double> idleCores = new ArrayList<>();
    final List<String> failures = new ArrayList<>();
    private final Path configJson;

    /**
     * One end-to-end run: wall time; CPU of each node, of the PostgreSQL cluster and of the load client; the
     * machine's busy time ({@code /proc/stat}); commits and WAL; how many queues had their clients on the node that
     * serves them.
     */
    record Row(int nodes, long messages, double seconds, List<Double> nodeCpuS, double pgCpuS, double clientCpuS,
               double machineBusyS, long commits, long walBytes, int localClients, double maxSendMs, double jitCpuS,
               long refusedSends) {
        double rate() {
            return messages / seconds;
        }

        double brokerCpuS() {
            return nodeCpuS.stream().mapToDouble(Double::doubleValue).sum();
        }
    }

    /** One-at-a-time operations through one node: {@code local} when it serves the queue. */
    record Latency(String operation, boolean local, int count, double seconds, double p50, double p99, double max,
                   double brokerCpuS) {
        double rate() {
            return count / seconds;
        }
    }

    ClusterBench(boolean quick, Path jar, Path work, PgServer pg) throws Exception {
        this.quick = quick;
        this.jar = jar;
        this.work = work;
        this.pg = pg;
        this.messages = quick ? 20_000 : 100_000;
        this.warmup = quick ? 10_000 : 60_000;
        this.latencyOps = quick ? 300 : 2000;
        this.latencyWarmup = quick ? 200 : 1000;
        Files.createDirectories(work);
        StringBuilder queues = new StringBuilder();
        for (int i = 0; i < QUEUES; i++) {
            queues.append("{ \"Name\": \"").append(queue(i)).append("\" }, ");
        }
        this.configJson = work.resolve("config.json");
        Files.writeString(configJson, "{ \"UserConfig\": { \"Namespaces\": [ { \"Name\": \"sbemulatorns\","
                + " \"Queues\": [ " + queues + "{ \"Name\": \"" + LATENCY_QUEUE + "\" } ] } ],"
                + " \"Logging\": { \"Type\": \"Console\" } } }");
    }

    static String queue(int i) {
        return "q" + i;
    }

    public static void main(String[] args) throws Exception {
        boolean quick = false;
        boolean docs = true;
        Path jar = Path.of("buslane-server/target/buslane.jar");
        Path work = Path.of("bench/target/cluster-bench");
        Path docsFile = Path.of("docs/benchmarks.md");
        int pgPort = 0;
        Path pgData = null;
        String nodes = null;
        int lease = 15;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> quick = true;
                case "--no-docs" -> docs = false;
                case "--jar" -> jar = Path.of(args[++i]);
                case "--work" -> work = Path.of(args[++i]);
                case "--docs" -> docsFile = Path.of(args[++i]);
                case "--pg-port" -> pgPort = Integer.parseInt(args[++i]);
                case "--pg-data" -> pgData = Path.of(args[++i]);
                case "--nodes" -> nodes = args[++i];
                case "--lease-seconds" -> lease = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (pgPort == 0 || pgData == null) {
            throw new IllegalArgumentException("--pg-port and --pg-data are required (bench/run-cluster.sh)");
        }
        long start = System.nanoTime();
        ClusterBench bench = new ClusterBench(quick, jar.toAbsolutePath(), work.toAbsolutePath(),
                new PgServer(pgPort, pgData));
        bench.leaseSeconds = lease;
        if (nodes != null) {
            bench.nodeCounts = java.util.Arrays.stream(nodes.split(",")).map(Integer::valueOf).toList();
        }
        bench.run();
        ClusterReport report = new ClusterReport(bench);
        System.out.println();
        report.resultLines().forEach(System.out::println);
        bench.failures.forEach(f -> System.out.println("FAILED " + f));
        System.out.printf(Locale.ROOT, "Benchmark time: %.0f s%n", (System.nanoTime() - start) / 1e9);
        if (docs) {
            report.write(docsFile);
            System.out.println("Wrote the cluster section of " + docsFile);
        }
        System.exit(0);
    }

    void run() {
        for (int n : nodeCounts) {
            System.out.println("== " + n + " node(s) (" + java.time.LocalTime.now().withNano(0) + ")");
            try {
                cluster(n);
            } catch (Exception | Error e) {
                System.out.println("FAILED " + n + " node(s): " + e);
                e.printStackTrace(System.out);
                failures.add(n + " node(s): " + e);
            }
        }
    }

    /** A fresh database, {@code n} nodes on it, warm-up, the end-to-end run, and on two nodes the latency runs. */
    void cluster(int n) throws Exception {
        String db = "cluster_" + n;
        pg.createDatabase(db);
        List<BrokerProcess> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                List<String> args = List.of("--shards", Integer.toString(SHARDS), "--sync", "always", "--storage",
                        pg.storageUrl(db), "--node-id", NODE_IDS.get(i), "--cluster-address",
                        "127.0.0.1:" + BrokerProcess.freePort(), "--cluster-secret", SECRET,
                        "--lease-seconds", Integer.toString(leaseSeconds));
                nodes.add(PostgresBench.launchBroker(jar, work, configJson, n + "-" + NODE_IDS.get(i), heap, args));
            }
            awaitPlacement(nodes, Duration.ofSeconds(60));
            int[] owners = new int[QUEUES];
            int local = 0;
            for (int i = 0; i < QUEUES; i++) {
                owners[i] = ownerIndex(nodes, queue(i));
                local += (owners[i] == i % n ? 1 : 0) + (owners[i] == (i + 1) % n ? 1 : 0);
            }
            System.out.println("queues q0..q5 served by nodes " + java.util.Arrays.toString(owners) + "; sender of qi"
                    + " on node i % " + n + ", receiver on (i + 1) % " + n + ": " + local + " of " + 2 * QUEUES
                    + " clients on the serving node");
            int[] ports = nodes.stream().mapToInt(BrokerProcess::amqpPort).toArray();
            for (int pass = 1; pass <= (quick ? 1 : 2); pass++) {
                endToEnd(ports, warmup);
                System.out.println("warm-up pass " + pass + " done");
            }
            measureEndToEnd(n, nodes, db, ports, local);
            idleCores.add(idleCores(nodes));
            if (n == 2) {
                latencies(nodes);
            }
        } finally {
            for (int i = nodes.size() - 1; i >= 0; i--) {
                nodes.get(i).close();
            }
        }
    }

    /** A receiver and a sender on every queue: the sender of queue i on node i % n, its receiver on (i + 1) % n. */
    /** Sends refused (and sent again) by the last {@link #endToEnd} run. */
    long lastRefused;

    double endToEnd(int[] ports, long count) throws Exception {
        try (BrokerLoad load = new BrokerLoad(ports)) {
            List<Thread> r = new ArrayList<>();
            for (int i = 0; i < QUEUES; i++) {
                r.addAll(load.nextOn(i + 1).receivers(queue(i), 1));
            }
            List<Thread> s = new ArrayList<>();
            for (int i = 0; i < QUEUES; i++) {
                s.addAll(load.nextOn(i).senders(queue(i), 1, count, inFlight));
            }
            BrokerLoad.start(r);
            BrokerLoad.start(s);
            load.join(s, 900_000);
            load.awaitReceived(count, 900_000);
            lastRefused = load.refused.get();
            if (lastRefused > 0) {
                System.out.println(lastRefused + " sends refused and sent again; the first: "
                        + load.firstRefusal.get());
            }
            return load.maxSendNanos.get() / 1e6;
        }
    }

    void measureEndToEnd(int n, List<BrokerProcess> nodes, String db, int[] ports, int local) throws Exception {
        List<String> pids = nodes.stream().map(b -> Long.toString(b.pid())).toList();
        PgServer.Snapshot s0 = pg.snapshot(db, false);
        List<Long> cpu0 = pids.stream().map(PgServer::processCpuMicros).toList();
        long jit0 = pids.stream().mapToLong(PgServer::jitCpuMicros).sum();
        long c0 = PgServer.processCpuMicros("self");
        long busy0 = machineBusyMicros();
        long t0 = System.nanoTime();
        double maxSend = endToEnd(ports, messages);
        long t1 = System.nanoTime();
        long busy1 = machineBusyMicros();
        long c1 = PgServer.processCpuMicros("self");
        long jit1 = pids.stream().mapToLong(PgServer::jitCpuMicros).sum();
        List<Double> nodeCpu = new ArrayList<>();
        for (int i = 0; i < pids.size(); i++) {
            nodeCpu.add((PgServer.processCpuMicros(pids.get(i)) - cpu0.get(i)) / 1e6);
        }
        long pgCpu1 = pg.cpuMicros();
        PgServer.Snapshot s1 = pg.snapshot(db, true);
        Row row = new Row(n, messages, (t1 - t0) / 1e9, nodeCpu, (pgCpu1 - s0.cpuMicros()) / 1e6, (c1 - c0) / 1e6,
                (busy1 - busy0) / 1e6, s1.commits() - s0.commits(), s1.walBytes() - s0.walBytes(), local, maxSend,
                (jit1 - jit0) / 1e6, lastRefused);
        rows.add(row);
        System.out.printf(Locale.ROOT, "%d node(s): %d msgs in %.2f s = %.0f msgs/s; nodes %s s CPU, postgres %.1f s,"
                        + " client %.1f s, machine busy %.2f cores; %d commits; max send %.0f ms%n", n, messages,
                row.seconds(), row.rate(), nodeCpu, row.pgCpuS(), row.clientCpuS(), row.machineBusyS() / row.seconds(),
                row.commits(), maxSend);
    }

    /** The nodes' CPU (all of them together) over 3 s without load, in cores. */
    static double idleCores(List<BrokerProcess> nodes) throws Exception {
        Thread.sleep(1000);
        long c0 = nodes.stream().mapToLong(b -> PgServer.processCpuMicros(Long.toString(b.pid()))).sum();
        long t0 = System.nanoTime();
        Thread.sleep(3000);
        long c1 = nodes.stream().mapToLong(b -> PgServer.processCpuMicros(Long.toString(b.pid()))).sum();
        double cores = (c1 - c0) / 1e3 / ((System.nanoTime() - t0) / 1e6);
        System.out.printf(Locale.ROOT, "nodes idle: %.3f cores%n", cores);
        return cores;
    }

    /** The one-at-a-time runs on a two-node cluster: sends, then receives, through the owner and the other node. */
    void latencies(List<BrokerProcess> nodes) throws Exception {
        int owner = ownerIndex(nodes, LATENCY_QUEUE);
        if (owner < 0) {
            throw new IllegalStateException("no node serves queue " + LATENCY_QUEUE);
        }
        BrokerProcess here = nodes.get(owner);
        BrokerProcess there = nodes.get(1 - owner);
        List<String> pids = nodes.stream().map(b -> Long.toString(b.pid())).toList();
        oneAtATime("send", true, here, latencyWarmup, null);
        oneAtATime("send", false, there, latencyWarmup, null);
        oneAtATime("send", true, here, latencyOps, pids);
        oneAtATime("send", false, there, latencyOps, pids);
        oneAtATime("receive", true, here, latencyWarmup, null);
        oneAtATime("receive", false, there, latencyWarmup, null);
        oneAtATime("receive", true, here, latencyOps, pids);
        oneAtATime("receive", false, there, latencyOps, pids);
    }

    /** {@code count} one-at-a-time operations through {@code node}; recorded when {@code pids} is not null. */
    void oneAtATime(String op, boolean local, BrokerProcess node, int count, List<String> pids) throws Exception {
        long cpu0 = pids == null ? 0 : pids.stream().mapToLong(PgServer::processCpuMicros).sum();
        long t0 = System.nanoTime();
        LatencyLog log;
        try (BrokerLoad load = new BrokerLoad(node.amqpPort())) {
            Thread t = op.equals("send") ? load.probe(LATENCY_QUEUE, new CountDownLatch(1), count, 0)
                    : load.oneAtATimeReceiver(LATENCY_QUEUE, count);
            t0 = System.nanoTime();
            t.start();
            load.join(List.of(t), 300_000);
            log = load.probe;
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (pids == null) {
            return;
        }
        long cpu1 = pids.stream().mapToLong(PgServer::processCpuMicros).sum();
        Latency l = new Latency(op, local, log.count(), seconds, log.ms(50), log.ms(99), log.ms(100),
                (cpu1 - cpu0) / 1e6);
        latencies.add(l);
        System.out.printf(Locale.ROOT, "%s, %s: %d in %.2f s = %.0f/s; p50 %.2f ms, p99 %.2f ms, max %.1f ms%n", op,
                local ? "local" : "forwarded", l.count(), seconds, l.rate(), l.p50(), l.p99(), l.max());
    }

    /** Busy time of the whole machine so far (all CPUs, everything but idle and iowait), in microseconds. */
    static long machineBusyMicros() throws Exception {
        String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        long busy = 0;
        for (int i = 1; i < f.length && i <= 8; i++) {
            if (i != 4 && i != 5) {
                busy += Long.parseLong(f[i]);
            }
        }
        return busy * 10_000L;
    }

    /** Waits until every node sees all of them live and the shards are served, each by one node. */
    static void awaitPlacement(List<BrokerProcess> nodes, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        String seen = "";
        while (System.nanoTime() < deadline) {
            TreeSet<Integer> all = new TreeSet<>();
            int count = 0;
            boolean live = true;
            StringBuilder view = new StringBuilder();
            for (BrokerProcess b : nodes) {
                String health = get(b, "/health", false);
                Matcher l = LIVE.matcher(health);
                live &= l.find() && !l.group(1).isEmpty() && l.group(1).split(",").length == nodes.size();
                List<Integer> served = served(health);
                all.addAll(served);
                count += served.size();
                view.append(served);
            }
            seen = view.toString();
            if (live && all.size() == SHARDS && count == SHARDS) {
                System.out.println("shards served per node: " + seen);
                return;
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("the shards were not placed within " + within.toSeconds() + " s: " + seen);
    }

    static List<Integer> served(String health) {
        Matcher m = SERVED.matcher(health);
        List<Integer> out = new ArrayList<>();
        if (m.find() && !m.group(1).isEmpty()) {
            for (String s : m.group(1).split(",")) {
                out.add(Integer.parseInt(s));
            }
        }
        return out;
    }

    /** The index of the node serving a non-partitioned queue now (its shard from the console API), or -1. */
    static int ownerIndex(List<BrokerProcess> nodes, String queue) throws Exception {
        Pattern p = Pattern.compile("\"name\":\"" + Pattern.quote(queue) + "\"[^}]*?\"shards\":\\[(\\d+)]");
        Matcher m = p.matcher(get(nodes.get(0), "/console/api/namespace", true));
        if (!m.find()) {
            throw new IllegalStateException("queue " + queue + " not in the console's namespace");
        }
        int shard = Integer.parseInt(m.group(1));
        for (int i = 0; i < nodes.size(); i++) {
            if (served(get(nodes.get(i), "/health", false)).contains(shard)) {
                return i;
            }
        }
        return -1;
    }

    static String get(BrokerProcess b, String path, boolean auth) {
        try {
            HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(b.baseUrl() + path))
                    .timeout(Duration.ofSeconds(5));
            if (auth) {
                r.header("Authorization", sasToken("http://localhost/"));
            }
            HttpResponse<String> res = HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
            return res.statusCode() == 200 ? res.body() : "";
        } catch (Exception e) {
            return "";
        }
    }

    /** A SAS token for the emulator's default rule (RootManageSharedAccessKey / SAS_KEY_VALUE), valid an hour. */
    static String sasToken(String audience) throws Exception {
        String sr = URLEncoder.encode(audience, StandardCharsets.UTF_8);
        long se = System.currentTimeMillis() / 1000 + 3600;
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec("SAS_KEY_VALUE".getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        String sig = Base64.getEncoder().encodeToString(mac.doFinal((sr + "\n" + se).getBytes(StandardCharsets.UTF_8)));
        return "SharedAccessSignature sr=" + sr + "&sig=" + URLEncoder.encode(sig, StandardCharsets.UTF_8) + "&se=" + se
                + "&skn=RootManageSharedAccessKey";
    }
}
