package io.buslane.management.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.management.atom.AdminApi;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The console (and, behind it, the admin API as the broker mounts them) on a real Vert.x HTTP server on a free
 * port, over an engine with dedicated shard threads and in-memory journals, spoken to with {@code java.net.http}.
 */
final class ConsoleTestServer implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();

    final Engine engine;
    private final Vertx vertx;
    private final HttpServer server;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** The session cookie sent with every request ({@code name=value}); null for none. */
    String cookie;
    /** The Authorization header sent with every request; null for none. */
    String authorization;

    ConsoleTestServer(SasValidator validator) throws Exception {
        this(validator, null);
    }

    ConsoleTestServer(SasValidator validator, ClusterView cluster) throws Exception {
        engine = Engine.start(new EngineConfig(Clock.system(), Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.DEDICATED));
        vertx = Vertx.vertx();
        Router router = Router.router(vertx);
        router.get("/health").handler(ctx -> ctx.response().end("ok"));
        io.buslane.management.HttpGuard guard = io.buslane.management.HttpGuard.install(router, Clock.system());
        AdminApi.mount(router, guard, engine, validator, Clock.system());
        ConsoleApi.mount(router, guard, engine, validator, Clock.system(), cluster);
        server = vertx.createHttpServer().requestHandler(router).listen(0, "127.0.0.1").toCompletionStage()
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    int port() {
        return server.actualPort();
    }

    HttpResponse<String> get(String path) {
        return send("GET", path, null, "application/json", null);
    }

    HttpResponse<String> post(String path, String jsonBody) {
        return send("POST", path, jsonBody, "application/json", "application/json");
    }

    /** Posts and checks for 200/204; returns the parsed reply (an empty object for 204). */
    JsonNode ok(String path, String jsonBody) {
        HttpResponse<String> r = post(path, jsonBody);
        if (r.statusCode() != 200 && r.statusCode() != 204) {
            throw new AssertionError(path + " -> " + r.statusCode() + ": " + r.body());
        }
        return parse(r.statusCode() == 204 ? "{}" : r.body());
    }

    JsonNode getOk(String path) {
        HttpResponse<String> r = get(path);
        if (r.statusCode() != 200) {
            throw new AssertionError(path + " -> " + r.statusCode() + ": " + r.body());
        }
        return parse(r.body());
    }

    static JsonNode parse(String body) {
        try {
            return JSON.readTree(body);
        } catch (Exception e) {
            throw new AssertionError("Not JSON: " + body, e);
        }
    }

    HttpResponse<String> send(String method, String path, String body, String accept, String contentType) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.actualPort() + path))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (accept != null) {
            b.header("Accept", accept);
        }
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        try {
            return client.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new AssertionError(method + " " + path, e);
        }
    }

    @Override
    public void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        engine.close();
    }
}
