package io.buslane.engine;

import io.buslane.common.error.ErrorKind;

import io.buslane.common.error.BrokerException;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.dedup.DedupWindow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import io.buslane.journal.memory.InMemoryJournal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Duplicate detection (duplicate-detection.md; service-bus-behaviour.md §2.2, §2.3). */
class DuplicateDetectionTest {

    private static Message msg(String id, String body) {
        return Message.builder().messageId(id).body(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    private static QueueProperties dedupQueue(String name, Duration window) {
        return QueueProperties.builder(name).requiresDuplicateDetection(true)
                .duplicateDetectionHistoryTimeWindow(window).build();
    }

    private static List<String> peekBodies(EngineHarness h, String address) {
        List<ReceivedMessage> all = h.await(h.engine.peek(EntityAddress.parse(address), 0, 1000, null));
        return all.stream().map(EngineHarness::text).toList();
    }

    @Test
    void aMessageIdSeenWithinTheWindowIsAcceptedAndDropped() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(dedupQueue("q", Duration.ofMinutes(10)));
            h.send("q", msg("id-1", "first"));
            h.send("q", msg("id-1", "again")); // completes normally: the sender sees success
            h.send("q", msg("id-2", "other"));
            assertThat(peekBodies(h, "q")).containsExactly("first", "other");
            List<ReceivedMessage> peeked = h.await(h.engine.peek(EntityAddress.parse("q"), 0, 10, null));
            // the dropped duplicate took no sequence number
            assertThat(peeked).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 2L);
        }
    }

    @Test
    void aSendRefusedForQuotaDoesNotRememberItsMessageIdsSoItsRetryIsStored() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("full").requiresDuplicateDetection(true)
                    .duplicateDetectionHistoryTimeWindow(Duration.ofMinutes(10)).maxSizeInMegabytes(1).build());
            byte[] big = new byte[200 * 1024];
            int stored = 0;
            BrokerException refused = null;
            while (refused == null) {
                try {
                    h.send("full", Message.builder().messageId("fill-" + stored).body(big).build());
                    stored++;
                } catch (BrokerException e) {
                    refused = e;
                }
            }
            assertThat(refused.kind()).isEqualTo(ErrorKind.QUOTA_EXCEEDED);
            Message m = Message.builder().messageId("M").body(big).build();
            assertThatThrownBy(() -> h.send("full", m)).isInstanceOf(BrokerException.class)
                    .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(ErrorKind.QUOTA_EXCEEDED));
            h.await(h.engine.purge(EntityAddress.parse("full"))); // space again
            h.send("full", m); // the retry within the window
            assertThat(h.await(h.engine.peek(EntityAddress.parse("full"), 0, 10, null)))
                    .extracting(r -> r.message().messageId()).containsExactly("M");
            // and it is remembered now: a second retry is dropped as a duplicate
            h.send("full", m);
            assertThat(h.await(h.engine.peek(EntityAddress.parse("full"), 0, 10, null))).hasSize(1);
        }
    }

    /** A duplicate-detecting queue of 1 MB filled until a send is refused for quota. */
    private static void fillToQuota(EngineHarness h, String name) {
        h.queue(QueueProperties.builder(name).requiresDuplicateDetection(true)
                .duplicateDetectionHistoryTimeWindow(Duration.ofMinutes(10)).maxSizeInMegabytes(1).build());
        for (int i = 0; ; i++) {
            try {
                h.send(name, Message.builder().messageId("fill-" + i).body(new byte[200 * 1024]).build());
            } catch (BrokerException e) {
                assertThat(e.kind()).isEqualTo(ErrorKind.QUOTA_EXCEEDED);
                return;
            }
        }
    }

    @Test
    void aScheduleRefusedForQuotaDoesNotRememberItsMessageIdSoItsRetryIsScheduled() {
        try (EngineHarness h = new EngineHarness()) {
            fillToQuota(h, "full");
            Message m = Message.builder().messageId("M").body(new byte[200 * 1024])
                    .scheduledEnqueueTimeMs(h.clock.epochMillis() + 3_600_000).build();
            assertThatThrownBy(() -> h.await(h.engine.schedule("full", List.of(m))))
                    .isInstanceOf(BrokerException.class)
                    .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(ErrorKind.QUOTA_EXCEEDED));
            h.await(h.engine.purge(EntityAddress.parse("full")));
            long seq = h.await(h.engine.schedule("full", List.of(m)))[0];
            assertThat(h.await(h.engine.peek(EntityAddress.parse("full"), 0, 10, null)))
                    .extracting(r -> r.sequenceNumber()).containsExactly(seq);
        }
    }

    @Test
    void aForwardRefusedForQuotaDoesNotRememberItsMessageIdAtTheDestination() {
        try (EngineHarness h = new EngineHarness()) {
            fillToQuota(h, "full");
            h.queue(QueueProperties.builder("source").forwardTo("full").build());
            Message m = Message.builder().messageId("M").body(new byte[200 * 1024]).build();
            h.send("source", m); // forwarded, refused by the full destination: to the source's transfer DLQ
            assertThat(h.await(h.engine.counts("source")).transferDeadLetterMessageCount()).isEqualTo(1);
            h.await(h.engine.purge(EntityAddress.parse("full")));
            h.send("full", m); // the same id sent again: stored, not dropped as a duplicate of the refused forward
            assertThat(h.await(h.engine.peek(EntityAddress.parse("full"), 0, 10, null)))
                    .extracting(r -> r.message().messageId()).containsExactly("M");
        }
    }

    @Test
    void withoutDuplicateDetectionTheSameIdIsAcceptedTwice() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", msg("id-1", "first"));
            h.send("q", msg("id-1", "again"));
            assertThat(peekBodies(h, "q")).containsExactly("first", "again");
        }
    }

    @Test
    void theWindowCountsFromTheFirstAcceptanceAndADuplicateIsDroppedEvenAfterTheOriginalWasConsumed() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(dedupQueue("q", Duration.ofMinutes(1)));
            h.send("q", msg("id-1", "first"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink, 10);
            assertThat(sink.take()).hasSize(1);
            h.advance(Duration.ofSeconds(59));
            h.send("q", msg("id-1", "within"));
            assertThat(sink.take()).isEmpty();
            h.advance(Duration.ofSeconds(1));
            h.send("q", msg("id-1", "after"));
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("after");
            r.close();
        }
    }

    @Test
    void scheduledAndSessionMessagesAreCheckedAtSendTime() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("q").requiresDuplicateDetection(true).requiresSession(true).build());
            long later = h.clock.epochMillis() + 60_000;
            h.send("q", Message.builder().messageId("a").sessionId("s1").scheduledEnqueueTimeMs(later)
                    .body(new byte[] {1}).build());
            h.send("q", Message.builder().messageId("a").sessionId("s2").body(new byte[] {2}).build());
            h.send("q", Message.builder().messageId("b").sessionId("s2").body(new byte[] {3}).build());
            RuntimeCounts c = h.await(h.engine.counts("q"));
            assertThat(c.scheduledMessageCount()).isEqualTo(1);
            assertThat(c.activeMessageCount()).isEqualTo(1);
        }
    }

    @Test
    void duplicatesWithinOneBatchAreDropped() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(dedupQueue("q", Duration.ofMinutes(10)));
            h.send("q", msg("a", "1"), msg("a", "2"), msg("b", "3"));
            assertThat(peekBodies(h, "q")).containsExactly("1", "3");
        }
    }

    @Test
    void theWindowSurvivesACrashAndRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(dedupQueue("q", Duration.ofMinutes(5)));
            h.send("q", msg("id-1", "first"));
            h.await(h.engine.purge(EntityAddress.parse("q")));
            h.crashAndRestart();
            h.send("q", msg("id-1", "after restart"));
            assertThat(peekBodies(h, "q")).isEmpty();
            h.clock.advance(Duration.ofMinutes(5));
            h.crashAndRestart();
            h.send("q", msg("id-1", "window over"));
            assertThat(peekBodies(h, "q")).containsExactly("window over");
        }
    }

    @Test
    void onAPartitionedEntityTheIdentityIsMessageIdPlusPartitionKey() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("q").enablePartitioning(true).requiresDuplicateDetection(true).build());
            h.send("q", Message.builder().messageId("m").partitionKey("k1").body(new byte[] {1}).build());
            h.send("q", Message.builder().messageId("m").partitionKey("k2").body(new byte[] {2}).build());
            h.send("q", Message.builder().messageId("m").partitionKey("k1").body(new byte[] {3}).build());
            h.send("q", Message.builder().messageId("n").body(new byte[] {4}).build());
            h.send("q", Message.builder().messageId("n").body(new byte[] {5}).build());
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(3);
        }
    }

    @Test
    void topicsDetectDuplicatesBeforeFanOut() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").requiresDuplicateDetection(true).build(), "s1", "s2");
            h.send("t", msg("x", "one"));
            h.send("t", msg("x", "two"));
            assertThat(peekBodies(h, "t/subscriptions/s1")).containsExactly("one");
            assertThat(peekBodies(h, "t/subscriptions/s2")).containsExactly("one");
        }
    }

    @Test
    void switchingDuplicateDetectionOffForgetsTheWindow() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(dedupQueue("q", Duration.ofMinutes(10)));
            h.send("q", msg("id", "1"));
            h.await(h.engine.updateQueue(QueueProperties.builder("q").build()));
            h.send("q", msg("id", "2"));
            h.crashAndRestart();
            h.send("q", msg("id", "3"));
            assertThat(peekBodies(h, "q")).containsExactly("1", "2", "3");
        }
    }

    @Test
    void theWindowSurvivesRestartAndCompactionOnFileJournals(@TempDir Path dir) {
        try (EngineHarness h = EngineHarness.onFiles(dir, 2, 1 << 20, 64 * 1024)) {
            h.await(h.engine.createQueue(dedupQueue("q", Duration.ofMinutes(10))));
            byte[] body = new byte[512];
            for (int i = 0; i < 400; i++) {
                h.await(h.engine.send("q", List.of(Message.builder().messageId("id-" + i).body(body).build())));
            }
            h.await(h.engine.purge(EntityAddress.parse("q")));
            h.restart();
            for (int i = 0; i < 400; i++) {
                h.await(h.engine.send("q", List.of(Message.builder().messageId("id-" + i).body(body).build())));
            }
            h.await(h.engine.send("q", List.of(Message.builder().messageId("new").body(body).build())));
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(1);
        }
    }

    @Test
    void theWindowStructureRemembersForgetsAndExpiresInOrder() {
        SplittableRandom random = new SplittableRandom(42);
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, 1_000);
        List<long[]> keys = new ArrayList<>();
        for (int t = 0; t < 5_000; t++) {
            long[] k = DedupWindow.hash("key-" + random.nextLong());
            keys.add(k);
            assertThat(w.add(k[0], k[1], t)).isTrue();
            assertThat(w.add(k[0], k[1], t)).isFalse();
            w.expire(t);
            assertThat(w.size()).isLessThanOrEqualTo(1_000);
        }
        w.expire(5_000);
        for (int i = 0; i < keys.size(); i++) {
            long[] k = keys.get(i);
            assertThat(w.contains(k[0], k[1])).as("key %d", i).isEqualTo(i > 5_000 - 1_000);
        }
        assertThat(w.heapBytes()).isLessThanOrEqualTo(64L * 1_024 * 2);
    }

    @Test
    void aRememberedIdCostsBetween32And64BytesOfHeap() {
        DedupWindow w = new DedupWindow(DedupWindow.DUPLICATES, Long.MAX_VALUE / 2);
        int n = 1 << 20;
        for (int i = 0; i < n; i++) {
            long[] k = DedupWindow.hash("message-" + i);
            w.add(k[0], k[1], i);
        }
        assertThat(w.size()).isEqualTo(n);
        assertThat((double) w.heapBytes() / n).isEqualTo(32.0);
        long[] k = DedupWindow.hash("one more");
        w.add(k[0], k[1], n); // the ring doubles
        assertThat((double) w.heapBytes() / w.size()).isLessThanOrEqualTo(64.0);
    }

    @Test
    void hashesOfDistinctKeysDoNotCollide() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 200_000; i++) {
            long[] h = DedupWindow.hash(Integer.toString(i));
            assertThat(seen.add(h[0] + ":" + h[1])).isTrue();
        }
    }

    @Test
    void idsRememberedInFirstFormatKeyBlocksStillCatchDuplicatesAfterAnUpgrade() {
        try (EngineHarness h = new EngineHarness(1)) {
            h.queue(dedupQueue("q", Duration.ofMinutes(5)));
            h.send("q", msg("id-1", "first"));
            // rewrite the key block as a broker before the change of hash wrote it: type 10, the first hash
            InMemoryJournal journal = h.journals.journal("shard-0");
            List<JournalRecord> blocks = new ArrayList<>();
            journal.replay(r -> {
                if (r.kind() == RecordKind.ADD && r.type() == 11) {
                    blocks.add(r);
                }
            });
            assertThat(blocks).hasSize(1);
            byte[] payload = blocks.get(0).payload().clone();
            long[] old = DedupWindow.legacyHash("s:id-1"); // the key of a string MessageId
            ByteBuffer.wrap(payload, payload.length - 24, 16).putLong(old[0]).putLong(old[1] & ~1L);
            journal.append(JournalRecord.add(blocks.get(0).id(), (byte) 10, payload));
            journal.sync();
            h.await(h.engine.purge(EntityAddress.parse("q")));
            h.crashAndRestart();

            h.send("q", msg("id-1", "after upgrade"));
            h.send("q", msg("id-2", "new id"));
            assertThat(peekBodies(h, "q")).containsExactly("new id");
            h.crashAndRestart(); // the new key is written as a second-format block, the old one still read as the first
            h.send("q", msg("id-1", "again"));
            h.send("q", msg("id-2", "again"));
            assertThat(peekBodies(h, "q")).containsExactly("new id");
            h.clock.advance(Duration.ofMinutes(5));
            h.send("q", msg("id-1", "window over"));
            assertThat(peekBodies(h, "q")).containsExactly("new id", "window over");
        }
    }

    @Test
    void theScheduleOperationTakesPartInDuplicateDetectionBothWays() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(dedupQueue("q", Duration.ofMinutes(10)));
            long at = h.clock.epochMillis() + 60_000;
            long[] first = h.await(h.engine.schedule("q", List.of(scheduled("s-1", "scheduled", at))));
            long[] again = h.await(h.engine.schedule("q", List.of(scheduled("s-1", "scheduled again", at))));
            assertThat(again[0]).isGreaterThan(first[0]); // a number of its own, naming no message
            h.send("q", msg("s-1", "sent after scheduling"));
            h.send("q", msg("s-2", "sent"));
            h.await(h.engine.schedule("q", List.of(scheduled("s-2", "scheduled after sending", at))));
            assertThat(h.await(h.engine.counts("q")).scheduledMessageCount()).isEqualTo(1);
            h.crashAndRestart();
            long[] afterRestart = h.await(h.engine.schedule("q", List.of(scheduled("s-3", "new", at))));
            assertThat(afterRestart[0]).isGreaterThan(again[0]); // the duplicate's number is never reused
            h.advance(Duration.ofMinutes(1));
            assertThat(peekBodies(h, "q")).containsExactlyInAnyOrder("sent", "scheduled", "new");
        }
    }

    private static Message scheduled(String id, String body, long atMs) {
        return Message.builder().messageId(id).body(body.getBytes(StandardCharsets.UTF_8))
                .scheduledEnqueueTimeMs(atMs).build();
    }
}
