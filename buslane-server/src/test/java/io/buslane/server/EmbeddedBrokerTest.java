package io.buslane.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link EmbeddedBroker}: binds free ports, reports them, answers on both, and closes. */
class EmbeddedBrokerTest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void inMemoryBrokerServesHealthAndAmqpOnTheReportedPorts() throws Exception {
        try (EmbeddedBroker broker = EmbeddedBroker.startInMemory()) {
            assertServes(broker);
            assertThat(broker.connectionString()).isEqualTo("Endpoint=sb://localhost:" + broker.amqpPort()
                    + ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;"
                    + "UseDevelopmentEmulator=true;");
        }
    }

    @Test
    void brokerOnADataDirectoryWithAConfigServesTooAndFreesItsPortsOnClose(@TempDir Path dir) throws Exception {
        String config = """
                {"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
                  "Queues": [{"Name": "embedded-q", "Properties": {}}], "Topics": []}],
                  "Logging": {"Type": "Console"}}}
                """;
        int amqpPort;
        try (EmbeddedBroker broker = EmbeddedBroker.start(dir.resolve("data"), config)) {
            assertServes(broker);
            amqpPort = broker.amqpPort();
        }
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(EmbeddedBroker.HOST, amqpPort), 1000);
            throw new AssertionError("the AMQP port still accepts connections after close");
        } catch (java.io.IOException expected) {
            // closed
        }
    }

    private static void assertServes(EmbeddedBroker broker) throws Exception {
        assertThat(broker.amqpPort()).isPositive();
        assertThat(broker.httpPort()).isPositive().isNotEqualTo(broker.amqpPort());
        HttpResponse<String> health = HTTP.send(HttpRequest.newBuilder(URI.create(broker.httpUrl() + "/health"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(EmbeddedBroker.HOST, broker.amqpPort()), 5000);
            assertThat(s.isConnected()).isTrue();
        }
    }
}
