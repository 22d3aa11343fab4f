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
 * 503 otherwise, as the emulator's health endpoint does (body: {@link Health}); the routes that {@code routes}
 * mounts (metrics and admin operations, the ATOM management API) serve everything else. Runs on Vert.x event loops.
 */
final class HttpEndpoint implements AutoCloseable {

    private final HttpServer server;

    private HttpEndpoint(HttpServer server) {
        this.server = server;
    }

    static HttpEndpoint start(Vertx vertx, String host, int port, Supplier<Health.Report> health,
                              Consumer<Router> routes) throws Exception {
        Router router = Router.router(vertx);
        router.get("/health").handler(ctx -> {
            Health.Report report = health.get();
            ctx.response()
                    .setStatusCode(report.status())
                    .putHeader("content-type", "application/json")
                    .end(report.json());
        });
        routes.accept(router);
        HttpServer server = vertx.createHttpServer().requestHandler(router);
        server.listen(port, host).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        return new HttpEndpoint(server);
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
