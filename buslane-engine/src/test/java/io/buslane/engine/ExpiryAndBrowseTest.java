package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.DeadLetterReasons;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;

/** Time-to-live, browsing, batch deletion, purge and counts (message-expiration.md, §2.5, §2.8). */
class ExpiryAndBrowseTest {

    private static final String REASON = DeadLetterReasons.DEAD_LETTER_REASON;

    // ------------------------------------------------------------------------------------------------ helpers

    private static Message ttl(String body, Duration ttl) {
        return Message.builder().body(body.getBytes(StandardCharsets.UTF_8)).timeToLiveMs(ttl.toMillis()).build();
    }

    private static List<ReceivedMessage> peek(EngineHarness h, String address, long from, int max) {
        return h.await(h.engine.peek(EntityAddress.parse(address), from, max, null));
    }

    private static List<ReceivedMessage> peekAll(EngineHarness h, String address) {
        return peek(h, address, 0, 1000);
    }

    private static RuntimeCounts counts(EngineHarness h, String path) {
        return h.await(h.engine.counts(path));
    }

    private static QueueProperties.Builder queue(String name) {
        return QueueProperties.builder(name);
    }

    // ------------------------------------------------------------------------------------------------ TTL

    @Test
    void timeToLiveIsTheSmallerOfTheMessagesAndTheEntityDefault() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").defaultMessageTimeToLive(Duration.ofHours(1)).build());
            long t0 = h.clock.epochMillis();
            h.send("q", ttl("short", Duration.ofSeconds(10)), text("default"), ttl("long", Duration.ofHours(2)));
            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(peeked).extracting(ReceivedMessage::expiresAtMs)
                    .containsExactly(t0 + 10_000, t0 + 3_600_000, t0 + 3_600_000);

            h.advance(Duration.ofMillis(9_999));
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("short", "default", "long");
            h.advance(Duration.ofMillis(1));
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("default", "long");
            // the entity default is a ceiling: the message asking for 2 hours goes after 1 hour
            h.advance(Duration.ofHours(1));
            assertThat(peekAll(h, "q")).isEmpty();
            assertThat(counts(h, "q").activeMessageCount()).isZero();
            assertThat(counts(h, "q").deadLetterMessageCount()).isZero();
        }
    }

    @Test
    void messagesWithoutAnyTimeToLiveNeverExpire() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", text("a"));
            assertThat(peekAll(h, "q").get(0).expiresAtMs()).isEqualTo(Long.MAX_VALUE);
            h.advance(Duration.ofDays(3650));
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("a");
        }
    }

    @Test
    void subscriptionTimeToLiveIsCappedByTopicAndSubscriptionDefaults() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").defaultMessageTimeToLive(Duration.ofHours(1)).build(), "plain");
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "short")
                    .defaultMessageTimeToLive(Duration.ofMinutes(10)).build(), null));
            long t0 = h.clock.epochMillis();
            h.send("t", text("a"), ttl("b", Duration.ofMinutes(1)), ttl("c", Duration.ofDays(1)));
            assertThat(peekAll(h, "t/Subscriptions/plain")).extracting(ReceivedMessage::expiresAtMs)
                    .containsExactly(t0 + 3_600_000, t0 + 60_000, t0 + 3_600_000);
            assertThat(peekAll(h, "t/Subscriptions/short")).extracting(ReceivedMessage::expiresAtMs)
                    .containsExactly(t0 + 600_000, t0 + 60_000, t0 + 600_000);
            h.advance(Duration.ofMinutes(10));
            assertThat(peekAll(h, "t/Subscriptions/short")).isEmpty();
            assertThat(peekAll(h, "t/Subscriptions/plain")).extracting(EngineHarness::text).containsExactly("a", "c");
        }
    }

    @Test
    void expiredMessagesAreDroppedWithoutDeadLetteringOnExpiration() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", ttl("a", Duration.ofSeconds(5)), text("b"));
            h.advance(Duration.ofSeconds(5));
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("b");
            assertThat(peekAll(h, "q/$DeadLetterQueue")).isEmpty();
            RuntimeCounts c = counts(h, "q");
            assertThat(c.activeMessageCount()).isEqualTo(1L);
            assertThat(c.deadLetterMessageCount()).isZero();
            // a receiver never sees it
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink, 10);
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("b");
        }
    }

    @Test
    void expiredMessagesAreDeadLetteredWithTtlExpiredExceptionWhenEnabled() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").deadLetteringOnMessageExpiration(true).build());
            h.send("q", ttl("a", Duration.ofSeconds(5)), text("b"));
            h.advance(Duration.ofSeconds(5));
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("b");
            List<ReceivedMessage> dlq = peekAll(h, "q/$DeadLetterQueue");
            assertThat(dlq).extracting(EngineHarness::text).containsExactly("a");
            assertThat(dlq.get(0).sequenceNumber()).isEqualTo(1L);
            assertThat(dlq.get(0).message().applicationProperties())
                    .containsEntry(REASON, "TTLExpiredException")
                    .containsKey(DeadLetterReasons.DEAD_LETTER_DESCRIPTION);
            assertThat(counts(h, "q").deadLetterMessageCount()).isEqualTo(1L);
            // the dead-lettered copy does not expire again
            h.advance(Duration.ofDays(1));
            assertThat(peekAll(h, "q/$DeadLetterQueue")).hasSize(1);
            // and can be received from the dead-letter queue
            EngineHarness.Sink sink = h.sink();
            h.receiver("q/$DeadLetterQueue", ReceiveMode.RECEIVE_AND_DELETE, sink, 10);
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("a");
        }
    }

    @Test
    void subscriptionsDeadLetterExpiredCopiesWhenEnabled() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "drop");
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "keep")
                    .deadLetteringOnMessageExpiration(true).build(), null));
            h.send("t", ttl("a", Duration.ofSeconds(5)));
            h.advance(Duration.ofSeconds(5));
            assertThat(peekAll(h, "t/Subscriptions/drop")).isEmpty();
            assertThat(peekAll(h, "t/Subscriptions/drop/$DeadLetterQueue")).isEmpty();
            assertThat(peekAll(h, "t/Subscriptions/keep")).isEmpty();
            List<ReceivedMessage> dlq = peekAll(h, "t/Subscriptions/keep/$DeadLetterQueue");
            assertThat(dlq).extracting(EngineHarness::text).containsExactly("a");
            assertThat(dlq.get(0).message().applicationProperties()).containsEntry(REASON, "TTLExpiredException");
            assertThat(counts(h, "t/Subscriptions/keep").deadLetterMessageCount()).isEqualTo(1L);
        }
    }

    @Test
    void messagesThatExpiredWhileDownAreHandledOnStart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").deadLetteringOnMessageExpiration(true).build());
            h.queue("drop");
            h.send("q", ttl("a", Duration.ofSeconds(30)), text("b"));
            h.send("drop", ttl("a", Duration.ofSeconds(30)), text("b"));
            h.clock.advance(Duration.ofMinutes(5));
            h.crashAndRestart();
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("b");
            assertThat(peekAll(h, "q/$DeadLetterQueue")).extracting(EngineHarness::text).containsExactly("a");
            assertThat(peekAll(h, "drop")).extracting(EngineHarness::text).containsExactly("b");
            assertThat(peekAll(h, "drop/$DeadLetterQueue")).isEmpty();
        }
    }

    @Test
    void aLockedMessageDoesNotExpireUntilItsLockEnds() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").lockDuration(Duration.ofSeconds(60)).deadLetteringOnMessageExpiration(true).build());
            h.send("q", ttl("settled", Duration.ofSeconds(10)), ttl("lapsed", Duration.ofSeconds(10)),
                    ttl("abandoned", Duration.ofSeconds(10)));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 3);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).hasSize(3);

            h.advance(Duration.ofSeconds(30)); // past the TTL, within the lock
            assertThat(peekAll(h, "q")).hasSize(3);
            assertThat(counts(h, "q").activeMessageCount()).isEqualTo(3L);
            assertThat(counts(h, "q").deadLetterMessageCount()).isZero();

            // settling successfully after the nominal expiry works and does not dead-letter
            h.await(r.complete(got.get(0).lockToken()));
            // abandoning after expiry: the message expires as the lock ends
            h.await(r.abandon(got.get(2).lockToken(), null));
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("lapsed");
            assertThat(peekAll(h, "q/$DeadLetterQueue")).extracting(EngineHarness::text).containsExactly("abandoned");

            // the remaining lock lapses: the message expires then
            h.advance(Duration.ofSeconds(30));
            assertThat(peekAll(h, "q")).isEmpty();
            List<ReceivedMessage> dlq = peekAll(h, "q/$DeadLetterQueue");
            assertThat(dlq).extracting(EngineHarness::text).containsExactly("lapsed", "abandoned");
            assertThat(dlq).allSatisfy(m -> assertThat(m.message().applicationProperties())
                    .containsEntry(REASON, "TTLExpiredException"));
            assertThat(sink.take()).isEmpty();
        }
    }

    @Test
    void deferredMessagesNeverExpire() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q").defaultMessageTimeToLive(Duration.ofSeconds(10))
                    .deadLetteringOnMessageExpiration(true).build());
            h.send("q", text("d"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage m = sink.take().get(0);
            h.await(r.defer(m.lockToken(), null));

            h.advance(Duration.ofDays(1));
            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(peeked).extracting(ReceivedMessage::state).containsExactly(MessageState.DEFERRED);
            assertThat(peekAll(h, "q/$DeadLetterQueue")).isEmpty();

            h.crashAndRestart();
            h.advance(Duration.ofDays(1));
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::state).containsExactly(MessageState.DEFERRED);
            assertThat(peekAll(h, "q/$DeadLetterQueue")).isEmpty();

            List<ReceivedMessage> deferred = h.await(h.engine.receiveDeferred(EntityAddress.parse("q"),
                    new long[] {m.sequenceNumber()}, ReceiveMode.PEEK_LOCK, null, null));
            assertThat(deferred).extracting(EngineHarness::text).containsExactly("d");
            // even once its lock lapses, it stays deferred rather than expiring
            h.advance(Duration.ofMinutes(5));
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::state).containsExactly(MessageState.DEFERRED);
            assertThat(peekAll(h, "q/$DeadLetterQueue")).isEmpty();
        }
    }

    // ------------------------------------------------------------------------------------------------ browsing

    @Test
    void peekFromASequenceNumberIsOrderedAndNeitherLocksNorCounts() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", text("a"), text("b"), text("c"), text("d"), text("e"));

            List<ReceivedMessage> page = peek(h, "q", 2, 3);
            assertThat(page).extracting(ReceivedMessage::sequenceNumber).containsExactly(2L, 3L, 4L);
            assertThat(page).extracting(EngineHarness::text).containsExactly("b", "c", "d");
            assertThat(page).extracting(ReceivedMessage::lockToken).containsOnlyNulls();
            assertThat(page).extracting(ReceivedMessage::lockedUntilMs).containsOnly(0L);
            assertThat(page).extracting(ReceivedMessage::deliveryCount).containsOnly(0);
            assertThat(page).extracting(ReceivedMessage::state).containsOnly(MessageState.ACTIVE);

            // browsing again gives the same answer: nothing was consumed
            assertThat(peek(h, "q", 2, 3)).extracting(ReceivedMessage::sequenceNumber).containsExactly(2L, 3L, 4L);
            assertThat(peek(h, "q", 0, 2)).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 2L);

            // every message is still available to a receiver, with no delivery counted
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 10);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 2L, 3L, 4L, 5L);
            assertThat(got).extracting(ReceivedMessage::deliveryCount).containsOnly(0);

            // locked messages are still browsable, and browsing them does not disturb the lock
            List<ReceivedMessage> whileLocked = peekAll(h, "q");
            assertThat(whileLocked).hasSize(5);
            assertThat(whileLocked).extracting(ReceivedMessage::lockToken).containsOnlyNulls();
            h.await(r.complete(got.get(0).lockToken()));
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::sequenceNumber).containsExactly(2L, 3L, 4L, 5L);
        }
    }

    @Test
    void peekIncludesDeferredMessages() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", text("a"), text("b"), text("c"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 2);
            List<ReceivedMessage> got = sink.take();
            h.await(r.defer(got.get(1).lockToken(), null));
            h.await(r.complete(got.get(0).lockToken()));
            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(peeked).extracting(EngineHarness::text).containsExactly("b", "c");
            assertThat(peeked).extracting(ReceivedMessage::state).containsExactly(MessageState.DEFERRED,
                    MessageState.ACTIVE);
            assertThat(peeked).extracting(ReceivedMessage::sequenceNumber).containsExactly(2L, 3L);
        }
    }

    @Test
    void peekPastTheEndIsEmpty() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            assertThat(peekAll(h, "q")).isEmpty();
            h.send("q", text("a"), text("b"));
            assertThat(peek(h, "q", 3, 10)).isEmpty();
            assertThat(peek(h, "q", Long.MAX_VALUE, 10)).isEmpty();
            assertThat(peek(h, "q", 2, 10)).extracting(EngineHarness::text).containsExactly("b");
            assertThat(peek(h, "q", 0, 0)).isEmpty();
        }
    }

    @Test
    void peekOnTheDeadLetterQueueAddress() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.topic(TopicProperties.builder("t").build(), "s");
            h.send("q", text("a"), text("b"), text("c"));
            h.send("t", text("x"), text("y"));

            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 3);
            List<ReceivedMessage> got = sink.take();
            h.await(r.deadLetter(got.get(0).lockToken(), "BadInput", "cannot parse", null));
            h.await(r.deadLetter(got.get(2).lockToken(), "Other", null, null));

            List<ReceivedMessage> dlq = peekAll(h, "q/$DeadLetterQueue");
            assertThat(dlq).extracting(EngineHarness::text).containsExactly("a", "c");
            assertThat(dlq).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 3L);
            assertThat(dlq.get(0).message().applicationProperties()).containsEntry(REASON, "BadInput")
                    .containsEntry(DeadLetterReasons.DEAD_LETTER_DESCRIPTION, "cannot parse");
            assertThat(peek(h, "q/$DeadLetterQueue", 2, 10)).extracting(EngineHarness::text).containsExactly("c");
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("b");

            EngineHarness.Sink subSink = h.sink();
            Receiver sr = h.receiver("t/Subscriptions/s", ReceiveMode.PEEK_LOCK, subSink, 1);
            h.await(sr.deadLetter(subSink.take().get(0).lockToken(), "R", "D", null));
            assertThat(peekAll(h, "t/Subscriptions/s/$DeadLetterQueue")).extracting(EngineHarness::text)
                    .containsExactly("x");
            assertThat(peekAll(h, "t/Subscriptions/s")).extracting(EngineHarness::text).containsExactly("y");
        }
    }

    // ------------------------------------------------------------------------------------------------ deletion

    @Test
    void batchDeleteRemovesOnlyMessagesEnqueuedBeforeTheGivenTime() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            h.send("q", text("old1"), text("old2"));
            h.advance(Duration.ofSeconds(10));
            h.send("q", text("new1"), text("new2"));

            int deleted = h.await(h.engine.deleteMessages(EntityAddress.parse("q"), 100, t0 + 5_000, null));
            assertThat(deleted).isEqualTo(2);
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("new1", "new2");
            assertThat(counts(h, "q").activeMessageCount()).isEqualTo(2L);

            // bounded by the maximum count, oldest first
            deleted = h.await(h.engine.deleteMessages(EntityAddress.parse("q"), 1, t0 + 60_000, null));
            assertThat(deleted).isEqualTo(1);
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("new2");

            // nothing older than the start
            assertThat(h.await(h.engine.deleteMessages(EntityAddress.parse("q"), 100, t0, null))).isZero();

            // deletion is durable
            h.crashAndRestart();
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("new2");
        }
    }

    @Test
    void batchDeleteOnADeadLetterQueueAndAPartitionedQueue() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("pq").enablePartitioning(true).build());
            long t0 = h.clock.epochMillis();
            for (int i = 0; i < 8; i++) {
                h.send("pq", text("old" + i));
            }
            h.advance(Duration.ofSeconds(10));
            for (int i = 0; i < 3; i++) {
                h.send("pq", text("new" + i));
            }
            int deleted = h.await(h.engine.deleteMessages(EntityAddress.parse("pq"), 100, t0 + 5_000, null));
            assertThat(deleted).isEqualTo(8);
            assertThat(peekAll(h, "pq")).extracting(EngineHarness::text)
                    .containsExactlyInAnyOrder("new0", "new1", "new2");

            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("pq", ReceiveMode.PEEK_LOCK, sink, 10);
            for (ReceivedMessage m : sink.take()) {
                h.await(r.deadLetter(m.lockToken(), "x", null, null));
            }
            assertThat(counts(h, "pq").deadLetterMessageCount()).isEqualTo(3L);
            deleted = h.await(h.engine.deleteMessages(EntityAddress.parse("pq/$DeadLetterQueue"), 2,
                    h.clock.epochMillis() + 1, null));
            assertThat(deleted).isEqualTo(2);
            assertThat(counts(h, "pq").deadLetterMessageCount()).isEqualTo(1L);
        }
    }

    @Test
    void purgeDeletesEverythingInTheAddressedSubQueue() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", text("a"), text("b"), text("c"), text("d"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 2);
            List<ReceivedMessage> got = sink.take();
            h.await(r.deadLetter(got.get(0).lockToken(), "x", null, null));
            // b stays locked, c and d available

            int purged = h.await(h.engine.purge(EntityAddress.parse("q")));
            assertThat(purged).isEqualTo(3);
            RuntimeCounts c = counts(h, "q");
            assertThat(c.activeMessageCount()).isZero();
            assertThat(c.deadLetterMessageCount()).isEqualTo(1L);
            assertThat(peekAll(h, "q")).isEmpty();

            assertThat(h.await(h.engine.purge(EntityAddress.parse("q/$DeadLetterQueue")))).isEqualTo(1);
            c = counts(h, "q");
            assertThat(c.messageCount()).isZero();
            assertThat(c.sizeInBytes()).isZero();

            h.crashAndRestart();
            assertThat(peekAll(h, "q")).isEmpty();
            assertThat(peekAll(h, "q/$DeadLetterQueue")).isEmpty();
            h.send("q", text("e"));
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::sequenceNumber).containsExactly(5L);
        }
    }

    @Test
    void purgeOnASubscriptionLeavesTheOtherSubscriptionsAlone() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "s1", "s2");
            h.send("t", text("a"), text("b"));
            assertThat(h.await(h.engine.purge(EntityAddress.parse("t/Subscriptions/s1")))).isEqualTo(2);
            assertThat(peekAll(h, "t/Subscriptions/s1")).isEmpty();
            assertThat(peekAll(h, "t/Subscriptions/s2")).extracting(EngineHarness::text).containsExactly("a", "b");
            h.crashAndRestart();
            assertThat(peekAll(h, "t/Subscriptions/s1")).isEmpty();
            assertThat(peekAll(h, "t/Subscriptions/s2")).extracting(EngineHarness::text).containsExactly("a", "b");
        }
    }

    // ------------------------------------------------------------------------------------------------ counts

    @Test
    void queueCountsIncludeLockedAndDeferredAsActive() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            assertThat(counts(h, "q")).isEqualTo(RuntimeCounts.ZERO);
            h.send("q", text("a"), text("b"), text("c"), text("d"), text("e"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 3);
            List<ReceivedMessage> got = sink.take();
            h.await(r.defer(got.get(0).lockToken(), null));
            h.await(r.deadLetter(got.get(1).lockToken(), "x", null, null));
            // c locked; d, e available
            h.await(h.engine.schedule("q", List.of(Message.builder().body(new byte[100])
                    .scheduledEnqueueTimeMs(h.clock.epochMillis() + 60_000).build())));

            RuntimeCounts c = counts(h, "q");
            assertThat(c.activeMessageCount()).isEqualTo(4L);
            assertThat(c.deadLetterMessageCount()).isEqualTo(1L);
            assertThat(c.scheduledMessageCount()).isEqualTo(1L);
            assertThat(c.transferMessageCount()).isZero();
            assertThat(c.transferDeadLetterMessageCount()).isZero();
            assertThat(c.messageCount()).isEqualTo(6L);
            assertThat(c.sizeInBytes()).isPositive();

            long before = c.sizeInBytes();
            h.await(r.complete(got.get(2).lockToken()));
            RuntimeCounts after = counts(h, "q");
            assertThat(after.activeMessageCount()).isEqualTo(3L);
            assertThat(after.sizeInBytes()).isLessThan(before);

            // counts survive a restart (locks do not, but the messages stay active)
            h.crashAndRestart();
            assertThat(counts(h, "q")).isEqualTo(after);
        }
    }

    @Test
    void subscriptionCountsArePerSubscriptionAndTheTopicHasNoActiveMessages() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "s1", "s2");
            h.send("t", text("a"), text("b"), text("c"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("t/Subscriptions/s1", ReceiveMode.PEEK_LOCK, sink, 2);
            List<ReceivedMessage> got = sink.take();
            h.await(r.deadLetter(got.get(0).lockToken(), "x", null, null));
            h.await(r.defer(got.get(1).lockToken(), null));

            RuntimeCounts s1 = counts(h, "t/Subscriptions/s1");
            assertThat(s1.activeMessageCount()).isEqualTo(2L);
            assertThat(s1.deadLetterMessageCount()).isEqualTo(1L);
            assertThat(s1.sizeInBytes()).isPositive();
            RuntimeCounts s2 = counts(h, "t/Subscriptions/s2");
            assertThat(s2.activeMessageCount()).isEqualTo(3L);
            assertThat(s2.deadLetterMessageCount()).isZero();
            assertThat(s2.sizeInBytes()).isPositive();
            RuntimeCounts topic = counts(h, "t");
            assertThat(topic.activeMessageCount()).isZero();
            assertThat(topic.deadLetterMessageCount()).isZero();
        }
    }
}
