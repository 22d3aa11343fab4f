package io.buslane.management.rest;

import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.ManualClock;
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
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The REST API (and, behind it, the ATOM API) on a real Vert.x HTTP server on a free port, over an engine with
 * dedicated shard threads, in-memory journals and a {@link ManualClock}; receive timeouts are held by
 * {@link #timeouts} and fired by the test, so no test waits for one.
 */
final class RestTestServer implements AutoCloseable {

    /** 2026-01-02T03:04:05Z, a Friday. */
    static final long START_MS = 1_767_323_045_000L;

    final ManualClock clock = new ManualClock(START_MS);
    final Engine engine;
    final ManualTimeouts timeouts = new ManualTimeouts();
    private final Vertx vertx;
    private final HttpServer server;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    /** The Authorization header sent; null for none. */
    String authorization;

    RestTestServer(SasValidator validator, long maxBodyBytes) throws Exception {
        engine = Engine.start(new EngineConfig(clock, Storage.of(new InMemoryJournalFactory()), 2,
                ThreadingMode.DEDICATED));
        vertx = Vertx.vertx();
        Router router = Router.router(vertx);
        io.buslane.management.HttpGuard guard = io.buslane.management.HttpGuard.install(router, clock);
        AdminApi.mount(router, guard, engine, validator, clock);
        RestApi.mount(router, guard, engine, validator, clock, maxBodyBytes, timeouts);
        server = vertx.createHttpServer().requestHandler(router).listen(0, "127.0.0.1").toCompletionStage()
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    static RestTestServer validating() throws Exception {
        RestTestServer s = new RestTestServer(SasValidator.emulatorDefault(), RestApi.DEFAULT_MAX_BODY_BYTES);
        s.authorization = s.token("http://127.0.0.1/", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        return s;
    }

    /** A SAS token for {@code resource}, valid for an hour of the manual clock. */
    String token(String resource, String keyName, String key) {
        String sr = URLEncoder.encode(resource, StandardCharsets.UTF_8);
        long se = clock.epochMillis() / 1000 + 3600;
        String sig = URLEncoder.encode(SasValidator.sign(sr + "\n" + se, key), StandardCharsets.UTF_8);
        return "SharedAccessSignature sr=" + sr + "&sig=" + sig + "&se=" + se + "&skn=" + keyName;
    }

    String base() {
        return "http://127.0.0.1:" + server.actualPort();
    }

    int port() {
        return server.actualPort();
    }

    /** Creates a queue (or topic/subscription) through the ATOM API. */
    void create(String path, String descriptionElement, String innerXml) {
        String xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><entry xmlns=\"http://www.w3.org/2005/Atom\">"
                + "<content type=\"application/xml\"><" + descriptionElement
                + " xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\""
                + " xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\">" + innerXml + "</" + descriptionElement
                + "></content></entry>";
        HttpResponse<String> r = request("PUT", path, Map.of("Content-Type", "application/atom+xml"),
                xml.getBytes(StandardCharsets.UTF_8));
        if (r.statusCode() != 201) {
            throw new AssertionError("create " + path + ": " + r.statusCode() + " " + r.body());
        }
    }

    HttpResponse<String> request(String method, String pathAndQuery, Map<String, String> headers, byte[] body) {
        try {
            return requestAsync(method, pathAndQuery, headers, body).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(method + " " + pathAndQuery, e);
        }
    }

    CompletableFuture<HttpResponse<String>> requestAsync(String method, String pathAndQuery,
                                                         Map<String, String> headers, byte[] body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base() + pathAndQuery))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        if (authorization != null && !headers.containsKey("Authorization")) {
            b.header("Authorization", authorization);
        }
        return client.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    @Override
    public void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        engine.close();
    }

    /** Receive timeouts held until a test fires them. */
    static final class ManualTimeouts implements RestApi.Timeouts {
        private final List<Runnable> pending = new ArrayList<>();
        private final List<Long> delays = new ArrayList<>();
        private long next;

        @Override
        public synchronized long schedule(Vertx vertx, long delayMs, Runnable task) {
            io.vertx.core.Context context = Vertx.currentContext();
            pending.add(() -> context.runOnContext(v -> task.run()));
            delays.add(delayMs);
            notifyAll();
            return next++;
        }

        @Override
        public synchronized void cancel(Vertx vertx, long handle) {
            pending.set((int) handle, null);
        }

        /** The delays asked for so far, in order. */
        synchronized List<Long> delays() {
            return new ArrayList<>(delays);
        }

        /** Blocks (up to 10 s) until {@code count} timeouts have been asked for in all. */
        synchronized void awaitScheduled(int count) throws InterruptedException {
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (delays.size() < count) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("no receive started waiting");
                }
                wait(Math.max(1, left / 1_000_000));
            }
        }

        synchronized int live() {
            return (int) pending.stream().filter(p -> p != null).count();
        }

        /** Fires every pending timeout. */
        void fireAll() {
            List<Runnable> due = new ArrayList<>();
            synchronized (this) {
                for (int i = 0; i < pending.size(); i++) {
                    if (pending.get(i) != null) {
                        due.add(pending.get(i));
                        pending.set(i, null);
                    }
                }
            }
            due.forEach(Runnable::run);
        }
    }
}
