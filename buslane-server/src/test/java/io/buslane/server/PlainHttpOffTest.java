package io.buslane.server;

import io.buslane.server.tls.TlsOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --http-port -1} turns plain HTTP off when HTTPS serves the same routes (docs/security.md, docs/usage.md), so
 * no token or console key has to cross the network in clear; without HTTPS it is refused, since the broker would
 * then have no health endpoint.
 */
class PlainHttpOffTest {

    @Test
    void withHttpsOnPlainHttpCanBeOffAndHttpsStillAnswersHealth(@TempDir Path dir) throws Exception {
        BrokerOptions options = new BrokerOptions("127.0.0.1", 0, -1, dir.resolve("data"), null, 1, true, true, null,
                false, 100);
        try (Broker broker = Broker.start(options, new TlsOptions(-1, 0, null, null, dir.resolve("data/tls")))) {
            assertThat(broker.httpPort()).isEqualTo(-1);
            HttpClient https = HttpClient.newBuilder().sslContext(TestTls.trusting(dir.resolve(
                    "data/tls/buslane-selfsigned.crt"))).build();
            HttpResponse<String> health = https.send(HttpRequest.newBuilder(URI.create("https://localhost:"
                    + broker.httpsPort() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void withoutHttpsTurningPlainHttpOffIsRefused() {
        Main main = new Main();
        new CommandLine(main).parseArgs("--http-port", "-1");
        assertThatThrownBy(main::tlsOptions).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--https-port");
        Main withHttps = new Main();
        new CommandLine(withHttps).parseArgs("--http-port", "-1", "--https-port", "8443");
        assertThat(withHttps.tlsOptions().httpsPort()).isEqualTo(8443);
    }
}
