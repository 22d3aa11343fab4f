package io.buslane.engine.cluster;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.EngineHarness;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.receive.Receiver;
import io.buslane.journal.memory.InMemoryJournal;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Cluster mode's guarantee that no message is delivered by two nodes, attacked at the shard: while a shard's lease
 * may have passed to another node (its renewals did not get through, or the process was paused; the in-memory
 * journal's {@code leaseLost} stands in for the PostgreSQL journal's clock), the shard delivers nothing, hands over
 * nothing it locked before, and refuses every lock and session accept retriably, changing nothing; once the lease is
 * confirmed again everything goes on as if nothing happened.
 */
class LeaseGateTest {

    private static final EntityAddress Q = EntityAddress.parse("q");

    private static void refusedForTheLease(CompletableFuture<?> op, EngineHarness h) {
        assertThatThrownBy(() -> h.await(op)).isInstanceOfSatisfying(BrokerException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.SERVER_BUSY);
            assertThat(e.getMessage()).isEqualTo(SubQueueState.LEASE_NOT_HELD_TEXT);
        });
    }

    @Test
    void nothingIsDeliveredWhileTheLeaseMayHavePassedAndEverythingOnceItIsConfirmedAgain() {
        try (EngineHarness h = new EngineHarness(1)) {
            InMemoryJournal journal = h.journals.journal("shard-0");
            h.queue("q");
            h.send("q", EngineHarness.text("a"), EngineHarness.text("b"), EngineHarness.text("c"));
            journal.leaseLost(true);
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 10);
            h.advance(Duration.ofSeconds(1));
            assertThat(sink.take()).as("no delivery on a lease that may be another node's").isEmpty();
            EngineHarness.Sink deleting = h.sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, deleting, 10);
            h.advance(Duration.ofSeconds(1));
            assertThat(deleting.take()).isEmpty();

            journal.leaseLost(false);
            h.advance(Duration.ofMillis(100));
            List<ReceivedMessage> got = sink.take();
            got.addAll(deleting.take());
            assertThat(got).extracting(EngineHarness::text).containsExactlyInAnyOrder("a", "b", "c");
            assertThat(got).extracting(ReceivedMessage::deliveryCount).containsOnly(0);
        }
    }

    @Test
    void aMessageLockedJustBeforeTheLeaseLapsedIsHeldBackAndComesBackWithoutADeliveryCounted() {
        try (EngineHarness h = new EngineHarness(1)) {
            InMemoryJournal journal = h.journals.journal("shard-0");
            h.queue("q");
            h.send("q", EngineHarness.text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.engine.createReceiver(Q, ReceiveMode.PEEK_LOCK, sink);
            r.addCredit(1); // the shard's next cycle locks the message and parks its hand-over until the cycle ends
            h.engine.queue("q").partitions()[0].shard().submit(() -> journal.leaseLost(true)); // a pause, in between
            h.engine.runUntilIdle();
            assertThat(sink.take()).as("the hand-over of a message locked on a lease that lapsed").isEmpty();
            assertThat(r.credit()).as("the credit comes back").isEqualTo(1);
            assertThat(h.engine.queue("q").partitions()[0].partition().queue().lockedCount()).isZero();

            journal.leaseLost(false);
            h.advance(Duration.ofMillis(100));
            List<ReceivedMessage> got = sink.take();
            assertThat(got).extracting(EngineHarness::text).containsExactly("a");
            assertThat(got.get(0).deliveryCount()).as("the held-back delivery did not count").isZero();
        }
    }

    @Test
    void aSessionGrantedJustBeforeTheLeaseLapsedIsNotHandedOverAndTheAcceptFailsRetriably() {
        try (EngineHarness h = new EngineHarness(1)) {
            InMemoryJournal journal = h.journals.journal("shard-0");
            h.queue(QueueProperties.builder("s").requiresSession(true).build());
            h.send("s", EngineHarness.text("x", "session-1"));
            EntityAddress s = EntityAddress.parse("s");
            CompletableFuture<Receiver> waiting = h.engine.acceptSession(s, null, ReceiveMode.PEEK_LOCK, 60_000,
                    h.sink()); // granted in the shard's next cycle, answered when that cycle ends
            h.engine.queue("s").partitions()[0].shard().submit(() -> journal.leaseLost(true)); // a pause, between
            h.engine.runUntilIdle();
            refusedForTheLease(waiting, h); // no session handed over on a lease that lapsed

            journal.leaseLost(false);
            Receiver again = h.await(h.engine.acceptSession(s, null, ReceiveMode.PEEK_LOCK, 60_000, h.sink()));
            assertThat(again.sessionId()).as("the session was let go: the retry gets it").isEqualTo("session-1");
        }
    }

    @Test
    void locksAndSessionAcceptsAreRefusedRetriablyAndChangeNothing() {
        try (EngineHarness h = new EngineHarness(1)) {
            InMemoryJournal journal = h.journals.journal("shard-0");
            h.queue("q");
            h.queue(QueueProperties.builder("s").requiresSession(true).build());
            h.send("q", EngineHarness.text("locked"), EngineHarness.text("deferred"));
            h.send("s", EngineHarness.text("x", "session-1"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 2);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).hasSize(2);
            ReceivedMessage locked = got.get(0);
            ReceivedMessage deferred = got.get(1);
            h.await(h.engine.defer(Q, deferred.lockToken(), null));

            journal.leaseLost(true);
            refusedForTheLease(h.engine.renewLock(Q, locked.lockToken()), h);
            refusedForTheLease(h.engine.receiveDeferred(Q, new long[] {deferred.sequenceNumber()},
                    ReceiveMode.PEEK_LOCK, null, null), h);
            EntityAddress s = EntityAddress.parse("s");
            refusedForTheLease(h.engine.acceptSession(s, "session-1", ReceiveMode.PEEK_LOCK, 0, h.sink()), h);
            EngineHarness.Sink next = h.sink();
            CompletableFuture<Receiver> waiting = h.engine.acceptSession(s, null, ReceiveMode.PEEK_LOCK, 60_000,
                    next);
            h.advance(Duration.ofSeconds(1));
            assertThat(waiting).as("accept-next waits: no session is granted on the lease").isNotDone();

            journal.leaseLost(false);
            h.advance(Duration.ofMillis(100));
            Receiver accepted = h.await(waiting);
            assertThat(accepted.sessionId()).isEqualTo("session-1");
            accepted.addCredit(1);
            h.engine.runUntilIdle();
            assertThat(next.take()).extracting(EngineHarness::text).containsExactly("x");
            journal.leaseLost(true);
            refusedForTheLease(h.engine.renewSessionLock(s, "session-1", accepted), h);
            journal.leaseLost(false);
            assertThat(h.await(h.engine.renewSessionLock(s, "session-1", accepted))).isPositive();
            assertThat(h.await(h.engine.renewLock(Q, locked.lockToken()))).isPositive();
            assertThat(h.await(h.engine.receiveDeferred(Q, new long[] {deferred.sequenceNumber()},
                    ReceiveMode.PEEK_LOCK, null, null))).extracting(EngineHarness::text).containsExactly("deferred");
        }
    }
}
