package io.buslane.management.atom;

import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The management API on a real Vert.x HTTP server on a free port, over an engine with dedicated shard threads and
 * in-memory journals, spoken to with {@code java.net.http}.
 */
final class AdminTestServer implements AutoCloseable {

    final Engine engine;
    private final Vertx vertx;
    private final HttpServer server;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** The Authorization header sent by {@link #send}; null for none. */
    String authorization;

    private AdminTestServer(SasValidator validator) throws Exception {
        engine = Engine.start(new EngineConfig(Clock.system(), Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.DEDICATED));
        vertx = Vertx.vertx();
        Router router = Router.router(vertx);
        router.get("/health").handler(ctx -> ctx.response().end("ok"));
        AdminApi.mount(router, io.buslane.management.HttpGuard.install(router, Clock.system()), engine, validator,
                Clock.system());
        router.get("/registered-later").handler(ctx -> ctx.response().end("later"));
        server = vertx.createHttpServer().requestHandler(router).listen(0, "127.0.0.1").toCompletionStage()
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** A server that validates tokens against the emulator's rule; requests carry a valid namespace token. */
    static AdminTestServer validating() throws Exception {
        AdminTestServer s = new AdminTestServer(SasValidator.emulatorDefault());
        s.authorization = s.token("http://127.0.0.1/", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        return s;
    }

    static AdminTestServer acceptingAll() throws Exception {
        return new AdminTestServer(SasValidator.acceptAll());
    }

    /** A SAS token for {@code resource}, valid for an hour. */
    String token(String resource, String keyName, String key) {
        String sr = URLEncoder.encode(resource, StandardCharsets.UTF_8);
        long se = System.currentTimeMillis() / 1000 + 3600;
        String sig = URLEncoder.encode(SasValidator.sign(sr + "\n" + se, key), StandardCharsets.UTF_8);
        return "SharedAccessSignature sr=" + sr + "&sig=" + sig + "&se=" + se + "&skn=" + keyName;
    }

    int port() {
        return server.actualPort();
    }

    HttpResponse<String> get(String pathAndQuery) {
        return send("GET", pathAndQuery, null, false);
    }

    /**
     * Whether a GET of the path gets what the service answers for a missing entity, subscription or rule: 200
     * with an ATOM feed without entries.
     */
    boolean getsEmptyFeed(String pathAndQuery) {
        HttpResponse<String> r = get(pathAndQuery);
        if (r.statusCode() != 200) {
            return false;
        }
        TestXml x = TestXml.parse(r.body());
        return "feed".equals(x.root().getLocalName()) && Xmlns.ATOM.equals(x.root().getNamespaceURI())
                && x.count("//a:entry") == 0 && r.headers().firstValue("Content-Type").orElse("")
                .startsWith("application/atom+xml");
    }

    /** Headers every request carries besides these (a test sets and clears them). */
    final java.util.Map<String, String> headers = new java.util.LinkedHashMap<>();

    HttpResponse<String> put(String path, String body) {
        return send("PUT", path, body, false);
    }

    HttpResponse<String> update(String path, String body) {
        return send("PUT", path, body, true);
    }

    HttpResponse<String> delete(String path) {
        return send("DELETE", path, null, false);
    }

    HttpResponse<String> send(String method, String pathAndQuery, String body, boolean ifMatch) {
        String sep = pathAndQuery.contains("?") ? "&" : "?";
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port() + pathAndQuery
                        + sep + "api-version=2021-05"))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (body != null) {
            b.header("Content-Type", "application/atom+xml");
        }
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        if (ifMatch) {
            b.header("If-Match", "*");
        }
        headers.forEach(b::header);
        try {
            return client.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new AssertionError(method + " " + pathAndQuery, e);
        }
    }

    /** An ATOM entry around a description in the service's namespace. */
    static String entry(String descriptionElement, String innerXml) {
        return "<?xml version=\"1.0\" encoding=\"utf-8\"?><entry xmlns=\"http://www.w3.org/2005/Atom\">"
                + "<content type=\"application/xml\"><" + descriptionElement
                + " xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\""
                + " xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\">" + innerXml + "</" + descriptionElement
                + "></content></entry>";
    }

    @Override
    public void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        engine.close();
    }
}
