package io.buslane.conformance;

import io.buslane.testsupport.BrokerProcess;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Which node of a test cluster serves a queue now: the queue's shard from the console API's namespace (any node),
 * and the node whose {@code /health} lists that shard as served. Sends cannot tell since routing carries them.
 */
final class ClusterProbe {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final Pattern SERVED = Pattern.compile("\"servedShards\":\\[([0-9,]*)]");

    /** The cluster secret the test nodes share. */
    static final String SECRET = "test-cluster-secret-0123456789abcdef";
    private static final Pattern LIVE = Pattern.compile("\"liveNodes\":\\[([^]]*)]");

    private ClusterProbe() {
    }

    /** Starts a packaged node of a test cluster on {@code storage} with {@code shards} shards. */
    static BrokerProcess node(String config, String storage, String id, int shards, String... more)
            throws Exception {
        BrokerProcess b = unstarted(config, storage, id, shards, more);
        b.launch();
        return b;
    }

    /** A packaged node of a test cluster, built but not started ({@link BrokerProcess#launch}). */
    static BrokerProcess unstarted(String config, String storage, String id, int shards, String... more)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("--storage", storage, "--node-id", id,
                "--cluster-address", "127.0.0.1:" + BrokerProcess.freePort(), "--cluster-secret", SECRET,
                "--shards", String.valueOf(shards)));
        args.addAll(List.of(more));
        return BrokerProcess.builder().config(config).args(args.toArray(new String[0])).build();
    }

    /** The shards a node serves now, from its {@code /health}. */
    static java.util.Set<Integer> served(BrokerProcess b) {
        String health = get(b, "/health", false);
        Matcher m = health == null ? null : SERVED.matcher(health);
        java.util.Set<Integer> out = new java.util.TreeSet<>();
        if (m != null && m.find() && !m.group(1).isEmpty()) {
            for (String s : m.group(1).split(",")) {
                out.add(Integer.parseInt(s));
            }
        }
        return out;
    }

    /**
     * The shards a node serves now, from its {@code /health} whether healthy (200) or not (503, e.g. cut off from the
     * database: the body still lists what it serves); null when it does not answer.
     */
    static java.util.Set<Integer> servedIfAnswered(BrokerProcess b) {
        try {
            HttpResponse<String> res = HTTP.send(HttpRequest.newBuilder(URI.create(b.baseUrl() + "/health"))
                    .timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString());
            Matcher m = SERVED.matcher(res.body());
            if (!m.find()) {
                return null;
            }
            java.util.Set<Integer> out = new java.util.TreeSet<>();
            for (String s : m.group(1).isEmpty() ? new String[0] : m.group(1).split(",")) {
                out.add(Integer.parseInt(s));
            }
            return out;
        } catch (Exception e) {
            return null;
        }
    }

    /** How many live nodes a node sees. */
    static int liveNodes(BrokerProcess b) {
        String health = get(b, "/health", false);
        Matcher m = health == null ? null : LIVE.matcher(health);
        return m != null && m.find() && !m.group(1).isEmpty() ? m.group(1).split(",").length : 0;
    }

    /** Waits until every shard is served by exactly one of {@code nodes} and each sees them all live. */
    static void awaitSpread(List<BrokerProcess> nodes, int shards) {
        await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(200)).untilAsserted(() ->
                assertThat(spread(nodes, shards)).as("the shards spread over %d nodes: %s", nodes.size(),
                        nodes.stream().map(ClusterProbe::served).toList()).isTrue());
    }

    private static boolean spread(List<BrokerProcess> nodes, int shards) {
        Set<Integer> all = new HashSet<>();
        int total = 0;
        boolean everyoneSeesAll = true;
        for (BrokerProcess b : nodes) {
            Set<Integer> s = served(b);
            all.addAll(s);
            total += s.size();
            everyoneSeesAll &= liveNodes(b) == nodes.size();
        }
        return all.size() == shards && total == shards && everyoneSeesAll;
    }

    private static String get(BrokerProcess b, String path, boolean auth) {
        try {
            HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(b.baseUrl() + path))
                    .timeout(Duration.ofSeconds(3));
            if (auth) {
                r.header("Authorization", ConformanceBase.sasToken("http://localhost/"));
            }
            HttpResponse<String> res = HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
            return res.statusCode() == 200 ? res.body() : null;
        } catch (Exception e) {
            return null;
        }
    }

    /** The shard of a non-partitioned queue, or -1 when no live node answers. */
    static int shardOf(List<BrokerProcess> nodes, String queue) {
        Pattern p = Pattern.compile("\"name\":\"" + Pattern.quote(queue) + "\"[^}]*?\"shards\":\\[(\\d+)]");
        for (BrokerProcess b : nodes) {
            if (!b.alive()) {
                continue;
            }
            String ns = get(b, "/console/api/namespace", true);
            Matcher m = ns == null ? null : p.matcher(ns);
            if (m != null && m.find()) {
                return Integer.parseInt(m.group(1));
            }
        }
        return -1;
    }

    /** The node serving {@code queue} now, or null. */
    static BrokerProcess ownerOf(List<BrokerProcess> nodes, String queue) {
        int shard = shardOf(nodes, queue);
        if (shard < 0) {
            return null;
        }
        for (BrokerProcess b : nodes) {
            String health = b.alive() ? get(b, "/health", false) : null;
            Matcher m = health == null ? null : SERVED.matcher(health);
            if (m != null && m.find() && !m.group(1).isEmpty()) {
                for (String s : m.group(1).split(",")) {
                    if (Integer.parseInt(s) == shard) {
                        return b;
                    }
                }
            }
        }
        return null;
    }
}
