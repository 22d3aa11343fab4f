package io.buslane.amqp.mgmt;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.txn.TransactionFailure;
import io.buslane.engine.txn.TransactionScope;
import io.buslane.engine.txn.TransactionWork;
import io.buslane.engine.txn.Transactions;
import io.buslane.engine.txn.TxnId;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static io.buslane.amqp.mgmt.MgmtHarness.args;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code $management} requests carrying {@code transactional-state}: update-disposition is staged until the commit,
 * schedule-message is cancelled unless the transaction commits, refusals carry the transaction's condition.
 */
class ManagementTransactionsTest {

    private final MgmtHarness h = new MgmtHarness();
    private Transactions txns;
    private final Object coordinator = new Object();

    @BeforeEach
    void setUp() {
        h.await(h.engine.createQueue(QueueProperties.builder("q").lockDuration(Duration.ofSeconds(60)).build()));
        h.await(h.engine.createQueue(QueueProperties.builder("other").build()));
        txns = new Transactions(TransactionWork.of(h.engine::commit), h.clock, "txn:test:",
                (delay, task) -> 0);
    }

    @AfterEach
    void tearDown() {
        h.close();
    }

    private ManagementResponse call(String entity, String operation, Object body, TransactionScope scope) {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("operation", operation);
        CompletableFuture<ManagementResponse> f = h.processor.process(EntityAddress.parse(entity), props, body, scope);
        h.engine.runUntilIdle();
        assertThat(f).isDone();
        return f.join();
    }

    private TransactionScope scope(TxnId id) {
        return txns.scope(id, null, Runnable::run);
    }

    private long active(String entity) {
        return h.await(h.engine.counts(entity)).activeMessageCount();
    }

    private long scheduled(String entity) {
        return h.await(h.engine.counts(entity)).scheduledMessageCount();
    }

    private static Binary encodedScheduledMessage(String body, long atMs) {
        Message m = Message.Factory.create();
        m.setMessageId("sched-" + body);
        m.setBody(new Data(new Binary(body.getBytes(StandardCharsets.UTF_8))));
        Map<Symbol, Object> annotations = new LinkedHashMap<>();
        annotations.put(Symbol.valueOf("x-opt-scheduled-enqueue-time"), new Date(atMs));
        m.setMessageAnnotations(new MessageAnnotations(annotations));
        m.setApplicationProperties(new ApplicationProperties(new LinkedHashMap<>()));
        byte[] buf = new byte[4096];
        int n = m.encode(buf, 0, buf.length);
        return new Binary(buf, 0, n);
    }

    private Object scheduleBody(String body) {
        return args("messages", List.of(args("message-id", "sched-" + body, "message",
                encodedScheduledMessage(body, h.clock.epochMillis() + 600_000))));
    }

    @Test
    void updateDispositionInATransactionIsAppliedAtCommit() {
        h.send("q", MgmtHarness.text("a"));
        ReceivedMessage m = h.receive("q", ReceiveMode.PEEK_LOCK, 1).messages.get(0);
        TxnId id = txns.declare(coordinator);

        ManagementResponse r = call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens",
                new UUID[] {m.lockToken()}, "disposition-status", "completed"), scope(id));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(active("q")).isEqualTo(1);

        h.await(txns.discharge(id, false));
        assertThat(active("q")).isZero();
    }

    @Test
    void updateDispositionInARolledBackTransactionChangesNothing() {
        h.send("q", MgmtHarness.text("a"));
        ReceivedMessage m = h.receive("q", ReceiveMode.PEEK_LOCK, 1).messages.get(0);
        TxnId id = txns.declare(coordinator);
        call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens", new UUID[] {m.lockToken()},
                "disposition-status", "suspended", "deadletter-reason", "r"), scope(id));
        h.await(txns.discharge(id, true));
        assertThat(active("q")).isEqualTo(1);
        assertThat(h.await(h.engine.counts("q")).deadLetterMessageCount()).isZero();
    }

    @Test
    void scheduleMessageInATransactionIsStoredAtCommitOnlyUnderTheNumberItWasAnswered() {
        TxnId rolledBack = txns.declare(coordinator);
        ManagementResponse r = call("q", ManagementProcessor.SCHEDULE_MESSAGE, scheduleBody("x"), scope(rolledBack));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat((Long[]) r.body().get("sequence-numbers")).hasSize(1);
        assertThat(scheduled("q")).isZero(); // not before the commit
        assertNoContentPeek();
        h.await(txns.discharge(rolledBack, true));
        h.engine.runUntilIdle();
        assertThat(scheduled("q")).isZero();

        TxnId committed = txns.declare(coordinator);
        ManagementResponse y = call("q", ManagementProcessor.SCHEDULE_MESSAGE, scheduleBody("y"), scope(committed));
        Long seq = ((Long[]) y.body().get("sequence-numbers"))[0];
        h.await(txns.discharge(committed, false));
        assertThat(scheduled("q")).isEqualTo(1);
        assertThat(h.call("q", ManagementProcessor.CANCEL_SCHEDULED_MESSAGE,
                args("sequence-numbers", new Long[] {seq})).statusCode()).isEqualTo(200);
        assertThat(scheduled("q")).isZero();
    }

    private void assertNoContentPeek() {
        assertThat(h.call("q", ManagementProcessor.PEEK_MESSAGE, args("from-sequence-number", 0L,
                "message-count", 10)).statusCode()).isEqualTo(204);
    }

    @Test
    void refusalsCarryTheTransactionCondition() {
        ManagementResponse unknown = call("q", ManagementProcessor.SCHEDULE_MESSAGE, scheduleBody("u"),
                scope(TxnId.of(new byte[] {1})));
        assertThat(unknown.errorCondition()).isEqualTo(TransactionFailure.UNKNOWN_ID);
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(scheduled("q")).isZero();

        TxnId id = txns.declare(coordinator);
        call("q", ManagementProcessor.SCHEDULE_MESSAGE, scheduleBody("a"), scope(id));
        ManagementResponse span = call("other", ManagementProcessor.SCHEDULE_MESSAGE, scheduleBody("b"), scope(id));
        assertThat(span.errorCondition()).isEqualTo("amqp:not-allowed");
        assertThat(span.statusDescription()).startsWith("Local transactions cannot span multiple top-level entities");
        assertThat(scheduled("other")).isZero();
    }

    @Test
    void otherOperationsIgnoreTheTransaction() {
        h.send("q", MgmtHarness.text("a"));
        ManagementResponse r = call("q", ManagementProcessor.PEEK_MESSAGE,
                args("from-sequence-number", 0L, "message-count", 1), scope(txns.declare(coordinator)));
        assertThat(r.statusCode()).isEqualTo(200);
    }

    @Test
    void renewLockUnderATransactionRenewsAtOnceAndARollbackDoesNotUndoIt() {
        h.send("q", MgmtHarness.text("a"));
        ReceivedMessage m = h.receive("q", ReceiveMode.PEEK_LOCK, 1).messages.get(0);
        TxnId id = txns.declare(coordinator);
        h.advance(java.time.Duration.ofSeconds(10));
        ManagementResponse r = call("q", ManagementProcessor.RENEW_LOCK,
                args("lock-tokens", new java.util.UUID[] {m.lockToken()}), scope(id));
        assertThat(r.statusCode()).isEqualTo(200);
        java.util.Date until = (java.util.Date) ((Object[]) r.body().get("expirations"))[0];
        assertThat(until.getTime()).isEqualTo(h.clock.epochMillis() + 60_000);
        h.await(txns.discharge(id, true));
        // the renewed lock holds after the rollback: another receiver gets nothing at the first lock's end
        MgmtHarness.Sink other = h.receive("q", ReceiveMode.PEEK_LOCK, 1);
        h.advance(java.time.Duration.ofMillis(m.lockedUntilMs() - h.clock.epochMillis() + 1));
        assertThat(other.messages).isEmpty();
    }
}
