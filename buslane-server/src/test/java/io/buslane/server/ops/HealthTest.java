package io.buslane.server.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** /health's answer through the broker's lifecycle: 503 starting, 200 ready, 503 from the start of shutdown. */
class HealthTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void unhealthyWhileStartingHealthyWhenReadyUnhealthyOnceStopping() throws Exception {
        ManualClock clock = new ManualClock();
        Health health = new Health(clock);
        Health.Report starting = health.report();
        assertThat(starting.status()).isEqualTo(503);
        JsonNode s = JSON.readTree(starting.json());
        assertThat(s.get("status").asText()).isEqualTo("unhealthy");
        assertThat(s.get("state").asText()).isEqualTo("STARTING");
        assertThat(s.has("amqpPort")).isFalse();

        try (Engine engine = Engine.start(new EngineConfig(clock, Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.MANUAL))) {
            var created = engine.createQueue(QueueProperties.builder("q").build());
            engine.runUntilIdle();
            created.join();
            clock.advance(Duration.ofSeconds(42));
            health.ready(engine, 5672, 5300);
            Health.Report ready = health.report();
            assertThat(ready.status()).isEqualTo(200);
            JsonNode r = JSON.readTree(ready.json());
            assertThat(r.get("status").asText()).isEqualTo("healthy");
            assertThat(r.get("state").asText()).isEqualTo("READY");
            assertThat(r.get("amqpPort").asInt()).isEqualTo(5672);
            assertThat(r.get("httpPort").asInt()).isEqualTo(5300);
            assertThat(r.get("uptimeSeconds").asLong()).isEqualTo(42);
            assertThat(r.get("entities").get("queues").asInt()).isEqualTo(1);
            assertThat(r.get("entities").get("topics").asInt()).isZero();

            health.stopping();
            Health.Report stopping = health.report();
            assertThat(stopping.status()).isEqualTo(503);
            assertThat(JSON.readTree(stopping.json()).get("state").asText()).isEqualTo("STOPPING");
        }
    }
}
