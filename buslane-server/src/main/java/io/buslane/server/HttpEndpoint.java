package io.buslane.server;

import io.buslane.amqp.transport.AmqpServer;
import io.buslane.common.time.Clock;
import io.buslane.server.ops.Health;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.ext.web.Router;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The HTTP port: {@code GET /health} answers 200 with {@code {"status":"healthy",...}} once the broker is ready and
 * 503 otherwise, as the emulator's health endpoint does (body: {@link Health}). The port opens before the engine
 * recovers, with only {@code /health}; the routes that {@link #mount} adds once the engine is up (metrics and admin
 * operations, the ATOM management API) serve everything else. Runs on an event loop of its own (deployed before
 * the AMQP listeners, which keep off it), so that {@code /health} answers whatever AMQP clients do.
 *
 * <p>{@link #listenTls} adds the HTTPS port on a loop of its own with the same router, where
 * {@code GET /$servicebus/websocket} with subprotocol {@code AMQPWSB10} is upgraded to a WebSocket that carries an
 * AMQP connection.
 */
final class HttpEndpoint implements AutoCloseable {

    /** The path and subprotocol of AMQP over WebSockets, as the Service Bus SDKs use them. */
    static final String WEBSOCKET_PATH = "/$servicebus/websocket";
    static final String WEBSOCKET_PROTOCOL = "AMQPWSB10";
    /** The largest WebSocket frame accepted: an AMQP frame (256 KiB at most) with room to spare. */
    private static final int MAX_WEBSOCKET_FRAME = 1 << 20;

    /** How often idle connections are looked for. */
    private static final long SWEEP_MS = 1_000;

    private final HttpServer server;
    private final Router router;
    private final Context context;
    private final HttpConnections connections;
    private final HttpConnections tlsConnections;
    private volatile HttpServer https;
    private volatile Context tlsContext;

    private HttpEndpoint(HttpServer server, Router router, Context context, HttpConnections connections,
                         HttpConnections tlsConnections) {
        this.server = server;
        this.router = router;
        this.context = context;
        this.connections = connections;
        this.tlsConnections = tlsConnections;
    }

    /** The event loop the port runs on (for the watchdog). */
    Context context() {
        return context;
    }

    static HttpEndpoint start(Vertx vertx, String host, int port, Supplier<Health.Report> health) throws Exception {
        return start(vertx, host, port, health, HttpLimits.DEFAULTS, Clock.system());
    }

    /**
     * Opens the HTTP port with {@code limits} on its connections ({@link HttpConnections}, time from
     * {@code clock}); the HTTPS port, if {@link #listenTls} opens it, has the same limits, counted apart.
     */
    static HttpEndpoint start(Vertx vertx, String host, int port, Supplier<Health.Report> health, HttpLimits limits,
                              Clock clock) throws Exception {
        Router router = Router.router(vertx);
        router.get("/health").handler(ctx -> {
            Health.Report report = health.get();
            ctx.response()
                    .setStatusCode(report.status())
                    .putHeader("content-type", "application/json")
                    .end(report.json());
        });
        // until the routes are mounted (the engine is recovering), every other path is unavailable too
        router.route().order(Integer.MAX_VALUE).handler(ctx -> ctx.response()
                .setStatusCode(503)
                .putHeader("content-type", "application/json")
                .end(health.get().json()));
        HttpServer[] server = new HttpServer[1];
        Context[] loop = new Context[1];
        HttpConnections connections = new HttpConnections(limits, clock);
        HttpConnections tlsConnections = new HttpConnections(limits, clock);
        // first of all routes: a request is in flight on its connection until its response ends
        router.route().order(Integer.MIN_VALUE).handler(ctx -> {
            // each tracker is confined to its port's loop, where that port's requests run
            (ctx.request().isSSL() ? tlsConnections : connections).started(ctx);
            ctx.next();
        });
        vertx.deployVerticle(new VerticleBase() {
            @Override
            public Future<?> start() {
                loop[0] = context;
                // no h2c: with it, Vert.x waits for a connection's first bytes before it hands the connection over,
                // so a socket that never sends one would not be counted or timed out (and no client uses h2c)
                server[0] = vertx.createHttpServer(new HttpServerOptions().setHttp2ClearTextEnabled(false));
                server[0].connectionHandler(connections::opened);
                server[0].requestHandler(router);
                vertx.setPeriodic(SWEEP_MS, id -> connections.sweep());
                if (port < 0) {
                    server[0] = null; // plain HTTP off (--http-port -1): the routes are served on HTTPS only
                    return Future.succeededFuture();
                }
                return server[0].listen(port, host);
            }
        }).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        return new HttpEndpoint(server[0], router, loop[0], connections, tlsConnections);
    }

    /** Adds routes to the running port (Vert.x routers accept routes at run time). */
    void mount(Consumer<Router> routes) {
        routes.accept(router);
    }

    /** The plain HTTP port, -1 if it is off. */
    int port() {
        return server == null ? -1 : server.actualPort();
    }

    /**
     * Opens the HTTPS port ({@code port}, 0: a free one) on this endpoint's loop, serving the same routes; AMQP over
     * WebSockets goes to {@code amqp}. Returns once it is bound.
     */
    void listenTls(String host, int port, ServerSSLOptions ssl, Handler<ServerWebSocket> amqp) throws Exception {
        HttpServerOptions options = new HttpServerOptions().setHost(host).setPort(port)
                .setSsl(true)
                .setKeyCertOptions(ssl.getKeyCertOptions())
                .setWebSocketSubProtocols(List.of(WEBSOCKET_PROTOCOL))
                .setMaxWebSocketFrameSize(MAX_WEBSOCKET_FRAME)
                .setMaxWebSocketMessageSize(MAX_WEBSOCKET_FRAME);
        options.setEnabledSecureTransportProtocols(ssl.getEnabledSecureTransportProtocols());
        ssl.getEnabledCipherSuites().forEach(options::addEnabledCipherSuite);
        Vertx vertx = context.owner();
        int pool = AmqpServer.eventLoopCount(vertx);
        // HTTPS (its handshakes, AMQP over WebSockets) on a loop of its own, off the HTTP loop that answers /health:
        // Vert.x hands each deployment the next loop in turn, and one on the HTTP loop is deployed again
        for (int attempt = 0; ; attempt++) {
            HttpServer[] bound = new HttpServer[1];
            Context[] loop = new Context[1];
            String id = vertx.deployVerticle(new VerticleBase() {
                @Override
                public Future<?> start() {
                    loop[0] = context;
                    HttpServer s = vertx.createHttpServer(options);
                    s.webSocketHandshakeHandler(handshake -> {
                        String offered = handshake.headers().get("Sec-WebSocket-Protocol");
                        // uamqp (the Python SDK's transport) asks for the path with a trailing slash
                        String path = handshake.path();
                        boolean amqpPath = WEBSOCKET_PATH.equals(path) || (WEBSOCKET_PATH + "/").equals(path);
                        if (amqpPath && offered != null && List.of(offered.split(","))
                                .stream().anyMatch(p -> WEBSOCKET_PROTOCOL.equalsIgnoreCase(p.trim()))) {
                            tlsConnections.webSocket(handshake.remoteAddress()); // AMQP's now, with its timeouts
                            handshake.accept();
                        } else {
                            handshake.reject(404);
                        }
                    });
                    s.webSocketHandler(amqp);
                    s.connectionHandler(tlsConnections::opened);
                    s.requestHandler(router);
                    vertx.setPeriodic(SWEEP_MS, t -> tlsConnections.sweep());
                    bound[0] = s;
                    return s.listen();
                }
            }).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            if (attempt >= pool || !AmqpServer.sameLoop(loop[0], this.context)) {
                https = bound[0];
                tlsContext = loop[0];
                return;
            }
            vertx.undeploy(id).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** The HTTPS port's loop, or null while it is off. */
    Context tlsContext() {
        return tlsContext;
    }

    /** Runs an idle-connection sweep now, on the port's loop, and waits for it (tests move a manual clock first). */
    void sweepNow() throws Exception {
        Promise<Void> done = Promise.promise();
        context.runOnContext(v -> {
            connections.sweep();
            done.complete();
        });
        done.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        Context tls = tlsContext;
        if (tls != null) {
            Promise<Void> tlsDone = Promise.promise();
            tls.runOnContext(v -> {
                tlsConnections.sweep();
                tlsDone.complete();
            });
            tlsDone.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /** The HTTPS port's tracked connections now, counted on its loop (tests); 0 while it is off. */
    int tlsTrackedConnections() throws Exception {
        Context tls = tlsContext;
        if (tls == null) {
            return 0;
        }
        Promise<Integer> n = Promise.promise();
        tls.runOnContext(v -> n.complete(tlsConnections.openCount()));
        return n.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** The plain HTTP port's connections (for tests and metrics). */
    HttpConnections connections() {
        return connections;
    }

    /** The HTTPS port, -1 if it is off. */
    int tlsPort() {
        HttpServer s = https;
        return s == null ? -1 : s.actualPort();
    }

    /** Makes the next HTTPS connections use {@code ssl} (a renewed certificate). */
    void updateTls(ServerSSLOptions ssl) {
        HttpServer s = https;
        if (s != null) {
            s.updateSSLOptions(ssl, true).onComplete((updated, error) -> {
                if (error != null) {
                    LoggerFactory.getLogger(HttpEndpoint.class).warn("HTTPS kept its previous certificate: {}",
                            error.toString());
                }
            });
        }
    }

    @Override
    public void close() {
        try {
            if (https != null) {
                https.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
            if (server != null) {
                server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            Thread.currentThread().interrupt();
        }
    }
}
