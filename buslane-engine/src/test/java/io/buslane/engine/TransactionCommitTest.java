package io.buslane.engine;

import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.txn.TransactionalBatch;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.ReceivedMessage;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Engine#commit(TransactionalBatch)}: staged sends and settlements applied together, or not at all. */
class TransactionCommitTest {

    private static final Duration LOCK = Duration.ofSeconds(30);

    private static EntityAddress addr(String path) {
        return EntityAddress.parse(path);
    }

    private static TransactionalBatch.Settle settle(String path, ReceivedMessage m,
                                                    TransactionalBatch.SettleKind kind) {
        return new TransactionalBatch.Settle(addr(path), m.lockToken(), kind, null, null, null);
    }

    @Test
    void commitAppliesSendsAndSettlementsOfSeveralEntities() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("in").lockDuration(LOCK).build());
            h.queue("out");
            h.send("in", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("in", ReceiveMode.PEEK_LOCK, sink, 2);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).hasSize(2);

            TransactionalBatch batch = new TransactionalBatch()
                    .addSend("out", List.of(text("x"), text("y")))
                    .addSettlement(settle("in", got.get(0), TransactionalBatch.SettleKind.COMPLETE))
                    .addSettlement(new TransactionalBatch.Settle(addr("in"), got.get(1).lockToken(),
                            TransactionalBatch.SettleKind.DEAD_LETTER, Map.of("k", "v"), "why", "because"));
            assertThat(batch.messageCount()).isEqualTo(2);
            h.await(h.engine.commit(batch));

            assertThat(h.await(h.engine.counts("out")).activeMessageCount()).isEqualTo(2);
            RuntimeCounts in = h.await(h.engine.counts("in"));
            assertThat(in.activeMessageCount()).isZero();
            assertThat(in.deadLetterMessageCount()).isEqualTo(1);
            // metrics count committed work like the same work done outside a transaction
            assertThat(h.engine.stats().sent()).isEqualTo(4);
            assertThat(h.engine.stats().settled(EngineStats.Outcome.COMPLETE)).isEqualTo(1);
            assertThat(h.engine.stats().settled(EngineStats.Outcome.DEAD_LETTER)).isEqualTo(1);
        }
    }

    @Test
    void aLostLockFailsTheCommitBeforeAnythingIsApplied() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("in").lockDuration(LOCK).build());
            h.send("in", text("a"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("in", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage m = sink.take().get(0);
            h.receiver("in", ReceiveMode.PEEK_LOCK, h.sink(), 1); // takes the message once its lock runs out

            h.advance(LOCK.plusSeconds(1));
            TransactionalBatch batch = new TransactionalBatch()
                    .addSend("in", List.of(text("new")))
                    .addSettlement(settle("in", m, TransactionalBatch.SettleKind.COMPLETE));
            assertThatThrownBy(() -> h.await(h.engine.commit(batch)))
                    .isInstanceOf(BrokerException.class)
                    .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(ErrorKind.MESSAGE_LOCK_LOST));

            // neither the send nor the completion happened: only the original message, redelivered after expiry
            assertThat(h.await(h.engine.counts("in")).activeMessageCount()).isEqualTo(1);
        }
    }

    @Test
    void abandonAndDeferUnderATransactionTakeEffectAtCommit() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("q").lockDuration(LOCK).build());
            h.send("q", text("a"), text("b"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 2);
            List<ReceivedMessage> got = sink.take();

            h.await(h.engine.commit(new TransactionalBatch()
                    .addSettlement(settle("q", got.get(0), TransactionalBatch.SettleKind.ABANDON))
                    .addSettlement(settle("q", got.get(1), TransactionalBatch.SettleKind.DEFER))));

            r.addCredit(5);
            h.engine.runUntilIdle();
            List<ReceivedMessage> again = sink.take();
            assertThat(again).hasSize(1);
            assertThat(text(again.get(0))).isEqualTo("a");
            assertThat(again.get(0).deliveryCount()).isEqualTo(1);
            List<ReceivedMessage> deferred = h.await(h.engine.receiveDeferred(addr("q"),
                    new long[] {got.get(1).sequenceNumber()}, ReceiveMode.PEEK_LOCK, null));
            assertThat(deferred).extracting(EngineHarness::text).containsExactly("b");
        }
    }

    @Test
    void sendToAMissingEntityFailsTheWholeCommit() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            TransactionalBatch batch = new TransactionalBatch()
                    .addSend("q", List.of(text("a")))
                    .addSend("nope", List.of(text("b")));
            assertThatThrownBy(() -> h.await(h.engine.commit(batch)))
                    .isInstanceOf(BrokerException.class)
                    .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(ErrorKind.ENTITY_NOT_FOUND));
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isZero();
        }
    }

    @Test
    void committedWorkSurvivesARestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("q").lockDuration(LOCK).build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage m = sink.take().get(0);
            h.await(h.engine.commit(new TransactionalBatch()
                    .addSend("q", List.of(text("b")))
                    .addSettlement(settle("q", m, TransactionalBatch.SettleKind.COMPLETE))));

            h.restart();
            EngineHarness.Sink after = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, after, 5);
            List<ReceivedMessage> got = after.take();
            assertThat(got).extracting(EngineHarness::text).containsExactly("b");
        }
    }

    @Test
    void aMessageWithoutSessionIdToASessionQueueFailsTheCommitBeforeAnythingIsApplied() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("in").lockDuration(LOCK).build());
            h.queue(QueueProperties.builder("sessions").requiresSession(true).build());
            h.send("in", text("a"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("in", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage m = sink.take().get(0);
            TransactionalBatch batch = new TransactionalBatch()
                    .addSettlement(settle("in", m, TransactionalBatch.SettleKind.COMPLETE))
                    .addSend("sessions", List.of(text("no session")));
            assertThatThrownBy(() -> h.await(h.engine.commit(batch)))
                    .isInstanceOf(BrokerException.class)
                    .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(ErrorKind.INVALID_OPERATION));
            assertThat(h.await(h.engine.counts("in")).activeMessageCount()).isEqualTo(1);
            h.await(h.engine.complete(addr("in"), m.lockToken())); // the lock is still held
        }
    }

    @Test
    void settlingTheSameMessageTwiceFailsTheCommit() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("q").lockDuration(LOCK).build());
            h.send("q", text("a"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, sink, 1);
            ReceivedMessage m = sink.take().get(0);
            TransactionalBatch batch = new TransactionalBatch()
                    .addSettlement(settle("q", m, TransactionalBatch.SettleKind.COMPLETE))
                    .addSettlement(settle("q", m, TransactionalBatch.SettleKind.DEFER));
            assertThatThrownBy(() -> h.await(h.engine.commit(batch)))
                    .isInstanceOf(BrokerException.class)
                    .satisfies(e -> assertThat(((BrokerException) e).kind()).isEqualTo(ErrorKind.MESSAGE_LOCK_LOST));
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(1);
        }
    }

    @Test
    void sessionMessagesSettleAtCommitWhileTheSessionIsLocked() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("s").requiresSession(true).lockDuration(LOCK).build());
            h.send("s", text("a", "s1"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.await(h.engine.acceptSession(addr("s"), "s1", ReceiveMode.PEEK_LOCK, 1000, sink));
            r.addCredit(1);
            h.engine.runUntilIdle();
            ReceivedMessage m = sink.take().get(0);

            h.await(h.engine.commit(new TransactionalBatch()
                    .addSend("s", List.of(text("b", "s1")))
                    .addSettlement(settle("s", m, TransactionalBatch.SettleKind.COMPLETE))));
            r.addCredit(1);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("b");
        }
    }
}
