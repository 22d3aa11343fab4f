package io.buslane.engine.txn;

import io.buslane.common.error.BrokerException;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The transaction state machine of a connection: declare, discharge (commit/rollback), unknown ids, the 2-minute
 * timeout on a manual clock, rollback when the coordinator detaches, the 100-message limit, entity pinning and
 * send-via, over a real engine in manual threading mode. No threads, no sleeps.
 */
class TransactionsTest {

    private final ManualClock clock = new ManualClock();
    private final List<Runnable> timers = new ArrayList<>();
    private final Object coordinator = new Object();
    private Engine engine;
    private Transactions txns;

    @BeforeEach
    void start() {
        engine = Engine.start(new EngineConfig(clock, Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.MANUAL));
        engine.runUntilIdle();
        await(engine.createQueue(QueueProperties.builder("q").lockDuration(Duration.ofSeconds(60)).build()));
        await(engine.createQueue(QueueProperties.builder("other").build()));
        txns = new Transactions(TransactionWork.of(engine::commit), clock, "txn:1:",
                (delay, task) -> {
                    timers.add(task);
                    return timers.size();
                });
    }

    @AfterEach
    void stop() {
        engine.close();
    }

    private <T> T await(CompletableFuture<T> f) {
        engine.runUntilIdle();
        assertThat(f).isDone();
        try {
            return f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw e;
        }
    }

    private static Message text(String body) {
        return Message.builder().body(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    private long active(String entity) {
        RuntimeCounts c = await(engine.counts(entity));
        return c.activeMessageCount();
    }

    private static void assertCondition(Runnable action, String condition) {
        assertThatThrownBy(action::run).isInstanceOf(TransactionFailure.class)
                .satisfies(e -> assertThat(((TransactionFailure) e).condition()).isEqualTo(condition));
    }

    private void assertDischargeFails(TxnId id, boolean fail, String condition) {
        CompletableFuture<Void> f = txns.discharge(id, fail);
        assertThatThrownBy(() -> await(f)).isInstanceOf(TransactionFailure.class)
                .satisfies(e -> assertThat(((TransactionFailure) e).condition()).isEqualTo(condition));
    }

    /** Receives one message from q in peek-lock mode. */
    private ReceivedMessage lockOne() {
        List<ReceivedMessage> got = Collections.synchronizedList(new ArrayList<>());
        Receiver r = engine.createReceiver(EntityAddress.parse("q"), ReceiveMode.PEEK_LOCK, new DeliverySink() {
            @Override
            public void onMessage(Receiver receiver, ReceivedMessage message) {
                got.add(message);
            }

            @Override
            public void onClosed(Receiver receiver, BrokerException error) {
            }
        });
        r.addCredit(1);
        engine.runUntilIdle();
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    private static TransactionalBatch.Settle complete(ReceivedMessage m) {
        return new TransactionalBatch.Settle(EntityAddress.parse("q"), m.lockToken(),
                TransactionalBatch.SettleKind.COMPLETE, null, null, null);
    }

    // ------------------------------------------------------------------------------------------------ declare

    @Test
    void declareHandsOutDistinctIds() {
        TxnId a = txns.declare(coordinator);
        TxnId b = txns.declare(coordinator);
        assertThat(a).isNotEqualTo(b);
        assertThat(txns.openCount()).isEqualTo(2);
    }

    @Test
    void sendsBecomeVisibleOnlyAtCommit() {
        TxnId id = txns.declare(coordinator);
        txns.stageSend(id, null, "q", List.of(text("a"), text("b")));
        engine.runUntilIdle();
        assertThat(active("q")).isZero();

        await(txns.discharge(id, false));
        assertThat(active("q")).isEqualTo(2);
        assertThat(txns.openCount()).isZero();
    }

    @Test
    void rollbackDiscardsSends() {
        TxnId id = txns.declare(coordinator);
        txns.stageSend(id, null, "q", List.of(text("a")));
        await(txns.discharge(id, true));
        assertThat(active("q")).isZero();
    }

    @Test
    void settlementTakesEffectAtCommitAndTheMessageStaysLockedMeanwhile() {
        await(engine.send("q", List.of(text("a"))));
        ReceivedMessage m = lockOne();
        TxnId id = txns.declare(coordinator);
        txns.stageSettlement(id, null, complete(m));
        engine.runUntilIdle();
        assertThat(active("q")).isEqualTo(1);
        // still locked by us: renewing works
        assertThat(await(engine.renewLock(EntityAddress.parse("q"), m.lockToken()))).isPositive();

        await(txns.discharge(id, false));
        assertThat(active("q")).isZero();
    }

    @Test
    void rolledBackSettlementLeavesTheMessageLockedAndSettleableAgain() {
        await(engine.send("q", List.of(text("a"))));
        ReceivedMessage m = lockOne();
        TxnId id = txns.declare(coordinator);
        txns.stageSettlement(id, null, complete(m));
        await(txns.discharge(id, true));
        assertThat(active("q")).isEqualTo(1);
        await(engine.abandon(EntityAddress.parse("q"), m.lockToken(), null));
        assertThat(lockOne().deliveryCount()).isEqualTo(1);
    }

    @Test
    void aCommitThatCannotBeAppliedIsReportedAsRollbackAndAppliesNothing() {
        await(engine.send("q", List.of(text("a"))));
        ReceivedMessage m = lockOne();
        TxnId id = txns.declare(coordinator);
        txns.stageSend(id, null, "q", List.of(text("b")));
        txns.stageSettlement(id, null, complete(m));
        clock.advance(Duration.ofSeconds(61));
        engine.runUntilIdle();
        lockOne(); // another receiver takes the message: the transaction's lock is lost for good

        assertDischargeFails(id, false, TransactionFailure.ROLLBACK);
        assertThat(active("q")).isEqualTo(1);
    }

    // ------------------------------------------------------------------------------------------------ unknown ids

    @Test
    void unknownAndAlreadyDischargedIdsAreRefused() {
        assertDischargeFails(TxnId.of("nope".getBytes(StandardCharsets.UTF_8)), false,
                TransactionFailure.UNKNOWN_ID);
        TxnId id = txns.declare(coordinator);
        await(txns.discharge(id, false));
        assertDischargeFails(id, false, TransactionFailure.UNKNOWN_ID);
        assertCondition(() -> txns.stageSend(id, null, "q", List.of(text("a"))), TransactionFailure.UNKNOWN_ID);
    }

    // ------------------------------------------------------------------------------------------------ timeout

    @Test
    void aConnectionHoldsAtMostMaxOpenTransactions() {
        List<TxnId> open = new ArrayList<>();
        for (int i = 0; i < Transactions.MAX_OPEN; i++) {
            open.add(txns.declare(coordinator));
        }
        assertCondition(() -> txns.declare(coordinator), "amqp:resource-limit-exceeded");
        assertThat(txns.openCount()).isEqualTo(Transactions.MAX_OPEN);
        await(txns.discharge(open.get(0), true));
        assertThat(txns.declare(coordinator)).isNotNull();
    }

    @Test
    void aDeclaredTransactionThatNoOperationUsesIsForgottenAfterTheIdleLimit() {
        TxnId idle = txns.declare(coordinator);
        TxnId used = txns.declare(coordinator);
        txns.stageSend(used, null, "q", List.of(text("a")));
        clock.advance(Duration.ofMillis(Transactions.IDLE_DECLARED_MS - 1));
        txns.declare(coordinator);
        assertThat(txns.openCount()).as("not idle long enough yet").isEqualTo(3);
        clock.advance(Duration.ofMillis(1));
        txns.declare(coordinator);

        assertThat(txns.openCount()).isEqualTo(3);
        assertDischargeFails(idle, false, TransactionFailure.UNKNOWN_ID);
        assertDischargeFails(used, false, TransactionFailure.TIMEOUT); // used: kept until discharged, as before
    }

    @Test
    void aTransactionTimesOutTwoMinutesAfterItsFirstOperation() {
        TxnId id = txns.declare(coordinator);
        clock.advance(Duration.ofMinutes(5)); // declared but idle: the timer has not started
        txns.stageSend(id, null, "q", List.of(text("a")));
        clock.advance(Duration.ofSeconds(119));
        txns.stageSend(id, null, "q", List.of(text("b")));
        clock.advance(Duration.ofSeconds(1));

        assertCondition(() -> txns.stageSend(id, null, "q", List.of(text("c"))), TransactionFailure.TIMEOUT);
        assertDischargeFails(id, false, TransactionFailure.TIMEOUT);
        assertThat(active("q")).isZero();
        assertDischargeFails(id, false, TransactionFailure.UNKNOWN_ID);
    }

    @Test
    void theTimerDiscardsTheWorkOfATimedOutTransaction() {
        TxnId id = txns.declare(coordinator);
        Message scheduled = Message.builder().body(new byte[] {1})
                .scheduledEnqueueTimeMs(clock.epochMillis() + 3_600_000).build();
        txns.beforeSchedule(id, null, "q", 1);
        long[] seqs = await(engine.reserveScheduled("q", List.of(scheduled)));
        txns.scheduled(id, "q", List.of(scheduled), seqs);
        assertThat(timers).hasSize(1);
        assertThat(await(engine.counts("q")).scheduledMessageCount()).isZero(); // stored only at commit

        clock.advance(Duration.ofSeconds(60));
        timers.remove(0).run(); // early (a timer may fire before the clock says so): re-armed
        assertThat(timers).hasSize(1);
        clock.advance(Duration.ofSeconds(60));
        timers.remove(0).run();
        engine.runUntilIdle();

        assertThat(await(engine.counts("q")).scheduledMessageCount()).isZero();
        assertDischargeFails(id, false, TransactionFailure.TIMEOUT);
    }

    // ------------------------------------------------------------------------------------------------ owner closed

    @Test
    void detachingTheCoordinatorRollsBackItsTransactions() {
        TxnId mine = txns.declare(coordinator);
        Object otherCoordinator = new Object();
        TxnId theirs = txns.declare(otherCoordinator);
        txns.stageSend(mine, null, "q", List.of(text("a")));
        txns.stageSend(theirs, null, "q", List.of(text("b")));

        txns.ownerClosed(coordinator);
        assertDischargeFails(mine, false, TransactionFailure.UNKNOWN_ID);
        await(txns.discharge(theirs, false));
        assertThat(active("q")).isEqualTo(1);
    }

    @Test
    void messagesScheduledInATransactionAreInvisibleUntilItCommitsAndGoneAtRollback() {
        TxnId id = txns.declare(coordinator);
        Message m = Message.builder().body(new byte[] {1}).scheduledEnqueueTimeMs(clock.epochMillis() + 60_000)
                .build();
        txns.beforeSchedule(id, null, "q", 1);
        long[] seqs = await(engine.reserveScheduled("q", List.of(m)));
        txns.scheduled(id, "q", List.of(m), seqs);
        assertThat(await(engine.counts("q")).scheduledMessageCount()).isZero();
        assertThat(await(engine.peek(EntityAddress.parse("q"), 0, 10, null))).isEmpty();
        // due before the discharge: still nothing, since nothing is stored before the commit
        clock.advance(Duration.ofSeconds(61));
        engine.runUntilIdle();
        assertThat(active("q")).isZero();
        await(txns.discharge(id, true));
        engine.runUntilIdle();
        assertThat(await(engine.counts("q")).scheduledMessageCount()).isZero();
        assertThat(active("q")).isZero();
    }

    @Test
    void committedScheduledMessagesStay() {
        TxnId id = txns.declare(coordinator);
        Message m = Message.builder().body(new byte[] {1}).scheduledEnqueueTimeMs(clock.epochMillis() + 60_000)
                .build();
        txns.beforeSchedule(id, null, "q", 1);
        long[] seqs = await(engine.reserveScheduled("q", List.of(m)));
        txns.scheduled(id, "q", List.of(m), seqs);
        await(txns.discharge(id, false));
        assertThat(await(engine.counts("q")).scheduledMessageCount()).isEqualTo(1);
        // stored under the number the schedule answered: it cancels by that number
        await(engine.cancelScheduled("q", seqs));
        assertThat(await(engine.counts("q")).scheduledMessageCount()).isZero();
    }

    // ------------------------------------------------------------------------------------------------ limits

    @Test
    void atMostOneHundredMessagesPerTransaction() {
        TxnId id = txns.declare(coordinator);
        List<Message> ninetyNine = new ArrayList<>();
        for (int i = 0; i < 99; i++) {
            ninetyNine.add(text("m" + i));
        }
        txns.stageSend(id, null, "q", ninetyNine);
        txns.stageSend(id, null, "q", List.of(text("100th")));
        assertThatThrownBy(() -> txns.stageSend(id, null, "q", List.of(text("101st"))))
                .isInstanceOf(TransactionFailure.class)
                .hasMessage("Cannot send more than 100 messages in a single transaction.")
                .satisfies(e -> assertThat(((TransactionFailure) e).condition())
                        .isEqualTo("amqp:resource-limit-exceeded"));
        assertCondition(() -> txns.beforeSchedule(id, null, "q", 1), "amqp:resource-limit-exceeded");

        // the refused send dooms the transaction: the commit rolls everything back
        CompletableFuture<Void> commit = txns.discharge(id, false);
        assertThatThrownBy(() -> await(commit)).isInstanceOf(TransactionFailure.class)
                .hasMessageContaining("Cannot send more than 100 messages in a single transaction.")
                .satisfies(e -> assertThat(((TransactionFailure) e).condition())
                        .isEqualTo(TransactionFailure.ROLLBACK));
        assertThat(active("q")).isZero();
    }

    @Test
    void oneHundredMessagesCommit() {
        TxnId id = txns.declare(coordinator);
        List<Message> hundred = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            hundred.add(text("m" + i));
        }
        txns.stageSend(id, null, "q", hundred);
        await(txns.discharge(id, false));
        assertThat(active("q")).isEqualTo(100);
    }

    @Test
    void anOperationRefusedByALinkDoomsTheTransaction() {
        TxnId id = txns.declare(coordinator);
        txns.stageSend(id, null, "q", List.of(text("a")));
        txns.doom(id, "The message could not be decoded.");
        assertDischargeFails(id, false, TransactionFailure.ROLLBACK);
        assertThat(active("q")).isZero();
        // rolling back a doomed transaction is fine
        TxnId other = txns.declare(coordinator);
        txns.doom(other, "whatever");
        await(txns.discharge(other, true));
    }

    // ------------------------------------------------------------------------------------------------ pinning

    @Test
    void aTransactionPinsToItsFirstEntity() {
        await(engine.send("q", List.of(text("a"))));
        ReceivedMessage m = lockOne();
        TxnId id = txns.declare(coordinator);
        txns.stageSettlement(id, null, complete(m));
        assertThatThrownBy(() -> txns.stageSend(id, null, "other", List.of(text("x"))))
                .isInstanceOf(TransactionFailure.class)
                .hasMessageStartingWith(Transactions.SPAN_TEXT)
                .satisfies(e -> assertThat(((TransactionFailure) e).condition()).isEqualTo("amqp:not-allowed"));
        // entity names are case-insensitive
        txns.stageSend(id, null, "Q", List.of(text("same entity")));
    }

    @Test
    void sendViaThePinnedEntityReachesAnotherEntityAtCommit() {
        await(engine.send("q", List.of(text("a"))));
        ReceivedMessage m = lockOne();
        TxnId id = txns.declare(coordinator);
        txns.stageSettlement(id, null, complete(m));
        txns.stageSend(id, "q", "other", List.of(text("forwarded")));
        TxnId refused = txns.declare(coordinator);
        txns.stageSend(refused, "q", "other", List.of(text("x")));
        assertCondition(() -> txns.stageSend(refused, "other", "q", List.of(text("x"))), "amqp:not-allowed");

        await(txns.discharge(id, false));
        assertThat(active("q")).isZero();
        assertThat(active("other")).isEqualTo(1);
    }

    @Test
    void crossEntitySessionsBindToTheirFirstEntity() {
        Object session = new Object();
        txns.coordinatorAttached(session);
        assertThat(txns.sessionVia(session)).isNull();
        txns.linkAttaching(session, "q", true);
        txns.linkAttaching(session, "other", false);
        txns.linkAttaching(session, "q/$deadletterqueue", true);
        assertThat(txns.sessionVia(session)).isEqualTo("q");
        assertThatThrownBy(() -> txns.linkAttaching(session, "other", true))
                .isInstanceOf(BrokerException.class)
                .hasMessageStartingWith(Transactions.SPAN_TEXT);

        // a session without a coordinator is not bound
        Object plain = new Object();
        txns.linkAttaching(plain, "q", true);
        txns.linkAttaching(plain, "other", true);
        assertThat(txns.sessionVia(plain)).isNull();
    }

    @Test
    void aSettlementThroughACrossEntitySessionMustBeOnItsViaEntity() {
        await(engine.send("q", List.of(text("a"))));
        ReceivedMessage m = lockOne();
        TxnId refused = txns.declare(coordinator);
        assertCondition(() -> txns.stageSettlement(refused, "other", complete(m)), "amqp:not-allowed");
        assertDischargeFails(refused, false, TransactionFailure.ROLLBACK);
        TxnId id = txns.declare(coordinator);
        txns.stageSettlement(id, "q", complete(m));
        txns.stageSend(id, "q", "other", List.of(text("x")));
        await(txns.discharge(id, false));
        assertThat(active("other")).isEqualTo(1);
    }

    @Test
    void aCancelIsStagedUntilTheCommitAndDiscardedByARollback() {
        Message later = Message.builder().body(new byte[] {1})
                .scheduledEnqueueTimeMs(clock.epochMillis() + 3_600_000).build();
        long seq = await(engine.schedule("q", List.of(later)))[0];
        TxnId rolledBack = txns.declare(coordinator);
        txns.stageCancel(rolledBack, null, "q", new long[] {seq});
        assertThat(await(engine.counts("q")).scheduledMessageCount()).as("staged, not applied").isEqualTo(1);
        await(txns.discharge(rolledBack, true));
        assertThat(await(engine.counts("q")).scheduledMessageCount()).as("rolled back").isEqualTo(1);
        TxnId committed = txns.declare(coordinator);
        txns.stageCancel(committed, null, "q", new long[] {seq});
        await(txns.discharge(committed, false));
        assertThat(await(engine.counts("q")).scheduledMessageCount()).as("committed").isZero();
    }

    @Test
    void aCancelOfAnotherEntityThroughAViaIsRefusedAndDoomsTheTransaction() {
        TxnId id = txns.declare(coordinator);
        assertCondition(() -> txns.stageCancel(id, "q", "other", new long[] {1}),
                io.buslane.common.error.ErrorKind.INVALID_OPERATION.amqpCondition());
        assertDischargeFails(id, false, TransactionFailure.ROLLBACK);
    }

    @Test
    void aMessageScheduledThroughAViaForAnotherEntityIsStagedThroughIt() {
        TxnId id = txns.declare(coordinator);
        Message later = Message.builder().body(new byte[] {1})
                .scheduledEnqueueTimeMs(clock.epochMillis() + 3_600_000).build();
        txns.beforeSchedule(id, "q", "other", 1);
        long[] seqs = await(engine.reserveScheduled("other", List.of(later)));
        txns.scheduled(id, "q", "other", List.of(later), seqs);
        await(txns.discharge(id, false));
        engine.runUntilIdle();
        assertThat(await(engine.counts("other")).scheduledMessageCount()).isEqualTo(1);
        assertThat(await(engine.peek(EntityAddress.parse("other"), 0, 10, null)))
                .extracting(ReceivedMessage::sequenceNumber).containsExactly(seqs[0]);
    }
}
