package io.buslane.amqp.transport;

import io.buslane.common.auth.AuthFailureThrottle;
import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.testsupport.amqp.RawAmqpClient;
import io.vertx.core.Vertx;
import org.apache.qpid.proton.amqp.security.SaslCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Failed SASL PLAIN attempts are throttled per (address, key name), and the right credentials are never refused: a
 * client behind the same load balancer as one that keeps failing still gets in (a manual clock moves time on).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AuthThrottleWireTest {

    @Test
    void repeatedPlainFailuresNeverLockOutTheRightCredentials() throws Exception {
        ManualClock clock = new ManualClock();
        Engine engine = Engine.start(new EngineConfig(Clock.system(), Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.DEDICATED));
        Vertx vertx = Vertx.vertx();
        AmqpServer server = AmqpServer.start(vertx, engine, clock, new CbsAuthorizer(SasValidator.emulatorDefault()),
                AmqpOptions.defaults("127.0.0.1", 0));
        try {
            for (int i = 0; i < AuthFailureThrottle.DEFAULT_MAX_FAILURES; i++) {
                assertThat(plain(server, "wrong")).isEqualTo(SaslCode.AUTH);
            }
            assertThat(plain(server, "wrong")).as("throttled").isEqualTo(SaslCode.AUTH);
            assertThat(plain(server, SasRule.EMULATOR_KEY)).as("the right key, from the same address")
                    .isEqualTo(SaslCode.OK);
            clock.advance(Duration.ofMillis(AuthFailureThrottle.DEFAULT_BLOCK_MS + 1));
            assertThat(plain(server, SasRule.EMULATOR_KEY)).as("after the back-off").isEqualTo(SaslCode.OK);
        } finally {
            server.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            engine.close();
        }
    }

    private static SaslCode plain(AmqpServer server, String key) throws Exception {
        try (RawAmqpClient c = RawAmqpClient.connect(server.port(), 5_000)) {
            return c.sasl("PLAIN", ("\0" + SasRule.EMULATOR_KEY_NAME + "\0" + key).getBytes(StandardCharsets.UTF_8))
                    .getCode();
        }
    }
}
