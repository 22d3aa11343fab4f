package io.buslane.server;

import io.buslane.server.ops.Health;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;

import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The HTTP port: {@code GET /health} answers 200 with {@code {"status":"healthy",...}} once the broker is ready and
 * 503 otherwise, as the emulator's health endpoint does (body: {@link Health}). The port opens before the engine
 * recovers, with only {@code /health}; the routes that {@link #mount} adds once the engine is up (metrics and admin
 * operations, the ATOM management API) serve everything else. Runs on an event loop of its own (deployed before
 * the AMQP listeners, each of which takes another), so that {@code /health} answers whatever AMQP clients do.
 */
final class HttpEndpoint implements AutoCloseable {

    private final HttpServer server;
    private final Router router;
    private final Context context;

    private HttpEndpoint(HttpServer server, Router router, Context context) {
        this.server = server;
        this.router = router;
        this.context = context;
    }

    /** The event loop the port runs on (for the watchdog). */
    Context context() {
        return context;
    }

    static HttpEndpoint start(Vertx vertx, String host, int port, Supplier<Health.Report> health) throws Exception {
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
        vertx.deployVerticle(new VerticleBase() {
            @Override
            public Future<?> start() {
                loop[0] = context;
                server[0] = vertx.createHttpServer().requestHandler(router);
                return server[0].listen(port, host);
            }
        }).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        return new HttpEndpoint(server[0], router, loop[0]);
    }

    /** Adds routes to the running port (Vert.x routers accept routes at run time). */
    void mount(Consumer<Router> routes) {
        routes.accept(router);
    }

    int port() {
        return server.actualPort();
    }

    @Override
    public void close() {
        try {
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            Thread.currentThread().interrupt();
        }
    }
}
