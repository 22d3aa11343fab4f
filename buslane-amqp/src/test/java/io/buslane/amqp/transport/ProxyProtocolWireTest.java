package io.buslane.amqp.transport;

import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.testsupport.amqp.RawAmqpClient;
import io.vertx.core.Vertx;
import org.apache.qpid.proton.amqp.security.SaslCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The PROXY protocol from configured balancers (docs/security.md, {@code --proxy-protocol-from}): behind a TCP
 * balancer every client has the balancer's address, so the throttle and the logs count them as one; with the header
 * they see each client. Only the configured balancers may send it (anyone else could claim any address), and with it
 * on every connection must carry it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ProxyProtocolWireTest {

    private static final byte[] CREDENTIALS = ("\0" + SasRule.EMULATOR_KEY_NAME + "\0" + SasRule.EMULATOR_KEY)
            .getBytes(StandardCharsets.UTF_8);

    private Engine engine;
    private Vertx vertx;

    @BeforeEach
    void start() {
        engine = Engine.start(new EngineConfig(Clock.system(), Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.DEDICATED));
        vertx = Vertx.vertx();
    }

    @AfterEach
    void stop() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        engine.close();
    }

    private AmqpServer server(Set<String> balancers) throws Exception {
        return AmqpServer.start(vertx, engine, Clock.system(), new CbsAuthorizer(SasValidator.emulatorDefault()),
                AmqpOptions.defaults("127.0.0.1", 0).withProxyProtocolFrom(balancers));
    }

    private static byte[] header(String client) {
        return ("PROXY TCP4 " + client + " 127.0.0.1 40000 5672\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void aConfiguredBalancersHeaderGivesEachClientItsOwnAddress() throws Exception {
        AmqpServer server = server(Set.of("127.0.0.1"));
        try (RawAmqpClient a = RawAmqpClient.connect(server.port(), 5_000);
                RawAmqpClient b = RawAmqpClient.connect(server.port(), 5_000)) {
            a.write(header("203.0.113.7"));
            assertThat(a.sasl("PLAIN", CREDENTIALS).getCode()).isEqualTo(SaslCode.OK);
            b.write(header("203.0.113.8"));
            assertThat(b.sasl("PLAIN", CREDENTIALS).getCode()).isEqualTo(SaslCode.OK);
            assertThat(server.openRemoteHosts()).containsExactlyInAnyOrder("203.0.113.7", "203.0.113.8");
        } finally {
            server.close();
        }
    }

    @Test
    void withItOnAConnectionWithoutTheHeaderOrFromAnotherPeerIsClosed() throws Exception {
        AmqpServer server = server(Set.of("127.0.0.1"));
        try (RawAmqpClient c = RawAmqpClient.connect(server.port(), 5_000)) {
            assertThatThrownBy(() -> c.sasl("PLAIN", CREDENTIALS)).isInstanceOf(IOException.class);
        } finally {
            server.close();
        }
        AmqpServer elsewhere = server(Set.of("192.0.2.1")); // this test is not that balancer
        try (RawAmqpClient c = RawAmqpClient.connect(elsewhere.port(), 5_000)) {
            c.write(header("203.0.113.7"));
            assertThatThrownBy(() -> c.sasl("PLAIN", CREDENTIALS)).isInstanceOf(IOException.class);
        } finally {
            elsewhere.close();
        }
    }

    @Test
    void balancerAddressesAreComparedInOneSpelling() {
        assertThat(AmqpOptions.normalisedAddress("::1")).isEqualTo(AmqpOptions.normalisedAddress("0:0:0:0:0:0:0:1"))
                .isEqualTo(AmqpOptions.normalisedAddress("[::1]"));
        assertThat(AmqpOptions.normalisedAddress(" 10.0.0.5 ")).isEqualTo("10.0.0.5");
        assertThat(AmqpOptions.defaults("127.0.0.1", 0).withProxyProtocolFrom(Set.of("fd00::10", " 127.0.0.1"))
                .proxyProtocolFrom()).containsExactlyInAnyOrder(AmqpOptions.normalisedAddress("fd00:0:0:0:0:0:0:10"),
                "127.0.0.1");
        assertThatThrownBy(() -> AmqpOptions.normalisedAddress("balancer.example"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("IP address");
    }
}
