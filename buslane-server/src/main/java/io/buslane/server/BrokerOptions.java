package io.buslane.server;

import io.buslane.amqp.transport.AmqpLimits;
import io.buslane.amqp.transport.AmqpOptions;
import io.buslane.journal.postgres.PostgresOptions;

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
 *                       node-to-node channel)
 */
public record BrokerOptions(String host, int amqpPort, int httpPort, Path dataDir, Path configFile, int shards,
                            boolean syncEnabled, boolean inMemory, List<String> sasKeys,
                            boolean insecure, int maxConnections, AmqpLimits amqpLimits, int eventLoops,
                            PostgresOptions postgres, String clusterAddress,
                            String clusterSecret, HttpLimits httpLimits, Set<String> proxyProtocolFrom) {

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
        if (clusterAddress != null && (clusterSecret == null || clusterSecret.length() < 16)) {
            throw new IllegalArgumentException("--cluster-address needs --cluster-secret (or BUSLANE_CLUSTER_SECRET): "
                    + "the same secret of at least 16 characters on every node");
        }
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
                proxyProtocolFrom);
    }

    /** These options with the PROXY protocol on the AMQP ports from the balancers at {@code addresses}. */
    public BrokerOptions withProxyProtocolFrom(Set<String> addresses) {
        return new BrokerOptions(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys,
                insecure, maxConnections, amqpLimits, eventLoops, postgres, clusterAddress, clusterSecret, httpLimits,
                addresses);
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
                proxyProtocolFrom);
    }

    /**
     * These options as one node of a cluster, reachable by the other nodes at {@code address} (HOST:PORT), the
     * node-to-node channel authenticated with {@code secret}.
     */
    public BrokerOptions withCluster(String address, String secret) {
        return new BrokerOptions(host, amqpPort, httpPort, dataDir, configFile, shards, syncEnabled, inMemory, sasKeys,
                insecure, maxConnections, amqpLimits, eventLoops, postgres, address, secret, httpLimits,
                proxyProtocolFrom);
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
