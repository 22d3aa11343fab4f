package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.SequenceCounter;
import io.buslane.engine.shard.Shard;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Peek-lock delivery and settlement of non-session queues: locks, renewals, lock expiry, complete, abandon,
 * defer, dead-letter, receive-and-delete, credit, drain, competing receivers, restarts and partitioned lock tokens.
 * Time moves only through the harness's manual clock.
 */
class PeekLockTest {

    private static final Duration LOCK = Duration.ofSeconds(30);

    private static QueueProperties.Builder queue(String name) {
        return QueueProperties.builder(name).lockDuration(LOCK);
    }

    private static EntityAddress addr(String path) {
        return EntityAddress.parse(path);
    }

    private static Message withProps(String body, Map<String, Object> props) {
        return Message.builder().body(body.getBytes(StandardCharsets.UTF_8)).applicationProperties(props).build();
    }

    /** Asserts that the future fails with a broker error of the given kind. */
    private static void assertFails(EngineHarness h, CompletableFuture<?> future, ErrorKind kind) {
        assertThatThrownBy(() -> h.await(future))
                .isInstanceOf(BrokerException.class)
                .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(kind));
    }

    private static RuntimeCounts counts(EngineHarness h, String path) {
        return h.await(h.engine.counts(path));
    }

    // ------------------------------------------------------------------------------------------------ locks

    @Test
    void peekLockDeliveryCarriesLockTokenAndLockedUntilNowPlusLockDuration() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            long now = h.clock.epochMillis();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);

            List<ReceivedMessage> got = sink.take();
            assertThat(got).hasSize(1);
            ReceivedMessage m = got.get(0);
            assertThat(m.lockToken()).isNotNull();
            assertThat(m.lockToken().version()).isEqualTo(4);
            assertThat(m.lockedUntilMs()).isEqualTo(now + LOCK.toMillis());
            assertThat(m.deliveryCount()).isZero();
            assertThat(m.state()).isEqualTo(MessageState.ACTIVE);
            assertThat(text(m)).isEqualTo("a");
        }
    }

    @Test
    void renewLockExtendsTheLock() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 5);
            ReceivedMessage m = sink.take().get(0);

            h.advance(Duration.ofSeconds(20));
            long renewedUntil = h.await(r.renewLock(m.lockToken()));
            assertThat(renewedUntil).isEqualTo(h.clock.epochMillis() + LOCK.toMillis());
            assertThat(renewedUntil).isGreaterThan(m.lockedUntilMs());

            // past the original lock, before the renewed one: still locked, not redelivered
            h.advance(Duration.ofSeconds(20));
            assertThat(h.clock.epochMillis()).isGreaterThan(m.lockedUntilMs()).isLessThan(renewedUntil);
            assertThat(sink.take()).isEmpty();
            h.await(r.complete(m.lockToken()));

            // and it is gone for good
            h.advance(LOCK.multipliedBy(2));
            assertThat(sink.take()).isEmpty();
            assertThat(counts(h, "q").activeMessageCount()).isZero();
        }
    }

    @Test
    void lockExpiryReturnsTheMessageWithOneMoreDeliveryAndTheOldTokenIsLost() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage first = sink.take().get(0);
            assertThat(first.deliveryCount()).isZero();

            // just before the lock ends nothing happens
            h.advance(LOCK.minusMillis(1));
            assertThat(sink.take()).isEmpty();
            h.advance(Duration.ofMillis(2));
            assertThat(sink.take()).isEmpty(); // no credit left

            r.addCredit(1);
            h.engine.runUntilIdle();
            List<ReceivedMessage> again = sink.take();
            assertThat(again).hasSize(1);
            ReceivedMessage second = again.get(0);
            assertThat(second.sequenceNumber()).isEqualTo(first.sequenceNumber());
            assertThat(second.deliveryCount()).isEqualTo(1);
            assertThat(second.lockToken()).isNotEqualTo(first.lockToken());

            assertFails(h, r.complete(first.lockToken()), ErrorKind.MESSAGE_LOCK_LOST);
            assertFails(h, r.renewLock(first.lockToken()), ErrorKind.MESSAGE_LOCK_LOST);
            h.await(r.complete(second.lockToken()));
            assertThat(counts(h, "q").activeMessageCount()).isZero();
        }
    }

    @Test
    void expiredLockRedeliversToAReceiverThatStillHasCredit() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 3);
            assertThat(sink.take()).extracting(ReceivedMessage::deliveryCount).containsExactly(0);
            h.advance(LOCK.plusMillis(1));
            assertThat(sink.take()).extracting(ReceivedMessage::deliveryCount).containsExactly(1);
            h.advance(LOCK.plusMillis(1));
            assertThat(sink.take()).extracting(ReceivedMessage::deliveryCount).containsExactly(2);
        }
    }

    // ------------------------------------------------------------------------------------------------ complete

    @Test
    void completeRemovesTheMessageForGoodAlsoAcrossRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 10);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).extracting(EngineHarness::text).containsExactly("a", "b");
            h.await(r.complete(got.get(0).lockToken()));
            h.await(r.complete(got.get(1).lockToken()));
            assertFails(h, r.complete(got.get(0).lockToken()), ErrorKind.MESSAGE_LOCK_LOST);

            h.advance(LOCK.multipliedBy(3));
            assertThat(sink.take()).isEmpty();
            assertThat(counts(h, "q").activeMessageCount()).isZero();
            assertThat(h.await(h.engine.peek(addr("q"), 0, 10, null))).isEmpty();

            h.crashAndRestart();
            EngineHarness.Sink sink2 = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink2, 10);
            h.advance(LOCK.multipliedBy(3));
            assertThat(sink2.take()).isEmpty();
            assertThat(counts(h, "q").activeMessageCount()).isZero();
        }
    }

    // ------------------------------------------------------------------------------------------------ abandon

    @Test
    void abandonMergesPropertiesAndRedeliversBeforeLaterMessagesWithOneMoreDelivery() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", withProps("a", Map.of("keep", "k", "change", 1)), text("b"), text("c"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage a = sink.take().get(0);
            assertThat(text(a)).isEqualTo("a");

            h.await(r.abandon(a.lockToken(), Map.of("change", 2, "added", "x")));
            assertFails(h, r.complete(a.lockToken()), ErrorKind.MESSAGE_LOCK_LOST);

            r.addCredit(2);
            h.engine.runUntilIdle();
            List<ReceivedMessage> got = sink.take();
            assertThat(got).extracting(EngineHarness::text).containsExactly("a", "b");
            ReceivedMessage a2 = got.get(0);
            assertThat(a2.sequenceNumber()).isEqualTo(a.sequenceNumber());
            assertThat(a2.deliveryCount()).isEqualTo(1);
            assertThat(a2.message().applicationProperties())
                    .containsEntry("keep", "k")
                    .containsEntry("change", 2)
                    .containsEntry("added", "x")
                    .hasSize(3);
            assertThat(got.get(1).deliveryCount()).isZero();

            // an abandoned later message still goes out before the even later "c"... and after nothing earlier
            h.await(r.abandon(got.get(1).lockToken(), null));
            r.addCredit(2);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text, ReceivedMessage::deliveryCount)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("b", 1),
                            org.assertj.core.groups.Tuple.tuple("c", 0));
        }
    }

    @Test
    void abandonedPropertiesAndDeliveryCountSurviveRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage a = sink.take().get(0);
            h.await(r.abandon(a.lockToken(), Map.of("p", "v")));

            h.crashAndRestart();
            EngineHarness.Sink sink2 = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink2, 1);
            ReceivedMessage again = sink2.take().get(0);
            assertThat(again.deliveryCount()).isEqualTo(1);
            assertThat(again.message().applicationProperties()).containsEntry("p", "v");
        }
    }

    // ---------------------------------------------------------------------------------------------- max delivery count

    @Test
    void reachingMaxDeliveryCountDeadLettersWithMaxDeliveryCountExceeded() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").maxDeliveryCount(3).build());
            h.send("q", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 0);

            List<Integer> counts = new ArrayList<>();
            long seq = -1;
            for (int i = 0; i < 3; i++) {
                r.addCredit(1);
                h.engine.runUntilIdle();
                ReceivedMessage m = sink.take().get(0);
                assertThat(text(m)).isEqualTo("a");
                seq = m.sequenceNumber();
                counts.add(m.deliveryCount());
                if (i < 2) {
                    h.await(r.abandon(m.lockToken(), null));
                } else {
                    // the last failed delivery is a lock expiry: it counts the same way
                    h.advance(LOCK.plusMillis(1));
                }
            }
            assertThat(counts).containsExactly(0, 1, 2);

            // "a" is gone from the main queue: the next delivery is "b"
            r.addCredit(1);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("b");
            RuntimeCounts c = counts(h, "q");
            assertThat(c.activeMessageCount()).isEqualTo(1);
            assertThat(c.deadLetterMessageCount()).isEqualTo(1);

            EngineHarness.Sink dlq = h.sink();
            h.receiver("q/$DeadLetterQueue", ReceiveMode.PEEK_LOCK, dlq, 10);
            List<ReceivedMessage> dead = dlq.take();
            assertThat(dead).hasSize(1);
            ReceivedMessage d = dead.get(0);
            assertThat(d.sequenceNumber()).isEqualTo(seq);
            assertThat(text(d)).isEqualTo("a");
            assertThat(d.deliveryCount()).isEqualTo(3);
            assertThat(d.message().applicationProperties())
                    .containsEntry("DeadLetterReason", "MaxDeliveryCountExceeded")
                    .containsEntry("DeadLetterErrorDescription",
                            "Message could not be consumed after 3 delivery attempts.");
        }
    }

    @Test
    void maxDeliveryCountOfOneDeadLettersOnTheFirstAbandon() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").maxDeliveryCount(1).build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 5);
            h.await(r.abandon(sink.take().get(0).lockToken(), null));
            assertThat(sink.take()).isEmpty();
            assertThat(counts(h, "q").deadLetterMessageCount()).isEqualTo(1);
        }
    }

    // ------------------------------------------------------------------------------------------------ defer

    @Test
    void deferredMessageIsOnlyReceivableBySequenceNumber() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage a = sink.take().get(0);
            h.await(r.defer(a.lockToken(), Map.of("deferred-by", "test")));
            assertFails(h, r.complete(a.lockToken()), ErrorKind.MESSAGE_LOCK_LOST);

            r.addCredit(10);
            h.engine.runUntilIdle();
            List<ReceivedMessage> got = sink.take();
            assertThat(got).extracting(EngineHarness::text).containsExactly("b");
            h.await(r.complete(got.get(0).lockToken()));
            h.advance(LOCK.multipliedBy(3));
            assertThat(sink.take()).isEmpty();
            assertThat(counts(h, "q").activeMessageCount()).isEqualTo(1); // a deferred message is still counted

            List<ReceivedMessage> deferred = h.await(h.engine.receiveDeferred(addr("q"),
                    new long[] {a.sequenceNumber()}, ReceiveMode.PEEK_LOCK, null, null));
            assertThat(deferred).hasSize(1);
            ReceivedMessage d = deferred.get(0);
            assertThat(d.sequenceNumber()).isEqualTo(a.sequenceNumber());
            assertThat(d.state()).isEqualTo(MessageState.DEFERRED);
            assertThat(d.lockToken()).isNotNull();
            assertThat(d.lockedUntilMs()).isEqualTo(h.clock.epochMillis() + LOCK.toMillis());
            assertThat(d.deliveryCount()).as("the delivery that deferred it counts, as on the service").isEqualTo(1);
            assertThat(d.message().applicationProperties()).containsEntry("deferred-by", "test");

            // while locked it cannot be received by number again
            assertFails(h, h.engine.receiveDeferred(addr("q"), new long[] {a.sequenceNumber()},
                    ReceiveMode.PEEK_LOCK, null, null), ErrorKind.MESSAGE_NOT_FOUND);

            h.await(h.engine.complete(addr("q"), d.lockToken()));
            assertThat(counts(h, "q").activeMessageCount()).isZero();
            assertFails(h, h.engine.receiveDeferred(addr("q"), new long[] {a.sequenceNumber()},
                    ReceiveMode.PEEK_LOCK, null, null), ErrorKind.MESSAGE_NOT_FOUND);
        }
    }

    @Test
    void abandoningADeferredMessageKeepsItDeferredWithOneMoreDelivery() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage a = sink.take().get(0);
            h.await(r.defer(a.lockToken(), null));
            long[] seqs = {a.sequenceNumber()};

            ReceivedMessage d1 = h.await(h.engine.receiveDeferred(addr("q"), seqs, ReceiveMode.PEEK_LOCK, null, null))
                    .get(0);
            assertThat(d1.deliveryCount()).isEqualTo(1); // the first delivery
            h.await(h.engine.abandon(addr("q"), d1.lockToken(), null));
            r.addCredit(5);
            h.engine.runUntilIdle();
            assertThat(sink.take()).isEmpty();

            ReceivedMessage d2 = h.await(h.engine.receiveDeferred(addr("q"), seqs, ReceiveMode.PEEK_LOCK, null, null))
                    .get(0);
            assertThat(d2.state()).isEqualTo(MessageState.DEFERRED);
            assertThat(d2.deliveryCount()).isEqualTo(2);
            // a deferred lock that expires counts too and keeps the message deferred
            h.advance(LOCK.plusMillis(1));
            assertThat(sink.take()).isEmpty();
            ReceivedMessage d3 = h.await(h.engine.receiveDeferred(addr("q"), seqs, ReceiveMode.RECEIVE_AND_DELETE,
                    null, null)).get(0);
            assertThat(d3.deliveryCount()).isEqualTo(3);
            assertThat(d3.lockToken()).isNull();
            assertThat(counts(h, "q").activeMessageCount()).isZero();
        }
    }

    @Test
    void deferredMessageSurvivesRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage a = sink.take().get(0);
            h.await(r.defer(a.lockToken(), null));

            h.crashAndRestart();
            EngineHarness.Sink sink2 = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink2, 5);
            assertThat(sink2.take()).isEmpty();
            List<ReceivedMessage> d = h.await(h.engine.receiveDeferred(addr("q"), new long[] {a.sequenceNumber()},
                    ReceiveMode.PEEK_LOCK, null, null));
            assertThat(d).extracting(EngineHarness::text).containsExactly("a");
            h.await(h.engine.complete(addr("q"), d.get(0).lockToken()));
        }
    }

    @Test
    void receiveDeferredWithARepeatedSequenceNumberLocksTheMessageOnce() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage a = sink.take().get(0);
            h.await(r.defer(a.lockToken(), null));
            long seq = a.sequenceNumber();

            List<ReceivedMessage> got = h.await(h.engine.receiveDeferred(addr("q"), new long[] {seq, seq},
                    ReceiveMode.PEEK_LOCK, null, null));
            assertThat(got).extracting(ReceivedMessage::sequenceNumber).containsExactly(seq);
            h.await(r.complete(got.get(0).lockToken()));
            // the message is gone for good: nothing comes back, not even after lock durations pass
            h.advance(LOCK.multipliedBy(3));
            r.addCredit(5);
            h.engine.runUntilIdle();
            assertThat(sink.take()).isEmpty();
            assertThat(counts(h, "q").activeMessageCount()).isZero();
            assertFails(h, h.engine.receiveDeferred(addr("q"), new long[] {seq}, ReceiveMode.PEEK_LOCK, null, null),
                    ErrorKind.MESSAGE_NOT_FOUND);
        }
    }

    @Test
    void receiveDeferredOfANonDeferredOrUnknownNumberFailsMessageNotFound() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            ReceivedMessage a = h.await(h.engine.peek(addr("q"), 0, 1, null)).get(0);
            assertFails(h, h.engine.receiveDeferred(addr("q"), new long[] {a.sequenceNumber()},
                    ReceiveMode.PEEK_LOCK, null, null), ErrorKind.MESSAGE_NOT_FOUND);
            assertFails(h, h.engine.receiveDeferred(addr("q"), new long[] {12345},
                    ReceiveMode.PEEK_LOCK, null, null), ErrorKind.MESSAGE_NOT_FOUND);
            // the active message was not touched: still deliverable, fresh
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 5);
            assertThat(sink.take()).extracting(ReceivedMessage::deliveryCount).containsExactly(0);
        }
    }

    // ------------------------------------------------------------------------------------------------ dead-letter

    @Test
    void deadLetterWithReasonDescriptionAndPropertiesIsReadFromTheDeadLetterQueue() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", withProps("a", Map.of("orig", 1)), text("b"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage a = sink.take().get(0);
            h.await(r.deadLetter(a.lockToken(), "BadOrder", "Order 42 is invalid", Map.of("extra", "e")));
            assertFails(h, r.complete(a.lockToken()), ErrorKind.MESSAGE_LOCK_LOST);

            r.addCredit(5);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("b");
            RuntimeCounts c = counts(h, "q");
            assertThat(c.activeMessageCount()).isEqualTo(1);
            assertThat(c.deadLetterMessageCount()).isEqualTo(1);

            EngineHarness.Sink dlqSink = h.sink();
            Receiver dlq = h.receiver("q/$DeadLetterQueue", ReceiveMode.PEEK_LOCK, dlqSink, 1);
            ReceivedMessage d = dlqSink.take().get(0);
            assertThat(d.sequenceNumber()).isEqualTo(a.sequenceNumber());
            assertThat(text(d)).isEqualTo("a");
            assertThat(d.deliveryCount()).isZero();
            assertThat(d.lockToken()).isNotNull();
            assertThat(d.message().applicationProperties())
                    .containsEntry("orig", 1)
                    .containsEntry("extra", "e")
                    .containsEntry("DeadLetterReason", "BadOrder")
                    .containsEntry("DeadLetterErrorDescription", "Order 42 is invalid");

            // abandon in the dead-letter queue does not count a delivery
            h.await(dlq.abandon(d.lockToken(), null));
            dlq.addCredit(1);
            h.engine.runUntilIdle();
            ReceivedMessage d2 = dlqSink.take().get(0);
            assertThat(d2.deliveryCount()).isZero();
            // nor does a lock expiry there
            h.advance(LOCK.plusMillis(1));
            dlq.addCredit(1);
            h.engine.runUntilIdle();
            ReceivedMessage d3 = dlqSink.take().get(0);
            assertThat(d3.deliveryCount()).isZero();

            // dead-lettering it again is refused, as on the service (amqp:not-allowed), and it stays locked here
            assertFails(h, dlq.deadLetter(d3.lockToken(), "Again", "twice", null), ErrorKind.INVALID_OPERATION);
            h.await(dlq.complete(d3.lockToken()));
            assertThat(counts(h, "q").deadLetterMessageCount()).isZero();
        }
    }

    @Test
    void deadLetteredMessageSurvivesRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage a = sink.take().get(0);
            h.await(r.deadLetter(a.lockToken(), "R", "D", null));

            h.crashAndRestart();
            EngineHarness.Sink main = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, main, 5);
            assertThat(main.take()).isEmpty();
            EngineHarness.Sink dlq = h.sink();
            h.receiver("q/$DeadLetterQueue", ReceiveMode.RECEIVE_AND_DELETE, dlq, 5);
            List<ReceivedMessage> dead = dlq.take();
            assertThat(dead).extracting(ReceivedMessage::sequenceNumber).containsExactly(a.sequenceNumber());
            assertThat(dead.get(0).message().applicationProperties())
                    .containsEntry("DeadLetterReason", "R").containsEntry("DeadLetterErrorDescription", "D");
        }
    }

    // ---------------------------------------------------------------------------------------------------------- delete

    @Test
    void receiveAndDeleteRemovesOnDelivery() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink, 10);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).extracting(EngineHarness::text).containsExactly("a", "b");
            assertThat(got).allSatisfy(m -> {
                assertThat(m.lockToken()).isNull();
                assertThat(m.lockedUntilMs()).isZero();
            });
            assertThat(counts(h, "q").activeMessageCount()).isZero();

            EngineHarness.Sink other = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, other, 10);
            h.advance(LOCK.multipliedBy(2));
            assertThat(other.take()).isEmpty();

            h.crashAndRestart();
            EngineHarness.Sink afterRestart = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, afterRestart, 10);
            assertThat(afterRestart.take()).isEmpty();
        }
    }

    // ------------------------------------------------------------------------------------------------ credit

    @Test
    void creditIsRespected() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            for (int i = 0; i < 5; i++) {
                h.send("q", text("m" + i));
            }
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 2);
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("m0", "m1");
            assertThat(r.credit()).isZero();
            h.engine.runUntilIdle();
            assertThat(sink.take()).isEmpty();

            r.addCredit(2);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("m2", "m3");

            r.addCredit(5);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("m4");
            assertThat(r.credit()).isEqualTo(4);

            // remaining credit is used by later arrivals
            h.send("q", text("m5"));
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("m5");
            assertThat(r.credit()).isEqualTo(3);
        }
    }

    @Test
    void drainReturnsUnusedCredit() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 5);
            assertThat(sink.take()).hasSize(2);

            long drained = h.await(r.drain());
            assertThat(drained).isEqualTo(3);
            assertThat(r.credit()).isZero();

            // no credit left: a new message waits
            h.send("q", text("c"));
            assertThat(sink.take()).isEmpty();
            r.addCredit(1);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("c");

            // draining with nothing available returns all of it
            r.addCredit(7);
            assertThat(h.await(r.drain())).isEqualTo(7);
        }
    }

    @Test
    void drainDeliversWhatIsAvailableBeforeReturningCredit() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").enablePartitioning(true).build());
            for (int i = 0; i < 4; i++) {
                h.send("q", text("m" + i));
            }
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.engine.createReceiver(addr("q"), ReceiveMode.PEEK_LOCK, sink);
            r.addCredit(10);
            CompletableFuture<Long> drained = r.drain();
            assertThat(h.await(drained)).isEqualTo(6);
            assertThat(sink.take()).hasSize(4);
        }
    }

    // --------------------------------------------------------------------------------------------- competing receivers

    @Test
    void competingReceiversSplitMessagesWithoutDuplicates() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            EngineHarness.Sink s1 = h.sink();
            EngineHarness.Sink s2 = h.sink();
            Receiver r1 = h.receiver("q", ReceiveMode.PEEK_LOCK, s1, 20);
            Receiver r2 = h.receiver("q", ReceiveMode.PEEK_LOCK, s2, 20);
            for (int i = 0; i < 10; i++) {
                h.send("q", text("m" + i));
            }
            List<ReceivedMessage> got1 = s1.take();
            List<ReceivedMessage> got2 = s2.take();
            assertThat(got1).isNotEmpty();
            assertThat(got2).isNotEmpty();
            Set<Long> seqs1 = new HashSet<>();
            got1.forEach(m -> seqs1.add(m.sequenceNumber()));
            Set<Long> seqs2 = new HashSet<>();
            got2.forEach(m -> seqs2.add(m.sequenceNumber()));
            assertThat(seqs1).doesNotContainAnyElementsOf(seqs2);
            assertThat(got1.size() + got2.size()).isEqualTo(10);
            Set<Long> all = new HashSet<>(seqs1);
            all.addAll(seqs2);
            assertThat(all).hasSize(10);

            for (ReceivedMessage m : got1) {
                h.await(r1.complete(m.lockToken()));
            }
            // settling through the other receiver works too: the lock belongs to the entity, not the link
            for (ReceivedMessage m : got2) {
                h.await(r1.complete(m.lockToken()));
            }
            assertThat(counts(h, "q").activeMessageCount()).isZero();
            assertThat(r2.isClosed()).isFalse();
        }
    }

    /**
     * The service renews a message lock that ran out as long as no other receiver has taken the message (the Java
     * SDK renews a buffered message only when it hands it to the application, possibly after its lock ran out), but
     * refuses a settlement under it (the JavaScript SDK's live tests): the message stays available.
     */
    @Test
    void aLateRenewSucceedsAndALateSettlementIsLockLostWhileNoOtherReceiverTookTheMessage() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 2);
            List<ReceivedMessage> got = sink.take();
            h.advance(LOCK.plusSeconds(2)); // both locks ran out; nobody has credit to take the messages again

            long renewedUntil = h.await(r.renewLock(got.get(0).lockToken()));
            assertThat(renewedUntil).isEqualTo(h.clock.epochMillis() + LOCK.toMillis());
            assertFails(h, r.complete(got.get(1).lockToken()), ErrorKind.MESSAGE_LOCK_LOST);
            h.await(h.engine.release(addr("q"), got.get(1).lockToken())); // nothing left to do: not an error
            // the renewed message is locked again, its lapse not counted as a failed delivery; "b" waits, counted
            EngineHarness.Sink other = h.sink();
            Receiver r2 = h.receiver("q", ReceiveMode.PEEK_LOCK, other, 5);
            List<ReceivedMessage> b = other.take();
            assertThat(b).extracting(EngineHarness::text, ReceivedMessage::deliveryCount)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("b", 1));
            h.await(r2.complete(b.get(0).lockToken()));
            List<ReceivedMessage> peeked = h.await(h.engine.peek(addr("q"), 0, 10, null));
            assertThat(peeked).extracting(ReceivedMessage::deliveryCount).containsExactly(0);

            // once the lock runs out and another receiver takes the message, the old token is lost for good
            h.advance(LOCK.plusMillis(1));
            List<ReceivedMessage> taken = other.take();
            assertThat(taken).extracting(EngineHarness::text, ReceivedMessage::deliveryCount)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("a", 1));
            assertFails(h, r.renewLock(got.get(0).lockToken()), ErrorKind.MESSAGE_LOCK_LOST);
            assertFails(h, r.complete(got.get(0).lockToken()), ErrorKind.MESSAGE_LOCK_LOST);
            h.await(r2.complete(taken.get(0).lockToken()));
            assertThat(counts(h, "q").activeMessageCount()).isZero();
        }
    }

    @Test
    void aLockedMessageIsNotDeliveredToAnotherReceiverUntilItsLockExpires() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink s1 = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, s1, 1);
            assertThat(s1.take()).hasSize(1);
            EngineHarness.Sink s2 = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, s2, 1);
            assertThat(s2.take()).isEmpty();
            h.advance(LOCK.plusMillis(1));
            assertThat(s2.take()).extracting(ReceivedMessage::deliveryCount).containsExactly(1);
        }
    }

    @Test
    void closingANonSessionReceiverKeepsItsLocksUntilSettledOrExpired() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 2);
            List<ReceivedMessage> got = sink.take();
            r.close();
            h.engine.runUntilIdle();
            EngineHarness.Sink other = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, other, 5);
            assertThat(other.take()).isEmpty();
            h.await(h.engine.complete(addr("q"), got.get(0).lockToken()));
            h.advance(LOCK.plusMillis(1));
            assertThat(other.take()).extracting(EngineHarness::text, ReceivedMessage::deliveryCount)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("b", 1));
        }
    }

    // ------------------------------------------------------------------------------------------------ restart

    @Test
    void locksDoNotSurviveRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage locked = sink.take().get(0);

            h.crashAndRestart();
            EngineHarness.Sink sink2 = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink2, 1);
            List<ReceivedMessage> again = sink2.take();
            assertThat(again).extracting(ReceivedMessage::sequenceNumber).containsExactly(locked.sequenceNumber());
            // Observed and intended: a lock lost to a restart is not recorded, so it is not counted as a failed
            // delivery (the count is only journaled on abandon / lock expiry).
            assertThat(again.get(0).deliveryCount()).isZero();
            assertThat(again.get(0).lockToken()).isNotEqualTo(locked.lockToken());
            // the old lock token is no longer valid
            assertFails(h, h.engine.complete(addr("q"), locked.lockToken()), ErrorKind.MESSAGE_LOCK_LOST);
            h.await(h.engine.complete(addr("q"), again.get(0).lockToken()));
        }
    }

    // ------------------------------------------------------------------------------------------------ unknown tokens

    @Test
    void settlementWithAnUnknownTokenFailsMessageLockLost() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage a = sink.take().get(0);

            // a token that names partition 0 (the only one) and one that names a partition the queue lacks
            UUID partition0 = new UUID(UUID.randomUUID().getMostSignificantBits(),
                    UUID.randomUUID().getLeastSignificantBits() & ~0xffffL);
            UUID partition7 = new UUID(partition0.getMostSignificantBits(),
                    partition0.getLeastSignificantBits() | 7);
            for (UUID unknown : java.util.Arrays.asList(partition0, partition7, null)) {
                assertFails(h, r.complete(unknown), ErrorKind.MESSAGE_LOCK_LOST);
                assertFails(h, r.abandon(unknown, null), ErrorKind.MESSAGE_LOCK_LOST);
                assertFails(h, r.defer(unknown, null), ErrorKind.MESSAGE_LOCK_LOST);
                assertFails(h, r.deadLetter(unknown, "x", "y", null), ErrorKind.MESSAGE_LOCK_LOST);
                assertFails(h, r.renewLock(unknown), ErrorKind.MESSAGE_LOCK_LOST);
            }
            // the real lock is untouched
            h.await(r.complete(a.lockToken()));
        }
    }

    // ------------------------------------------------------------------------------------------------ partitioned

    @Test
    void lockTokensOfAPartitionedQueueCarryThePartitionAndSettleCorrectly() {
        try (EngineHarness h = new EngineHarness(3)) {
            h.queue(queue("pq").enablePartitioning(true).build());
            int n = 40;
            for (int i = 0; i < n; i++) {
                h.send("pq", text("m" + i)); // round-robin: one send per partition in turn
            }
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("pq", ReceiveMode.PEEK_LOCK, sink, n);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).hasSize(n);
            Set<Integer> partitions = new HashSet<>();
            Set<UUID> tokens = new HashSet<>();
            for (ReceivedMessage m : got) {
                partitions.add(m.partitionIndex());
                tokens.add(m.lockToken());
                assertThat(SequenceCounter.partitionOf(m.sequenceNumber())).isEqualTo(m.partitionIndex());
                assertThat(Shard.partitionOfLockToken(m.lockToken())).isEqualTo(m.partitionIndex());
            }
            assertThat(tokens).hasSize(n);
            assertThat(partitions.size()).isGreaterThan(2);

            // abandon one from a non-zero partition: it comes back from that partition with one more delivery
            ReceivedMessage nonZero = got.stream().filter(m -> m.partitionIndex() > 0).findFirst().orElseThrow();
            h.await(r.abandon(nonZero.lockToken(), null));
            r.addCredit(1);
            h.engine.runUntilIdle();
            ReceivedMessage back = sink.take().get(0);
            assertThat(back.sequenceNumber()).isEqualTo(nonZero.sequenceNumber());
            assertThat(back.deliveryCount()).isEqualTo(1);
            assertThat(back.partitionIndex()).isEqualTo(nonZero.partitionIndex());

            // renew and complete everything through the token alone
            for (ReceivedMessage m : got) {
                if (m != nonZero) {
                    assertThat(h.await(r.renewLock(m.lockToken()))).isEqualTo(h.clock.epochMillis()
                            + LOCK.toMillis());
                    h.await(r.complete(m.lockToken()));
                }
            }
            h.await(h.engine.complete(addr("pq"), back.lockToken()));
            assertThat(counts(h, "pq").activeMessageCount()).isZero();
            h.advance(LOCK.multipliedBy(3));
            assertThat(sink.take()).isEmpty();
        }
    }

    @Test
    void aPartitionedLockTokenWithTheWrongPartitionIsLost() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("pq").enablePartitioning(true).build());
            h.send("pq", Message.builder().body(new byte[] {1}).partitionKey("k").build());
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("pq", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage m = sink.take().get(0);
            int other = (m.partitionIndex() + 1) % 16;
            UUID moved = new UUID(m.lockToken().getMostSignificantBits(),
                    (m.lockToken().getLeastSignificantBits() & ~0xffffL) | other);
            assertFails(h, r.complete(moved), ErrorKind.MESSAGE_LOCK_LOST);
            h.await(r.complete(m.lockToken()));
        }
    }

    @Test
    void deferAndDeadLetterOnAPartitionedQueue() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("pq").enablePartitioning(true).build());
            for (int i = 0; i < 6; i++) {
                h.send("pq", text("m" + i));
            }
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("pq", ReceiveMode.PEEK_LOCK, sink, 6);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).hasSize(6);
            List<ReceivedMessage> toDefer = got.subList(0, 3);
            for (ReceivedMessage m : toDefer) {
                h.await(r.defer(m.lockToken(), null));
            }
            for (ReceivedMessage m : got.subList(3, 6)) {
                h.await(r.deadLetter(m.lockToken(), "why", null, null));
            }
            long[] seqs = toDefer.stream().mapToLong(ReceivedMessage::sequenceNumber).toArray();
            List<ReceivedMessage> deferred = h.await(h.engine.receiveDeferred(addr("pq"), seqs,
                    ReceiveMode.PEEK_LOCK, null, null));
            assertThat(deferred).extracting(ReceivedMessage::sequenceNumber)
                    .containsExactlyInAnyOrderElementsOf(toDefer.stream().map(ReceivedMessage::sequenceNumber)
                            .toList());
            for (ReceivedMessage d : deferred) {
                h.await(r.complete(d.lockToken()));
            }
            EngineHarness.Sink dlq = h.sink();
            h.receiver("pq/$DeadLetterQueue", ReceiveMode.PEEK_LOCK, dlq, 10);
            assertThat(dlq.take()).hasSize(3).allSatisfy(m -> assertThat(m.message().applicationProperties())
                    .containsEntry("DeadLetterReason", "why")
                    .doesNotContainKey("DeadLetterErrorDescription"));
            RuntimeCounts c = counts(h, "pq");
            assertThat(c.activeMessageCount()).isZero();
            assertThat(c.deadLetterMessageCount()).isEqualTo(3);
        }
    }
}
