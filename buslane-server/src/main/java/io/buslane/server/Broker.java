package io.buslane.server;

import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.amqp.transport.AmqpOptions;
import io.buslane.amqp.transport.AmqpServer;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.JournalFactory;
import io.buslane.server.cluster.ClusterNode;
import io.buslane.journal.file.FileJournalFactory;
import io.buslane.journal.file.FileJournalOptions;
import io.buslane.journal.file.SyncPolicy;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.journal.postgres.PostgresJournalFactory;
import io.buslane.management.HttpGuard;
import io.buslane.management.atom.AdminApi;
import io.buslane.management.console.ConsoleApi;
import io.buslane.management.rest.RestApi;
import io.buslane.server.config.ConfigLoader;
import io.buslane.server.config.Topology;
import io.buslane.server.ops.BrokerMetrics;
import io.buslane.server.ops.Health;
import io.buslane.server.ops.NamespaceOps;
import io.buslane.server.ops.OpsApi;
import io.buslane.server.ops.EventLoopWatchdog;
import io.buslane.server.tls.TlsMaterial;
import io.buslane.server.tls.TlsOptions;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A running broker: storage, engine, topology and listeners, wired together and shut down in reverse order.
 * Thread-safe to close from a shutdown hook.
 */
public final class Broker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Broker.class);
    /** An event loop that has not run a probe for this long is reported blocked. */
    private static final long WATCHDOG_THRESHOLD_MS = 3_000;
    private static final long WATCHDOG_PERIOD_MS = 500;
    /** How often the TLS certificate's files are looked at for a change. */
    private static final long TLS_CHECK_MS = 1_000;

    private final Storage storage;
    private final Engine engine;
    /** This broker as a cluster node, or null for a single broker. */
    private final ClusterNode cluster;
    private final Vertx vertx;
    private final HttpEndpoint http;
    private final AmqpServer amqp;
    private final Health health;
    private final ScheduledExecutorService watchdogThread;
    private volatile Runnable onFatal = () -> { };
    private volatile boolean closed;

    private Broker(Storage storage, Engine engine, ClusterNode cluster, Vertx vertx, HttpEndpoint http,
                   AmqpServer amqp, Health health, EventLoopWatchdog watchdog) {
        this.storage = storage;
        this.engine = engine;
        this.cluster = cluster;
        this.vertx = vertx;
        this.http = http;
        this.amqp = amqp;
        this.health = health;
        this.watchdogThread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "buslane-watchdog");
            t.setDaemon(true);
            return t;
        });
        watchdogThread.scheduleWithFixedDelay(watchdog::check, WATCHDOG_PERIOD_MS, WATCHDOG_PERIOD_MS,
                TimeUnit.MILLISECONDS);
    }

    /**
     * Runs {@code action} (once, on another thread) if an internal thread dies: {@code /health} already answers 503
     * then; the command line stops the process rather than leave it running half dead.
     */
    public void onFatal(Runnable action) {
        this.onFatal = action;
    }

    private void fatal(Throwable error) {
        LOG.error("Buslane cannot go on: {}", error.toString());
        Thread t = new Thread(onFatal, "buslane-fatal");
        t.setDaemon(true);
        t.start();
    }

    /** Starts a broker; fails (with nothing left running) if any part cannot start. */
    public static Broker start(BrokerOptions options) throws Exception {
        return start(options, TlsOptions.off());
    }

    /** Starts a broker with TLS listeners too (AMQPS, HTTPS with AMQP over WebSockets). */
    public static Broker start(BrokerOptions options, TlsOptions tls) throws Exception {
        long startNs = Clock.system().monotonicNanos();
        Topology topology = options.configFile() != null ? ConfigLoader.load(options.configFile())
                : ConfigLoader.starterTopology();
        Health health = new Health(Clock.system());
        BrokerMetrics metrics = new BrokerMetrics();
        JournalFactory journals;
        if (options.postgres() != null) {
            Files.createDirectories(options.postgres().cacheDir());
            journals = new PostgresJournalFactory(options.postgres());
            LOG.info("Storage: PostgreSQL at {} (node '{}', lease {} ms); {} keeps caches only",
                    options.postgres().describe(), options.postgres().nodeId(), options.postgres().lease().toMillis(),
                    options.postgres().cacheDir());
        } else if (options.inMemory()) {
            journals = new InMemoryJournalFactory();
            LOG.warn("Running in memory: nothing is kept across a restart.");
        } else {
            FileJournalOptions fileOptions = FileJournalOptions.defaults()
                    .withSyncPolicy(options.syncEnabled() ? SyncPolicy.ALWAYS : SyncPolicy.NONE);
            FileJournalFactory files = new FileJournalFactory(options.dataDir().toAbsolutePath(), fileOptions);
            files.syncListener(metrics.journalSyncListener());
            journals = files;
        }
        Storage storage = Storage.of(journals);
        Engine engine = null;
        ClusterNode cluster = null;
        Vertx vertx = null;
        try {
            // the HTTP port opens first: /health answers 503 (STARTING) while the journals are replayed
            AmqpOptions amqpOptions = amqpOptions(options);
            // one event loop for HTTP, one per AMQP listener: a stuck connection cannot stop /health or the others
            vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(eventLoops(amqpOptions, tls)));
            HttpEndpoint http = HttpEndpoint.start(vertx, options.host(), options.httpPort(), health::report,
                    options.httpLimits(), Clock.system());
            EngineConfig engineConfig = new EngineConfig(Clock.system(), storage, options.shards(),
                    ThreadingMode.DEDICATED);
            engine = options.clusterAddress() != null ? Engine.startClusterNode(engineConfig)
                    : Engine.start(engineConfig);
            if (options.clusterAddress() != null) {
                cluster = ClusterNode.start(options.postgres().nodeId(), engine,
                        (PostgresJournalFactory) journals, options.clusterAddress(), options.clusterBind(), vertx,
                        options.clusterSecret(), options.clusterTls());
                health.addCheck(cluster::healthProblems);
                health.cluster(cluster);
                metrics.bindCluster(cluster);
            }
            Engine running = engine;
            health.addCheck(() -> running.shards().fatalError() == null ? List.of()
                    : List.of("A shard thread stopped: " + running.shards().fatalError()));
            health.addCheck(storage::healthProblems);
            metrics.bindEngine(engine);
            TopologyApplier.apply(engine, topology);
            CbsAuthorizer authorizer = authorizer(options);
            authorizer.validator().entityRules(new EntitySasRules(engine));
            Engine managed = engine;
            ClusterNode clusterView = cluster;
            NamespaceOps ops = new NamespaceOps(managed, () -> TopologyApplier.apply(managed, topology));
            http.mount(router -> {
                // one guard for the router's APIs: they share its failed-authentication throttle
                HttpGuard guard = HttpGuard.install(router, Clock.system());
                OpsApi.mount(router, guard, metrics, ops, authorizer.validator(), Clock.system());
                RestApi.mount(router, guard, managed, authorizer.validator(), Clock.system());
                AdminApi.mount(router, guard, managed, authorizer.validator(), Clock.system());
                ConsoleApi.mount(router, guard, managed, authorizer.validator(), Clock.system(), clusterView);
            });
            AmqpServer amqp = AmqpServer.start(vertx, engine, Clock.system(), authorizer, amqpOptions,
                    http.context());
            metrics.bindAmqp(amqp.stats(), amqp::connectionCount);
            if (tls.enabled()) {
                startTls(vertx, options.host(), tls, amqp, http, metrics);
            }
            EventLoopWatchdog watchdog = new EventLoopWatchdog(Clock.system(), WATCHDOG_THRESHOLD_MS);
            watchdog.watch("http", http.context());
            int loop = 0;
            for (Context c : amqp.contexts()) {
                watchdog.watch("amqp-" + loop++, c);
            }
            health.addCheck(() -> watchdog.blockedLoops().stream()
                    .map(name -> "Event loop " + name + " is not answering.").toList());
            metrics.bindWatchdog(watchdog);
            Broker broker = new Broker(storage, engine, cluster, vertx, http, amqp, health, watchdog);
            engine.shards().onFatal(broker::fatal);
            health.ready(engine, amqp.port(), http.port());
            LOG.info("Buslane ready in {} ms: AMQP on {}:{}, HTTP on {}:{}, data {}",
                    (Clock.system().monotonicNanos() - startNs) / 1_000_000, options.host(), amqp.port(),
                    options.host(), http.port(), options.inMemory() ? "in memory"
                            : options.postgres() != null ? "in PostgreSQL " + options.postgres().describe()
                            : options.dataDir().toAbsolutePath());
            return broker;
        } catch (Exception | Error e) {
            if (vertx != null) {
                vertx.close();
            }
            if (cluster != null) {
                cluster.close();
            }
            if (engine != null) {
                engine.close();
            }
            storage.close();
            throw e;
        }
    }

    /** Opens the TLS listeners and re-reads the certificate when its files change. */
    private static void startTls(Vertx vertx, String host, TlsOptions tls, AmqpServer amqp, HttpEndpoint http,
                                 BrokerMetrics metrics) throws Exception {
        TlsMaterial material = TlsMaterial.load(vertx, tls);
        metrics.bindTlsCertificate(material::notAfterMs);
        if (tls.amqpsPort() >= 0) {
            amqp.listenTls(tls.amqpsPort(), material.sslOptions());
            material.onChange(amqp::updateTls);
        }
        if (tls.httpsPort() >= 0) {
            http.listenTls(host, tls.httpsPort(), material.sslOptions(), amqp::acceptWebSocket);
            material.onChange(http::updateTls);
            LOG.info("HTTPS listening on {}:{} (admin API, REST, console; AMQP over WebSockets at {})", host,
                    http.tlsPort(), HttpEndpoint.WEBSOCKET_PATH);
        }
        vertx.setPeriodic(TLS_CHECK_MS, t -> vertx.executeBlocking(() -> {
            material.checkForChange();
            return null;
        }));
    }

    /**
     * A loop for HTTP, one per AMQP listener, and with TLS one per AMQPS listener and one for HTTPS: the listeners
     * keep off the HTTP loop, so /health answers whatever clients do (docs/limits.md#event-loops).
     */
    private static int eventLoops(AmqpOptions amqp, TlsOptions tls) {
        return 1 + amqp.eventLoops() + (tls.amqpsPort() >= 0 ? amqp.eventLoops() : 0) + (tls.httpsPort() >= 0 ? 1 : 0);
    }

    private static AmqpOptions amqpOptions(BrokerOptions options) {
        AmqpOptions d = AmqpOptions.defaults(options.host(), options.amqpPort());
        return new AmqpOptions(d.host(), d.port(), d.maxFrameSize(), d.idleTimeoutMs(), options.maxConnections(),
                d.requireAuth(), options.amqpLimits(), options.eventLoops(), options.proxyProtocolFrom());
    }

    private static CbsAuthorizer authorizer(BrokerOptions options) {
        if (options.insecure()) {
            LOG.warn("SAS validation is off (--insecure): any token is accepted.");
            return new CbsAuthorizer(SasValidator.acceptAll());
        }
        if (options.sasKeys().isEmpty()) {
            return new CbsAuthorizer(SasValidator.emulatorDefault());
        }
        List<SasRule> rules = new ArrayList<>();
        for (String spec : options.sasKeys()) {
            rules.add(SasRule.parseSpec(spec));
        }
        return new CbsAuthorizer(new SasValidator(rules));
    }

    public int amqpPort() {
        return amqp.port();
    }

    public Engine engine() {
        return engine;
    }

    /** This broker as a cluster node, or null. */
    public ClusterNode cluster() {
        return cluster;
    }

    /** The AMQP listeners' event loops (tests). */
    List<Context> amqpContexts() {
        return amqp.contexts();
    }

    /** The AMQPS listeners' event loops (tests). */
    List<Context> amqpsContexts() {
        return amqp.tlsContexts();
    }

    /** The HTTP port's event loop, and the HTTPS port's or null (tests). */
    Context httpContext() {
        return http.context();
    }

    Context httpsContext() {
        return http.tlsContext();
    }

    /** Connections the HTTPS port counts against its cap now (tests). */
    int httpsTrackedConnections() throws Exception {
        return http.tlsTrackedConnections();
    }

    public int httpPort() {
        return http.port();
    }

    /** The AMQPS port, -1 if it is off. */
    public int amqpsPort() {
        return amqp.tlsPort();
    }

    /** The HTTPS port, -1 if it is off. */
    public int httpsPort() {
        return http.tlsPort();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        health.stopping();
        watchdogThread.shutdownNow();
        amqp.close();
        http.close();
        if (cluster != null) {
            cluster.close(); // gives the shards back at once; its node-to-node channel runs on Vert.x
        }
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        } catch (Exception e) {
            LOG.warn("Vert.x did not close cleanly", e);
        }
        engine.close();
        storage.close();
        LOG.info("Buslane stopped.");
    }
}
