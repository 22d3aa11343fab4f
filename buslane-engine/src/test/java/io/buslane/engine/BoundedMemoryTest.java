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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A backlog many times the resident budget is accepted, browsed and delivered with message bodies read back from
 * the journal's segment files, across restarts, for every place a message is read: delivery, peek, deferred
 * receive, dead-lettering with modified properties, scheduled activation and topic fan-out. Real file journals in a
 * temporary directory (small segments, so that records also move through compaction), one shard, manual threading.
 */
class BoundedMemoryTest {

    /** Resident budget of the shard: about eight of the 1 KiB messages. */
    private static final long BUDGET = 8 * 1024;
    private static final int BODY_BYTES = 1024;
    private static final long SEGMENT_BYTES = 256 * 1024;

    @TempDir
    Path dir;

    private EngineHarness open() {
        return EngineHarness.onFiles(dir, 1, BUDGET, SEGMENT_BYTES);
    }

    /** A 1 KiB body that names its message. */
    private static byte[] body(String name) {
        byte[] b = new byte[BODY_BYTES];
        Arrays.fill(b, (byte) ('a' + Math.floorMod(name.hashCode(), 26)));
        byte[] head = (name + "|").getBytes(StandardCharsets.UTF_8);
        System.arraycopy(head, 0, b, 0, head.length);
        return b;
    }

    private static Message message(String name) {
        return Message.builder().messageId(name).body(body(name)).build();
    }

    private static String name(ReceivedMessage m) {
        byte[] b = m.message().body();
        String text = new String(b, StandardCharsets.UTF_8);
        String name = text.substring(0, text.indexOf('|'));
        assertThat(b).as("body of %s", name).isEqualTo(body(name));
        assertThat(m.message().messageId()).isEqualTo(name);
        return name;
    }

    private static List<String> names(List<ReceivedMessage> messages) {
        List<String> out = new ArrayList<>();
        messages.forEach(m -> out.add(name(m)));
        return out;
    }

    private static List<String> expected(String prefix, int count) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(prefix + i);
        }
        return out;
    }

    /** Sends {@code count} messages in batches of 100, checking the budget after each batch. */
    private static void sendAll(EngineHarness h, String entity, int count, IntFunction<Message> make) {
        for (int i = 0; i < count; i += 100) {
            List<Message> batch = new ArrayList<>();
            for (int j = i; j < Math.min(count, i + 100); j++) {
                batch.add(make.apply(j));
            }
            h.send(entity, batch);
            assertWithinBudget(h);
        }
    }

    private static void assertWithinBudget(EngineHarness h) {
        assertThat(h.engine.shards().residentMessageBytes()).isLessThanOrEqualTo(BUDGET);
    }

    /** Peeks everything from sequence number 0 in pages. */
    private static List<ReceivedMessage> peekAll(EngineHarness h, String address) {
        List<ReceivedMessage> out = new ArrayList<>();
        long from = 0;
        while (true) {
            List<ReceivedMessage> page = h.await(h.engine.peek(EntityAddress.parse(address), from, 250, null));
            if (page.isEmpty()) {
                return out;
            }
            out.addAll(page);
            from = page.get(page.size() - 1).sequenceNumber() + 1;
            assertWithinBudget(h);
        }
    }

    /** Receives {@code count} messages in peek-lock mode in credit windows of 50, completing each. */
    private static List<ReceivedMessage> receiveAndComplete(EngineHarness h, String address, int count) {
        EngineHarness.Sink sink = new EngineHarness.Sink();
        Receiver r = h.receiver(address, ReceiveMode.PEEK_LOCK, sink, 0);
        List<ReceivedMessage> out = new ArrayList<>();
        while (out.size() < count) {
            r.addCredit(Math.min(50, count - out.size()));
            h.engine.runUntilIdle();
            List<ReceivedMessage> got = sink.take();
            assertThat(got).as("deliveries after %d", out.size()).isNotEmpty();
            for (ReceivedMessage m : got) {
                h.await(r.complete(m.lockToken()));
            }
            out.addAll(got);
            assertWithinBudget(h);
        }
        r.close();
        h.engine.runUntilIdle();
        return out;
    }

    // ------------------------------------------------------------------------------------------------ queues

    @Test
    void aBacklogFarLargerThanTheBudgetIsBrowsedAndDeliveredInOrderAcrossRestarts() {
        try (EngineHarness h = open()) {
            h.await(h.engine.createQueue(QueueProperties.builder("q").build()));
            sendAll(h, "q", 2000, i -> message("m" + i));
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(2000);
            assertThat(h.await(h.engine.counts("q")).sizeInBytes()).isGreaterThan(2000L * BODY_BYTES);

            assertThat(names(peekAll(h, "q"))).containsExactlyElementsOf(expected("m", 2000));

            h.restart();
            assertWithinBudget(h);
            assertThat(names(peekAll(h, "q"))).containsExactlyElementsOf(expected("m", 2000));
            assertThat(names(receiveAndComplete(h, "q", 1000))).containsExactlyElementsOf(expected("m", 1000));

            h.restart();
            assertWithinBudget(h);
            List<String> rest = names(receiveAndComplete(h, "q", 1000));
            assertThat(rest).containsExactlyElementsOf(expected("m", 2000).subList(1000, 2000));
            RuntimeCounts counts = h.await(h.engine.counts("q"));
            assertThat(counts.activeMessageCount()).isZero();
            assertThat(counts.sizeInBytes()).isZero();
        }
    }

    @Test
    void sizeAccountingIsTheSameWhetherBodiesAreResidentOrEvicted() {
        try (EngineHarness evicting = open()) {
            evicting.await(evicting.engine.createQueue(QueueProperties.builder("q").build()));
            sendAll(evicting, "q", 300, i -> message("m" + i));
            long evictedSize = evicting.await(evicting.engine.counts("q")).sizeInBytes();
            evicting.restart();
            assertThat(evicting.await(evicting.engine.counts("q")).sizeInBytes()).isEqualTo(evictedSize);

            try (EngineHarness resident = new EngineHarness(1)) {
                resident.queue("q");
                for (int i = 0; i < 300; i++) {
                    resident.send("q", message("m" + i));
                }
                assertThat(resident.await(resident.engine.counts("q")).sizeInBytes()).isEqualTo(evictedSize);
            }
        }
    }

    @Test
    void afterARestartTheOldestMessagesAreResidentAndTheNewestAreNot() {
        try (EngineHarness h = open()) {
            h.await(h.engine.createQueue(QueueProperties.builder("q").build()));
            sendAll(h, "q", 500, i -> message("m" + i));
            h.restart();
            assertThat(h.engine.shards().residentMessageBytes()).isGreaterThan(BUDGET / 2).isLessThanOrEqualTo(BUDGET);

            long reads = h.engine.shards().messageBodyReads();
            assertThat(names(receiveAndComplete(h, "q", 4))).containsExactly("m0", "m1", "m2", "m3");
            assertThat(h.engine.shards().messageBodyReads()).as("the oldest come from the heap").isEqualTo(reads);

            List<ReceivedMessage> last = h.await(h.engine.peek(EntityAddress.parse("q"), 0, 500, null));
            assertThat(name(last.get(last.size() - 1))).isEqualTo("m499");
            assertThat(h.engine.shards().messageBodyReads()).as("the newest come from the journal")
                    .isGreaterThan(reads);
        }
    }

    @Test
    void peekingTheSamePageTwiceReadsTheJournalOnce() {
        try (EngineHarness h = open()) {
            h.await(h.engine.createQueue(QueueProperties.builder("q").build()));
            sendAll(h, "q", 200, i -> message("m" + i));

            long before = h.engine.shards().messageBodyReads();
            List<ReceivedMessage> first = h.await(h.engine.peek(EntityAddress.parse("q"), 100, 20, null));
            long afterFirst = h.engine.shards().messageBodyReads();
            List<ReceivedMessage> second = h.await(h.engine.peek(EntityAddress.parse("q"), 100, 20, null));

            assertThat(afterFirst - before).isEqualTo(20);
            assertThat(h.engine.shards().messageBodyReads()).isEqualTo(afterFirst);
            assertThat(names(second)).isEqualTo(names(first));
            // receiving what was just peeked does not read it again either (nor the oldest, which are resident)
            EngineHarness.Sink sink = new EngineHarness.Sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink, 200);
            assertThat(names(sink.take())).containsExactlyElementsOf(expected("m", 200));
            assertThat(h.engine.shards().messageBodyReads() - afterFirst).isBetween(200L - 20 - BUDGET / BODY_BYTES,
                    200L - 20 - 1);
        }
    }

    @Test
    void aZeroBudgetKeepsNoBodyInTheHeapOnceDurable() {
        try (EngineHarness h = EngineHarness.onFiles(dir, 2, 0, SEGMENT_BYTES)) {
            h.await(h.engine.createQueue(QueueProperties.builder("q").enablePartitioning(true).build()));
            for (int i = 0; i < 300; i++) {
                h.send("q", List.of(message("m" + i)));
                assertThat(h.engine.shards().residentMessageBytes()).isZero();
            }
            EngineHarness.Sink sink = new EngineHarness.Sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink, 300);
            assertThat(names(sink.take())).containsExactlyInAnyOrderElementsOf(expected("m", 300));
        }
    }

    // ------------------------------------------------------------------------------------------------ sessions

    @Test
    void sessionMessagesAreRestoredIntoTheirSessionsWithEvictedBodies() {
        try (EngineHarness h = open()) {
            h.await(h.engine.createQueue(QueueProperties.builder("s").requiresSession(true).build()));
            sendAll(h, "s", 1000, i -> Message.builder().messageId("s" + (i % 20) + "-" + (i / 20))
                    .sessionId("session-" + (i % 20)).body(body("s" + (i % 20) + "-" + (i / 20))).build());
            h.restart();
            assertWithinBudget(h);

            for (int s = 0; s < 20; s++) {
                EngineHarness.Sink sink = new EngineHarness.Sink();
                Receiver r = h.await(h.engine.acceptSession(EntityAddress.parse("s"), "session-" + s,
                        ReceiveMode.RECEIVE_AND_DELETE, 0, sink));
                r.addCredit(100);
                h.engine.runUntilIdle();
                List<ReceivedMessage> got = sink.take();
                assertThat(names(got)).containsExactlyElementsOf(expected("s" + s + "-", 50));
                assertThat(got).allSatisfy(m -> assertThat(m.sessionId()).isEqualTo(r.sessionId()));
                r.close();
                h.engine.runUntilIdle();
                assertWithinBudget(h);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ scheduled

    @Test
    void scheduledMessagesWithEvictedBodiesAreBrowsedAndActivateAfterARestart() {
        try (EngineHarness h = open()) {
            h.await(h.engine.createQueue(QueueProperties.builder("q").build()));
            long at = h.clock.epochMillis() + 60_000;
            List<Message> scheduled = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                scheduled.add(Message.builder().messageId("s" + i).body(body("s" + i)).scheduledEnqueueTimeMs(at + i)
                        .build());
            }
            for (int i = 0; i < 500; i += 100) {
                h.await(h.engine.schedule("q", scheduled.subList(i, i + 100)));
                assertWithinBudget(h);
            }
            List<ReceivedMessage> peeked = peekAll(h, "q");
            assertThat(names(peeked)).containsExactlyElementsOf(expected("s", 500));
            assertThat(peeked).allSatisfy(m -> assertThat(m.state()).isEqualTo(MessageState.SCHEDULED));
            assertThat(h.await(h.engine.counts("q")).sizeInBytes()).isGreaterThan(500L * BODY_BYTES);

            h.restart();
            assertWithinBudget(h);
            h.advance(Duration.ofSeconds(61));
            assertWithinBudget(h);
            assertThat(h.await(h.engine.counts("q")).scheduledMessageCount()).isZero();
            assertThat(names(receiveAndComplete(h, "q", 500))).containsExactlyElementsOf(expected("s", 500));
        }
    }

    // ------------------------------------------------------------------------------------------------ topics

    @Test
    void topicFanOutSharesEvictedBodiesAcrossSubscriptionsAndRestarts() {
        try (EngineHarness h = open()) {
            h.await(h.engine.createTopic(TopicProperties.builder("t").build()));
            for (String s : List.of("a", "b", "c")) {
                h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", s).build(), null));
            }
            sendAll(h, "t", 600, i -> message("t" + i));
            // each body is held once, not once per subscription
            assertThat(h.await(h.engine.counts("t/subscriptions/a")).activeMessageCount()).isEqualTo(600);

            assertThat(names(peekAll(h, "t/subscriptions/b"))).containsExactlyElementsOf(expected("t", 600));
            assertThat(names(receiveAndComplete(h, "t/subscriptions/a", 600)))
                    .containsExactlyElementsOf(expected("t", 600));
            h.restart();
            assertWithinBudget(h);
            assertThat(names(receiveAndComplete(h, "t/subscriptions/b", 300)))
                    .containsExactlyElementsOf(expected("t", 300));
            h.restart();
            assertThat(names(receiveAndComplete(h, "t/subscriptions/b", 300)))
                    .containsExactlyElementsOf(expected("t", 600).subList(300, 600));
            assertThat(names(receiveAndComplete(h, "t/subscriptions/c", 600)))
                    .containsExactlyElementsOf(expected("t", 600));
        }
    }

    // ------------------------------------------------------------------------------------------------ settlement

    @Test
    void deferredMessagesWithEvictedBodiesAreReceivedBySequenceNumber() {
        try (EngineHarness h = open()) {
            h.await(h.engine.createQueue(QueueProperties.builder("q").build()));
            sendAll(h, "q", 300, i -> message("d" + i));
            EngineHarness.Sink sink = new EngineHarness.Sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 300);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).hasSize(300);
            long[] seqs = new long[300];
            for (int i = 0; i < 300; i++) {
                ReceivedMessage m = got.get(i);
                seqs[i] = m.sequenceNumber();
                // every third deferral modifies the properties: those messages live in UPDATE records
                h.await(r.defer(m.lockToken(), i % 3 == 0 ? Map.of("deferred", i) : null));
            }
            r.close();
            assertWithinBudget(h);

            List<ReceivedMessage> deferred = h.await(h.engine.receiveDeferred(EntityAddress.parse("q"), seqs,
                    ReceiveMode.PEEK_LOCK, null, null));
            assertThat(names(deferred)).containsExactlyElementsOf(expected("d", 300));
            for (int i = 0; i < 300; i++) {
                assertThat(deferred.get(i).message().applicationProperties().get("deferred"))
                        .isEqualTo(i % 3 == 0 ? i : null);
            }

            h.restart(); // the locks are gone: the messages are deferred again
            deferred = h.await(h.engine.receiveDeferred(EntityAddress.parse("q"), seqs,
                    ReceiveMode.RECEIVE_AND_DELETE, null, null));
            assertThat(names(deferred)).containsExactlyElementsOf(expected("d", 300));
            for (int i = 0; i < 300; i++) {
                assertThat(deferred.get(i).message().applicationProperties().get("deferred"))
                        .isEqualTo(i % 3 == 0 ? i : null);
            }
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isZero();
        }
    }

    @Test
    void deadLetteringEvictedMessagesWithPropertiesKeepsBodiesAndProperties() {
        try (EngineHarness h = open()) {
            h.await(h.engine.createQueue(QueueProperties.builder("q").maxDeliveryCount(3).build()));
            sendAll(h, "q", 200, i -> Message.builder().messageId("x" + i).body(body("x" + i))
                    .applicationProperties(Map.of("original", i)).build());
            EngineHarness.Sink sink = new EngineHarness.Sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 200);
            List<ReceivedMessage> got = sink.take();
            for (int i = 0; i < 200; i++) {
                ReceivedMessage m = got.get(i);
                if (i % 2 == 0) {
                    h.await(r.deadLetter(m.lockToken(), "reason " + i, "description " + i, Map.of("added", "p" + i)));
                } else {
                    // abandoned with modified properties twice, then dead-lettered by the delivery count
                    h.await(r.abandon(m.lockToken(), Map.of("abandoned", i)));
                }
            }
            r.close();
            h.engine.runUntilIdle();
            assertWithinBudget(h);
            // the abandoned half comes back twice more, the third failure dead-letters it
            for (int round = 0; round < 2; round++) {
                EngineHarness.Sink again = new EngineHarness.Sink();
                Receiver r2 = h.receiver("q", ReceiveMode.PEEK_LOCK, again, 100);
                List<ReceivedMessage> back = again.take();
                assertThat(names(back)).hasSize(100);
                for (ReceivedMessage m : back) {
                    assertThat(m.message().applicationProperties()).containsKey("abandoned");
                    h.await(r2.abandon(m.lockToken(), null));
                }
                r2.close();
                h.engine.runUntilIdle();
                if (round == 0) {
                    h.restart(); // the modified messages come back from their UPDATE records
                }
            }
            assertThat(h.await(h.engine.counts("q")).deadLetterMessageCount()).isEqualTo(200);

            for (int pass = 0; pass < 2; pass++) {
                List<ReceivedMessage> dead = peekAll(h, "q/$deadletterqueue");
                assertThat(names(dead)).containsExactlyElementsOf(expected("x", 200));
                for (int i = 0; i < 200; i++) {
                    Map<String, Object> props = dead.get(i).message().applicationProperties();
                    assertThat(props.get("original")).isEqualTo(i);
                    if (i % 2 == 0) {
                        assertThat(props).containsEntry("added", "p" + i)
                                .containsEntry("DeadLetterReason", "reason " + i)
                                .containsEntry("DeadLetterErrorDescription", "description " + i);
                    } else {
                        assertThat(props).containsEntry("abandoned", i)
                                .containsEntry("DeadLetterReason", "MaxDeliveryCountExceeded");
                    }
                }
                h.restart();
                assertWithinBudget(h);
            }
            // delivered in the order they were dead-lettered: the even ones first
            List<String> order = new ArrayList<>();
            for (int i = 0; i < 200; i += 2) {
                order.add("x" + i);
            }
            for (int i = 1; i < 200; i += 2) {
                order.add("x" + i);
            }
            assertThat(names(receiveAndComplete(h, "q/$deadletterqueue", 200))).containsExactlyElementsOf(order);
        }
    }
}
