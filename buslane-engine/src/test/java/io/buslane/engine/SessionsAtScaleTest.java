package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.receive.Receiver;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sessions at scale, in a reduced form of issue #23's workloads (manual clock, in-memory journals): 100,000
 * sessions processed by processors that each hold one session at a time and roll over to the next available
 * (per-session order, lock exclusivity, fairness: the session whose oldest message waited longest is served
 * first), session state kept across a crash and listed page by page, and sessions whose lock ran out handed to
 * the next processor with their messages' delivery counts raised.
 */
class SessionsAtScaleTest {

    private static final EntityAddress Q = EntityAddress.parse("many");
    private static final Duration LOCK = Duration.ofSeconds(30);

    private static void sendInterleaved(EngineHarness h, int sessions, int perSession) {
        List<Message> batch = new ArrayList<>();
        for (int m = 0; m < perSession; m++) {
            for (int s = 0; s < sessions; s++) {
                batch.add(EngineHarness.text("m" + m, "s" + s));
                if (batch.size() == 1000) {
                    h.await(h.engine.send("many", batch));
                    batch = new ArrayList<>();
                }
            }
        }
        if (!batch.isEmpty()) {
            h.await(h.engine.send("many", batch));
        }
    }

    @Test
    void aHundredThousandSessionsAreEachProcessedOnceInOrderBy32ProcessorsHoldingDistinctSessions() {
        int sessions = 100_000;
        int perSession = 3;
        int processors = 32;
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("many").requiresSession(true).lockDuration(LOCK).build());
            sendInterleaved(h, sessions, perSession);
            Map<String, Integer> processed = new HashMap<>();
            long previousRoundNewestHead = -1;
            while (processed.size() < sessions) {
                long oldestHead = Long.MAX_VALUE;
                long newestHead = -1;
                // each processor accepts the next available session: all at once, as a session processor does
                List<CompletableFuture<Receiver>> accepts = new ArrayList<>();
                List<EngineHarness.Sink> sinks = new ArrayList<>();
                for (int p = 0; p < processors; p++) {
                    EngineHarness.Sink sink = h.sink();
                    sinks.add(sink);
                    accepts.add(h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 1_000, sink));
                }
                h.engine.runUntilIdle();
                Set<String> heldNow = new HashSet<>();
                List<Receiver> receivers = new ArrayList<>();
                for (CompletableFuture<Receiver> f : accepts) {
                    if (f.isCompletedExceptionally()) {
                        continue; // fewer sessions left than processors: its accept times out
                    }
                    Receiver r = f.join();
                    assertThat(heldNow.add(r.sessionId())).as("two processors hold " + r.sessionId()).isTrue();
                    receivers.add(r);
                    r.addCredit(perSession + 1);
                }
                h.engine.runUntilIdle();
                for (int i = 0; i < receivers.size(); i++) {
                    Receiver r = receivers.get(i);
                    List<ReceivedMessage> got = sinks.get(accepts.indexOf(findFuture(accepts, r))).take();
                    assertThat(got).extracting(EngineHarness::text).as(r.sessionId())
                            .containsExactly("m0", "m1", "m2");
                    oldestHead = Math.min(oldestHead, got.get(0).sequenceNumber());
                    newestHead = Math.max(newestHead, got.get(0).sequenceNumber());
                    for (ReceivedMessage m : got) {
                        h.await(r.complete(m.lockToken()));
                    }
                    r.close();
                    assertThat(processed.merge(r.sessionId(), 1, Integer::sum)).isEqualTo(1);
                }
                // fairness: every round serves the sessions whose oldest message waited longest, so no session
                // waits longer than (sessions ahead of it / processors) rounds
                if (newestHead >= 0) {
                    assertThat(oldestHead).isGreaterThan(previousRoundNewestHead);
                    previousRoundNewestHead = newestHead;
                }
                h.engine.runUntilIdle();
                h.advance(Duration.ofSeconds(2)); // lets the accepts that found nothing time out
            }
            assertThat(h.await(h.engine.counts("many")).activeMessageCount()).isZero();
        }
    }

    private static CompletableFuture<Receiver> findFuture(List<CompletableFuture<Receiver>> all, Receiver r) {
        for (CompletableFuture<Receiver> f : all) {
            if (f.isDone() && !f.isCompletedExceptionally() && f.join() == r) {
                return f;
            }
        }
        throw new AssertionError("no future for " + r);
    }

    @Test
    void aHundredThousandSessionStatesOfOneKibibyteSurviveACrashAndListInPages() {
        int sessions = 100_000;
        long budget = 1024 * 1024; // per shard: 100 MB of states, at most 2 MiB of them in the heap
        try (EngineHarness h = new EngineHarness().withSessionStateBytesPerShard(budget)) {
            h.queue(QueueProperties.builder("many").requiresSession(true).build());
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int s = 0; s < sessions; s++) {
                byte[] state = new byte[1024];
                byte[] id = ("s" + s).getBytes(StandardCharsets.UTF_8);
                System.arraycopy(id, 0, state, 0, id.length);
                writes.add(h.engine.setSessionState(Q, String.format("s%05d", s), state));
            }
            long t0 = System.nanoTime();
            h.engine.runUntilIdle();
            writes.forEach(CompletableFuture::join);
            assertThat(h.engine.shards().residentSessionStateBytes()).isLessThanOrEqualTo(2 * budget);
            long t1 = System.nanoTime();
            h.crashAndRestart();
            long t2 = System.nanoTime();
            assertThat(h.engine.shards().residentSessionStateBytes()).as("after recovery")
                    .isLessThanOrEqualTo(2 * budget);
            System.out.println("SCALE " + sessions + " states written in " + (t1 - t0) / 1_000_000
                    + " ms, recovered in " + (t2 - t1) / 1_000_000 + " ms");
            for (int s = 0; s < sessions; s += 4_999) {
                byte[] state = h.await(h.engine.getSessionState(Q, String.format("s%05d", s)));
                assertThat(state).hasSize(1024);
                assertThat(new String(state, 0, ("s" + s).length(), StandardCharsets.UTF_8)).isEqualTo("s" + s);
            }
            List<String> all = new ArrayList<>();
            String last = null;
            while (true) {
                List<String> page = h.await(h.engine.listSessions(Q, Engine.ALL_ACTIVE_SESSIONS, 0, 100, last));
                if (page.isEmpty()) {
                    break;
                }
                all.addAll(page);
                last = page.get(page.size() - 1);
            }
            long t3 = System.nanoTime();
            assertThat(all).hasSize(sessions).doesNotHaveDuplicates().isSorted();
            // the SDKs page by skip and top: each page walks on from where the previous one stopped
            List<String> bySkip = new ArrayList<>();
            for (int skip = 0; ; skip += 100) {
                List<String> page = h.await(h.engine.listSessions(Q, Engine.ALL_ACTIVE_SESSIONS, skip, 100, null));
                if (page.isEmpty()) {
                    break;
                }
                bySkip.addAll(page);
            }
            System.out.println("SCALE listing " + sessions + " sessions in pages of 100: by last id "
                    + (t3 - t2) / 1_000_000 + " ms, by skip " + (System.nanoTime() - t3) / 1_000_000 + " ms");
            assertThat(bySkip).isEqualTo(all);
            // a skip that no earlier page ended at still answers (walking from the first session)
            assertThat(h.await(h.engine.listSessions(Q, Engine.ALL_ACTIVE_SESSIONS, 150, 3, null)))
                    .isEqualTo(all.subList(150, 153));
            // a state changed after it was evicted reads back as changed, after another crash too
            h.await(h.engine.setSessionState(Q, "s00000", new byte[] {42}));
            h.crashAndRestart();
            assertThat(h.await(h.engine.getSessionState(Q, "s00000"))).containsExactly(42);
        }
    }

    @Test
    void sessionsWhoseLockRanOutGoToTheNextProcessorWithTheirDeliveryCountRaised() {
        int sessions = 2_000;
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("many").requiresSession(true).lockDuration(LOCK).build());
            sendInterleaved(h, sessions, 1);
            List<Receiver> stalled = new ArrayList<>();
            List<CompletableFuture<Receiver>> accepts = new ArrayList<>();
            for (int s = 0; s < sessions; s++) {
                accepts.add(h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 1_000, h.sink()));
            }
            h.engine.runUntilIdle();
            for (CompletableFuture<Receiver> f : accepts) {
                Receiver r = f.join();
                r.addCredit(1); // receives its message and never settles it
                stalled.add(r);
            }
            h.engine.runUntilIdle();
            h.advance(LOCK.plusSeconds(1)); // every session lock runs out
            EngineHarness.Sink sink = h.sink();
            Set<String> again = new HashSet<>();
            for (int s = 0; s < sessions; s++) {
                Receiver r = h.await(h.engine.acceptSession(Q, null, ReceiveMode.RECEIVE_AND_DELETE, 1_000, sink));
                r.addCredit(1);
                h.engine.runUntilIdle();
                ReceivedMessage m = sink.take().get(0);
                assertThat(m.deliveryCount()).isEqualTo(1); // one failed delivery before this one
                again.add(r.sessionId());
                r.close();
            }
            assertThat(again).hasSize(sessions);
            assertThat(stalled).allSatisfy(r -> assertThat(r.isClosed()).isTrue());
        }
    }

    @Test
    void evictedSessionStatesAreReadBackFromTheFileJournal(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        try (EngineHarness h = EngineHarness.onFiles(dir, 1, EngineConfig.DEFAULT_RESIDENT_BYTES_PER_SHARD,
                1024 * 1024).withSessionStateBytesPerShard(1024)) {
            h.await(h.engine.createQueue(QueueProperties.builder("many").requiresSession(true).build()));
            for (int s = 0; s < 200; s++) {
                h.await(h.engine.setSessionState(Q, "s" + s, ("state of s" + s + " v1").getBytes(
                        StandardCharsets.UTF_8)));
            }
            h.await(h.engine.setSessionState(Q, "s7", "state of s7 v2".getBytes(StandardCharsets.UTF_8)));
            assertThat(h.engine.shards().residentSessionStateBytes()).isLessThanOrEqualTo(1024);
            assertThat(h.engine.shards().residentSessionStateBytes())
                    .as("3.4 KB of states, 1 KiB budget: some evicted").isLessThan(3_000);
            for (int round = 0; round < 2; round++) {
                assertThat(new String(h.await(h.engine.getSessionState(Q, "s0")), StandardCharsets.UTF_8))
                        .isEqualTo("state of s0 v1");
                assertThat(new String(h.await(h.engine.getSessionState(Q, "s7")), StandardCharsets.UTF_8))
                        .isEqualTo("state of s7 v2");
                h.restart();
            }
        }
    }
}
