package io.buslane.server;

import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.server.config.Topology;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TopologyApplierTest {

    /**
     * A forwarding target's address as an admin client wrote it is not a difference from Config.json (which has
     * none): applying the same topology again changes nothing; changing the target drops the stale address.
     */
    @Test
    void anAdminClientsForwardingAddressIsNoDifferenceFromTheConfiguredTarget() throws Exception {
        ManualClock clock = new ManualClock();
        try (Engine engine = Engine.start(new EngineConfig(clock, Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.DEDICATED))) {
            QueueProperties target = QueueProperties.builder("target").build();
            QueueProperties other = QueueProperties.builder("other").build();
            QueueProperties source = QueueProperties.builder("source").forwardTo("target").build();
            TopologyApplier.apply(engine, new Topology("ns", List.of(target, other, source), List.of()));
            engine.updateQueue(source.toBuilder().forwardToAddress("sb://localhost:5300/target").build()).get();
            long updatedAt = engine.queue("source").updatedAtMs();
            clock.advanceMs(60_000);

            TopologyApplier.apply(engine, new Topology("ns", List.of(target, other, source), List.of()));
            assertThat(engine.queue("source").properties().forwardToAddress()).isEqualTo("sb://localhost:5300/target");
            assertThat(engine.queue("source").updatedAtMs()).isEqualTo(updatedAt);

            TopologyApplier.apply(engine, new Topology("ns", List.of(target, other,
                    source.toBuilder().forwardTo("other").build()), List.of()));
            assertThat(engine.queue("source").properties().forwardTo()).isEqualTo("other");
            assertThat(engine.queue("source").properties().forwardToAddress()).isNull();
        }
    }

    /**
     * Cluster mode, nodes started together with one Config.json: another node created an entity after this one read
     * the namespace (its create finds it when it reads the namespace again first): applying the topology takes it as
     * existing instead of failing with "already exists", and the same properties need no update.
     */
    @Test
    void anEntityAnotherNodeCreatedAMomentAgoIsTakenAsExisting() {
        ManualClock clock = new ManualClock();
        InMemoryJournalFactory journals = new InMemoryJournalFactory();
        try (Engine a = Engine.startClusterNode(new EngineConfig(clock, Storage.of(journals), 1,
                ThreadingMode.DEDICATED));
             Engine b = Engine.startClusterNode(new EngineConfig(clock, Storage.of(journals), 1,
                     ThreadingMode.DEDICATED))) {
            a.cluster().serveShard(0);
            QueueProperties q = QueueProperties.builder("q-peek").build();
            Topology topology = new Topology("ns", List.of(q), List.of());
            TopologyApplier.apply(a, topology);
            long createdAt = a.queue("q-peek").updatedAtMs();

            TopologyApplier.apply(b, topology, false); // a's create landed after b read the namespace
            assertThat(b.queue("q-peek")).isNotNull();
            assertThat(b.queue("q-peek").updatedAtMs()).as("nothing to update").isEqualTo(createdAt);
        }
    }
}
