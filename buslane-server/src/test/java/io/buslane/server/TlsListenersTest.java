package io.buslane.server;

import io.buslane.server.tls.TlsOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The TLS listeners in process, on free ports, with no certificate given: the self-signed certificate for
 * localhost is made in the data directory and served by AMQPS and HTTPS (whose routes are the HTTP port's), the
 * plain AMQP port can be off, and the WebSocket upgrade is only for the AMQP path and subprotocol. (The official
 * SDKs over TLS are in buslane-conformance's TlsConformanceTest.)
 */
class TlsListenersTest {

    @Test
    void selfSignedCertificateServesAmqpsAndHttpsAndTheWebSocketPathIsGuarded(@TempDir Path dir) throws Exception {
        BrokerOptions options = new BrokerOptions("127.0.0.1", -1, 0, dir.resolve("data"), null, 1, true, true, null,
                false, 100);
        try (Broker broker = Broker.start(options, new TlsOptions(0, 0, null, null, dir.resolve("data/tls")))) {
            assertThat(broker.amqpPort()).as("plain AMQP is off").isEqualTo(-1);
            Path crt = dir.resolve("data/tls/buslane-selfsigned.crt");
            assertThat(crt).exists();
            SSLContext trust = TestTls.trusting(crt);
            assertThat(handshake(trust, broker.amqpsPort()).getSubjectX500Principal().getName())
                    .isEqualTo("CN=localhost");
            assertThat(handshake(trust, broker.httpsPort())).isNotNull();

            HttpClient http = HttpClient.newBuilder().sslContext(trust).build();
            String base = "https://localhost:" + broker.httpsPort();
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create(base + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"healthy\"");

            String ws = "wss://localhost:" + broker.httpsPort();
            WebSocket amqp = http.newWebSocketBuilder().subprotocols("AMQPWSB10")
                    .buildAsync(URI.create(ws + "/$servicebus/websocket"), new WebSocket.Listener() { })
                    .get(10, TimeUnit.SECONDS);
            assertThat(amqp.getSubprotocol()).isEqualTo("AMQPWSB10");
            amqp.abort();
            overWebSocketTheAmqpConnectionAnswersAndItsGuardCloses(http, ws);
            assertThatThrownBy(() -> http.newWebSocketBuilder().subprotocols("something-else")
                    .buildAsync(URI.create(ws + "/$servicebus/websocket"), new WebSocket.Listener() { }).join())
                    .isInstanceOf(CompletionException.class);
            assertThatThrownBy(() -> http.newWebSocketBuilder().subprotocols("AMQPWSB10")
                    .buildAsync(URI.create(ws + "/elsewhere"), new WebSocket.Listener() { }).join())
                    .isInstanceOf(CompletionException.class);
        }
        // a restart keeps the certificate it made
        byte[] made = Files.readAllBytes(dir.resolve("data/tls/buslane-selfsigned.crt"));
        try (Broker again = Broker.start(options, new TlsOptions(0, -1, null, null, dir.resolve("data/tls")))) {
            assertThat(again.httpsPort()).isEqualTo(-1);
            assertThat(handshake(TestTls.trusting(dir.resolve("data/tls/buslane-selfsigned.crt")), again.amqpsPort()))
                    .isNotNull();
        }
        assertThat(Files.readAllBytes(dir.resolve("data/tls/buslane-selfsigned.crt"))).isEqualTo(made);
    }

    /**
     * The WebSocket feeds the same AmqpConnection as the TCP port: the broker answers the AMQP protocol header with
     * its SASL header, and a malformed frame after it closes the connection (the hostile-input checks apply).
     */
    private static void overWebSocketTheAmqpConnectionAnswersAndItsGuardCloses(HttpClient http, String ws)
            throws Exception {
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        CompletableFuture<Integer> closed = new CompletableFuture<>();
        WebSocket socket = http.newWebSocketBuilder().subprotocols("AMQPWSB10")
                .buildAsync(URI.create(ws + "/$servicebus/websocket"), new WebSocket.Listener() {
                    @Override
                    public CompletionStage<?> onBinary(WebSocket w, ByteBuffer data, boolean last) {
                        byte[] bytes = new byte[data.remaining()];
                        data.get(bytes);
                        synchronized (received) {
                            received.writeBytes(bytes);
                        }
                        w.request(1);
                        return null;
                    }

                    @Override
                    public CompletionStage<?> onClose(WebSocket w, int status, String reason) {
                        closed.complete(status);
                        return null;
                    }

                    @Override
                    public void onError(WebSocket w, Throwable error) {
                        closed.complete(-1);
                    }
                }).get(10, TimeUnit.SECONDS);
        // the SASL layer's protocol header: the broker answers with its own and the SASL mechanisms frame
        socket.sendBinary(ByteBuffer.wrap(new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0}), true).get(5, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (size(received) <= 8 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        synchronized (received) {
            assertThat(Arrays.copyOf(received.toByteArray(), 8)).isEqualTo(new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0});
        }
        // a frame whose size field is below the 8-byte minimum: a framing error
        socket.sendBinary(ByteBuffer.wrap(new byte[] {0, 0, 0, 2, 2, 1, 0, 0}), true).get(5, TimeUnit.SECONDS);
        assertThat(closed.get(10, TimeUnit.SECONDS)).as("the broker closed the WebSocket").isNotNull();
    }

    private static int size(ByteArrayOutputStream out) {
        synchronized (out) {
            return out.size();
        }
    }

    private static X509Certificate handshake(SSLContext context, int port) throws Exception {
        try (SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket("localhost", port)) {
            var params = s.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            s.setSSLParameters(params);
            s.setSoTimeout(5_000);
            s.startHandshake();
            return (X509Certificate) s.getSession().getPeerCertificates()[0];
        }
    }
}
