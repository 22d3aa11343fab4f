package io.buslane.junit;

import io.buslane.server.config.ConfigLoader;
import io.buslane.server.config.Topology;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Config.json the builder composes, read back by the broker's own loader (no broker started). */
class BuslaneTest {

    private static Topology topology(Buslane b) {
        return ConfigLoader.parse("test", b.configText().getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void neitherConfigNorCodeMeansTheStarterTopology() {
        assertThat(Buslane.inMemory().configText()).isNull();
    }

    @Test
    void configTextIsPassedUnchangedWithoutEntitiesInCode() {
        String json = "{ // comment\n \"UserConfig\": {\"Namespaces\": [{\"Name\": \"ns\"}]} }";
        assertThat(Buslane.inMemory().withConfig(json).configText()).isEqualTo(json);
    }

    @Test
    void entitiesInCodeBecomeConfigEntries() {
        Topology t = topology(Buslane.inMemory()
                .queue("orders", q -> q.requiresSession(true).maxDeliveryCount(5).lockDuration(Duration.ofSeconds(30))
                        .duplicateDetection(Duration.ofMinutes(2)).forwardDeadLetteredMessagesTo("dead"))
                .queue("dead")
                .topic("events", e -> e.subscription("all")
                        .subscription("eu", s -> s.maxDeliveryCount(2).sqlFilter("eu", "region = 'eu'"))));
        assertThat(t.queues()).extracting(q -> q.name()).containsExactly("orders", "dead");
        var orders = t.findQueue("orders").orElseThrow();
        assertThat(orders.requiresSession()).isTrue();
        assertThat(orders.maxDeliveryCount()).isEqualTo(5);
        assertThat(orders.lockDuration()).isEqualTo(Duration.ofSeconds(30));
        assertThat(orders.requiresDuplicateDetection()).isTrue();
        assertThat(orders.forwardDeadLetteredMessagesTo()).isEqualTo("dead");
        var events = t.findTopic("events").orElseThrow();
        assertThat(events.subscriptions()).hasSize(2);
        var eu = events.findSubscription("eu").orElseThrow();
        assertThat(eu.subscription().maxDeliveryCount()).isEqualTo(2);
        assertThat(eu.rules()).extracting(r -> r.name()).containsExactly("eu");
    }

    @Test
    void entitiesInCodeJoinAndReplaceThoseOfTheFile() {
        String json = """
                {"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
                  // comments as the emulator allows
                  "Queues": [{"Name": "kept"}, {"Name": "Orders", "Properties": {"MaxDeliveryCount": 9}}]}],
                  "Logging": {"Type": "File"}}}
                """;
        Topology t = topology(Buslane.inMemory().withConfig(json).queue("orders", q -> q.maxDeliveryCount(4)));
        assertThat(t.queues()).extracting(q -> q.name()).containsExactly("kept", "orders");
        assertThat(t.findQueue("orders").orElseThrow().maxDeliveryCount()).isEqualTo(4);
    }

    @Test
    void propertyTakesOnlyJsonValues() {
        assertThatThrownBy(() -> Buslane.inMemory().queue("q", q -> q.property("UserMetadata", new Object())))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
