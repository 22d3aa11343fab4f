package io.buslane.server.ops;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.buslane.common.auth.AuthFailureThrottle;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code /$admin} operations as hostile or careless clients use them: failed tokens are throttled per address
 * (429 with {@code Retry-After}) and client mistakes answer 4xx in the operations' JSON without an ERROR line.
 */
class OpsApiTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final ManualClock clock = new ManualClock(System.currentTimeMillis());
    private final HttpClient http = HttpClient.newHttpClient();
    private Engine engine;
    private Vertx vertx;
    private HttpServer server;

    @BeforeEach
    void start() throws Exception {
        engine = Engine.start(new EngineConfig(clock, Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.DEDICATED));
        vertx = Vertx.vertx();
        Router router = Router.router(vertx);
        OpsApi.mount(router, io.buslane.management.HttpGuard.install(router, clock), new BrokerMetrics(),
                new NamespaceOps(engine, () -> { }), SasValidator.emulatorDefault(), clock);
        server = vertx.createHttpServer().requestHandler(router).listen(0, "127.0.0.1").toCompletionStage()
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        engine.close();
    }

    private String token(String key) {
        String sr = URLEncoder.encode("http://127.0.0.1/", StandardCharsets.UTF_8);
        long se = clock.epochMillis() / 1000 + 3600;
        String sig = URLEncoder.encode(SasValidator.sign(sr + "\n" + se, key), StandardCharsets.UTF_8);
        return "SharedAccessSignature sr=" + sr + "&sig=" + sig + "&se=" + se + "&skn=" + SasRule.EMULATOR_KEY_NAME;
    }

    private HttpResponse<String> post(String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.actualPort() + path))
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.noBody());
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anAddressThatKeepsPresentingBadTokensIsThrottled() throws Exception {
        String good = token(SasRule.EMULATOR_KEY);
        String bad = token("wrong-key");
        assertThat(post("/$admin/reset", good).statusCode()).isEqualTo(200);
        for (int i = 0; i < AuthFailureThrottle.DEFAULT_MAX_FAILURES; i++) {
            assertThat(post("/$admin/reset", bad).statusCode()).as("attempt " + i).isEqualTo(401);
        }
        HttpResponse<String> refused = post("/$admin/reset", bad);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("60");
        JsonNode error = JSON.readTree(refused.body()).get("error");
        assertThat(error.get("code").asInt()).isEqualTo(429);
        assertThat(error.get("message").asText()).contains("Too many failed authentication attempts");

        assertThat(post("/$admin/reset", good).statusCode()).as("a valid token is never refused").isEqualTo(200);
        clock.advanceMs(AuthFailureThrottle.DEFAULT_BLOCK_MS);
        assertThat(post("/$admin/reset", bad).statusCode()).isEqualTo(401);
    }

    @Test
    void aMalformedPathIs400InTheOperationsFormatWithoutAnErrorLine() throws Exception {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        root.addAppender(logs);
        try (Socket socket = new Socket("127.0.0.1", server.actualPort())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("POST /$admin/purge/%zz HTTP/1.1\r\nHost: x\r\nAuthorization: "
                    + token(SasRule.EMULATOR_KEY) + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            InputStream in = socket.getInputStream();
            String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(response).startsWith("HTTP/1.1 400 ");
            JsonNode error = JSON.readTree(response.substring(response.indexOf("\r\n\r\n") + 4)).get("error");
            assertThat(error.get("code").asInt()).isEqualTo(400);
            assertThat(error.get("message").asText()).contains("invalid percent-encoding");
        } finally {
            root.detachAppender(logs);
        }
        List<ILoggingEvent> events;
        synchronized (logs) {
            events = List.copyOf(logs.list);
        }
        assertThat(events).filteredOn(e -> e.getLevel() == Level.ERROR).isEmpty();
        assertThat(events).filteredOn(e -> e.getLevel() == Level.WARN).singleElement()
                .satisfies(e -> assertThat(e.getThrowableProxy()).isNull());
    }
}
