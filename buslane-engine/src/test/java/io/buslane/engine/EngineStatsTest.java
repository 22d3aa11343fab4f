package io.buslane.engine;

import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.engine.api.EngineStats.Outcome;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The engine's metric counters: sends, deliveries, settlements by outcome and lock expiries; time is manual. */
class EngineStatsTest {

    private static final Duration LOCK = Duration.ofSeconds(30);

    @Test
    void countsSendsDeliveriesAndEverySettlementOutcome() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("q").lockDuration(LOCK).build());
            h.send("q", text("a"), text("b"), text("c"), text("d"), text("e"));
            EngineStats stats = h.engine.stats();
            assertThat(stats.sent()).isEqualTo(5);
            assertThat(stats.delivered()).isZero();

            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 5);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).hasSize(5);
            assertThat(stats.delivered()).isEqualTo(5);

            h.await(r.complete(got.get(0).lockToken()));
            h.await(r.abandon(got.get(1).lockToken(), null));
            h.await(r.defer(got.get(2).lockToken(), null));
            h.await(r.deadLetter(got.get(3).lockToken(), "r", "d", null));
            h.await(h.engine.release(EntityAddress.parse("q"), got.get(4).lockToken()));
            for (Outcome o : Outcome.values()) {
                assertThat(stats.settled(o)).as(o.name()).isEqualTo(1);
            }

            // receiving the deferred message by sequence number is a delivery too
            h.await(h.engine.receiveDeferred(EntityAddress.parse("q"), new long[] {got.get(2).sequenceNumber()},
                    ReceiveMode.PEEK_LOCK, null, null));
            assertThat(stats.delivered()).isEqualTo(6); // no credit left for redelivery: 5 + the deferred one
        }
    }

    @Test
    void sendsSpreadOverPartitionsAndScheduledMessagesAreCountedOnce() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("pq").enablePartitioning(true).build());
            for (int i = 0; i < 40; i++) { // one send per key: a batch with distinct keys is refused
                h.await(h.engine.send("pq", List.of(Message.builder().body(new byte[] {(byte) i})
                        .partitionKey("k" + i).build())));
            }
            assertThat(h.engine.stats().sent()).isEqualTo(40);

            long due = h.clock.epochMillis() + 60_000;
            h.await(h.engine.schedule("pq", List.of(text("s1").toBuilder().scheduledEnqueueTimeMs(due).build(),
                    text("s2").toBuilder().scheduledEnqueueTimeMs(due).build())));
            assertThat(h.engine.stats().sent()).isEqualTo(42);
        }
    }

    @Test
    void failedOperationsAreNotCounted() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("q").lockDuration(LOCK).build());
            assertThatThrownBy(() -> h.send("missing", text("a"))).isInstanceOf(BrokerException.class);
            assertThatThrownBy(() -> h.await(h.engine.complete(EntityAddress.parse("q"), UUID.randomUUID())))
                    .isInstanceOf(BrokerException.class);
            assertThat(h.engine.stats().sent()).isZero();
            assertThat(h.engine.stats().settled(Outcome.COMPLETE)).isZero();
        }
    }

    @Test
    void lockExpiriesAreCountedAndSurviveEntityDeletion() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("q").lockDuration(LOCK).build());
            h.send("q", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 2);
            assertThat(sink.take()).hasSize(2);
            h.advance(LOCK.minusMillis(1));
            assertThat(h.engine.shards().lockExpiries()).isZero();
            h.advance(Duration.ofMillis(2));
            assertThat(h.engine.shards().lockExpiries()).isEqualTo(2);

            h.await(h.engine.deleteQueue("q"));
            assertThat(h.engine.shards().lockExpiries()).isEqualTo(2);
        }
    }
}
