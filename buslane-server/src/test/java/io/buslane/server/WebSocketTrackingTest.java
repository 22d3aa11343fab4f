package io.buslane.server;

import io.buslane.server.tls.TlsOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An AMQP-over-WebSocket connection leaves the HTTPS port's connection count when it is upgraded: it is the AMQP
 * listener's from then on. Vert.x replaces the HTTP connection's handler on the upgrade, so its close handler never
 * runs: counted until closed, every WebSocket ever opened would have stayed counted, and after
 * {@code --http-max-connections} of them over the broker's life HTTPS would have refused everyone.
 */
class WebSocketTrackingTest {

    @Test
    void upgradedConnectionsAreNotCountedAgainstTheHttpsCap(@TempDir Path dir) throws Exception {
        BrokerOptions options = new BrokerOptions("127.0.0.1", 0, 0, dir.resolve("data"), null, 1, true, true, null,
                false, 100).withHttpLimits(new HttpLimits(3, 30_000));
        try (Broker broker = Broker.start(options, new TlsOptions(-1, 0, null, null, dir.resolve("data/tls")))) {
            HttpClient http = HttpClient.newBuilder().sslContext(TestTls.trusting(dir.resolve(
                    "data/tls/buslane-selfsigned.crt"))).build();
            URI ws = URI.create("wss://localhost:" + broker.httpsPort() + "/$servicebus/websocket");
            for (int i = 0; i < 6; i++) { // twice the cap, one after the other
                WebSocket socket = http.newWebSocketBuilder().subprotocols("AMQPWSB10")
                        .buildAsync(ws, new WebSocket.Listener() { }).get(10, TimeUnit.SECONDS);
                assertThat(socket.getSubprotocol()).as("WebSocket %d", i).isEqualTo("AMQPWSB10");
                socket.abort();
            }
            assertThat(broker.httpsTrackedConnections()).isZero();
        }
    }
}
