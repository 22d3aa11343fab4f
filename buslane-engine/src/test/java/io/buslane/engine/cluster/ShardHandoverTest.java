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
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.persist.Storage;
import io.buslane.engine.receive.Receiver;
import io.buslane.journal.memory.InMemoryJournalFactory;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntPredicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Cluster mode's unit of ownership is the shard: a node serves some shards, and may stop serving one (it moves, or
 * another node took it over) or start serving one (replay, then serve). Two engines on one set of journals stand
 * for two nodes on one database; manual threading and a manual clock, no sleeps.
 */
class ShardHandoverTest {

    private final ManualClock clock = new ManualClock();
    private final InMemoryJournalFactory journals = new InMemoryJournalFactory();

    private Engine node(IntPredicate serves) {
        return Engine.start(new EngineConfig(clock, Storage.of(journals), 4, ThreadingMode.MANUAL), serves);
    }

    private static <T> T await(Engine e, CompletableFuture<T> f) {
        return Await.await(e, f);
    }

    private static int shardOf(Engine e, String queue, int partition) {
        return e.queue(queue).partitions()[partition].shard().index();
    }

    @Test
    void aShardGivenUpClosesItsReceiversRefusesWorkAndComesBackWithItsMessagesAndCounters() {
        Engine e = node(s -> true);
        await(e, e.createQueue(QueueProperties.builder("q").build()));
        int k = shardOf(e, "q", 0);
        await(e, e.send("q", List.of(EngineHarness.text("a"), EngineHarness.text("b"))));
        EngineHarness.Sink sink = new EngineHarness.Sink();
        Receiver r = e.createReceiver(EntityAddress.parse("q"), ReceiveMode.PEEK_LOCK, sink);
        r.addCredit(1);
        e.runUntilIdle();
        assertThat(sink.take()).hasSize(1);

        e.cluster().stopServingShard(k, "Test: the shard moves.");
        assertThat(e.cluster().servesShard(k)).isFalse();
        assertThat(sink.closedWith).isNotNull();
        assertThat(sink.closedWith.kind()).isEqualTo(ErrorKind.SERVER_BUSY);
        assertThatThrownBy(() -> await(e, e.send("q", List.of(EngineHarness.text("c")))))
                .isInstanceOf(BrokerException.class)
                .satisfies(x -> assertThat(((BrokerException) x).kind()).isEqualTo(ErrorKind.SERVER_BUSY));

        e.cluster().serveShard(k);
        assertThat(e.cluster().servesShard(k)).isTrue();
        EngineHarness.Sink again = new EngineHarness.Sink();
        Receiver r2 = e.createReceiver(EntityAddress.parse("q"), ReceiveMode.RECEIVE_AND_DELETE, again);
        r2.addCredit(10);
        e.runUntilIdle();
        // both messages are back (the lock of the first died with the shard)
        List<ReceivedMessage> got = again.take();
        assertThat(got).extracting(EngineHarness::text).containsExactly("a", "b");
        await(e, e.send("q", List.of(EngineHarness.text("d"))));
        e.runUntilIdle();
        List<ReceivedMessage> after = again.take();
        assertThat(after).hasSize(1);
        // the counter came back with the shard: no sequence number is used twice
        assertThat(after.get(0).sequenceNumber()).isGreaterThan(got.get(1).sequenceNumber());
        e.close();
    }

    @Test
    void twoNodesShareTheShardsAndOneTakesOverWhatTheOtherGaveUp() {
        Engine setup = node(s -> true);
        await(setup, setup.createQueue(QueueProperties.builder("p").enablePartitioning(true).build()));
        setup.close();
        Engine a = node(s -> s < 2);
        Engine b = node(s -> s >= 2);
        PartitionRef[] refs = a.queue("p").partitions();
        // a message for every partition this node serves, by session-less partition keys
        Set<String> sent = new HashSet<>();
        for (int i = 0; i < 64; i++) {
            Message m = EngineHarness.text("m" + i).toBuilder().partitionKey("k" + i).build();
            Engine owner = refs[partitionOf(a, "k" + i)].shard().index() < 2 ? a : b;
            await(owner, owner.send("p", List.of(m)));
            sent.add("m" + i);
        }
        int moving = 0;
        a.cluster().stopServingShard(moving, "Test: a gives shard 0 to b.");
        b.cluster().serveShard(moving);
        assertThat(a.cluster().servesShard(moving)).isFalse();
        assertThat(b.cluster().servesShard(moving)).isTrue();
        Set<String> received = new HashSet<>();
        for (Engine n : List.of(a, b)) {
            EngineHarness.Sink sink = new EngineHarness.Sink();
            Receiver r = n.createReceiver(EntityAddress.parse("p"), ReceiveMode.RECEIVE_AND_DELETE, sink);
            r.addCredit(1000);
            n.runUntilIdle();
            for (ReceivedMessage m : sink.take()) {
                assertThat(received.add(EngineHarness.text(m))).isTrue();
            }
        }
        assertThat(received).isEqualTo(sent);
        a.close();
        b.close();
    }

    @Test
    void drainingAReceiverCompletesWhenSomeOfItsPartitionsAreServedElsewhere() {
        Engine setup = node(s -> true);
        await(setup, setup.createQueue(QueueProperties.builder("p").enablePartitioning(true).build()));
        setup.close();
        Engine a = node(s -> s < 2);
        Receiver r = a.createReceiver(EntityAddress.parse("p"), ReceiveMode.PEEK_LOCK, new EngineHarness.Sink());
        r.addCredit(5);
        CompletableFuture<Long> drained = r.drain();
        a.runUntilIdle();
        // without an answer for the partitions another node serves, a drain (an SDK's receive) would never end
        assertThat(drained).isCompletedWithValue(5L);
        a.close();
    }

    @Test
    void aNodeWhoseClockIsBehindNeverStampsAnEnqueuedTimeEarlierThanTheShardsLastOne() {
        Engine a = node(s -> true);
        await(a, a.createQueue(QueueProperties.builder("t").build()));
        int k = shardOf(a, "t", 0);
        clock.setEpochMillis(java.time.Instant.parse("2026-11-27T12:00:00Z").toEpochMilli());
        await(a, a.send("t", List.of(EngineHarness.text("from a"))));
        a.cluster().stopServingShard(k, "Test: the shard moves to a node whose clock is 10 s behind.");
        ManualClock behind = new ManualClock();
        behind.setEpochMillis(java.time.Instant.parse("2026-11-27T11:59:50Z").toEpochMilli());
        Engine b = Engine.start(new EngineConfig(behind, Storage.of(journals), 4, ThreadingMode.MANUAL), s -> false);
        b.cluster().serveShard(k);
        await(b, b.send("t", List.of(EngineHarness.text("from b"))));
        EngineHarness.Sink sink = new EngineHarness.Sink();
        Receiver r = b.createReceiver(EntityAddress.parse("t"), ReceiveMode.RECEIVE_AND_DELETE, sink);
        r.addCredit(2);
        b.runUntilIdle();
        List<ReceivedMessage> got = sink.take();
        assertThat(got).hasSize(2);
        assertThat(got.get(1).enqueuedTimeMs()).isGreaterThanOrEqualTo(got.get(0).enqueuedTimeMs());
        a.close();
        b.close();
    }

    @Test
    void aReceiverOnAnEntityNoneOfWhosePartitionsIsServedHereIsRefusedRetriably() {
        Engine setup = node(s -> true);
        await(setup, setup.createQueue(QueueProperties.builder("elsewhere").build()));
        int k = shardOf(setup, "elsewhere", 0);
        setup.close();
        Engine a = node(s -> s != k);
        assertThatThrownBy(() -> a.createReceiver(EntityAddress.parse("elsewhere"), ReceiveMode.PEEK_LOCK,
                new EngineHarness.Sink()))
                .isInstanceOf(BrokerException.class)
                .satisfies(x -> assertThat(((BrokerException) x).kind()).isEqualTo(ErrorKind.SERVER_BUSY));
        a.close();
    }

    private static int partitionOf(Engine e, String key) {
        return io.buslane.engine.routing.PartitionDirectory.partitionIndexFor(
                EngineHarness.text("x").toBuilder().partitionKey(key).build(), false,
                e.queue("p").partitions().length, 0);
    }

    @Test
    void aWaitingSessionAcceptFailsAtOnceWhenItsShardIsGivenUp() {
        Engine e = node(s -> true);
        await(e, e.createQueue(QueueProperties.builder("s").requiresSession(true).build()));
        int k = shardOf(e, "s", 0);
        CompletableFuture<Receiver> accept = e.acceptSession(EntityAddress.parse("s"), null, ReceiveMode.PEEK_LOCK,
                Duration.ofMinutes(5).toMillis(), new EngineHarness.Sink());
        e.runUntilIdle();
        assertThat(accept).isNotDone();
        e.cluster().stopServingShard(k, "Test: the shard moves.");
        assertThat(accept).isCompletedExceptionally();
        assertThatThrownBy(accept::join).hasCauseInstanceOf(BrokerException.class)
                .satisfies(x -> assertThat(((BrokerException) x.getCause()).kind()).isEqualTo(ErrorKind.SERVER_BUSY));
        e.close();
    }
}
