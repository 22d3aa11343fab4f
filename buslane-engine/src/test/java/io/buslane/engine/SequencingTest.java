package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.Limits;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.SequenceCounter;
import io.buslane.engine.routing.PartitionDirectory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Sequence numbers and enqueued times (message-sequencing.md; service-bus-behaviour.md §2.3). */
class SequencingTest {

    private static final long MASK_48 = (1L << 48) - 1;

    // ------------------------------------------------------------------------------------------------ helpers

    private static List<ReceivedMessage> peekAll(EngineHarness h, String address) {
        return h.await(h.engine.peek(EntityAddress.parse(address), 0, 10_000, null));
    }

    private static List<Long> seqs(List<ReceivedMessage> messages) {
        return messages.stream().map(ReceivedMessage::sequenceNumber).collect(Collectors.toList());
    }

    private static List<Long> range(long fromInclusive, long toInclusive) {
        return LongStream.rangeClosed(fromInclusive, toInclusive).boxed().collect(Collectors.toList());
    }

    private static Message keyed(String body, String partitionKey) {
        return Message.builder().body(body.getBytes(StandardCharsets.UTF_8)).partitionKey(partitionKey).build();
    }

    /** Receives and deletes everything currently in the entity. */
    private static List<ReceivedMessage> drainAll(EngineHarness h, String address) {
        EngineHarness.Sink sink = h.sink();
        Receiver r = h.receiver(address, ReceiveMode.RECEIVE_AND_DELETE, sink, 10_000);
        List<ReceivedMessage> got = sink.take();
        r.close();
        h.engine.runUntilIdle();
        return got;
    }

    private static void compactOnReplay(EngineHarness h) {
        for (int i = 0; i < h.engine.shardCount(); i++) {
            h.journals.journal("shard-" + i).compactOnReplay(true);
        }
        h.journals.journal("meta").compactOnReplay(true);
    }

    /** A partition key that maps to a different partition than {@code other}. */
    private static String keyOnAnotherPartition(String other) {
        int p = PartitionDirectory.partitionIndexFor(keyed("x", other), false, Limits.PARTITION_COUNT, 0);
        for (int i = 0; i < 1000; i++) {
            String k = "key-" + i;
            if (PartitionDirectory.partitionIndexFor(keyed("x", k), false, Limits.PARTITION_COUNT, 0) != p) {
                return k;
            }
        }
        throw new AssertionError("every partition key maps to partition " + p);
    }

    // ------------------------------------------------------------------------------------------------ single entity

    @Test
    void singleAndBatchSendsGetGapFreeStrictlyIncreasingNumbers() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", text("a"));
            h.send("q", text("b"), text("c"), text("d"), text("e"));
            h.send("q", text("f"));
            h.send("q", text("g"), text("h"));

            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(seqs(peeked)).containsExactlyElementsOf(range(1, 8));
            assertThat(peeked).extracting(EngineHarness::text).containsExactly("a", "b", "c", "d", "e", "f", "g",
                    "h");

            List<ReceivedMessage> received = drainAll(h, "q");
            assertThat(seqs(received)).containsExactlyElementsOf(range(1, 8));
        }
    }

    @Test
    void eachQueueHasItsOwnCounter() {
        try (EngineHarness h = new EngineHarness(4)) {
            h.queue("q1");
            h.queue("q2");
            h.send("q1", text("a"), text("b"));
            h.send("q2", text("c"));
            h.send("q1", text("d"));
            h.send("q2", text("e"));
            assertThat(seqs(peekAll(h, "q1"))).containsExactly(1L, 2L, 3L);
            assertThat(seqs(peekAll(h, "q2"))).containsExactly(1L, 2L);
        }
    }

    @Test
    void numbersContinueAfterRestartWithoutReuse() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", text("a"), text("b"), text("c"));
            h.crashAndRestart();
            h.send("q", text("d"));
            h.crashAndRestart();
            h.send("q", text("e"), text("f"));
            List<ReceivedMessage> all = drainAll(h, "q");
            assertThat(seqs(all)).containsExactlyElementsOf(range(1, 6));
            assertThat(all).extracting(EngineHarness::text).containsExactly("a", "b", "c", "d", "e", "f");
        }
    }

    @ParameterizedTest(name = "compacted journal: {0}")
    @ValueSource(booleans = {false, true})
    void numbersAreNotReusedAfterEverythingWasCompletedBeforeRestart(boolean compacted) {
        try (EngineHarness h = new EngineHarness()) {
            if (compacted) {
                compactOnReplay(h);
            }
            h.queue("q");
            h.send("q", text("a"), text("b"), text("c"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 10);
            for (ReceivedMessage m : sink.take()) {
                h.await(r.complete(m.lockToken()));
            }
            assertThat(peekAll(h, "q")).isEmpty();

            h.crashAndRestart();
            h.send("q", text("d"));
            assertThat(seqs(peekAll(h, "q"))).containsExactly(4L);

            drainAll(h, "q");
            h.crashAndRestart();
            h.send("q", text("e"));
            assertThat(seqs(peekAll(h, "q"))).containsExactly(5L);
        }
    }

    @ParameterizedTest(name = "compacted journal: {0}")
    @ValueSource(booleans = {false, true})
    void numbersAreNotReusedWhenOnlyAnOlderMessageSurvives(boolean compacted) {
        try (EngineHarness h = new EngineHarness()) {
            if (compacted) {
                compactOnReplay(h);
            }
            h.queue("q");
            h.send("q", text("a"));
            h.send("q", text("b"), text("c"));
            // complete the newer messages, keep the oldest one
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 10);
            List<ReceivedMessage> got = sink.take();
            h.await(r.complete(got.get(1).lockToken()));
            h.await(r.complete(got.get(2).lockToken()));
            r.close();
            h.crashAndRestart();
            h.send("q", text("d"));
            assertThat(seqs(peekAll(h, "q"))).containsExactly(1L, 4L);
        }
    }

    @Test
    void cancelledScheduledNumbersAreNotReusedAfterRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long[] scheduled = h.await(h.engine.schedule("q", List.of(Message.builder()
                    .scheduledEnqueueTimeMs(h.clock.epochMillis() + 60_000).build())));
            assertThat(scheduled).containsExactly(1L);
            h.await(h.engine.cancelScheduled("q", scheduled));
            h.crashAndRestart();
            h.send("q", text("a"));
            assertThat(seqs(peekAll(h, "q"))).containsExactly(2L);
        }
    }

    @Test
    void topicSubscriptionCopiesCarryTheTopicsNumber() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "s1", "s2");
            h.send("t", text("a"));
            h.send("t", text("b"), text("c"));
            h.crashAndRestart();
            h.send("t", text("d"));
            for (String sub : List.of("t/Subscriptions/s1", "t/Subscriptions/s2")) {
                List<ReceivedMessage> got = drainAll(h, sub);
                assertThat(seqs(got)).as(sub).containsExactly(1L, 2L, 3L, 4L);
                assertThat(got).extracting(EngineHarness::text).containsExactly("a", "b", "c", "d");
            }
            // the topic's counter is shared: a subscription added later continues it
            h.await(h.engine.createSubscription(
                    io.buslane.engine.entity.SubscriptionProperties.builder("t", "s3").build(), null));
            h.send("t", text("e"));
            assertThat(seqs(drainAll(h, "t/Subscriptions/s3"))).containsExactly(5L);
            assertThat(seqs(drainAll(h, "t/Subscriptions/s1"))).containsExactly(5L);
        }
    }

    @Test
    void enqueuedTimeIsTheClockTimeAtAcceptance() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            h.send("q", text("a"));
            h.advance(Duration.ofMillis(1_234));
            h.send("q", text("b"), text("c"));
            h.advance(Duration.ofHours(5));
            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(peeked).extracting(ReceivedMessage::enqueuedTimeMs)
                    .containsExactly(t0, t0 + 1_234, t0 + 1_234);
            List<ReceivedMessage> received = drainAll(h, "q");
            assertThat(received).extracting(ReceivedMessage::enqueuedTimeMs)
                    .containsExactly(t0, t0 + 1_234, t0 + 1_234);
        }
    }

    @Test
    void enqueuedTimeSurvivesRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            long t0 = h.clock.epochMillis();
            h.send("q", text("a"));
            h.clock.advance(Duration.ofMinutes(3));
            h.crashAndRestart();
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::enqueuedTimeMs).containsExactly(t0);
        }
    }

    @Test
    void competingConsumersReceiveInSequenceOrderOverall() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            List<ReceivedMessage> order = new ArrayList<>();
            Map<Long, Receiver> holder = new HashMap<>();
            DeliverySink shared = new DeliverySink() {
                @Override
                public synchronized void onMessage(Receiver receiver, ReceivedMessage message) {
                    order.add(message);
                    holder.put(message.sequenceNumber(), receiver);
                }

                @Override
                public void onClosed(Receiver receiver, BrokerException error) {
                }
            };
            Receiver r1 = h.engine.createReceiver(EntityAddress.parse("q"), ReceiveMode.PEEK_LOCK, shared);
            Receiver r2 = h.engine.createReceiver(EntityAddress.parse("q"), ReceiveMode.PEEK_LOCK, shared);
            r1.addCredit(1);
            r2.addCredit(1);
            for (int i = 0; i < 10; i++) {
                h.send("q", text("m" + i));
            }
            // settle whatever arrived and grant one more credit to that receiver, until everything is through
            Set<Receiver> used = new HashSet<>();
            int settled = 0;
            while (settled < order.size()) {
                ReceivedMessage m = order.get(settled++);
                Receiver r = holder.get(m.sequenceNumber());
                used.add(r);
                h.await(r.complete(m.lockToken()));
                r.addCredit(1);
                h.engine.runUntilIdle();
            }
            assertThat(seqs(order)).containsExactlyElementsOf(range(1, 10));
            assertThat(used).containsExactlyInAnyOrder(r1, r2);
        }
    }

    // ------------------------------------------------------------------------------------------------ partitions

    private static QueueProperties partitioned(String name) {
        return QueueProperties.builder(name).enablePartitioning(true).build();
    }

    @Test
    void partitionedNumbersCarryThePartitionIdInTheTop16Bits() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(partitioned("pq"));
            for (int i = 0; i < Limits.PARTITION_COUNT; i++) {
                h.send("pq", text("m" + i));
            }
            List<ReceivedMessage> all = drainAll(h, "pq");
            assertThat(all).hasSize(Limits.PARTITION_COUNT);
            Set<Integer> partitions = new HashSet<>();
            for (ReceivedMessage m : all) {
                int partition = (int) (m.sequenceNumber() >>> 48);
                assertThat(partition).as("partition bits of %s", m.sequenceNumber())
                        .isEqualTo(m.partitionIndex());
                assertThat(SequenceCounter.partitionOf(m.sequenceNumber())).isEqualTo(m.partitionIndex());
                // each partition's own 48-bit counter starts at 1
                assertThat(m.sequenceNumber() & MASK_48).isEqualTo(1L);
                partitions.add(partition);
            }
            assertThat(partitions).hasSize(Limits.PARTITION_COUNT);
        }
    }

    @Test
    void partitionedEntitiesCountPerPartition() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(partitioned("pq"));
            String k1 = "alpha";
            String k2 = keyOnAnotherPartition(k1);
            h.send("pq", keyed("a", k1));
            h.send("pq", keyed("b", k2));
            h.send("pq", keyed("c", k1), keyed("d", k1));
            h.send("pq", keyed("e", k2));
            h.crashAndRestart();
            h.send("pq", keyed("f", k1));

            Map<String, List<Long>> byKey = new HashMap<>();
            for (ReceivedMessage m : drainAll(h, "pq")) {
                byKey.computeIfAbsent(m.message().partitionKey(), k -> new ArrayList<>()).add(m.sequenceNumber());
            }
            List<Long> s1 = byKey.get(k1);
            List<Long> s2 = byKey.get(k2);
            assertThat(s1).extracting(s -> s & MASK_48).containsExactly(1L, 2L, 3L, 4L);
            assertThat(s2).extracting(s -> s & MASK_48).containsExactly(1L, 2L);
            assertThat(s1).extracting(s -> s >>> 48).containsOnly(s1.get(0) >>> 48);
            assertThat(s2).extracting(s -> s >>> 48).containsOnly(s2.get(0) >>> 48);
            assertThat(s1.get(0) >>> 48).isNotEqualTo(s2.get(0) >>> 48);
        }
    }

    @Test
    void aBatchWithDistinctKeysToAPartitionedEntityIsRefusedWholeAsOnTheService() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(partitioned("pq"));
            h.queue(QueueProperties.builder("dq").enablePartitioning(true).requiresDuplicateDetection(true).build());
            h.queue(QueueProperties.builder("sq").enablePartitioning(true).requiresSession(true).build());
            String k1 = "alpha";
            String k2 = keyOnAnotherPartition(k1);
            assertRefusedWhole(h, "pq", keyed("a", k1), keyed("b", k2));
            assertRefusedWhole(h, "pq", keyed("a", k1), text("unkeyed"));
            // the ViaPartitionKey places a message without the others: distinct ones are distinct keys too
            assertRefusedWhole(h, "pq", text("a").toBuilder().viaPartitionKey(k1).build(),
                    text("b").toBuilder().viaPartitionKey(k2).build());
            assertRefusedWhole(h, "sq", text("a", "s1"), text("b", "s2"));
            // with duplicate detection the MessageIds must agree too (the service's text says so)
            assertRefusedWhole(h, "dq", keyed("a", k1).toBuilder().messageId("m1").build(),
                    keyed("b", k1).toBuilder().messageId("m2").build());
            // one key for the whole batch: stored, in one partition
            h.send("pq", keyed("c", k1), keyed("d", k1));
            h.send("sq", text("c", "s1"), text("d", "s1"));
            List<ReceivedMessage> stored = drainAll(h, "pq");
            assertThat(stored).hasSize(2);
            assertThat(stored).extracting(m -> m.sequenceNumber() >>> 48)
                    .containsOnly(stored.get(0).sequenceNumber() >>> 48);
        }
    }

    private static void assertRefusedWhole(EngineHarness h, String queue, Message... batch) {
        assertThatThrownBy(() -> h.send(queue, batch)).isInstanceOf(BrokerException.class)
                .hasMessage(io.buslane.engine.routing.SendRouter.DISTINCT_KEYS_TEXT)
                .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(ErrorKind.INVALID_OPERATION));
        assertThat(h.await(h.engine.counts(queue)).activeMessageCount()).as("nothing of it stored").isZero();
    }

    @Test
    void sameSessionIdOrPartitionKeyAlwaysLandsOnTheSamePartition() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("sq").enablePartitioning(true).requiresSession(true).build());
            h.queue(partitioned("pq"));
            for (int i = 0; i < 20; i++) {
                h.send("sq", text("s" + i, "session-1"));
                // a matching PartitionKey is allowed and does not change the placement
                h.send("sq", Message.builder().sessionId("session-1").partitionKey("session-1").build());
                h.send("pq", keyed("p" + i, "session-1"));
                h.send("pq", text("filler" + i)); // moves the round-robin cursor
            }
            List<ReceivedMessage> session = h.await(h.engine.peek(EntityAddress.parse("sq"), 0, 1000, null));
            assertThat(session).hasSize(40);
            Set<Integer> sessionPartitions = session.stream().map(ReceivedMessage::partitionIndex)
                    .collect(Collectors.toSet());
            assertThat(sessionPartitions).hasSize(1);

            Set<Integer> keyPartitions = new HashSet<>();
            for (ReceivedMessage m : peekAll(h, "pq")) {
                if ("session-1".equals(m.message().partitionKey())) {
                    keyPartitions.add(m.partitionIndex());
                }
            }
            // a PartitionKey and the same SessionId hash to the same partition
            assertThat(keyPartitions).containsExactlyElementsOf(sessionPartitions);

            // stable across a restart
            h.crashAndRestart();
            h.send("sq", text("after", "session-1"));
            List<ReceivedMessage> after = h.await(h.engine.peek(EntityAddress.parse("sq"), 0, 1000, null));
            assertThat(after).extracting(ReceivedMessage::partitionIndex).containsOnlyElementsOf(sessionPartitions);
        }
    }

    @Test
    void partitionKeyDifferentFromSessionIdIsRejected() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("sq").enablePartitioning(true).requiresSession(true).build());
            h.queue("q");
            Message bad = Message.builder().sessionId("s1").partitionKey("other").build();
            for (String q : List.of("sq", "q")) {
                assertThatThrownBy(() -> h.send(q, bad))
                        .isInstanceOfSatisfying(BrokerException.class,
                                e -> assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_OPERATION));
            }
            // nothing was stored and no number was consumed
            h.send("q", text("ok"));
            assertThat(seqs(peekAll(h, "q"))).containsExactly(1L);
            assertThat(peekAll(h, "sq")).isEmpty();
        }
    }

    @Test
    void unkeyedSendsAreSpreadRoundRobinAndABatchStaysTogether() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(partitioned("pq"));
            for (int i = 0; i < 2 * Limits.PARTITION_COUNT; i++) {
                h.send("pq", text("m" + i));
            }
            Map<Integer, Integer> perPartition = new HashMap<>();
            for (ReceivedMessage m : peekAll(h, "pq")) {
                perPartition.merge(m.partitionIndex(), 1, Integer::sum);
            }
            assertThat(perPartition).hasSize(Limits.PARTITION_COUNT);
            assertThat(perPartition.values()).containsOnly(2);

            h.await(h.engine.purge(EntityAddress.parse("pq")));
            h.send("pq", text("b1"), text("b2"), text("b3"));
            List<ReceivedMessage> batch = peekAll(h, "pq");
            assertThat(batch).hasSize(3);
            assertThat(batch).extracting(ReceivedMessage::partitionIndex).containsOnly(batch.get(0).partitionIndex());
            assertThat(batch).extracting(m -> m.sequenceNumber() & MASK_48).containsExactly(3L, 4L, 5L);
        }
    }

    @Test
    void peekOnAPartitionedEntityReturnsSequenceOrder() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(partitioned("pq"));
            for (int i = 0; i < 40; i++) {
                h.send("pq", text("m" + i));
            }
            List<Long> peeked = seqs(peekAll(h, "pq"));
            assertThat(peeked).hasSize(40).isSorted().doesNotHaveDuplicates();
        }
    }

    // ------------------------------------------------------------------------------------------------ rollover

    @Test
    void partitionedCounterRollsOverToZeroKeepingThePartitionBits() {
        SequenceCounter c = new SequenceCounter(true, 7, MASK_48 - 1);
        long partitionBits = 7L << 48;
        assertThat(c.take()).isEqualTo(partitionBits | (MASK_48 - 1));
        assertThat(c.take()).isEqualTo(partitionBits | MASK_48);
        long afterMax = c.take();
        assertThat(afterMax).isEqualTo(partitionBits);
        assertThat(afterMax & MASK_48).isZero();
        assertThat(SequenceCounter.partitionOf(afterMax)).isEqualTo(7);
        assertThat(c.take()).isEqualTo(partitionBits | 1);

        // the highest partition id keeps its bits too (the sequence number is then negative as a signed long)
        SequenceCounter top = new SequenceCounter(true, 0xFFFF, MASK_48);
        assertThat(top.take()).isEqualTo(-1L);
        assertThat(top.take()).isEqualTo(0xFFFFL << 48);
        assertThat(SequenceCounter.partitionOf(0xFFFFL << 48)).isEqualTo(0xFFFF);
    }

    @Test
    void partitionedCounterRestoredPastTheMaximumRollsOver() {
        SequenceCounter c = new SequenceCounter(true, 3, 1);
        c.advancePast((3L << 48) | MASK_48);
        assertThat(c.nextCounter()).isZero();
        assertThat(c.take()).isEqualTo(3L << 48);
    }

    @Test
    void nonPartitionedCounterRollsOverAfterLongMaxValue() {
        SequenceCounter c = new SequenceCounter(false, 5, Long.MAX_VALUE - 1);
        assertThat(c.take()).isEqualTo(Long.MAX_VALUE - 1);
        assertThat(c.take()).isEqualTo(Long.MAX_VALUE);
        assertThat(c.take()).isZero();
        assertThat(c.take()).isEqualTo(1L);
        // a non-partitioned counter uses all 64 bits: no partition bits, even for a non-zero index
        SequenceCounter big = new SequenceCounter(false, 5, MASK_48);
        assertThat(big.take()).isEqualTo(MASK_48);
        assertThat(big.take()).isEqualTo(MASK_48 + 1);

        SequenceCounter restored = new SequenceCounter(false, 0, 1);
        restored.advancePast(Long.MAX_VALUE);
        assertThat(restored.take()).isZero();
    }

    @Test
    void queueRollsOverAfterLongMaxValueAndKeepsCountingAfterRestart() {
        try (EngineHarness h = new EngineHarness()) {
            QueueEntity q = h.queue("q");
            // test-only shortcut to the end of the range (manual mode: this thread is the shard thread)
            q.partitions()[0].partition().sequence().setNextCounter(Long.MAX_VALUE - 1);
            h.send("q", text("a"), text("b"), text("c"));
            List<ReceivedMessage> got = drainAll(h, "q");
            assertThat(got).extracting(EngineHarness::text).containsExactly("a", "b", "c");
            assertThat(seqs(got)).containsExactly(Long.MAX_VALUE - 1, Long.MAX_VALUE, 0L);
            h.crashAndRestart();
            h.send("q", text("d"));
            assertThat(seqs(peekAll(h, "q"))).containsExactly(1L);
        }
    }
}
