package io.buslane.server;

import io.buslane.amqp.transport.AmqpLimits;
import io.buslane.amqp.transport.AmqpOptions;
import io.buslane.journal.postgres.PostgresOptions;
import io.buslane.server.cluster.ListenAddress;
import io.buslane.server.tls.ClusterTls;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * Everything a broker is started with, validated once. Immutable.
 *
 * @param host        the address the listeners bind to
 * @param amqpPort    AMQP port (0 picks a free one)
 * @param httpPort    HTTP port for health, admin and console (0 picks a free one)
 * @param dataDir     the data directory (journals); ignored when {@code inMemory}
 * @param configFile  a Config.json in the emulator's schema, or null for the starter topology
 * @param shards      number of shards for a new data directory
 * @param syncEnabled whether journal writes are forced to disk before acknowledgement (default true)
 * @param inMemory    keep nothing across restarts (tests and throw-away runs)
 * @param sasKeys     SAS rules as {@code name=key} (all rights); empty for the emulator's well-known key
 * @param insecure    accept any token (no SAS validation)
 * @param maxConnections AMQP connections accepted at once
 * @param amqpLimits     what one AMQP connection may hold or take (sessions, links, buffered bytes, time to
 *                       authenticate)
 * @param eventLoops     event loops the AMQP connections are spread over
 * @param postgres       where to keep the journals in PostgreSQL instead of files in {@code dataDir} (null: files)
 * @param clusterAddress with {@code postgres}: join the cluster of the nodes on that database, reachable by the
 *                       others at this HOST:PORT (null: a single broker)
 * @param clusterSecret  with {@code clusterAddress}: the secret every node of the cluster shares (authenticates the
 *                       node-to-node channel; at least {@value #MIN_CLUSTER_SECRET_BYTES} bytes; optional with
 *                       {@code clusterTls})
 * @param httpLimits     what one HTTP request may take
 * @param proxyProtocolFrom the balancers whose PROXY protocol headers the AMQP ports accept
 * @param clusterTls     with {@code clusterAddress}: mutual TLS on the node-to-node channel (null: plain TCP)
 * @param clusterBind    with {@code clusterAddress}: where the node-to-node channel listens, HOST or HOST:PORT, when
 *                       that is not the cluster address (behind NAT or a service address; null: the cluster
 *                       address's host and port)
 */
public record BrokerOptions(String host, int amqpPort, int httpPort, Path dataDir, Path configFile, int shards,
                            boolean syncEnabled, boolean inMemory, List<String> sasKeys,
                            boolean insecure, int maxConnections, AmqpLimits amqpLimits, int eventLoops,
                            PostgresOptions postgres, String clusterAddress,
                            String clusterSecret, HttpLimits httpLimits, Set<String> proxyProtocolFrom,
                            ClusterTls clusterTls, String clusterBind) {

    /** The shortest cluster secret accepted, in UTF-8 bytes (32 random bytes, e.g. {@code openssl rand -hex 32}). */
    public static final int MIN_CLUSTER_SECRET_BYTES = 32;

    public BrokerOptions {
        sasKeys = sasKeys == null ? List.of() : List.copyOf(sasKeys);
        httpLimits = httpLimits == null ? HttpLimits.DEFAULTS : httpLimits;
        proxyProtocolFrom = proxyProtocolFrom == null ? Set.of() : Set.copyOf(proxyProtocolFrom);
        if (maxConnections < 1) {
            throw new IllegalArgumentException("--max-connections must be at least 1, was " + maxConnections);
        }
        if (eventLoops < 1) {
            throw new IllegalArgumentException("--event-loops must be at least 1, was " + eventLoops);
        }
        if (postgres != null && inMemory) {
            throw new IllegalArgumentException("--storage and --in-memory exclude each other");
        }
        if (clusterAddress != null && postgres == null) {
            throw new IllegalArgumentException("--cluster-address needs --storage (the cluster's database)");
        }
        if (clusterTls != null && clusterAddress == null) {
            throw new IllegalArgumentException("--cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca need "
                    + "--cluster-address");
        }
        if (clusterAddress != null && clusterTls == null && clusterSecret == null) {
            throw new IllegalArgumentException("--cluster-address needs --cluster-tls-cert, --cluster-tls-key and "
                    + "--cluster-tls-ca (mutual TLS between the nodes), or --cluster-secret (or BUSLANE_CLUSTER_SECRET)"
                    + ": the same secret of at least " + MIN_CLUSTER_SECRET_BYTES + " bytes on every node");
        }
        if (clusterAddress != null && clusterSecret != null
                && clusterSecret.getBytes(StandardCharsets.UTF_8).length < MIN_CLUSTER_SECRET_BYTES) {
            throw new IllegalArgumentException("--cluster-secret must be at least " + MIN_CLUSTER_SECRET_BYTES
                    + " bytes (random ones: openssl rand -hex 32); this one has "
                    + clusterSecret.getBytes(StandardCharsets.UTF_8).length);
        }
        if (clusterBind != null && clusterAddress == null) {
            throw new IllegalArgumentException("--cluster-bind needs --cluster-address");
        }
        if (clusterAddress != null) {
            ListenAddress.of(clusterAddress, clusterBind); // both well-formed, or a message naming the option
        }
    }

    /** Options whose node channel listens on the cluster address. */
    public BrokerOptions(String host, int amqpPort, int httpPort, Path dataDir, Path configFile, int shards,
                         boolean syncEnabled, boolean inMemory, List<String> sasKeys,
                         boolean insecure, int maxConnections, AmqpLimits amqpLimits, int eventLoops,
                         PostgresOptions postgres, String clusterAddress,
                         String clusterSecret, HttpLimits httpLimits, Set<String> proxyProtocolFrom,
                         ClusterTls clusterTls) {
        this(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys, insecure,
                maxConnections, amqpLimits, eventLoops, postgres, clusterAddress, clusterSecret, httpLimits,
                proxyProtocolFrom, clusterTls, null);
    }

    /** Options without TLS between cluster nodes. */
    public BrokerOptions(String host, int amqpPort, int httpPort, Path dataDir, Path configFile, int shards,
                         boolean syncEnabled, boolean inMemory, List<String> sasKeys,
                         boolean insecure, int maxConnections, AmqpLimits amqpLimits, int eventLoops,
                         PostgresOptions postgres, String clusterAddress,
                         String clusterSecret, HttpLimits httpLimits, Set<String> proxyProtocolFrom) {
        this(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys, insecure,
                maxConnections, amqpLimits, eventLoops, postgres, clusterAddress, clusterSecret, httpLimits,
                proxyProtocolFrom, null);
    }

    /** Options with the default HTTP limits. */
    public BrokerOptions(String host, int amqpPort, int httpPort, Path dataDir, Path configFile, int shards,
                         boolean syncEnabled, boolean inMemory, List<String> sasKeys, boolean insecure,
                         int maxConnections, AmqpLimits amqpLimits, int eventLoops,
                         PostgresOptions postgres, String clusterAddress,
                         String clusterSecret) {
        this(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys, insecure,
                maxConnections, amqpLimits, eventLoops, postgres, clusterAddress, clusterSecret, null, null);
    }

    /** These options with other HTTP limits. */
    public BrokerOptions withHttpLimits(HttpLimits limits) {
        return new BrokerOptions(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys,
                insecure, maxConnections, amqpLimits, eventLoops, postgres, clusterAddress, clusterSecret, limits,
                proxyProtocolFrom, clusterTls, clusterBind);
    }

    /** These options with the PROXY protocol on the AMQP ports from the balancers at {@code addresses}. */
    public BrokerOptions withProxyProtocolFrom(Set<String> addresses) {
        return new BrokerOptions(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys,
                insecure, maxConnections, amqpLimits, eventLoops, postgres, clusterAddress, clusterSecret, httpLimits,
                addresses, clusterTls, clusterBind);
    }

    /** Options that keep the journals in files (or in memory). */
    public BrokerOptions(String host, int amqpPort, int httpPort, Path dataDir, Path configFile, int shards,
                         boolean syncEnabled, boolean inMemory, List<String> sasKeys, boolean insecure,
                         int maxConnections, AmqpLimits amqpLimits, int eventLoops) {
        this(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys, insecure,
                maxConnections, amqpLimits, eventLoops, null, null, null);
    }

    /** These options with the journals in PostgreSQL. */
    public BrokerOptions withPostgres(PostgresOptions options) {
        return new BrokerOptions(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys,
                insecure, maxConnections, amqpLimits, eventLoops, options, clusterAddress, clusterSecret, httpLimits,
                proxyProtocolFrom, clusterTls, clusterBind);
    }

    /**
     * These options as one node of a cluster, reachable by the other nodes at {@code address} (HOST:PORT), the
     * node-to-node channel authenticated with {@code secret}.
     */
    public BrokerOptions withCluster(String address, String secret) {
        return new BrokerOptions(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys,
                insecure, maxConnections, amqpLimits, eventLoops, postgres, address, secret, httpLimits,
                proxyProtocolFrom, clusterTls, clusterBind);
    }

    /**
     * These options as one node of a cluster, reachable by the other nodes at {@code address} (HOST:PORT), the
     * node-to-node channel in mutual TLS ({@code tls}, null: plain TCP) and authenticated with {@code secret}
     * (optional with TLS).
     */
    public BrokerOptions withCluster(String address, String secret, ClusterTls tls) {
        return new BrokerOptions(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys,
                insecure, maxConnections, amqpLimits, eventLoops, postgres, address, secret, httpLimits,
                proxyProtocolFrom, tls, clusterBind);
    }

    /**
     * These options with the node channel listening on {@code bind} (HOST or HOST:PORT; null: on the cluster
     * address) while the other nodes still reach this one at the cluster address.
     */
    public BrokerOptions withClusterBind(String bind) {
        return new BrokerOptions(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys,
                insecure, maxConnections, amqpLimits, eventLoops, postgres, clusterAddress, clusterSecret, httpLimits,
                proxyProtocolFrom, clusterTls, bind);
    }

    /** Options with the default connection limits and event loops. */
    public BrokerOptions(String host, int amqpPort, int httpPort, Path dataDir, Path configFile, int shards,
                         boolean syncEnabled, boolean inMemory, List<String> sasKeys, boolean insecure,
                         int maxConnections) {
        this(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys, insecure,
                maxConnections, AmqpLimits.defaults(), AmqpOptions.defaultEventLoops());
    }

    public static BrokerOptions defaults() {
        return new BrokerOptions("0.0.0.0", 5672, 5300, Path.of("data"), null, 2, true, false, null, false,
                defaultMaxConnections());
    }

    /**
     * The default connection cap, sized to the heap: one connection per MiB of maximum heap (an active connection
     * holds about 0.6 MiB of buffers while it reads and writes, an idle one about 45 KB), at least 100, at most
     * 10,000.
     */
    public static int defaultMaxConnections() {
        long perMiB = Runtime.getRuntime().maxMemory() / (1 << 20);
        return (int) Math.max(100, Math.min(10_000, perMiB));
    }
}
