package io.buslane.server;

import io.buslane.amqp.transport.AmqpLimits;
import io.buslane.amqp.transport.AmqpOptions;
import io.buslane.journal.postgres.PostgresOptions;
import io.buslane.server.config.ConfigException;
import io.buslane.server.tls.ClusterTls;
import io.buslane.server.tls.TlsMaterial;
import io.buslane.server.tls.TlsOptions;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** The {@code buslane} command: runs the broker in the foreground until it is stopped. */
@Command(name = "buslane", mixinStandardHelpOptions = true, version = "Buslane 0.1.0",
        description = "An Azure Service Bus-compatible message broker.")
public final class Main implements Callable<Integer> {

    /** The exit status after an internal thread died (EX_SOFTWARE). */
    static final int EXIT_FATAL = 70;
    /** Printed to stdout once the broker is ready, as Microsoft's emulator does (Testcontainers waits for it). */
    static final String READY_LINE = "Emulator Service is Successfully Up!";
    /** Where Microsoft's emulator image reads its Config.json. */
    static final String EMULATOR_CONFIG_DIR = "/ServiceBus_Emulator/ConfigFiles";
    private static final int DEFAULT_HTTP_PORT = 5300;

    @Option(names = "--amqp-port", defaultValue = "5672",
            description = "Plain AMQP port (default: ${DEFAULT-VALUE}; -1: off).")
    int amqpPort;

    @Option(names = "--amqps-port", defaultValue = "${env:BUSLANE_AMQPS_PORT}",
            description = "AMQPS (AMQP over TLS) port, 5671 as the service; default: BUSLANE_AMQPS_PORT, else off. "
                    + "See docs/tls.md.")
    Integer amqpsPort;

    @Option(names = "--https-port", defaultValue = "${env:BUSLANE_HTTPS_PORT}",
            description = "HTTPS port, 443 as the service: the HTTP port's routes and AMQP over WebSockets; default: "
                    + "BUSLANE_HTTPS_PORT, else off.")
    Integer httpsPort;

    @Option(names = "--tls-cert", defaultValue = "${env:BUSLANE_TLS_CERT}",
            description = "PEM certificate chain for AMQPS and HTTPS, re-read when it changes (default: "
                    + "BUSLANE_TLS_CERT; unset: a self-signed certificate for localhost in --data-dir).")
    Path tlsCert;

    @Option(names = "--tls-key", defaultValue = "${env:BUSLANE_TLS_KEY}",
            description = "PEM private key of --tls-cert (default: BUSLANE_TLS_KEY).")
    Path tlsKey;

    @Option(names = "--http-port", description = "HTTP port for health, admin API and console (default: the "
            + "EMULATOR_HTTP_PORT environment variable as in Microsoft's emulator image, else 5300); -1 turns plain "
            + "HTTP off when --https-port is on.")
    Integer httpPort;

    @Option(names = "--host", defaultValue = "0.0.0.0", description = "Address to bind (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--data-dir", defaultValue = "data",
            description = "Data directory for the durable journal (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--config", description = "A Config.json in the Service Bus emulator's schema (default: "
            + "/ServiceBus_Emulator/ConfigFiles/Config.json when it exists, as in Microsoft's emulator image; the "
            + "directory is BUSLANE_EMULATOR_CONFIG_DIR if set; else the starter topology).")
    Path config;

    @Option(names = "--shards", defaultValue = "2",
            description = "Single-writer shards for a new data directory (default: ${DEFAULT-VALUE}).")
    int shards;

    @Option(names = "--sync", defaultValue = "always",
            description = "Journal sync policy: always (default) or none (not durable; for benchmarks).")
    String sync;

    @Option(names = "--storage", defaultValue = "${env:BUSLANE_STORAGE}",
            description = "Keep the namespace in PostgreSQL instead of --data-dir: postgresql://USER:PASSWORD@HOST:PORT"
                    + "/DATABASE[?PARAMS] (default: the BUSLANE_STORAGE environment variable, so that a password "
                    + "need not be on a command line; unset: files in --data-dir). See docs/postgresql.md.")
    String storage;

    @Option(names = "--node-id", description = "This broker's name in the database's ownership rows (default: "
            + "HOSTNAME:AMQP-PORT). A broker restarted under the same name takes its shards back at once.")
    String nodeId;

    @Option(names = "--lease-seconds", description = "With --storage: how long a shard stays this broker's without "
            + "renewal; another broker may take it over after that (default: 30, or 5 with --cluster-address: a "
            + "dead node's shards are served again after about one lease).")
    Double leaseSeconds;

    @Option(names = "--cluster-address", description = "With --storage: join the cluster of the brokers on that "
            + "database as node --node-id; HOST:PORT is where the other nodes reach this one. See docs/cluster.md.")
    String clusterAddress;

    @Option(names = "--cluster-bind", description = "With --cluster-address: where the channel between nodes "
            + "listens, HOST or HOST:PORT, when the other nodes reach this one at an address that is not its own "
            + "(NAT, a service address; default: the host and port of --cluster-address). 0.0.0.0 listens on every "
            + "interface.")
    String clusterBind;

    @Option(names = "--cluster-secret", defaultValue = "${env:BUSLANE_CLUSTER_SECRET}", description = "With "
            + "--cluster-address: the secret every node shares (at least 32 bytes, e.g. openssl rand -hex 32), "
            + "authenticating the channel between nodes; optional with --cluster-tls-* (default: the "
            + "BUSLANE_CLUSTER_SECRET environment variable).")
    String clusterSecret;

    @Option(names = "--cluster-tls-cert", defaultValue = "${env:BUSLANE_CLUSTER_TLS_CERT}", description = "With "
            + "--cluster-address: PEM certificate chain of this node for mutual TLS between the nodes; it must name "
            + "the host of --cluster-address (default: BUSLANE_CLUSTER_TLS_CERT). Re-read when it changes.")
    Path clusterTlsCert;

    @Option(names = "--cluster-tls-key", defaultValue = "${env:BUSLANE_CLUSTER_TLS_KEY}",
            description = "PEM private key of --cluster-tls-cert (default: BUSLANE_CLUSTER_TLS_KEY).")
    Path clusterTlsKey;

    @Option(names = "--cluster-tls-ca", defaultValue = "${env:BUSLANE_CLUSTER_TLS_CA}", description = "PEM "
            + "certificate(s) of the CA that signs every node's --cluster-tls-cert: the only CA trusted between the "
            + "nodes (default: BUSLANE_CLUSTER_TLS_CA).")
    Path clusterTlsCa;

    @Option(names = "--in-memory", description = "Keep nothing on disk (not durable).")
    boolean inMemory;

    @Option(names = "--sas-key", description = "A SAS rule NAME=KEY with all rights, or NAME:RIGHTS=KEY with chosen "
            + "rights (Manage, Send, Listen, comma-separated); repeatable. Default: the "
            + "emulator's RootManageSharedAccessKey=SAS_KEY_VALUE.")
    List<String> sasKeys;

    @Option(names = "--insecure", description = "Accept any SAS token without validating it.")
    boolean insecure;

    @Option(names = "--max-connections",
            description = "AMQP connections accepted at once (default: one per MiB of heap, 100 to 10000).")
    Integer maxConnections;

    @Option(names = "--proxy-protocol-from", split = ",", paramLabel = "ADDRESS",
            description = "IP addresses of TCP balancers that send the PROXY protocol header (HAProxy send-proxy or "
                    + "send-proxy-v2): the AMQP and AMQPS ports then take connections from them only, and count and "
                    + "log the client's address the header carries.")
    List<String> proxyProtocolFrom;

    @Option(names = "--http-max-connections", defaultValue = "1000",
            description = "HTTP connections accepted at once, and as many again on HTTPS (default: ${DEFAULT-VALUE}).")
    int httpMaxConnections;

    @Option(names = "--http-idle-timeout", defaultValue = "30",
            description = "Seconds an HTTP connection may go without a request in flight, since it opened or its last "
                    + "response; a request's headers must arrive within it (default: ${DEFAULT-VALUE}).")
    long httpIdleTimeoutSeconds;

    @Option(names = "--event-loops", description = "Event loops for AMQP connections (default: one per core, "
            + "at least 2; HTTP has one of its own).")
    Integer eventLoops;

    @Option(names = "--handshake-timeout", defaultValue = "10",
            description = "Seconds a connection has to finish its protocol headers, SASL and open "
                    + "(default: ${DEFAULT-VALUE}).")
    long handshakeTimeoutSeconds;

    @Option(names = "--auth-timeout", defaultValue = "20",
            description = "Seconds a connection has to put a valid token (or authenticate with SASL PLAIN) "
                    + "(default: ${DEFAULT-VALUE}, as the service).")
    long authTimeoutSeconds;

    @Option(names = "--max-sessions-per-connection", defaultValue = "1024",
            description = "AMQP sessions one connection may have open (default: ${DEFAULT-VALUE}).")
    int maxSessions;

    @Option(names = "--max-links-per-connection", defaultValue = "4096",
            description = "AMQP links one connection may have attached, over all its sessions "
                    + "(default: ${DEFAULT-VALUE}; at most 1024 per session).")
    int maxLinks;

    @Option(names = "--max-connection-buffer-mb", defaultValue = "128",
            description = "MiB of unfinished (multi-frame) messages one connection may have in flight "
                    + "(default: ${DEFAULT-VALUE}).")
    long maxBufferMb;

    @Option(names = "--max-preauth-buffer-kb", defaultValue = "64",
            description = "KiB of unfinished messages a connection may have in flight before it authenticates "
                    + "(default: ${DEFAULT-VALUE}).")
    long maxPreAuthBufferKb;

    /** The environment the defaults are read from (tests replace it). */
    Map<String, String> env = System.getenv();

    /** Where the ready line goes (tests replace it). */
    PrintStream out = System.out;

    @Override
    public Integer call() throws Exception {
        Broker broker;
        try {
            broker = start();
        } catch (IllegalStateException e) {
            System.err.println(e.getMessage()); // e.g. the database cannot be reached, or its schema is newer
            return 1;
        }
        if (broker == null) {
            return 2;
        }
        // a dead internal thread: /health answers 503 and the process stops (the shutdown hook closes the broker)
        broker.onFatal(() -> System.exit(EXIT_FATAL));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            broker.close();
            stopped.countDown();
        }, "buslane-shutdown"));
        stopped.await();
        return 0;
    }

    /** --http-port, else EMULATOR_HTTP_PORT (as Microsoft's emulator image reads it), else 5300. */
    int effectiveHttpPort() {
        if (httpPort != null) {
            return httpPort;
        }
        String fromEnv = env.get("EMULATOR_HTTP_PORT");
        if (fromEnv != null && !fromEnv.isBlank()) {
            try {
                return Integer.parseInt(fromEnv.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("EMULATOR_HTTP_PORT must be a port number, was '" + fromEnv + "'");
            }
        }
        return DEFAULT_HTTP_PORT;
    }

    /**
     * --config, else the emulator's {@code /ServiceBus_Emulator/ConfigFiles/Config.json} (the directory overridable
     * with BUSLANE_EMULATOR_CONFIG_DIR) when it is a file, or a directory holding a Config.json (a directory mounted
     * at that path); else null (the starter topology).
     */
    Path effectiveConfig() {
        if (config != null) {
            return config;
        }
        String dir = env.get("BUSLANE_EMULATOR_CONFIG_DIR");
        Path candidate = Path.of(dir != null && !dir.isBlank() ? dir : EMULATOR_CONFIG_DIR, "Config.json");
        if (Files.isRegularFile(candidate)) {
            return candidate;
        }
        if (Files.isRegularFile(candidate.resolve("Config.json"))) {
            return candidate.resolve("Config.json");
        }
        return null;
    }

    /**
     * Starts the broker as the options say and prints {@link #READY_LINE} once it is ready ({@code /health} answers
     * 200 by then); null (after printing why) if the options or the configuration are wrong.
     */
    Broker start() throws Exception {
        if (!sync.equals("always") && !sync.equals("none")) {
            System.err.println("--sync must be 'always' or 'none', was '" + sync + "'");
            return null;
        }
        AmqpLimits d = AmqpLimits.defaults();
        BrokerOptions options;
        try {
            AmqpLimits limits = new AmqpLimits(handshakeTimeoutSeconds * 1000, authTimeoutSeconds * 1000,
                    maxSessions, Math.min(1024, maxLinks), maxLinks, maxBufferMb << 20, maxPreAuthBufferKb << 10,
                    d.maxDispositionRange(), d.maxNestingDepth());
            options = new BrokerOptions(host, amqpPort, effectiveHttpPort(), dataDir, effectiveConfig(), shards,
                    sync.equals("always"), inMemory, sasKeys, insecure,
                    maxConnections != null ? maxConnections : BrokerOptions.defaultMaxConnections(), limits,
                    eventLoops != null ? eventLoops : AmqpOptions.defaultEventLoops());
            if (storage != null && !storage.isBlank()) {
                double lease = leaseSeconds != null ? leaseSeconds : clusterAddress != null ? 5 : 30;
                options = options.withPostgres(PostgresOptions.parse(storage,
                        nodeId != null ? nodeId : defaultNodeId(amqpPort),
                        Duration.ofMillis((long) (lease * 1000)), dataDir.toAbsolutePath()));
            }
            ClusterTls clusterTls = clusterTls();
            if (clusterAddress != null || clusterTls != null) {
                options = options.withCluster(clusterAddress, clusterSecret, clusterTls);
            }
            if (clusterBind != null) {
                options = options.withClusterBind(clusterBind);
            }
            options = options.withHttpLimits(new HttpLimits(httpMaxConnections, httpIdleTimeoutSeconds * 1000));
            if (proxyProtocolFrom != null) {
                options = options.withProxyProtocolFrom(new HashSet<>(proxyProtocolFrom));
            }
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return null;
        }
        TlsOptions tls;
        try {
            tls = tlsOptions();
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return null;
        }
        Broker broker;
        try {
            broker = Broker.start(options, tls);
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            return null;
        }
        // Broker.start returns once /health answers 200; Testcontainers' emulator modules wait for this line
        out.println(READY_LINE);
        out.flush();
        return broker;
    }

    /** The TLS listeners the options ask for. */
    TlsOptions tlsOptions() {
        TlsOptions tls = new TlsOptions(amqpsPort != null ? amqpsPort : -1, httpsPort != null ? httpsPort : -1,
                tlsCert, tlsKey, dataDir.resolve("tls"));
        if (tlsCert != null && !tls.enabled()) {
            throw new IllegalArgumentException("--tls-cert needs --amqps-port and/or --https-port");
        }
        if (effectiveHttpPort() < 0 && tls.httpsPort() < 0) {
            throw new IllegalArgumentException("--http-port -1 turns plain HTTP off only when --https-port serves "
                    + "its routes (health, admin API, console)");
        }
        return tls;
    }

    /** HOSTNAME:AMQP-PORT: stable across restarts of one broker, different for two brokers of one host. */
    /** The three cluster TLS files, all or none; null when none is given. */
    private ClusterTls clusterTls() {
        int given = (clusterTlsCert != null ? 1 : 0) + (clusterTlsKey != null ? 1 : 0) + (clusterTlsCa != null ? 1 : 0);
        if (given == 0) {
            return null;
        }
        if (given < 3) {
            throw new IllegalArgumentException("--cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca go "
                    + "together (mutual TLS between the nodes needs this node's certificate, its key and the cluster "
                    + "CA)");
        }
        return new ClusterTls(clusterTlsCert, clusterTlsKey, clusterTlsCa);
    }

    static String defaultNodeId(int amqpPort) {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "localhost";
        }
        return host + ":" + amqpPort;
    }

    public static void main(String[] args) {
        TlsMaterial.refuseClientRenegotiation(); // before any TLS handshake of the process
        int code = new CommandLine(new Main()).execute(args);
        if (code != 0) {
            System.exit(code);
        }
    }
}
