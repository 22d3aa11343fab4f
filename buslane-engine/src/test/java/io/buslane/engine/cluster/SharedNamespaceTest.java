package io.buslane.engine.cluster;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.EngineHarness;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.persist.Storage;
import io.buslane.engine.receive.Receiver;
import io.buslane.journal.memory.InMemoryJournalFactory;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Cluster mode's namespace: every node writes the shared metadata, each write checked against what the others
 * stored first, and every node applies the others' changes when it refreshes. Two engines on one set of in-memory
 * journals stand for two nodes on one database.
 */
class SharedNamespaceTest {

    private final ManualClock clock = new ManualClock();
    private final InMemoryJournalFactory journals = new InMemoryJournalFactory();

    private Engine node(int... shards) {
        Engine e = Engine.startClusterNode(new EngineConfig(clock, Storage.of(journals), 4, ThreadingMode.MANUAL));
        for (int k : shards) {
            e.cluster().serveShard(k);
        }
        return e;
    }

    private static <T> T await(Engine e, CompletableFuture<T> f) {
        return Await.await(e, f);
    }

    @Test
    void anEntityCreatedChangedAndDeletedThroughOneNodeIsSeenByTheOtherAfterARefresh() {
        Engine a = node(0, 1);
        Engine b = node(2, 3);
        await(a, a.createQueue(QueueProperties.builder("orders").maxDeliveryCount(7).build()));
        assertThat(b.queue("orders")).isNull();
        assertThat(b.cluster().refreshNamespace()).isTrue();
        assertThat(b.cluster().refreshNamespace()).as("nothing new").isFalse();
        assertThat(b.queue("orders").properties().maxDeliveryCount()).isEqualTo(7);
        assertThat(b.queue("orders").id()).isEqualTo(a.queue("orders").id());

        // the node that serves the queue's shard stores and delivers its messages
        Engine owner = a.cluster().servesShard(a.queue("orders").partitions()[0].shard().index()) ? a : b;
        await(owner, owner.send("orders", List.of(EngineHarness.text("hello"))));
        EngineHarness.Sink sink = new EngineHarness.Sink();
        Receiver r = owner.createReceiver(EntityAddress.parse("orders"), ReceiveMode.RECEIVE_AND_DELETE, sink);
        r.addCredit(1);
        owner.runUntilIdle();
        assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("hello");

        // changed through B, seen by A
        await(b, b.updateQueue(b.queue("orders").properties().toBuilder().maxDeliveryCount(3).build()));
        a.cluster().refreshNamespace();
        assertThat(a.queue("orders").properties().maxDeliveryCount()).isEqualTo(3);

        await(a, a.deleteQueue("orders"));
        b.cluster().refreshNamespace();
        assertThat(b.queue("orders")).isNull();
        a.close();
        b.close();
    }

    @Test
    void aChangeCheckedAgainstAStaleViewIsCheckedAgainAgainstTheStoredNamespace() {
        Engine a = node(0, 1, 2, 3);
        Engine b = node();
        await(a, a.createQueue(QueueProperties.builder("same").build()));
        // B has not refreshed: its create is checked against the stored namespace first, not its stale view
        assertThatThrownBy(() -> await(b, b.createQueue(QueueProperties.builder("same").build())))
                .isInstanceOf(BrokerException.class)
                .satisfies(x -> assertThat(((BrokerException) x).kind()).isEqualTo(ErrorKind.ENTITY_ALREADY_EXISTS));
        await(b, b.createQueue(QueueProperties.builder("other").build()));
        a.cluster().refreshNamespace();
        assertThat(a.queue("other").id()).isNotEqualTo(a.queue("same").id());
        a.close();
        b.close();
    }

    @Test
    void subscriptionsAndRulesTravelAndAShardTakenLaterIsBuiltFromTheSharedNamespace() {
        Engine a = node(0, 1, 2, 3);
        Engine b = node();
        await(a, a.createTopic(TopicProperties.builder("events").build()));
        await(a, a.createSubscription(SubscriptionProperties.builder("events", "all").build(), List.of()));
        await(a, a.addRule("events", "all",
                new RuleProperties("red", new RuleProperties.SqlFilter("color = 'red'"), null)));
        b.cluster().refreshNamespace();
        assertThat(b.topic("events").subscription("all").rules()).extracting(RuleProperties::name)
                .containsExactly("$Default", "red");

        // A hands every shard to B: B builds the topic's partitions from the shared namespace and replays them
        await(a, a.send("events", List.of(EngineHarness.text("kept"))));
        for (int k = 0; k < 4; k++) {
            a.cluster().stopServingShard(k, "Test: B takes over.");
            b.cluster().serveShard(k);
        }
        EngineHarness.Sink sink = new EngineHarness.Sink();
        Receiver r = b.createReceiver(EntityAddress.subscription("events", "all"), ReceiveMode.RECEIVE_AND_DELETE,
                sink);
        r.addCredit(5);
        b.runUntilIdle();
        assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("kept");
        a.close();
        b.close();
    }
}
