package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;

/** Auto-forwarding (service-bus-auto-forwarding.md; service-bus-behaviour.md §2.6-2.8). */
class AutoForwardingTest {

    private static QueueProperties forwarding(String name, String to) {
        return QueueProperties.builder(name).forwardTo(to).build();
    }

    private static List<ReceivedMessage> peek(EngineHarness h, String address) {
        return h.await(h.engine.peek(EntityAddress.parse(address), 0, 1000, null));
    }

    private static RuntimeCounts counts(EngineHarness h, String path) {
        return h.await(h.engine.counts(path));
    }

    @Test
    void aQueueForwardsToAQueueWhichAssignsItsOwnSequenceNumberAndEnqueuedTime() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("dest");
            h.send("dest", text("already there"));
            h.queue(forwarding("src", "dest"));
            h.send("src", text("a"), text("b"));
            List<ReceivedMessage> got = peek(h, "dest");
            assertThat(got).extracting(EngineHarness::text).containsExactly("already there", "a", "b");
            assertThat(got).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 2L, 3L);
            assertThat(got.get(1).enqueuedTimeMs()).isEqualTo(h.clock.epochMillis());
            assertThat(got.get(1).deadLetterSource()).isNull();
            RuntimeCounts src = counts(h, "src");
            assertThat(src.activeMessageCount()).isZero();
            assertThat(src.transferMessageCount()).isZero();
            assertThat(src.transferDeadLetterMessageCount()).isZero();
            assertThat(peek(h, "src")).isEmpty();
        }
    }

    @Test
    void aForwardedMessageKeepsTheSequenceNumberOfItsOriginalPointOfSubmission() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("dest");
            h.send("dest", text("already there"), text("there too"));
            h.queue(forwarding("mid", "dest"));
            h.queue(forwarding("src", "mid"));
            h.send("mid", text("m"));
            h.send("src", text("a"), text("b"));
            List<ReceivedMessage> got = peek(h, "dest");
            assertThat(got).extracting(EngineHarness::text)
                    .containsExactly("already there", "there too", "m", "a", "b");
            assertThat(got).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 2L, 3L, 4L, 5L);
            // "a" and "b" went src (1, 2) -> mid (2, 3) -> dest: they keep the numbers src gave them
            assertThat(got).extracting(r -> r.message().enqueuedSequenceNumber())
                    .containsExactly(null, null, 1L, 1L, 2L);
        }
    }

    @Test
    void sqlFiltersSeeTheEnqueuedSequenceNumberOfTheOriginalPointOfSubmission() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build());
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "second").build(),
                    List.of(new RuleProperties("r", new RuleProperties.SqlFilter("sys.EnqueuedSequenceNumber = 2"),
                            null))));
            h.send("t", text("direct")); // the topic's sequence number 1
            h.queue(forwarding("src", "t"));
            h.send("src", text("a"), text("b"), text("c")); // src 1, 2, 3; the topic's 2, 3, 4
            assertThat(peek(h, "t/subscriptions/second")).extracting(EngineHarness::text).containsExactly("b");
        }
    }

    @Test
    void aSubscriptionForwardsToAQueueWhileOtherSubscriptionsKeepTheirCopies() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("dest");
            h.topic(TopicProperties.builder("t").build(), "plain");
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "fwd").forwardTo("dest").build(),
                    null));
            h.send("t", text("hello"));
            assertThat(peek(h, "dest")).extracting(EngineHarness::text).containsExactly("hello");
            assertThat(peek(h, "t/subscriptions/plain")).extracting(EngineHarness::text).containsExactly("hello");
            assertThat(peek(h, "t/subscriptions/fwd")).isEmpty();
            assertThat(counts(h, "t/subscriptions/fwd").transferMessageCount()).isZero();
        }
    }

    @Test
    void forwardingFromASessionEnabledQueueOrSubscriptionIsRefusedButItsDeadLettersMayBeForwarded() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("dest");
            h.topic(TopicProperties.builder("t").build());
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> h.await(h.engine.createQueue(
                    QueueProperties.builder("sq").requiresSession(true).forwardTo("dest").build())))
                    .hasMessageContaining("requires sessions");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> h.await(h.engine.createSubscription(
                    SubscriptionProperties.builder("t", "ss").requiresSession(true).forwardTo("dest").build(), null)))
                    .hasMessageContaining("requires sessions");
            h.await(h.engine.createQueue(QueueProperties.builder("sq").requiresSession(true).build()));
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> h.await(h.engine.updateQueue(
                    QueueProperties.builder("sq").requiresSession(true).forwardTo("dest").build())))
                    .hasMessageContaining("requires sessions");
            h.await(h.engine.updateQueue(QueueProperties.builder("sq").requiresSession(true)
                    .forwardDeadLetteredMessagesTo("dest").build()));
        }
    }

    @Test
    void aQueueForwardsToATopic() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "s");
            h.queue(forwarding("src", "t"));
            h.send("src", text("x"));
            assertThat(peek(h, "t/subscriptions/s")).extracting(EngineHarness::text).containsExactly("x");
        }
    }

    @Test
    void aChainOfFiveHopsDeadLettersWithMaxTransferHopCountExceeded() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q6");
            for (int i = 5; i >= 1; i--) {
                h.queue(forwarding("q" + i, "q" + (i + 1)));
            }
            h.send("q1", text("hop"));
            // q1 -> q2 -> q3 -> q4 -> q5 are four hops; the fifth (q5 -> q6) is refused
            assertThat(peek(h, "q6")).isEmpty();
            List<ReceivedMessage> tdlq = peek(h, "q5/$Transfer/$DeadLetterQueue");
            assertThat(tdlq).extracting(EngineHarness::text).containsExactly("hop");
            assertThat(tdlq.get(0).message().applicationProperties())
                    .containsEntry("DeadLetterReason", "MaxTransferHopCountExceeded");
            assertThat(counts(h, "q5").transferDeadLetterMessageCount()).isEqualTo(1);
            for (int i = 1; i <= 4; i++) {
                assertThat(counts(h, "q" + i).messageCount()).isZero();
            }
        }
    }

    @Test
    void aChainOfFourHopsDelivers() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q5");
            for (int i = 4; i >= 1; i--) {
                h.queue(forwarding("q" + i, "q" + (i + 1)));
            }
            h.send("q1", text("hop"));
            assertThat(peek(h, "q5")).extracting(EngineHarness::text).containsExactly("hop");
            // the hop count is internal: the message's own annotations do not show it to clients
            assertThat(peek(h, "q5").get(0).message().annotations()).containsKey(
                    io.buslane.engine.partition.Transfer.HOP_COUNT);
        }
    }

    @Test
    void aMissingDestinationParksTheMessageInTheTransferDeadLetterQueue() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("dest");
            h.queue(forwarding("src", "dest"));
            h.await(h.engine.deleteQueue("dest"));
            h.send("src", text("lost?"));
            List<ReceivedMessage> tdlq = peek(h, "src/$Transfer/$DeadLetterQueue");
            assertThat(tdlq).extracting(EngineHarness::text).containsExactly("lost?");
            assertThat(tdlq.get(0).message().applicationProperties())
                    .containsEntry("DeadLetterReason", "MessagingEntityNotFound");
            RuntimeCounts c = counts(h, "src");
            assertThat(c.transferDeadLetterMessageCount()).isEqualTo(1);
            assertThat(c.activeMessageCount()).isZero();
            // the transfer dead-letter queue is receivable
            EngineHarness.Sink sink = h.sink();
            h.receiver("src/$Transfer/$DeadLetterQueue", ReceiveMode.RECEIVE_AND_DELETE, sink, 5);
            assertThat(sink.take()).hasSize(1);
        }
    }

    @Test
    void aDisabledDestinationParksTheMessageInTheTransferDeadLetterQueue() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("dest").status(EntityStatus.SEND_DISABLED).build());
            h.queue(forwarding("src", "dest"));
            h.send("src", text("x"));
            List<ReceivedMessage> tdlq = peek(h, "src/$Transfer/$DeadLetterQueue");
            assertThat(tdlq).hasSize(1);
            assertThat(tdlq.get(0).message().applicationProperties())
                    .containsEntry("DeadLetterReason", "MessagingEntityDisabled");
            assertThat(peek(h, "dest")).isEmpty();
        }
    }

    @Test
    void deadLetteredMessagesAreForwardedWithTheirDeadLetterSource() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("dlq-sink");
            h.queue(QueueProperties.builder("src").forwardDeadLetteredMessagesTo("dlq-sink").build());
            h.send("src", text("bad"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("src", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage m = sink.take().get(0);
            h.await(r.deadLetter(m.lockToken(), "Poison", "cannot parse", null));
            List<ReceivedMessage> got = peek(h, "dlq-sink");
            assertThat(got).extracting(EngineHarness::text).containsExactly("bad");
            assertThat(got.get(0).deadLetterSource()).isEqualTo("src");
            assertThat(got.get(0).message().applicationProperties()).containsEntry("DeadLetterReason", "Poison")
                    .containsEntry("DeadLetterErrorDescription", "cannot parse");
            assertThat(counts(h, "src").deadLetterMessageCount()).isZero();
            assertThat(peek(h, "src/$DeadLetterQueue")).isEmpty();
        }
    }

    @Test
    void aTransferIsCountedAsTransferMessageCountWhileInFlight() {
        try (EngineHarness h = new EngineHarness(1)) {
            h.queue("dest");
            h.queue(forwarding("src", "dest"));
            CompletableFuture<Void> sent = h.engine.send("src", List.of(text("m")));
            h.engine.doWork(); // the source journals the transfer; the forward is queued
            assertThat(sent).isDone();
            CompletableFuture<RuntimeCounts> during = h.engine.counts("src");
            h.engine.runUntilIdle();
            assertThat(during.join().transferMessageCount()).isEqualTo(1);
            assertThat(during.join().messageCount()).isEqualTo(1);
            assertThat(counts(h, "src").transferMessageCount()).isZero();
            assertThat(peek(h, "dest")).hasSize(1);
        }
    }

    /** Crashes after each duty cycle of a forward across shards; the message must arrive exactly once. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void forwardingAcrossShardsIsLosslessAndIdempotentAcrossCrashes(int cyclesBeforeCrash) {
        try (EngineHarness h = new EngineHarness(4)) {
            h.queue(QueueProperties.builder("dest").enablePartitioning(true).build());
            h.queue(QueueProperties.builder("src").enablePartitioning(true).forwardTo("dest").build());
            CompletableFuture<Void> sent = h.engine.send("src", List.of(text("a"), text("b"), text("c")));
            for (int i = 0; i < cyclesBeforeCrash; i++) {
                h.engine.doWork();
            }
            boolean acknowledged = sent.isDone() && !sent.isCompletedExceptionally();
            h.crashAndRestart();
            h.engine.runUntilIdle();
            List<String> got = peek(h, "dest").stream().map(EngineHarness::text).sorted().toList();
            if (acknowledged) {
                assertThat(got).containsExactly("a", "b", "c");
            } else {
                assertThat(got).isSubsetOf("a", "b", "c").doesNotHaveDuplicates();
            }
            RuntimeCounts src = counts(h, "src");
            assertThat(src.messageCount()).isZero();
        }
    }

    @Test
    void aPendingTransferIsForwardedAfterARestartExactlyOnce() {
        try (EngineHarness h = new EngineHarness(1)) {
            h.queue("dest");
            h.queue(forwarding("src", "dest"));
            CompletableFuture<Void> sent = h.engine.send("src", List.of(text("m")));
            h.engine.doWork(); // transfer durable, forward queued
            h.engine.doWork(); // destination durable; the source's deletion not yet
            assertThat(sent).isDone();
            h.crashAndRestart();
            assertThat(peek(h, "dest")).extracting(EngineHarness::text).containsExactly("m");
            assertThat(counts(h, "src").messageCount()).isZero();
            h.crashAndRestart();
            assertThat(peek(h, "dest")).hasSize(1);
        }
    }

    @Test
    void aTransferKeyOutlivesALongDowntime() {
        try (EngineHarness h = new EngineHarness(1)) {
            h.queue("dest");
            h.queue(forwarding("src", "dest"));
            h.engine.send("src", List.of(text("m")));
            h.engine.doWork(); // transfer durable, forward queued
            h.engine.doWork(); // destination durable; the source's deletion not yet
            h.clock.advance(java.time.Duration.ofHours(6)); // down far longer than the key window
            h.crashAndRestart();
            assertThat(peek(h, "dest")).hasSize(1);
            assertThat(counts(h, "src").messageCount()).isZero();
        }
    }

    @Test
    void switchingForwardingOffKeepsNewMessagesInTheSource() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("dest");
            h.queue(forwarding("src", "dest"));
            h.await(h.engine.updateQueue(QueueProperties.builder("src").build()));
            h.send("src", text("stays"));
            assertThat(peek(h, "src")).extracting(EngineHarness::text).containsExactly("stays");
            assertThat(peek(h, "dest")).isEmpty();
        }
    }

    @Test
    void forwardedMessagesAreSubjectToTheDestinationsDuplicateDetection() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("dest").requiresDuplicateDetection(true).build());
            h.queue(forwarding("src", "dest"));
            Message m = Message.builder().messageId("same").body("x".getBytes(StandardCharsets.UTF_8)).build();
            h.send("src", m);
            h.send("src", m);
            assertThat(peek(h, "dest")).hasSize(1);
            assertThat(counts(h, "src").messageCount()).isZero();
        }
    }
}
