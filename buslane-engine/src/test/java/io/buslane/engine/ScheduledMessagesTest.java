package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.SequenceCounter;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Scheduled messages (message-sequencing.md "Scheduled messages"; service-bus-behaviour.md §2.3). */
class ScheduledMessagesTest {

    // ------------------------------------------------------------------------------------------------ helpers

    private static Message at(String body, long scheduledTimeMs) {
        return Message.builder().body(body.getBytes(StandardCharsets.UTF_8)).scheduledEnqueueTimeMs(scheduledTimeMs)
                .build();
    }

    private static List<ReceivedMessage> peekAll(EngineHarness h, String address) {
        return h.await(h.engine.peek(EntityAddress.parse(address), 0, 1000, null));
    }

    private static RuntimeCounts counts(EngineHarness h, String path) {
        return h.await(h.engine.counts(path));
    }

    private static void assertKind(Throwable t, ErrorKind kind) {
        assertThat(t).isInstanceOf(BrokerException.class);
        assertThat(((BrokerException) t).kind()).isEqualTo(kind);
    }

    // ------------------------------------------------------------------------------------------------ tests

    @Test
    void scheduledEnqueueTimeOnANormalSendDelaysTheMessageUntilItsTime() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink, 10);
            h.send("q", at("later", t0 + 60_000), text("now"));

            List<ReceivedMessage> first = sink.take();
            assertThat(first).extracting(EngineHarness::text).containsExactly("now");

            h.advance(Duration.ofMillis(59_999));
            assertThat(sink.take()).isEmpty();

            h.advance(Duration.ofMillis(1));
            List<ReceivedMessage> later = sink.take();
            assertThat(later).extracting(EngineHarness::text).containsExactly("later");
            ReceivedMessage m = later.get(0);
            assertThat(m.state()).isEqualTo(MessageState.ACTIVE);
            // enqueued from the scheduled state, it keeps reporting it (as the service does); "now" never was
            assertThat(m.reportedState()).isEqualTo(MessageState.SCHEDULED);
            assertThat(first.get(0).reportedState()).isEqualTo(MessageState.ACTIVE);
            // the scheduled message had number 1 and "now" number 2; activation assigns a new number
            assertThat(first.get(0).sequenceNumber()).isEqualTo(2L);
            assertThat(m.sequenceNumber()).isEqualTo(3L);
            assertThat(m.enqueuedTimeMs()).isEqualTo(t0 + 60_000);
        }
    }

    @Test
    void aScheduledTimeThatIsNotInTheFutureEnqueuesAtOnce() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long now = h.clock.epochMillis();
            h.send("q", at("past", now - 5_000), at("now", now));
            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(peeked).extracting(EngineHarness::text).containsExactly("past", "now");
            assertThat(peeked).extracting(ReceivedMessage::state).containsOnly(MessageState.ACTIVE);
            assertThat(peeked).extracting(ReceivedMessage::reportedState).containsOnly(MessageState.ACTIVE);
            assertThat(peeked).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 2L);
            assertThat(counts(h, "q").scheduledMessageCount()).isZero();
        }
    }

    @Test
    void scheduleReturnsSequenceNumbersAndActivationAssignsNewOnes() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            h.send("q", text("a"));
            long[] seqs = h.await(h.engine.schedule("q", List.of(at("s1", t0 + 10_000), at("s2", t0 + 20_000))));
            assertThat(seqs).containsExactly(2L, 3L);
            h.send("q", text("b"));

            h.advance(Duration.ofSeconds(5));
            long tActivate = t0 + 10_000;
            h.advance(Duration.ofSeconds(5));
            List<ReceivedMessage> peeked = peekAll(h, "q");
            // s1 activated with number 5 (after b = 4); s2 is still scheduled under number 3
            assertThat(peeked).extracting(EngineHarness::text).containsExactly("a", "s2", "b", "s1");
            assertThat(peeked).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 3L, 4L, 5L);
            ReceivedMessage s1 = peeked.get(3);
            assertThat(s1.state()).isEqualTo(MessageState.ACTIVE);
            assertThat(s1.enqueuedTimeMs()).isEqualTo(tActivate);
            assertThat(s1.scheduledEnqueueTimeMs()).isNull();
            assertThat(counts(h, "q").scheduledMessageCount()).isEqualTo(1L);
        }
    }

    @Test
    void scheduleWithoutATimeIsRejected() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            assertThatThrownBy(() -> h.await(h.engine.schedule("q", List.of(text("x")))))
                    .satisfies(t -> assertKind(t, ErrorKind.ARGUMENT));
            assertThat(counts(h, "q").scheduledMessageCount()).isZero();
        }
    }

    @Test
    void peekShowsScheduledMessagesMergedInSequenceOrder() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            h.send("q", text("a"));
            h.send("q", at("s1", t0 + 60_000));
            h.send("q", text("b"));
            long[] s2 = h.await(h.engine.schedule("q", List.of(at("s2", t0 + 120_000))));
            h.send("q", text("c"));

            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(peeked).extracting(EngineHarness::text).containsExactly("a", "s1", "b", "s2", "c");
            assertThat(peeked).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 2L, 3L, 4L, 5L);
            assertThat(peeked).extracting(ReceivedMessage::state).containsExactly(MessageState.ACTIVE,
                    MessageState.SCHEDULED, MessageState.ACTIVE, MessageState.SCHEDULED, MessageState.ACTIVE);
            assertThat(peeked.get(1).scheduledEnqueueTimeMs()).isEqualTo(t0 + 60_000);
            assertThat(peeked.get(3).scheduledEnqueueTimeMs()).isEqualTo(t0 + 120_000);
            assertThat(peeked.get(3).sequenceNumber()).isEqualTo(s2[0]);
            assertThat(peeked).extracting(ReceivedMessage::lockToken).containsOnlyNulls();
            // browsing (again) counts no delivery
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::deliveryCount).containsOnly(0);

            // browsing from a number inside the range, and a bounded page
            List<ReceivedMessage> page = h.await(h.engine.peek(EntityAddress.parse("q"), 2, 2, null));
            assertThat(page).extracting(EngineHarness::text).containsExactly("s1", "b");
            List<ReceivedMessage> tail = h.await(h.engine.peek(EntityAddress.parse("q"), 4, 10, null));
            assertThat(tail).extracting(EngineHarness::text).containsExactly("s2", "c");

            // scheduled messages are not delivered to receivers
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink, 10);
            List<ReceivedMessage> received = sink.take();
            assertThat(received).extracting(EngineHarness::text).containsExactly("a", "b", "c");
            assertThat(received).extracting(ReceivedMessage::deliveryCount).containsOnly(0);
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::state).containsOnly(MessageState.SCHEDULED);
        }
    }

    @Test
    void cancelledMessagesAreNeverDelivered() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 10);
            long[] seqs = h.await(h.engine.schedule("q", List.of(at("x", t0 + 30_000), at("y", t0 + 30_000))));
            assertThat(counts(h, "q").scheduledMessageCount()).isEqualTo(2L);

            h.await(h.engine.cancelScheduled("q", new long[] {seqs[0]}));
            assertThat(counts(h, "q").scheduledMessageCount()).isEqualTo(1L);
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("y");

            h.advance(Duration.ofMinutes(10));
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("y");
            assertThat(counts(h, "q").scheduledMessageCount()).isZero();
            assertThat(counts(h, "q").activeMessageCount()).isEqualTo(1L);

            // and not after a restart either
            h.crashAndRestart();
            EngineHarness.Sink sink2 = h.sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink2, 10);
            h.advance(Duration.ofMinutes(10));
            assertThat(sink2.take()).extracting(EngineHarness::text).containsExactly("y");
        }
    }

    @Test
    void cancelAfterActivationFailsAndTheCountNeverGoesNegative() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            long[] seqs = h.await(h.engine.schedule("q", List.of(at("x", t0 + 1_000))));
            h.advance(Duration.ofSeconds(1));
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::state).containsExactly(MessageState.ACTIVE);

            assertThatThrownBy(() -> h.await(h.engine.cancelScheduled("q", seqs)))
                    .satisfies(t -> assertKind(t, ErrorKind.MESSAGE_NOT_FOUND));
            RuntimeCounts c = counts(h, "q");
            assertThat(c.scheduledMessageCount()).isZero();
            assertThat(c.activeMessageCount()).isEqualTo(1L);
            // the activated message is untouched
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("x");
        }
    }

    @Test
    void cancelRacingActivationHasExactlyOneWinner() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            long[] seqs = h.await(h.engine.schedule("q", List.of(at("x", t0 + 1_000))));
            // the schedule time passes and the cancel arrives before the engine runs again: both in one cycle
            h.clock.advance(Duration.ofSeconds(1));
            var cancel = h.engine.cancelScheduled("q", seqs);
            h.engine.runUntilIdle();
            boolean cancelled = !cancel.isCompletedExceptionally();
            List<ReceivedMessage> peeked = peekAll(h, "q");
            RuntimeCounts c = counts(h, "q");
            assertThat(c.scheduledMessageCount()).isZero();
            if (cancelled) {
                assertThat(peeked).isEmpty();
                assertThat(c.activeMessageCount()).isZero();
            } else {
                assertThatThrownBy(cancel::join).hasCauseInstanceOf(BrokerException.class)
                        .satisfies(t -> assertKind(t.getCause(), ErrorKind.MESSAGE_NOT_FOUND));
                assertThat(peeked).extracting(EngineHarness::text).containsExactly("x");
                assertThat(c.activeMessageCount()).isEqualTo(1L);
            }
            h.advance(Duration.ofMinutes(1));
            assertThat(counts(h, "q").scheduledMessageCount()).isZero();
            assertThat(peekAll(h, "q")).hasSize(cancelled ? 0 : 1);
        }
    }

    @Test
    void cancellingTwiceOrAnUnknownNumberFails() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long[] seqs = h.await(h.engine.schedule("q", List.of(at("x", h.clock.epochMillis() + 60_000))));
            h.await(h.engine.cancelScheduled("q", seqs));
            assertThatThrownBy(() -> h.await(h.engine.cancelScheduled("q", seqs)))
                    .satisfies(t -> assertKind(t, ErrorKind.MESSAGE_NOT_FOUND));
            assertThatThrownBy(() -> h.await(h.engine.cancelScheduled("q", new long[] {42})))
                    .satisfies(t -> assertKind(t, ErrorKind.MESSAGE_NOT_FOUND));
            assertThat(counts(h, "q").scheduledMessageCount()).isZero();
        }
    }

    @Test
    void cancellingAnActiveMessagesNumberDoesNotTouchIt() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", text("a"));
            assertThatThrownBy(() -> h.await(h.engine.cancelScheduled("q", new long[] {1})))
                    .satisfies(t -> assertKind(t, ErrorKind.MESSAGE_NOT_FOUND));
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("a");
        }
    }

    @Test
    void scheduledMessagesSurviveARestartAndStillFire() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            long[] seqs = h.await(h.engine.schedule("q", List.of(at("x", t0 + 60_000))));
            h.crashAndRestart();

            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(peeked).extracting(ReceivedMessage::sequenceNumber).containsExactly(seqs[0]);
            assertThat(peeked.get(0).state()).isEqualTo(MessageState.SCHEDULED);
            assertThat(peeked.get(0).scheduledEnqueueTimeMs()).isEqualTo(t0 + 60_000);
            assertThat(counts(h, "q").scheduledMessageCount()).isEqualTo(1L);

            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 10);
            h.advance(Duration.ofMillis(59_999));
            assertThat(sink.take()).isEmpty();
            h.advance(Duration.ofMillis(1));
            List<ReceivedMessage> got = sink.take();
            assertThat(got).extracting(EngineHarness::text).containsExactly("x");
            assertThat(got.get(0).sequenceNumber()).isEqualTo(seqs[0] + 1);
            assertThat(got.get(0).enqueuedTimeMs()).isEqualTo(t0 + 60_000);
        }
    }

    @Test
    void messagesThatFellDueWhileDownFireOnStart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            h.await(h.engine.schedule("q", List.of(at("x", t0 + 10_000), at("y", t0 + 20_000),
                    at("z", t0 + 3_600_000))));
            // the broker is "down" while the clock moves past two of the schedule times
            h.clock.advance(Duration.ofMinutes(5));
            long restartTime = h.clock.epochMillis();
            h.crashAndRestart();

            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(peeked).extracting(EngineHarness::text).containsExactly("z", "x", "y");
            assertThat(peeked).extracting(ReceivedMessage::state).containsExactly(MessageState.SCHEDULED,
                    MessageState.ACTIVE, MessageState.ACTIVE);
            assertThat(peeked).extracting(ReceivedMessage::sequenceNumber).containsExactly(3L, 4L, 5L);
            assertThat(peeked.get(1).enqueuedTimeMs()).isEqualTo(restartTime);
            assertThat(peeked.get(2).enqueuedTimeMs()).isEqualTo(restartTime);
            assertThat(counts(h, "q").scheduledMessageCount()).isEqualTo(1L);

            // activated exactly once, also across a further restart
            h.crashAndRestart();
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("z", "x", "y");
            h.send("q", text("w"));
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::sequenceNumber).containsExactly(3L, 4L, 5L, 6L);
        }
    }

    @Test
    void scheduledCountFollowsScheduleActivationAndCancel() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            assertThat(counts(h, "q").scheduledMessageCount()).isZero();
            long[] seqs = h.await(h.engine.schedule("q", List.of(at("a", t0 + 1_000), at("b", t0 + 2_000),
                    at("c", t0 + 3_000))));
            RuntimeCounts c = counts(h, "q");
            assertThat(c.scheduledMessageCount()).isEqualTo(3L);
            assertThat(c.activeMessageCount()).isZero();
            assertThat(c.messageCount()).isEqualTo(3L);
            assertThat(c.sizeInBytes()).isPositive();

            h.advance(Duration.ofSeconds(1));
            assertThat(counts(h, "q").scheduledMessageCount()).isEqualTo(2L);
            assertThat(counts(h, "q").activeMessageCount()).isEqualTo(1L);

            h.await(h.engine.cancelScheduled("q", new long[] {seqs[1]}));
            assertThat(counts(h, "q").scheduledMessageCount()).isEqualTo(1L);

            h.advance(Duration.ofSeconds(5));
            c = counts(h, "q");
            assertThat(c.scheduledMessageCount()).isZero();
            assertThat(c.activeMessageCount()).isEqualTo(2L);
        }
    }

    @Test
    void topicSchedulingFansOutOnActivation() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "s1", "s2");
            long t0 = h.clock.epochMillis();
            long[] seqs = h.await(h.engine.schedule("t", List.of(at("x", t0 + 30_000))));
            h.send("t", at("y", t0 + 40_000));
            assertThat(seqs).containsExactly(1L);

            // the topic shows its scheduled messages; subscriptions have nothing yet
            List<ReceivedMessage> onTopic = peekAll(h, "t");
            assertThat(onTopic).extracting(EngineHarness::text).containsExactly("x", "y");
            assertThat(onTopic).extracting(ReceivedMessage::state).containsOnly(MessageState.SCHEDULED);
            assertThat(counts(h, "t").scheduledMessageCount()).isEqualTo(2L);
            assertThat(counts(h, "t/Subscriptions/s1").activeMessageCount()).isZero();

            EngineHarness.Sink sink1 = h.sink();
            EngineHarness.Sink sink2 = h.sink();
            h.receiver("t/Subscriptions/s1", ReceiveMode.PEEK_LOCK, sink1, 10);
            h.receiver("t/Subscriptions/s2", ReceiveMode.PEEK_LOCK, sink2, 10);
            h.advance(Duration.ofMillis(29_999));
            assertThat(sink1.take()).isEmpty();
            assertThat(sink2.take()).isEmpty();

            h.advance(Duration.ofMillis(1));
            for (EngineHarness.Sink sink : List.of(sink1, sink2)) {
                List<ReceivedMessage> got = sink.take();
                assertThat(got).extracting(EngineHarness::text).containsExactly("x");
                assertThat(got.get(0).sequenceNumber()).isEqualTo(3L);
                assertThat(got.get(0).enqueuedTimeMs()).isEqualTo(t0 + 30_000);
            }
            assertThat(counts(h, "t").scheduledMessageCount()).isEqualTo(1L);

            // a topic schedule survives a restart and cancellation works on the topic
            h.crashAndRestart();
            assertThat(peekAll(h, "t")).extracting(EngineHarness::text).containsExactly("y");
            long ySeq = peekAll(h, "t").get(0).sequenceNumber();
            h.await(h.engine.cancelScheduled("t", new long[] {ySeq}));
            h.advance(Duration.ofMinutes(1));
            assertThat(peekAll(h, "t/Subscriptions/s1")).extracting(EngineHarness::text).containsExactly("x");
            assertThat(peekAll(h, "t/Subscriptions/s2")).extracting(EngineHarness::text).containsExactly("x");
        }
    }

    @Test
    void partitionedSchedulingUsesPartitionNumbersAndCancelFindsThem() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("pq").enablePartitioning(true).build());
            long t0 = h.clock.epochMillis();
            Message keyed = Message.builder().partitionKey("k").scheduledEnqueueTimeMs(t0 + 60_000).build();
            long[] seqs = h.await(h.engine.schedule("pq", List.of(keyed, keyed)));
            int partition = SequenceCounter.partitionOf(seqs[0]);
            assertThat(SequenceCounter.partitionOf(seqs[1])).isEqualTo(partition);
            assertThat(seqs[0] & ((1L << 48) - 1)).isEqualTo(1L);
            assertThat(seqs[1] & ((1L << 48) - 1)).isEqualTo(2L);
            assertThat(counts(h, "pq").scheduledMessageCount()).isEqualTo(2L);

            h.await(h.engine.cancelScheduled("pq", new long[] {seqs[0]}));
            h.advance(Duration.ofMinutes(1));
            List<ReceivedMessage> peeked = peekAll(h, "pq");
            assertThat(peeked).hasSize(1);
            assertThat(peeked.get(0).sequenceNumber()).isEqualTo(((long) partition << 48) | 3L);
            assertThat(peeked.get(0).partitionIndex()).isEqualTo(partition);
        }
    }

    @Test
    void sessionEnabledQueueRejectsSchedulingWithoutSessionId() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("sq").requiresSession(true).build());
            long t0 = h.clock.epochMillis();
            assertThatThrownBy(() -> h.await(h.engine.schedule("sq", List.of(at("x", t0 + 1_000)))))
                    .satisfies(t -> assertKind(t, ErrorKind.INVALID_OPERATION));
            long[] ok = h.await(h.engine.schedule("sq", List.of(Message.builder().sessionId("s")
                    .scheduledEnqueueTimeMs(t0 + 1_000).build())));
            assertThat(ok).containsExactly(1L);
            assertThat(counts(h, "sq").scheduledMessageCount()).isEqualTo(1L);
        }
    }
}
