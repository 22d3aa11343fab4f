package io.buslane.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Context;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AMQP connections live on several event loops and HTTP on one of its own: with one AMQP loop stuck, {@code /health}
 * still answers, truthfully (503, naming the stuck loop), and answers 200 again once the loop is free.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EventLoopIsolationTest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aStuckAmqpLoopLeavesHealthAnsweringAndIsReported() throws Exception {
        BrokerOptions options = new BrokerOptions("127.0.0.1", 0, 0, Path.of("unused"), null, 1, true, true, null,
                false, 100);
        try (Broker broker = Broker.start(options)) {
            List<Context> loops = broker.amqpContexts();
            assertThat(loops).hasSizeGreaterThanOrEqualTo(2);
            assertThat(health(broker).statusCode()).isEqualTo(200);

            CountDownLatch release = new CountDownLatch(1);
            loops.get(0).runOnContext(v -> {
                try {
                    release.await(30, TimeUnit.SECONDS); // a connection stuck on its loop
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            HttpResponse<String> stuck = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline) {
                stuck = health(broker);
                if (stuck.statusCode() == 503) {
                    break;
                }
                Thread.sleep(100); // polling an HTTP endpoint; the watchdog's own time is what is tested
            }
            assertThat(stuck.statusCode()).isEqualTo(503);
            JsonNode body = JSON.readTree(stuck.body());
            assertThat(body.get("problems").toString()).contains("amqp-0");

            release.countDown();
            HttpResponse<String> back = null;
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline) {
                back = health(broker);
                if (back.statusCode() == 200) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(back.statusCode()).isEqualTo(200);
        }
    }

    private static HttpResponse<String> health(Broker broker) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.httpPort() + "/health"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * With TLS on, the AMQPS listeners and HTTPS (its handshakes and AMQP over WebSockets) each keep off the HTTP
     * loop. Before, the pool had one loop for HTTP and one per AMQP listener, the AMQPS listeners wrapped round onto
     * the HTTP loop and HTTPS ran on it, and /health slowed from 8 to 45-117 ms under 20-40 handshakes a second.
     */
    @Test
    void withTlsOnNoListenerSharesTheHttpLoop(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        BrokerOptions options = new BrokerOptions("127.0.0.1", 0, 0, dir.resolve("data"), null, 1, true, true, null,
                false, 100);
        try (Broker broker = Broker.start(options, new io.buslane.server.tls.TlsOptions(0, 0, null, null,
                dir.resolve("data/tls")))) {
            Context http = broker.httpContext();
            List<Context> others = new java.util.ArrayList<>(broker.amqpContexts());
            others.addAll(broker.amqpsContexts());
            others.add(broker.httpsContext());
            assertThat(broker.amqpsContexts()).hasSameSizeAs(broker.amqpContexts());
            for (Context c : others) {
                assertThat(io.buslane.amqp.transport.AmqpServer.sameLoop(c, http)).as("a listener on the HTTP loop")
                        .isFalse();
            }
            assertThat(health(broker).statusCode()).isEqualTo(200);
        }
    }
}
