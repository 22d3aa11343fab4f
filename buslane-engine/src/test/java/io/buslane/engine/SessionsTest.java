package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.SequenceCounter;
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
import java.util.concurrent.CompletionException;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

/**
 * Message sessions: demultiplexing, accepting (named and next-available), session locks (renewal, expiry,
 * release on close), in-session ordering, session state, listing sessions, partitioned session queues and deferred
 * session messages. Time moves only through the harness's manual clock.
 */
class SessionsTest {

    private static final long ALL = Engine.ALL_ACTIVE_SESSIONS;

    private static final Duration LOCK = Duration.ofSeconds(30);
    private static final EntityAddress Q = EntityAddress.parse("sq");

    private static QueueProperties.Builder sessionQueue(String name) {
        return QueueProperties.builder(name).lockDuration(LOCK).requiresSession(true);
    }

    private static void assertFails(EngineHarness h, CompletableFuture<?> future, ErrorKind kind) {
        assertThatThrownBy(() -> h.await(future))
                .isInstanceOf(BrokerException.class)
                .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(kind));
    }

    /** Accepts a named session and grants credit. */
    private static Receiver accept(EngineHarness h, EntityAddress address, String sessionId,
                                   EngineHarness.Sink sink, int credit) {
        Receiver r = h.await(h.engine.acceptSession(address, sessionId, ReceiveMode.PEEK_LOCK, 0, sink));
        r.addCredit(credit);
        h.engine.runUntilIdle();
        return r;
    }

    private static Receiver acceptNext(EngineHarness h, EntityAddress address, EngineHarness.Sink sink,
                                       int credit) {
        Receiver r = h.await(h.engine.acceptSession(address, null, ReceiveMode.PEEK_LOCK, 60_000, sink));
        r.addCredit(credit);
        h.engine.runUntilIdle();
        return r;
    }

    private static RuntimeCounts counts(EngineHarness h, String path) {
        return h.await(h.engine.counts(path));
    }

    private static List<String> bodies(List<ReceivedMessage> messages) {
        return messages.stream().map(EngineHarness::text).toList();
    }

    // ------------------------------------------------------------------------------------------------ demultiplexing

    @Test
    void sessionReceiversEachSeeOnlyTheirSessionInSequenceOrder() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            for (int i = 0; i < 4; i++) {
                for (String s : List.of("s1", "s2", "s3")) {
                    h.send("sq", text(s + "-" + i, s));
                }
            }
            Map<String, EngineHarness.Sink> sinks = new HashMap<>();
            for (String s : List.of("s3", "s1", "s2")) {
                EngineHarness.Sink sink = h.sink();
                sinks.put(s, sink);
                Receiver r = accept(h, Q, s, sink, 100);
                assertThat(r.sessionId()).isEqualTo(s);
            }
            for (String s : List.of("s1", "s2", "s3")) {
                List<ReceivedMessage> got = sinks.get(s).take();
                assertThat(got).allSatisfy(m -> assertThat(m.sessionId()).isEqualTo(s));
                assertThat(bodies(got)).containsExactly(s + "-0", s + "-1", s + "-2", s + "-3");
                assertThat(got).extracting(ReceivedMessage::sequenceNumber).isSorted();
            }
        }
    }

    @Test
    void sessionLessMessagesAreRejectedAndNonSessionReceiversRefused() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            assertFails(h, h.engine.send("sq", List.of(text("x"))), ErrorKind.INVALID_OPERATION);
            assertThatThrownBy(() -> h.engine.createReceiver(Q, ReceiveMode.PEEK_LOCK, h.sink()))
                    .isInstanceOf(BrokerException.class)
                    .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(ErrorKind.INVALID_OPERATION));
        }
    }

    // ------------------------------------------------------------------------------------------------ accepting

    @Test
    void acceptNextAvailablePicksTheFreeSessionWithTheOldestMessage() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("b1", "b"));
            h.send("sq", text("a1", "a"));
            h.send("sq", text("c1", "c"));
            h.send("sq", text("d1", "d"));
            h.send("sq", text("b2", "b"));
            // a session with state only is not "available"
            h.await(h.engine.setSessionState(Q, "z", new byte[] {1}));

            // "a" is taken by name: next-available skips it
            accept(h, Q, "a", h.sink(), 0);
            List<String> order = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                EngineHarness.Sink sink = h.sink();
                Receiver r = acceptNext(h, Q, sink, 10);
                order.add(r.sessionId());
                assertThat(sink.take()).allSatisfy(m -> assertThat(m.sessionId()).isEqualTo(r.sessionId()));
            }
            assertThat(order).containsExactly("b", "c", "d");

            // nothing left: the next accept waits
            CompletableFuture<Receiver> waiting = h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 10_000,
                    h.sink());
            h.engine.runUntilIdle();
            assertThat(waiting).isNotDone();
        }
    }

    @Test
    void acceptNextPrefersTheSessionWhoseHeadIsOldestAfterMessagesReturn() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("x1", "x"));
            h.send("sq", text("y1", "y"));
            // "x" is accepted and released (closed) without settling: its head is still the oldest message
            Receiver x = accept(h, Q, "x", h.sink(), 1);
            x.close();
            h.engine.runUntilIdle();
            Receiver next = acceptNext(h, Q, h.sink(), 0);
            assertThat(next.sessionId()).isEqualTo("x");
        }
    }

    @Test
    void acceptingALockedSessionFailsSessionCannotBeLocked() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m", "s"));
            accept(h, Q, "s", h.sink(), 1);
            assertFails(h, h.engine.acceptSession(Q, "s", ReceiveMode.PEEK_LOCK, 0, h.sink()),
                    ErrorKind.SESSION_CANNOT_BE_LOCKED);
            // still held: a session that has no messages can be locked too, and then also not twice
            accept(h, Q, "empty", h.sink(), 1);
            assertFails(h, h.engine.acceptSession(Q, "empty", ReceiveMode.PEEK_LOCK, 0, h.sink()),
                    ErrorKind.SESSION_CANNOT_BE_LOCKED);
        }
    }

    @Test
    void acceptNextWithNothingAvailableTimesOut() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            CompletableFuture<Receiver> f = h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 10_000,
                    h.sink());
            h.engine.runUntilIdle();
            h.advance(Duration.ofMillis(9_999));
            assertThat(f).isNotDone();
            h.advance(Duration.ofMillis(2));
            assertThat(f).isCompletedExceptionally();
            assertThatThrownBy(f::join).isInstanceOf(CompletionException.class)
                    .cause().isInstanceOf(BrokerException.class)
                    .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(ErrorKind.TIMEOUT));

            // a message arriving later is not swallowed by the timed-out request
            h.send("sq", text("late", "s"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = acceptNext(h, Q, sink, 5);
            assertThat(r.sessionId()).isEqualTo("s");
            assertThat(bodies(sink.take())).containsExactly("late");
        }
    }

    @Test
    void acceptNextIsServedWhenAMessageArrivesBeforeTheTimeout() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            EngineHarness.Sink sink = h.sink();
            CompletableFuture<Receiver> f = h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 10_000, sink);
            h.engine.runUntilIdle();
            h.advance(Duration.ofSeconds(5));
            assertThat(f).isNotDone();
            long now = h.clock.epochMillis();
            h.send("sq", text("hello", "s7"));
            assertThat(f).isCompleted();
            Receiver r = f.join();
            assertThat(r.sessionId()).isEqualTo("s7");
            assertThat(r.sessionLockedUntilMs()).isEqualTo(now + LOCK.toMillis());
            // the timeout passing afterwards changes nothing
            h.advance(Duration.ofSeconds(6));
            assertThat(f.isCompletedExceptionally()).isFalse();
            r.addCredit(1);
            h.engine.runUntilIdle();
            assertThat(bodies(sink.take())).containsExactly("hello");
        }
    }

    @Test
    void twoWaitersAreServedByTwoDifferentSessions() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            CompletableFuture<Receiver> f1 = h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 10_000,
                    h.sink());
            CompletableFuture<Receiver> f2 = h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 10_000,
                    h.sink());
            h.engine.runUntilIdle();
            h.send("sq", text("1", "one"));
            assertThat(f1).isCompleted();
            assertThat(f2).isNotDone();
            // a second message of the same (now locked) session does not serve the second waiter
            h.send("sq", text("1b", "one"));
            assertThat(f2).isNotDone();
            h.send("sq", text("2", "two"));
            assertThat(f2).isCompleted();
            assertThat(f1.join().sessionId()).isEqualTo("one");
            assertThat(f2.join().sessionId()).isEqualTo("two");
        }
    }

    // ------------------------------------------------------------------------------------------------ session lock

    @Test
    void theSessionLockCoversFutureMessages() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, Q, "s", sink, 10);
            assertThat(sink.take()).isEmpty();

            CompletableFuture<Receiver> other = h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 10_000,
                    h.sink());
            h.engine.runUntilIdle();
            h.send("sq", text("later-1", "s"), text("later-2", "s"));
            List<ReceivedMessage> got = sink.take();
            assertThat(bodies(got)).containsExactly("later-1", "later-2");
            assertThat(got).allSatisfy(m -> assertThat(m.lockedUntilMs()).isEqualTo(r.sessionLockedUntilMs()));
            assertThat(other).isNotDone();
            h.advance(Duration.ofSeconds(11));
            assertThat(other).isCompletedExceptionally();
        }
    }

    @Test
    void renewingTheSessionLockExtendsIt() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m", "s"));
            EngineHarness.Sink sink = h.sink();
            long start = h.clock.epochMillis();
            Receiver r = accept(h, Q, "s", sink, 1);
            assertThat(r.sessionLockedUntilMs()).isEqualTo(start + LOCK.toMillis());
            ReceivedMessage m = sink.take().get(0);
            assertThat(m.lockedUntilMs()).isEqualTo(r.sessionLockedUntilMs());

            h.advance(Duration.ofSeconds(20));
            long renewed = h.await(r.renewSessionLock());
            assertThat(renewed).isEqualTo(h.clock.epochMillis() + LOCK.toMillis());
            assertThat(r.sessionLockedUntilMs()).isEqualTo(renewed);

            h.advance(Duration.ofSeconds(20)); // past the first lock, before the renewed one
            assertThat(sink.closedWith).isNull();
            assertThat(r.isClosed()).isFalse();
            // a message lock renewal in a session reports the session lock
            assertThat(h.await(r.renewLock(m.lockToken()))).isEqualTo(renewed);
            h.await(r.complete(m.lockToken()));
            assertFails(h, h.engine.acceptSession(Q, "s", ReceiveMode.PEEK_LOCK, 0, h.sink()),
                    ErrorKind.SESSION_CANNOT_BE_LOCKED);
        }
    }

    @Test
    void sessionLockExpiryClosesTheReceiverFreesTheSessionAndCountsADelivery() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m1", "s"), text("m2", "s"), text("m3", "s"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, Q, "s", sink, 2);
            List<ReceivedMessage> first = sink.take();
            assertThat(bodies(first)).containsExactly("m1", "m2");
            assertThat(first).extracting(ReceivedMessage::deliveryCount).containsExactly(0, 0);

            h.advance(LOCK.minusMillis(1));
            assertThat(sink.closedWith).isNull();
            h.advance(Duration.ofMillis(2));
            assertThat(sink.closedWith).isNotNull();
            assertThat(sink.closedWith.kind()).isEqualTo(ErrorKind.SESSION_LOCK_LOST);
            assertThat(r.isClosed()).isTrue();
            assertFails(h, r.renewSessionLock(), ErrorKind.SESSION_LOCK_LOST);

            // the session is free again; locked messages counted one failed delivery, the unsent one none
            EngineHarness.Sink sink2 = h.sink();
            Receiver r2 = acceptNext(h, Q, sink2, 10);
            assertThat(r2.sessionId()).isEqualTo("s");
            assertThat(sink2.take()).extracting(EngineHarness::text, ReceivedMessage::deliveryCount)
                    .containsExactly(tuple("m1", 1), tuple("m2", 1), tuple("m3", 0));
        }
    }

    @Test
    void closingTheReceiverReleasesTheSessionWithoutCountingADelivery() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m1", "s"), text("m2", "s"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, Q, "s", sink, 10);
            List<ReceivedMessage> first = sink.take();
            assertThat(first).hasSize(2);
            EngineHarness.Sink sink2 = h.sink();
            CompletableFuture<Receiver> waiting = h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 10_000,
                    sink2);
            h.engine.runUntilIdle();
            assertThat(waiting).isNotDone();
            r.close();
            h.engine.runUntilIdle();
            assertThat(sink.closedWith).isNull(); // closed by the client, not by the engine

            // the released session goes straight to the waiting accept-next request
            assertThat(waiting).isCompleted();
            Receiver r2 = waiting.join();
            assertThat(r2.sessionId()).isEqualTo("s");
            r2.addCredit(10);
            h.engine.runUntilIdle();
            assertThat(sink2.take()).extracting(EngineHarness::text, ReceivedMessage::deliveryCount)
                    .containsExactly(tuple("m1", 0), tuple("m2", 0));
            // the first receiver's tokens are dead
            assertFails(h, r2.complete(first.get(0).lockToken()), ErrorKind.SESSION_LOCK_LOST);
        }
    }

    @Test
    void withinASessionAnAbandonedMessageComesBackBeforeLaterOnes() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m1", "s"), text("m2", "s"), text("m3", "s"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, Q, "s", sink, 1);
            ReceivedMessage m1 = sink.take().get(0);
            assertThat(text(m1)).isEqualTo("m1");
            h.await(r.abandon(m1.lockToken(), Map.of("tried", true)));
            r.addCredit(3);
            h.engine.runUntilIdle();
            List<ReceivedMessage> got = sink.take();
            assertThat(got).extracting(EngineHarness::text, ReceivedMessage::deliveryCount)
                    .containsExactly(tuple("m1", 1), tuple("m2", 0), tuple("m3", 0));
            assertThat(got.get(0).message().applicationProperties()).containsEntry("tried", true);
        }
    }

    @Test
    void settlingASessionMessageAfterTheSessionLockExpiredFailsSessionLockLost() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m1", "s"), text("m2", "s"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, Q, "s", sink, 2);
            List<ReceivedMessage> got = sink.take();
            h.advance(LOCK.plusMillis(1));
            assertFails(h, r.complete(got.get(0).lockToken()), ErrorKind.SESSION_LOCK_LOST);
            assertFails(h, r.abandon(got.get(1).lockToken(), null), ErrorKind.SESSION_LOCK_LOST);
            assertFails(h, r.defer(got.get(1).lockToken(), null), ErrorKind.SESSION_LOCK_LOST);
            assertFails(h, r.deadLetter(got.get(1).lockToken(), "r", "d", null), ErrorKind.SESSION_LOCK_LOST);
            assertFails(h, r.renewLock(got.get(1).lockToken()), ErrorKind.SESSION_LOCK_LOST);

            // even once somebody else holds the session, the old tokens stay dead
            EngineHarness.Sink sink2 = h.sink();
            Receiver r2 = accept(h, Q, "s", sink2, 10);
            assertFails(h, r2.complete(got.get(0).lockToken()), ErrorKind.SESSION_LOCK_LOST);
            List<ReceivedMessage> again = sink2.take();
            assertThat(again).hasSize(2);
            for (ReceivedMessage m : again) {
                h.await(r2.complete(m.lockToken()));
            }
            assertThat(counts(h, "sq").activeMessageCount()).isZero();
        }
    }

    @Test
    void sessionMessagesDeadLetterAfterMaxDeliveryCountOfSessionLockExpiries() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").maxDeliveryCount(2).build());
            h.send("sq", text("m", "s"));
            for (int i = 0; i < 2; i++) {
                EngineHarness.Sink sink = h.sink();
                accept(h, Q, "s", sink, 1);
                assertThat(sink.take()).extracting(ReceivedMessage::deliveryCount).containsExactly(i);
                h.advance(LOCK.plusMillis(1));
            }
            RuntimeCounts c = counts(h, "sq");
            assertThat(c.activeMessageCount()).isZero();
            assertThat(c.deadLetterMessageCount()).isEqualTo(1);
            EngineHarness.Sink dlq = h.sink();
            h.receiver("sq/$DeadLetterQueue", ReceiveMode.PEEK_LOCK, dlq, 1);
            assertThat(dlq.take()).singleElement().satisfies(m -> assertThat(m.message().applicationProperties())
                    .containsEntry("DeadLetterReason", "MaxDeliveryCountExceeded"));
        }
    }

    @Test
    void sessionLocksDoNotSurviveRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m1", "s"), text("m2", "s"));
            EngineHarness.Sink sink = h.sink();
            accept(h, Q, "s", sink, 1);
            ReceivedMessage m1 = sink.take().get(0);

            h.crashAndRestart();
            EngineHarness.Sink sink2 = h.sink();
            Receiver r2 = accept(h, Q, "s", sink2, 10);
            // as for message locks: a lock lost to a restart is not counted as a failed delivery
            assertThat(sink2.take()).extracting(EngineHarness::text, ReceivedMessage::deliveryCount)
                    .containsExactly(tuple("m1", 0), tuple("m2", 0));
            assertFails(h, r2.complete(m1.lockToken()), ErrorKind.SESSION_LOCK_LOST);
        }
    }

    @Test
    void receiveAndDeleteSessionReceiver() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m1", "s"), text("x", "other"), text("m2", "s"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.await(h.engine.acceptSession(Q, "s", ReceiveMode.RECEIVE_AND_DELETE, 0, sink));
            r.addCredit(10);
            h.engine.runUntilIdle();
            List<ReceivedMessage> got = sink.take();
            assertThat(bodies(got)).containsExactly("m1", "m2");
            assertThat(got).allSatisfy(m -> assertThat(m.lockToken()).isNull());
            r.close();
            h.engine.runUntilIdle();
            assertThat(counts(h, "sq").activeMessageCount()).isEqualTo(1);
            assertThat(h.await(h.engine.listSessions(Q, Engine.ALL_ACTIVE_SESSIONS, 0, 10, null)))
                    .containsExactly("other");
        }
    }

    @Test
    void drainOnASessionReceiverReturnsUnusedCredit() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m1", "s"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, Q, "s", sink, 4);
            assertThat(sink.take()).hasSize(1);
            assertThat(h.await(r.drain())).isEqualTo(3);
            h.send("sq", text("m2", "s"));
            assertThat(sink.take()).isEmpty();
        }
    }

    // ------------------------------------------------------------------------------------------------ session state

    @Test
    void sessionStateGetSetClearKeptAfterConsumptionAndAcrossRestartCountedInSize() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            assertThat(h.await(h.engine.getSessionState(Q, "s"))).isNull();

            h.send("sq", text("m", "s"));
            long sizeWithMessage = counts(h, "sq").sizeInBytes();
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, Q, "s", sink, 1);
            byte[] state = "step-3".getBytes(StandardCharsets.UTF_8);
            h.await(h.engine.setSessionState(Q, "s", state));
            assertThat(h.await(h.engine.getSessionState(Q, "s"))).isEqualTo(state);
            assertThat(counts(h, "sq").sizeInBytes()).isEqualTo(sizeWithMessage + state.length);

            // overwrite: only the new state is counted
            byte[] state2 = "step-4-longer".getBytes(StandardCharsets.UTF_8);
            h.await(h.engine.setSessionState(Q, "s", state2));
            assertThat(counts(h, "sq").sizeInBytes()).isEqualTo(sizeWithMessage + state2.length);

            // consume every message: the state stays
            h.await(r.complete(sink.take().get(0).lockToken()));
            r.close();
            h.engine.runUntilIdle();
            assertThat(counts(h, "sq").activeMessageCount()).isZero();
            assertThat(h.await(h.engine.getSessionState(Q, "s"))).isEqualTo(state2);
            assertThat(counts(h, "sq").sizeInBytes()).isEqualTo(state2.length);
            assertThat(h.await(h.engine.listSessions(Q, Engine.ALL_ACTIVE_SESSIONS, 0, 100, null)))
                    .containsExactly("s");

            h.crashAndRestart();
            assertThat(h.await(h.engine.getSessionState(Q, "s"))).isEqualTo(state2);
            assertThat(counts(h, "sq").sizeInBytes()).isEqualTo(state2.length);
            assertThat(h.await(h.engine.listSessions(Q, Engine.ALL_ACTIVE_SESSIONS, 0, 100, null)))
                    .containsExactly("s");

            // set null clears, also durably
            h.await(h.engine.setSessionState(Q, "s", null));
            assertThat(h.await(h.engine.getSessionState(Q, "s"))).isNull();
            assertThat(counts(h, "sq").sizeInBytes()).isZero();
            assertThat(h.await(h.engine.listSessions(Q, Engine.ALL_ACTIVE_SESSIONS, 0, 100, null))).isEmpty();
            h.crashAndRestart();
            assertThat(h.await(h.engine.getSessionState(Q, "s"))).isNull();
            assertThat(counts(h, "sq").sizeInBytes()).isZero();
            assertThat(h.await(h.engine.listSessions(Q, Engine.ALL_ACTIVE_SESSIONS, 0, 100, null))).isEmpty();
        }
    }

    @Test
    void sessionStateWrittenAgainAfterRestartIsKeptAcrossAnotherRestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.await(h.engine.setSessionState(Q, "s", new byte[] {1}));
            h.crashAndRestart();
            h.await(h.engine.setSessionState(Q, "s", new byte[] {2, 2}));
            h.crashAndRestart();
            assertThat(h.await(h.engine.getSessionState(Q, "s"))).containsExactly(2, 2);
            assertThat(counts(h, "sq").sizeInBytes()).isEqualTo(2);
            h.await(h.engine.setSessionState(Q, "s", null));
            h.await(h.engine.setSessionState(Q, "s", new byte[] {3}));
            h.crashAndRestart();
            assertThat(h.await(h.engine.getSessionState(Q, "s"))).containsExactly(3);
            assertThat(counts(h, "sq").sizeInBytes()).isEqualTo(1);
        }
    }

    // ------------------------------------------------------------------------------------------------ listing

    @Test
    void listSessionsReturnsActiveSessionsForTheSentinelAndStateChangesForATime() {
        long all = Engine.ALL_ACTIVE_SESSIONS;
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            long t0 = h.clock.epochMillis();
            h.send("sq", text("1", "b"), text("2", "d"), text("3", "a"));
            h.await(h.engine.setSessionState(Q, "c", new byte[] {9}));
            // a session whose only message is consumed and which has no state is not listed
            h.send("sq", text("gone", "e"));
            EngineHarness.Sink sink = h.sink();
            Receiver e = accept(h, Q, "e", sink, 1);
            h.await(e.complete(sink.take().get(0).lockToken()));
            e.close();
            h.engine.runUntilIdle();

            // DateTime.MaxValue: every session with messages or state, paged by skip or by the last id seen
            assertThat(h.await(h.engine.listSessions(Q, all, 0, 100, null))).containsExactly("a", "b", "c", "d");
            assertThat(h.await(h.engine.listSessions(Q, all, 0, 2, null))).containsExactly("a", "b");
            assertThat(h.await(h.engine.listSessions(Q, all, 2, 2, null))).containsExactly("c", "d");
            assertThat(h.await(h.engine.listSessions(Q, all, 4, 2, null))).isEmpty();
            assertThat(h.await(h.engine.listSessions(Q, all, 0, 2, "b"))).containsExactly("c", "d");
            assertThat(h.await(h.engine.listSessions(Q, all, 0, 2, "bb"))).containsExactly("c", "d");
            assertThat(h.await(h.engine.listSessions(Q, all, 0, 2, "d"))).isEmpty();
            // a real time: the sessions whose state changed since (message arrivals do not count)
            assertThat(h.await(h.engine.listSessions(Q, t0, 0, 100, null))).containsExactly("c");

            h.advance(Duration.ofMinutes(1));
            long t1 = h.clock.epochMillis();
            assertThat(h.await(h.engine.listSessions(Q, t1, 0, 100, null))).isEmpty();
            h.await(h.engine.setSessionState(Q, "d", new byte[] {1}));
            h.send("sq", text("4", "a"));
            assertThat(h.await(h.engine.listSessions(Q, t1, 0, 100, null))).containsExactly("d");
            assertThat(h.await(h.engine.listSessions(Q, t0, 0, 100, null))).containsExactly("c", "d");

            // the times of session state survive a restart
            h.crashAndRestart();
            assertThat(h.await(h.engine.listSessions(Q, all, 0, 100, null))).containsExactly("a", "b", "c", "d");
            assertThat(h.await(h.engine.listSessions(Q, t0, 0, 100, null))).containsExactly("c", "d");
            assertThat(h.await(h.engine.listSessions(Q, t1, 0, 100, null))).containsExactly("d");
        }
    }

    // ------------------------------------------------------------------------------------------------ partitioned

    @Test
    void sessionsOnAPartitionedQueueWorkTheSame() {
        try (EngineHarness h = new EngineHarness(3)) {
            EntityAddress pq = EntityAddress.parse("psq");
            h.queue(sessionQueue("psq").enablePartitioning(true).build());
            List<String> ids = List.of("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel");
            for (int i = 0; i < 3; i++) {
                for (String s : ids) {
                    h.send("psq", text(s + "-" + i, s));
                }
            }
            // every message of a session lives in one stable partition
            List<ReceivedMessage> all = h.await(h.engine.peek(pq, -1, 1000, null));
            assertThat(all).hasSize(ids.size() * 3);
            Map<String, Set<Integer>> partitionsOf = new HashMap<>();
            for (ReceivedMessage m : all) {
                partitionsOf.computeIfAbsent(m.sessionId(), k -> new HashSet<>()).add(m.partitionIndex());
                assertThat(SequenceCounter.partitionOf(m.sequenceNumber())).isEqualTo(m.partitionIndex());
            }
            assertThat(partitionsOf.values()).allSatisfy(p -> assertThat(p).hasSize(1));
            Set<Integer> used = new HashSet<>();
            partitionsOf.values().forEach(used::addAll);
            assertThat(used.size()).isGreaterThan(1);

            // named accept: only that session, in order; settlement via the partition-carrying token
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, pq, "charlie", sink, 10);
            List<ReceivedMessage> got = sink.take();
            assertThat(bodies(got)).containsExactly("charlie-0", "charlie-1", "charlie-2");
            h.await(r.abandon(got.get(0).lockToken(), null));
            r.addCredit(1);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text, ReceivedMessage::deliveryCount)
                    .containsExactly(tuple("charlie-0", 1));
            assertFails(h, h.engine.acceptSession(pq, "charlie", ReceiveMode.PEEK_LOCK, 0, h.sink()),
                    ErrorKind.SESSION_CANNOT_BE_LOCKED);
            assertThat(h.await(r.renewSessionLock())).isEqualTo(h.clock.epochMillis() + LOCK.toMillis());

            // next-available hands out every other session exactly once
            Set<String> accepted = new HashSet<>();
            for (int i = 0; i < ids.size() - 1; i++) {
                EngineHarness.Sink s = h.sink();
                Receiver next = acceptNext(h, pq, s, 10);
                assertThat(accepted.add(next.sessionId())).isTrue();
                assertThat(bodies(s.take())).containsExactly(next.sessionId() + "-0", next.sessionId() + "-1",
                        next.sessionId() + "-2");
            }
            assertThat(accepted).doesNotContain("charlie").hasSize(ids.size() - 1);
            CompletableFuture<Receiver> none = h.engine.acceptSession(pq, null, ReceiveMode.PEEK_LOCK, 1_000,
                    h.sink());
            h.engine.runUntilIdle(); // the request reaches the shards (and starts its timeout) now
            h.advance(Duration.ofMillis(1_001));
            assertFails(h, none, ErrorKind.TIMEOUT);

            // state and listing across partitions
            h.await(h.engine.setSessionState(pq, "zulu", new byte[] {7}));
            h.await(h.engine.setSessionState(pq, "alpha", new byte[] {1, 2}));
            assertThat(h.await(h.engine.getSessionState(pq, "zulu"))).containsExactly(7);
            assertThat(h.await(h.engine.getSessionState(pq, "alpha"))).containsExactly(1, 2);
            List<String> expected = new ArrayList<>(ids);
            expected.add("zulu");
            assertThat(h.await(h.engine.listSessions(pq, ALL, 0, 100, null))).containsExactlyElementsOf(expected);
            assertThat(h.await(h.engine.listSessions(pq, ALL, 3, 2, null))).containsExactly("delta", "echo");

            // completing everything empties the queue
            for (ReceivedMessage m : got.subList(1, 3)) {
                h.await(r.complete(m.lockToken()));
            }
            h.crashAndRestart();
            assertThat(h.await(h.engine.getSessionState(pq, "zulu"))).containsExactly(7);
            assertThat(h.await(h.engine.listSessions(pq, ALL, 0, 100, null))).containsExactlyElementsOf(expected);
        }
    }

    @Test
    void sessionLockExpiryOnAPartitionedQueue() {
        try (EngineHarness h = new EngineHarness()) {
            EntityAddress pq = EntityAddress.parse("psq");
            h.queue(sessionQueue("psq").enablePartitioning(true).build());
            h.send("psq", text("m", "s"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, pq, "s", sink, 1);
            ReceivedMessage m = sink.take().get(0);
            h.advance(LOCK.plusMillis(1));
            assertThat(sink.closedWith).isNotNull();
            assertThat(sink.closedWith.kind()).isEqualTo(ErrorKind.SESSION_LOCK_LOST);
            assertFails(h, r.complete(m.lockToken()), ErrorKind.SESSION_LOCK_LOST);
            EngineHarness.Sink sink2 = h.sink();
            Receiver r2 = acceptNext(h, pq, sink2, 1);
            ReceivedMessage again = sink2.take().get(0);
            assertThat(again.deliveryCount()).isEqualTo(1);
            h.await(r2.complete(again.lockToken()));
            assertThat(counts(h, "psq").activeMessageCount()).isZero();
        }
    }

    // ------------------------------------------------------------------------------------------------ deferred

    @Test
    void receiveDeferredWithASessionId() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m1", "s"), text("m2", "s"), text("o1", "other"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, Q, "s", sink, 1);
            ReceivedMessage m1 = sink.take().get(0);
            h.await(r.defer(m1.lockToken(), null));
            r.addCredit(5);
            h.engine.runUntilIdle();
            assertThat(bodies(sink.take())).containsExactly("m2");

            long[] seqs = {m1.sequenceNumber()};
            // a different session id does not find it
            assertFails(h, h.engine.receiveDeferred(Q, seqs, ReceiveMode.PEEK_LOCK, "other", null),
                    ErrorKind.MESSAGE_NOT_FOUND);
            List<ReceivedMessage> deferred = h.await(h.engine.receiveDeferred(Q, seqs, ReceiveMode.PEEK_LOCK, "s",
                    null));
            assertThat(deferred).hasSize(1);
            ReceivedMessage d = deferred.get(0);
            assertThat(d.sessionId()).isEqualTo("s");
            assertThat(d.state()).isEqualTo(MessageState.DEFERRED);
            assertThat(d.lockToken()).isNotNull();
            assertThat(d.lockedUntilMs()).isEqualTo(r.sessionLockedUntilMs());

            // abandoning keeps it deferred (with one more delivery), not delivered to the session receiver
            h.await(r.abandon(d.lockToken(), null));
            h.engine.runUntilIdle();
            assertThat(sink.take()).isEmpty();
            ReceivedMessage d2 = h.await(h.engine.receiveDeferred(Q, seqs, ReceiveMode.PEEK_LOCK, "s", null)).get(0);
            assertThat(d2.deliveryCount()).isEqualTo(2); // the delivery that deferred it, and the abandoned one
            h.await(r.complete(d2.lockToken()));
            assertFails(h, h.engine.receiveDeferred(Q, seqs, ReceiveMode.PEEK_LOCK, "s", null),
                    ErrorKind.MESSAGE_NOT_FOUND);
        }
    }

    @Test
    void receiveDeferredOfASessionMessageNeedsTheSessionLock() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(sessionQueue("sq").build());
            h.send("sq", text("m1", "s"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = accept(h, Q, "s", sink, 1);
            ReceivedMessage m1 = sink.take().get(0);
            h.await(r.defer(m1.lockToken(), null));
            r.close();
            h.engine.runUntilIdle();
            long[] seqs = {m1.sequenceNumber()};
            assertFails(h, h.engine.receiveDeferred(Q, seqs, ReceiveMode.PEEK_LOCK, "s", null),
                    ErrorKind.SESSION_LOCK_LOST);
            // a deferred-only session is not offered by next-available
            CompletableFuture<Receiver> next = h.engine.acceptSession(Q, null, ReceiveMode.PEEK_LOCK, 1_000,
                    h.sink());
            h.engine.runUntilIdle();
            h.advance(Duration.ofMillis(1_001));
            assertFails(h, next, ErrorKind.TIMEOUT);
            // the session is still listed (it has a message)
            assertThat(h.await(h.engine.listSessions(Q, Engine.ALL_ACTIVE_SESSIONS, 0, 10, null))).containsExactly("s");
            Receiver r2 = accept(h, Q, "s", h.sink(), 0);
            ReceivedMessage d = h.await(h.engine.receiveDeferred(Q, seqs, ReceiveMode.PEEK_LOCK, "s", null)).get(0);
            h.await(r2.complete(d.lockToken()));
            assertThat(counts(h, "sq").activeMessageCount()).isZero();
        }
    }
}
