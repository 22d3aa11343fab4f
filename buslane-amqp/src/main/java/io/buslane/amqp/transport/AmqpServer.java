package io.buslane.amqp.transport;

import io.buslane.common.auth.AuthFailureThrottle;
import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.amqp.mgmt.ManagementProcessor;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.core.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The AMQP 1.0 listener, spread over {@link AmqpOptions#eventLoops()} event loops: one listener per loop shares the
 * port (Vert.x hands accepted sockets to them in turn), and each accepted socket becomes an {@link AmqpConnection}
 * confined to its listener's loop. A slow or misbehaving client holds up at most the connections of its own loop,
 * never the HTTP port (which has a loop of its own) nor the other loops.
 *
 * <p>Design note: the frames are handled by proton-j directly rather than through vertx-proton, because
 * vertx-proton decodes every transfer with proton-j's {@code MessageImpl}, which keeps only the first body
 * section: Service Bus batches (message format {@code 0x80013700}, one {@code data} section per message) would
 * lose all but their first message. Owning the pump also gives direct control over SASL (MSSBCBS, skipping SASL),
 * delivery tags and dispositions.
 *
 * <p>The same listeners can also accept TLS (AMQPS, {@link #listenTls}), and {@link #acceptWebSocket} runs an AMQP
 * connection over a WebSocket the HTTPS port upgraded: the same {@link AmqpConnection}, fed from the WebSocket's
 * binary frames, so SASL, CBS, links and the {@link FrameGuard} limits are those of the TCP port.
 */
public final class AmqpServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AmqpServer.class);
    /** How often each loop drops the proton-j buffers of connections that were quiet since the last sweep. */
    private static final long SWEEP_MS = 1_000;

    private final Vertx vertx;
    private final Engine engine;
    private final Clock clock;
    private final CbsAuthorizer authorizer;
    private final AmqpOptions options;
    private final ManagementProcessor management;
    private final AuthFailureThrottle throttle = new AuthFailureThrottle();
    private final AtomicInteger connections = new AtomicInteger();
    private final AmqpStats stats = new AmqpStats(); // ops (metrics)
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private final List<Listener> tlsListeners = new CopyOnWriteArrayList<>();
    private final List<String> deployments = new CopyOnWriteArrayList<>();
    /** A loop no listener may take (the HTTP port's), or null. */
    private Context reserved;

    private AmqpServer(Vertx vertx, Engine engine, Clock clock, CbsAuthorizer authorizer, AmqpOptions options) {
        this.vertx = vertx;
        this.engine = engine;
        this.clock = clock;
        this.authorizer = authorizer;
        this.options = options;
        this.management = new ManagementProcessor(engine);
    }

    /** Starts listening on every loop; returns once the port is bound. */
    public static AmqpServer start(Vertx vertx, Engine engine, Clock clock, CbsAuthorizer authorizer,
                                   AmqpOptions options) throws Exception {
        return start(vertx, engine, clock, authorizer, options, null);
    }

    /**
     * Starts listening on every loop but {@code reserved}'s (the HTTP port's, which no client traffic may share);
     * returns once the port is bound. The TLS listeners of {@link #listenTls} keep off it too.
     */
    public static AmqpServer start(Vertx vertx, Engine engine, Clock clock, CbsAuthorizer authorizer,
                                   AmqpOptions options, Context reserved) throws Exception {
        AmqpServer self = new AmqpServer(vertx, engine, clock, authorizer, options);
        self.reserved = reserved;
        if (options.port() < 0) {
            LOG.info("Plain AMQP is off");
            return self;
        }
        for (int i = 0; i < options.eventLoops(); i++) {
            self.listeners.add(self.deploy(options.port(), null));
        }
        int port = self.port();
        LOG.info("AMQP listening on {}:{} ({} event loops)", options.host(), port, options.eventLoops());
        return self;
    }

    /**
     * Also listens with TLS (AMQPS) on {@code port} (0: a free one), over the same event loops; returns once the port
     * is bound.
     */
    public void listenTls(int port, ServerSSLOptions ssl) throws Exception {
        for (int i = 0; i < options.eventLoops(); i++) {
            tlsListeners.add(deploy(port, ssl));
        }
        LOG.info("AMQPS listening on {}:{}", options.host(), tlsPort());
    }

    /** Makes the next TLS connections use {@code ssl} (a renewed certificate); open connections keep theirs. */
    public void updateTls(ServerSSLOptions ssl) {
        for (Listener l : tlsListeners) {
            l.server.updateSSLOptions(ssl, true).onComplete((updated, error) -> {
                if (error != null) {
                    LOG.warn("AMQPS kept its previous certificate: {}", error.toString());
                } else {
                    LOG.debug("AMQPS certificate updated: {}", updated);
                }
            });
        }
    }

    private Listener deploy(int port, ServerSSLOptions ssl) throws Exception {
        // listeners on one port share it (Vert.x server sharing); a negative port is Vert.x's way to share one free
        // port among them, as port 0 would give each listener a port of its own. Vert.x hands each deployment the
        // next event loop in turn; one that lands on the reserved loop is deployed again, on the next one.
        int pool = eventLoopCount(vertx);
        for (int attempt = 0; ; attempt++) {
            Listener listener = new Listener(port == 0 ? -1 : port, ssl);
            String id = vertx.deployVerticle(listener).toCompletionStage().toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
            if (reserved == null || attempt >= pool || !sameLoop(listener.loop(), reserved)) {
                deployments.add(id);
                return listener;
            }
            vertx.undeploy(id).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** The event loops of {@code vertx}: how many deployments the round robin takes to come back to one. */
    public static int eventLoopCount(Vertx vertx) {
        int n = 0;
        for (var ignored : ((VertxInternal) vertx).nettyEventLoopGroup()) {
            n++;
        }
        return n;
    }

    /** Whether two contexts run on one event loop (thread). */
    public static boolean sameLoop(Context a, Context b) {
        return ((ContextInternal) a).nettyEventLoop()
                == ((ContextInternal) b).nettyEventLoop();
    }

    /** One listener on one event loop, with the connections it accepted. */
    private final class Listener extends VerticleBase {
        private final int port;
        private final ServerSSLOptions ssl;
        /** This loop's open connections; touched only on the loop. */
        private final Set<AmqpConnection> open = new HashSet<>();
        private NetServer server;
        private long sweepTimer = -1;

        Listener(int port, ServerSSLOptions ssl) {
            this.port = port;
            this.ssl = ssl;
        }

        Context loop() {
            return context;
        }

        @Override
        public Future<?> start() {
            NetServerOptions netOptions = new NetServerOptions()
                    .setHost(options.host())
                    .setPort(port)
                    .setTcpNoDelay(true)
                    .setReuseAddress(true);
            if (ssl != null) {
                netOptions.setSsl(true);
                netOptions.setKeyCertOptions(ssl.getKeyCertOptions());
                netOptions.setEnabledSecureTransportProtocols(ssl.getEnabledSecureTransportProtocols());
                ssl.getEnabledCipherSuites().forEach(netOptions::addEnabledCipherSuite);
            }
            if (!options.proxyProtocolFrom().isEmpty()) {
                netOptions.setUseProxyProtocol(true); // a connection without the header is closed by Vert.x
            }
            server = vertx.createNetServer(netOptions);
            server.connectHandler(socket -> accept(socket, context, this));
            sweepTimer = vertx.setPeriodic(SWEEP_MS, t -> sweep());
            return server.listen();
        }

        @Override
        public Future<?> stop() {
            vertx.cancelTimer(sweepTimer);
            return Future.succeededFuture();
        }

        /** Drops the buffers of connections quiet for a sweep period. */
        private void sweep() {
            sweep(SWEEP_MS * 1_000_000L);
        }

        private void sweep(long quietNs) {
            long now = clock.monotonicNanos();
            open.removeIf(AmqpConnection::isClosed);
            for (AmqpConnection c : open) {
                c.releaseIdleBuffers(now, quietNs);
            }
        }
    }

    private void accept(NetSocket socket, Context context, Listener listener) {
        if (!options.proxyProtocolFrom().isEmpty()) {
            // the header is taken from the configured balancers only: anyone else could claim any address
            SocketAddress peer = socket.remoteAddress(true);
            String from = peer == null ? null : peer.hostAddress() != null ? peer.hostAddress() : peer.host();
            String normalised;
            try {
                normalised = from == null ? null : AmqpOptions.normalisedAddress(from);
            } catch (IllegalArgumentException notAnAddress) {
                normalised = null;
            }
            if (normalised == null || !options.proxyProtocolFrom().contains(normalised)) {
                stats.connectionRefused(); // ops (metrics)
                LOG.warn("Refusing a connection from {}: with --proxy-protocol-from only {} may connect", from,
                        options.proxyProtocolFrom());
                socket.close();
                return;
            }
        }
        AmqpConnection connection = open(AmqpSocket.of(socket), context);
        if (connection != null) {
            listener.open.add(connection);
        }
    }

    /**
     * Runs an AMQP connection over {@code socket}, a WebSocket upgraded with subprotocol {@code AMQPWSB10}; call it
     * on the socket's event loop, where the connection then stays. Its idle buffers are not swept.
     */
    public void acceptWebSocket(ServerWebSocket socket) {
        open(AmqpSocket.of(socket), Vertx.currentContext());
    }

    private AmqpConnection open(AmqpSocket socket, Context context) {
        if (connections.incrementAndGet() > options.maxConnections()) {
            connections.decrementAndGet();
            stats.connectionRefused(); // ops (metrics)
            LOG.warn("Refusing connection from {}: the limit of {} connections is reached",
                    socket.remoteAddress(), options.maxConnections());
            socket.close();
            return null;
        }
        AmqpConnection connection = new AmqpConnection(vertx, context, socket, engine, clock, authorizer, throttle,
                management, options, connections::decrementAndGet);
        stats.connectionOpened(); // ops (metrics)
        connection.links = stats.newLinks(); // ops (metrics)
        connection.start();
        return connection;
    }

    /** The client addresses of the open connections of the plain listeners (tests); waits for the loops. */
    List<String> openRemoteHosts() throws Exception {
        List<String> out = new CopyOnWriteArrayList<>();
        for (Listener l : listeners) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            l.loop().runOnContext(v -> {
                for (AmqpConnection c : l.open) {
                    if (!c.isClosed()) {
                        out.add(c.remoteHost());
                    }
                }
                done.complete(null);
            });
            done.get(10, TimeUnit.SECONDS);
        }
        return out;
    }

    /** Runs each loop's idle-buffer sweep now, for connections quiet for {@code quietNs} (tests); waits for it. */
    void sweepNow(long quietNs) throws Exception {
        for (Listener l : listeners) { // plain listeners only (tests)
            CompletableFuture<Void> done = new CompletableFuture<>();
            l.loop().runOnContext(v -> {
                l.sweep(quietNs);
                done.complete(null);
            });
            done.get(10, TimeUnit.SECONDS);
        }
    }

    /** The TLS listeners' event loops' contexts, one per listener. */
    public List<Context> tlsContexts() {
        List<Context> out = new ArrayList<>();
        for (Listener l : tlsListeners) {
            out.add(l.loop());
        }
        return out;
    }

    /** The event loops' contexts, one per listener (for the event-loop watchdog). */
    public List<Context> contexts() {
        List<Context> out = new ArrayList<>();
        for (Listener l : listeners.isEmpty() ? tlsListeners : listeners) {
            out.add(l.loop());
        }
        return out;
    }

    /** The plain AMQP port, -1 if it is off. */
    public int port() {
        return listeners.isEmpty() ? -1 : listeners.get(0).server.actualPort();
    }

    /** The AMQPS port, -1 if TLS is off. */
    public int tlsPort() {
        return tlsListeners.isEmpty() ? -1 : tlsListeners.get(0).server.actualPort();
    }

    public int connectionCount() {
        return connections.get();
    }

    /** Connection and link counters, for metrics. */
    public AmqpStats stats() {
        return stats;
    }

    @Override
    public void close() {
        for (String id : deployments) {
            try {
                vertx.undeploy(id).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.warn("AMQP listener did not close cleanly", e);
            }
        }
    }
}
