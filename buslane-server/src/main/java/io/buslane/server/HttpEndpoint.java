package io.buslane.server;

import io.buslane.server.ops.Health;
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
 * operations, the ATOM management API) serve everything else. Runs on Vert.x event loops.
 */
final class HttpEndpoint implements AutoCloseable {

    private final HttpServer server;
    private final Router router;

    private HttpEndpoint(HttpServer server, Router router) {
        this.server = server;
        this.router = router;
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
        HttpServer server = vertx.createHttpServer().requestHandler(router);
        server.listen(port, host).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        return new HttpEndpoint(server, router);
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
