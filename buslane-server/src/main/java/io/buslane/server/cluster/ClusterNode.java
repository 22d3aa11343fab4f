package io.buslane.server.cluster;

import io.buslane.cluster.ClusterClient;
import io.buslane.cluster.ClusterServer;
import io.buslane.engine.Engine;
import io.buslane.journal.JournalException;
import io.buslane.journal.postgres.PostgresJournalFactory;
import io.buslane.journal.postgres.PostgresMembership;
import io.buslane.management.console.ClusterView;
import io.buslane.server.tls.ClusterTls;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * This broker as one node of a cluster (docs/cluster.md): a thread that, every
 * tenth of a lease, applies the namespace changes other nodes made and runs one round of the {@link ShardController}
 * (heartbeat, placement, taking and giving up shards), and a timer of its own for the controller's self-fence, which
 * no database call can hold up. Closing it gives every shard back at once.
 */
public final class ClusterNode implements AutoCloseable, ClusterView {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);
    /** Operations waiting for an answer per peer (and per incoming connection) before more are refused. */
    private static final int MAX_IN_FLIGHT = 4096;

    private final String nodeId;
    private final Engine engine;
    private final PostgresMembership membership;
    private final ShardController controller;
    /** The HMAC key of the handshake when mutual TLS authenticates the nodes and no secret is given. */
    static final String NO_SECRET = "buslane-cluster: mutual TLS, no shared secret";
    private static final long TLS_CHECK_MS = 1_000;

    private final ScheduledExecutorService thread;
    /** The self-fence's own timer: no database call on it, so a silent database cannot delay it. */
    private final ScheduledExecutorService fence;
    private volatile String problem;
    /** Live node id → its cluster address, as of the last heartbeat. */
    private volatile Map<String, String> addresses = Map.of();
    /** Shard → the cluster address of the node serving it (live leases), as of the last round. */
    private volatile Map<Integer, String> shardAddresses = Map.of();
    private ClusterServer server;
    private ClusterClient client;

    private ClusterNode(String nodeId, Engine engine, PostgresJournalFactory journals, String address) {
        this.nodeId = nodeId;
        this.engine = engine;
        Duration lease = journals.lease();
        this.membership = journals.membership(address, lease);
        ShardController.Members members = new ShardController.Members() {
            @Override
            public List<String> heartbeat() {
                List<String> ids = new ArrayList<>();
                Map<String, String> byId = new HashMap<>();
                for (PostgresMembership.Node n : membership.heartbeat()) {
                    ids.add(n.id());
                    byId.put(n.id(), n.address());
                }
                addresses = Map.copyOf(byId);
                return ids;
            }

            @Override
            public Map<String, String> liveLeases() {
                Map<String, String> out = new HashMap<>();
                for (PostgresMembership.Lease l : membership.leases().values()) {
                    if (l.live() && l.owner() != null) {
                        out.put(l.journal(), l.owner());
                    }
                }
                return out;
            }

            @Override
            public void leave() {
                membership.leave();
            }

            @Override
            public long leasesSecuredAtNanos() {
                return journals.leasesSecuredAtNanos();
            }

            @Override
            public Set<String> ownedJournals() {
                return journals.ownedJournals();
            }
        };
        ShardController.Host host = new ShardController.Host() {
            @Override
            public int shardCount() {
                return engine.shardCount();
            }

            @Override
            public boolean serves(int shard) {
                return engine.cluster().servesShard(shard);
            }

            @Override
            public void serve(int shard) {
                engine.cluster().serveShard(shard);
            }

            @Override
            public void stopServing(int shard, String why) {
                engine.cluster().stopServingShard(shard, why);
            }
        };
        this.controller = new ShardController(nodeId, lease, members, host, System::nanoTime);
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "buslane-cluster");
            t.setDaemon(true);
            return t;
        });
        this.fence = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "buslane-cluster-fence");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Joins the cluster: runs a first round at once (so the node serves its share before it reports ready), then
     * one every tenth of the lease.
     *
     * @param address where other nodes reach this one (recorded in the membership row)
     */
    public static ClusterNode start(String nodeId, Engine engine, PostgresJournalFactory journals, String address,
                                    Vertx vertx, String secret) {
        return start(nodeId, engine, journals, address, vertx, secret, null);
    }

    /**
     * As above, the channel between nodes in mutual TLS when {@code tls} is given (then {@code secret} may be null:
     * the certificates authenticate the nodes, and the HMAC handshake inside TLS runs with a fixed key).
     */
    public static ClusterNode start(String nodeId, Engine engine, PostgresJournalFactory journals, String address,
                                    Vertx vertx, String secret, ClusterTls tls) {
        return start(nodeId, engine, journals, address, null, vertx, secret, tls);
    }

    /**
     * As above, the channel listening on {@code bind} (HOST or HOST:PORT; null: the cluster address's host and
     * port) while the other nodes reach this one at {@code address}.
     */
    public static ClusterNode start(String nodeId, Engine engine, PostgresJournalFactory journals, String address,
                                    String bind, Vertx vertx, String secret, ClusterTls tls) {
        ClusterNode node = new ClusterNode(nodeId, engine, journals, address);
        byte[] key = (secret != null ? secret : NO_SECRET).getBytes(StandardCharsets.UTF_8);
        ClusterTls.Options tlsOptions;
        try {
            tlsOptions = tls != null ? tls.load() : null;
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalStateException("Cannot use the cluster TLS files: " + e.getMessage(), e);
        }
        // the channel first: other nodes may carry operations here as soon as this node serves a shard
        node.server = new ClusterServer(vertx, engine, key, MAX_IN_FLIGHT,
                tlsOptions != null ? tlsOptions.server() : null);
        ListenAddress listen = ListenAddress.of(address, bind);
        listen.loopbackWarning().ifPresent(LOG::warn);
        try {
            node.server.listen(listen.host(), listen.port())
                    .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("Cannot listen on " + listen + (bind != null ? " (--cluster-bind)"
                    : " (the cluster address: its host must be one of this machine's addresses, or a name resolving "
                    + "to one; else give --cluster-bind)") + ": " + e, e);
        }
        node.client = new ClusterClient(vertx, node::addressOf, key, MAX_IN_FLIGHT,
                Duration.ofSeconds(10), tlsOptions != null ? tlsOptions.client() : null);
        if (tls != null) {
            node.watchTls(vertx, tls);
        }
        engine.cluster().remotePartitions(node.client);
        journals.takeWithoutWaiting(); // a shard whose lease another node renewed is tried again next round
        node.join(journals.lease().plus(ShardController.period(journals.lease()).multipliedBy(2)));
        node.round();
        long periodMs = ShardController.period(journals.lease()).toMillis();
        node.thread.scheduleWithFixedDelay(node::round, periodMs, periodMs, TimeUnit.MILLISECONDS);
        node.fence.scheduleWithFixedDelay(node.controller::fenceIfCutOff, periodMs, periodMs, TimeUnit.MILLISECONDS);
        LOG.info("Node '{}' joined the cluster at {}: serving shards {} of {}; live nodes {}", nodeId, address,
                node.servedShards(), engine.shardCount(), node.liveNodes());
        return node;
    }

    /** Re-reads the cluster TLS files when they change: new node connections use the new material. */
    private void watchTls(Vertx vertx, ClusterTls tls) {
        ClusterTls.Watch watch;
        try {
            watch = tls.watch((serverTls, clientTls) -> {
                server.updateTls(serverTls);
                client.updateTls(clientTls);
            });
        } catch (IOException e) {
            throw new IllegalStateException("Cannot watch the cluster TLS files: " + e.getMessage(), e);
        }
        vertx.setPeriodic(TLS_CHECK_MS, t -> vertx.executeBlocking(() -> watch.check()));
    }

    /**
     * Claims this node's id before the first round. A live process holding it (another node started with the same
     * {@code --node-id}) is waited for up to {@code patience}, so that a node restarted after {@code kill -9} gets
     * its id back once its old heartbeat has aged out, and a real duplicate is refused: the start fails with who
     * holds the id. A database that does not answer is left to the rounds.
     */
    private void join(Duration patience) {
        long deadline = System.nanoTime() + patience.toNanos();
        long retryMs = ShardController.period(patience).toMillis();
        boolean logged = false;
        while (true) {
            try {
                membership.heartbeat();
                return;
            } catch (JournalException e) {
                if (e.reason() != JournalException.Reason.LEASED) {
                    LOG.warn("Node '{}' could not join the cluster yet: {}", nodeId, e.toString());
                    return;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("Cannot join the cluster: " + e.getMessage(), e);
                }
                if (!logged) {
                    LOG.warn("{} Waiting up to {} ms for it to age out (a previous run of this node that was killed?)",
                            e.getMessage(), patience.toMillis());
                    logged = true;
                }
            }
            try {
                Thread.sleep(retryMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while joining the cluster", e);
            }
        }
    }

    private void round() {
        if (controller.cutOff()) {
            // the namespace's lock, which giving shards up takes too, is not held while waiting on a silent database
            problem = "This node is cut off from the database: its leases could not be renewed in time.";
        } else {
            try {
                engine.cluster().refreshNamespace();
                problem = null;
            } catch (RuntimeException e) {
                problem = "The cluster's namespace could not be read: " + e.getMessage();
                LOG.warn("{}", problem);
            }
        }
        controller.tick();
        refreshDirectory();
    }

    /** Who serves which shard now: the live leases, and the owners' addresses from the membership rows. */
    private void refreshDirectory() {
        try {
            Map<Integer, String> out = new HashMap<>();
            Map<String, String> byId = addresses;
            for (Map.Entry<Integer, String> e : shardOwners().entrySet()) {
                String at = byId.get(e.getValue());
                if (at != null) {
                    out.put(e.getKey(), at);
                }
            }
            shardAddresses = Map.copyOf(out);
        } catch (RuntimeException e) {
            LOG.debug("Could not refresh the shard directory: {}", e.toString());
        }
    }

    /** The cluster address of the node serving {@code shard}, or null (the operation then fails retriably). */
    private String addressOf(int shard) {
        return shardAddresses.get(shard);
    }

    public String nodeId() {
        return nodeId;
    }

    @Override
    public String node() {
        return nodeId;
    }

    /** Who serves which shard, from the leases in the database (empty when it does not answer). */
    @Override
    public Map<Integer, String> shardOwners() {
        Map<Integer, String> out = new HashMap<>();
        try {
            for (PostgresMembership.Lease l : membership.leases().values()) {
                if (l.live() && l.owner() != null && l.journal().startsWith("shard-")) {
                    out.put(Integer.parseInt(l.journal().substring("shard-".length())), l.owner());
                }
            }
        } catch (RuntimeException e) {
            LOG.debug("Could not read the shard owners: {}", e.toString());
        }
        return out;
    }

    /** The live nodes as of the last round. */
    @Override
    public List<String> liveNodes() {
        return controller.liveNodes();
    }

    /** The shards this node serves now. */
    public List<Integer> servedShards() {
        List<Integer> out = new ArrayList<>();
        for (int k = 0; k < engine.shardCount(); k++) {
            if (engine.cluster().servesShard(k)) {
                out.add(k);
            }
        }
        return out;
    }

    /** Shards taken or given up since start. */
    public long moves() {
        return controller.moves();
    }

    /** Problems for /health (empty when none). */
    public List<String> healthProblems() {
        String displaced = controller.displaced();
        if (displaced != null) {
            return List.of("This node serves nothing any more: " + displaced);
        }
        String p = problem;
        return p == null ? List.of() : List.of(p);
    }

    /** Leaves the cluster: every shard is given back at once (the others take them on their next round). */
    @Override
    public void close() {
        fence.shutdownNow();
        thread.shutdownNow();
        try {
            thread.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        controller.leave();
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
        membership.close();
        LOG.info("Node '{}' left the cluster", nodeId);
    }
}
