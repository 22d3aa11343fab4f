package io.buslane.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.server.ops.Health;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP port through the broker's lifecycle: it opens before the engine recovers and answers 503 (on
 * {@code /health} and on every other path) until ready, 200 once ready, and 503 again once shutdown begins.
 */
class HttpEndpointHealthTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void unavailableWhileStartingHealthyWhenReadyUnavailableWhenStopping() throws Exception {
        Vertx vertx = Vertx.vertx();
        ManualClock clock = new ManualClock();
        Health health = new Health(clock);
        try (HttpEndpoint http = HttpEndpoint.start(vertx, "127.0.0.1", 0, health::report);
             Engine engine = Engine.start(new EngineConfig(clock, Storage.of(new InMemoryJournalFactory()), 1,
                     ThreadingMode.MANUAL))) {
            HttpResponse<String> starting = get(http, "/health");
            assertThat(starting.statusCode()).isEqualTo(503);
            assertThat(JSON.readTree(starting.body()).get("status").asText()).isEqualTo("unhealthy");
            assertThat(JSON.readTree(starting.body()).get("state").asText()).isEqualTo("STARTING");
            assertThat(get(http, "/myqueue").statusCode()).isEqualTo(503);

            http.mount(router -> router.get("/myqueue").handler(ctx -> ctx.response().end("entity")));
            health.ready(engine, 5672, http.port());
            HttpResponse<String> ready = get(http, "/health");
            assertThat(ready.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(ready.body()).get("status").asText()).isEqualTo("healthy");
            assertThat(JSON.readTree(ready.body()).get("httpPort").asInt()).isEqualTo(http.port());
            assertThat(get(http, "/myqueue").body()).isEqualTo("entity");

            health.stopping();
            HttpResponse<String> stopping = get(http, "/health");
            assertThat(stopping.statusCode()).isEqualTo(503);
            assertThat(JSON.readTree(stopping.body()).get("state").asText()).isEqualTo("STOPPING");
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get();
        }
    }

    private static HttpResponse<String> get(HttpEndpoint http, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + path))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
