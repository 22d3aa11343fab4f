package io.buslane.amqp.mgmt;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.DescribedType;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static io.buslane.amqp.mgmt.MgmtHarness.args;
import static io.buslane.amqp.mgmt.MgmtHarness.text;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code $management} operations of §6.2 against a real engine: response keys and their exact Java types (which
 * decide the AMQP types on the wire), 204 cases, and the mapping of engine failures to status and condition.
 */
@SuppressWarnings("unchecked")
class ManagementProcessorTest {

    private static final Duration LOCK = Duration.ofSeconds(30);

    private final MgmtHarness h = new MgmtHarness();

    @AfterEach
    void tearDown() {
        h.close();
    }

    private void queue(String name) {
        h.await(h.engine.createQueue(QueueProperties.builder(name).lockDuration(LOCK).build()));
    }

    private void sessionQueue(String name) {
        h.await(h.engine.createQueue(QueueProperties.builder(name).lockDuration(LOCK).requiresSession(true).build()));
    }

    private static void assertOk(ManagementResponse r) {
        assertThat(r.statusCode()).as("%s", r).isEqualTo(200);
        assertThat(r.statusDescription()).isEqualTo("OK");
        assertThat(r.errorCondition()).isNull();
    }

    private static void assertNoContent(ManagementResponse r) {
        assertThat(r.statusCode()).as("%s", r).isEqualTo(204);
        assertThat(r.errorCondition()).isNull();
        assertThat(r.body()).isNull();
    }

    private static void assertError(ManagementResponse r, int status, String condition) {
        assertThat(r.statusCode()).as("%s", r).isEqualTo(status);
        assertThat(r.errorCondition()).isEqualTo(condition);
        assertThat(r.statusDescription()).isNotBlank();
        assertThat(r.body()).isNull();
    }

    /** Encodes the body as an amqp-value and decodes it again, as a client would see it. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> overTheWire(Map<String, Object> body) {
        Message out = Message.Factory.create();
        out.setBody(new AmqpValue(body));
        byte[] buf = new byte[64 * 1024];
        int n = out.encode(buf, 0, buf.length);
        Message in = Message.Factory.create();
        in.decode(buf, 0, n);
        return (Map<String, Object>) ((AmqpValue) in.getBody()).getValue();
    }

    private static Message decode(Binary b) {
        Message m = Message.Factory.create();
        m.decode(b.getArray(), b.getArrayOffset(), b.getLength());
        return m;
    }

    private static String bodyText(Message m) {
        Binary b = ((Data) m.getBody()).getValue();
        return new String(b.getArray(), b.getArrayOffset(), b.getLength(), StandardCharsets.UTF_8);
    }

    // ================================================================================================ envelope

    @Test
    void responseApplicationPropertiesHaveTheStrictTypes() {
        Map<String, Object> ok = ManagementResponse.ok().applicationProperties();
        assertThat(ok.get("statusCode")).isInstanceOf(Integer.class).isEqualTo(200);
        assertThat(ok.get("statusDescription")).isEqualTo("OK");
        assertThat(ok).doesNotContainKeys("errorCondition", "error-condition");

        queue("q");
        ManagementResponse r = h.call("q", ManagementProcessor.RENEW_LOCK,
                args("lock-tokens", new UUID[] {UUID.randomUUID()}));
        Map<String, Object> props = r.applicationProperties();
        assertThat(props.get("statusCode")).isInstanceOf(Integer.class).isEqualTo(410);
        assertThat(props.get("errorCondition")).isEqualTo(Symbol.valueOf("com.microsoft:message-lock-lost"));
        assertThat(props.get("error-condition")).isEqualTo(Symbol.valueOf("com.microsoft:message-lock-lost"));
        assertThat(props.get("statusDescription")).isInstanceOf(String.class);
    }

    @Test
    void unknownMissingAndRuleOperations() {
        queue("q");
        assertError(h.call("q", "com.microsoft:no-such-thing", args()), 501, "amqp:not-implemented");
        assertError(h.call("q", null, args()), 400, "com.microsoft:argument-error");
        // rules belong to subscriptions
        assertError(h.call("q", ManagementProcessor.ADD_RULE, args("rule-name", "r")), 400, "amqp:not-allowed");
        assertError(h.call("q", ManagementProcessor.REMOVE_RULE, args("rule-name", "r")), 400, "amqp:not-allowed");
        // A body that is not a map.
        assertError(h.call("q", ManagementProcessor.PEEK_MESSAGE, List.of()), 400, "com.microsoft:argument-error");
    }

    @Test
    void missingOrIllTypedArgumentsAreArgumentErrors() {
        queue("q");
        assertError(h.call("q", ManagementProcessor.RENEW_LOCK, args()), 400, "com.microsoft:argument-error");
        assertError(h.call("q", ManagementProcessor.RENEW_LOCK, args("lock-tokens", new long[] {1})), 400,
                "com.microsoft:argument-error");
        assertError(h.call("q", ManagementProcessor.PEEK_MESSAGE, args("from-sequence-number", "one",
                "message-count", 1)), 400, "com.microsoft:argument-error");
        assertError(h.call("q", ManagementProcessor.RECEIVE_BY_SEQUENCE_NUMBER, args("sequence-numbers",
                new String[] {"x"}, "receiver-settle-mode", UnsignedInteger.ONE)), 400,
                "com.microsoft:argument-error");
        assertError(h.call("q", ManagementProcessor.RECEIVE_BY_SEQUENCE_NUMBER, args("sequence-numbers",
                new long[] {1}, "receiver-settle-mode", UnsignedInteger.valueOf(7))), 400,
                "com.microsoft:argument-out-of-range");
        assertError(h.call("q", ManagementProcessor.SET_SESSION_STATE, args("session-id", 5)), 400,
                "com.microsoft:argument-error");
        assertError(h.call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens",
                new UUID[] {UUID.randomUUID()}, "disposition-status", "eaten")), 400, "com.microsoft:argument-error");
        assertError(h.call("q", ManagementProcessor.SCHEDULE_MESSAGE, args("messages",
                List.of(args("message-id", "m", "message", new Binary(new byte[] {1, 2, 3}))))), 400,
                "com.microsoft:argument-error");
    }

    @Test
    void missingEntityIsNotFound() {
        ManagementResponse r = h.call("nope", ManagementProcessor.PEEK_MESSAGE,
                args("from-sequence-number", 0L, "message-count", 1));
        assertError(r, 404, "amqp:not-found");
        assertThat(r.statusDescription()).contains("nope").contains("could not be found");
    }

    // ================================================================================================ locks

    @Test
    void renewLockAnswersATimestampArray() {
        queue("q");
        h.send("q", text("a"), text("b"));
        MgmtHarness.Sink sink = h.receive("q", ReceiveMode.PEEK_LOCK, 2);
        assertThat(sink.messages).hasSize(2);
        h.advance(Duration.ofSeconds(10));
        long now = h.clock.epochMillis();

        ManagementResponse r = h.call("q", ManagementProcessor.RENEW_LOCK, args("lock-tokens",
                new UUID[] {sink.messages.get(1).lockToken(), sink.messages.get(0).lockToken()}));
        assertOk(r);
        assertThat(r.body().get("expirations")).isInstanceOf(Date[].class);
        Date[] expirations = (Date[]) r.body().get("expirations");
        assertThat(expirations).containsExactly(new Date(now + LOCK.toMillis()), new Date(now + LOCK.toMillis()));
        assertThat(overTheWire(r.body()).get("expirations")).isInstanceOf(Date[].class);

        // A list of tokens is accepted too.
        assertOk(h.call("q", ManagementProcessor.RENEW_LOCK,
                args("lock-tokens", List.of(sink.messages.get(0).lockToken()))));
    }

    @Test
    void renewingAnExpiredLockOnceAnotherReceiverTookTheMessageIsLockLost() {
        queue("q");
        h.send("q", text("a"));
        MgmtHarness.Sink sink = h.receive("q", ReceiveMode.PEEK_LOCK, 1);
        UUID token = sink.messages.get(0).lockToken();
        h.receive("q", ReceiveMode.PEEK_LOCK, 1); // takes the message once the lock runs out
        h.advance(LOCK.plusSeconds(1));
        ManagementResponse r = h.call("q", ManagementProcessor.RENEW_LOCK, args("lock-tokens", new UUID[] {token}));
        assertError(r, 410, "com.microsoft:message-lock-lost");
    }

    @Test
    void renewingAnExpiredLockWhileNobodyTookTheMessageSucceedsAsOnTheService() {
        queue("q");
        h.send("q", text("a"));
        MgmtHarness.Sink sink = h.receive("q", ReceiveMode.PEEK_LOCK, 1);
        UUID token = sink.messages.get(0).lockToken();
        h.advance(LOCK.plusSeconds(2));
        assertOk(h.call("q", ManagementProcessor.RENEW_LOCK, args("lock-tokens", new UUID[] {token})));
        assertOk(h.call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens", List.of(token),
                "disposition-status", "completed")));
    }

    @Test
    void settlingUnderAnExpiredLockIsLockLostEvenWhileNobodyTookTheMessageAsOnTheService() {
        queue("q");
        h.send("q", text("a"));
        MgmtHarness.Sink sink = h.receive("q", ReceiveMode.PEEK_LOCK, 1);
        UUID token = sink.messages.get(0).lockToken();
        h.advance(LOCK.plusSeconds(2));
        assertError(h.call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens", List.of(token),
                "disposition-status", "completed")), 410, "com.microsoft:message-lock-lost");
    }

    // ================================================================================================ dispositions

    @Test
    void updateDispositionCompleteAbandonDeadLetter() {
        queue("q");
        h.send("q", text("a"));
        MgmtHarness.Sink sink = h.receive("q", ReceiveMode.PEEK_LOCK, 1);
        UUID token = sink.messages.get(0).lockToken();

        // abandoned with properties-to-modify
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("reason", "retry");
        ManagementResponse r = h.call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens",
                new UUID[] {token}, "disposition-status", "abandoned", "properties-to-modify", props));
        assertOk(r);
        assertThat(r.body()).isNull();
        List<ReceivedMessage> peeked = h.await(h.engine.peek(EntityAddress.parse("q"), 0, 10, null));
        assertThat(peeked).hasSize(1);
        assertThat(peeked.get(0).message().applicationProperties()).containsEntry("reason", "retry");
        assertThat(peeked.get(0).deliveryCount()).isEqualTo(1);

        // suspended = dead-letter, with reason and description
        sink.receiver.addCredit(1);
        h.engine.runUntilIdle();
        assertThat(sink.messages).hasSize(2);
        token = sink.messages.get(1).lockToken();
        r = h.call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens", new UUID[] {token},
                "disposition-status", "suspended", "deadletter-reason", "bad", "deadletter-description", "very bad"));
        assertOk(r);
        List<ReceivedMessage> dead = h.await(h.engine.peek(EntityAddress.parse("q/$deadletterqueue"), 0, 10, null));
        assertThat(dead).hasSize(1);
        assertThat(dead.get(0).message().applicationProperties())
                .containsEntry("DeadLetterReason", "bad")
                .containsEntry("DeadLetterErrorDescription", "very bad");

        // completed, on the dead-letter queue's own $management node
        MgmtHarness.Sink dlq = h.receive("q/$deadletterqueue", ReceiveMode.PEEK_LOCK, 1);
        r = h.call("q/$deadletterqueue", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens",
                List.of(dlq.messages.get(0).lockToken()), "disposition-status", "completed"));
        assertOk(r);
        assertNoContent(h.call("q/$deadletterqueue", ManagementProcessor.PEEK_MESSAGE,
                args("from-sequence-number", 0L, "message-count", 10)));

        // settling again: the lock is gone
        assertError(h.call("q/$deadletterqueue", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens",
                        List.of(dlq.messages.get(0).lockToken()), "disposition-status", "completed")), 410,
                "com.microsoft:message-lock-lost");
    }

    @Test
    void deferThenReceiveBySequenceNumberPeekLock() {
        queue("q");
        h.send("q", text("a"));
        MgmtHarness.Sink sink = h.receive("q", ReceiveMode.PEEK_LOCK, 1);
        ReceivedMessage first = sink.messages.get(0);
        sink.receiver.close();
        assertOk(h.call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens",
                new UUID[] {first.lockToken()}, "disposition-status", "defered")));

        ManagementResponse r = h.call("q", ManagementProcessor.RECEIVE_BY_SEQUENCE_NUMBER, args(
                "sequence-numbers", new Long[] {first.sequenceNumber()},
                "receiver-settle-mode", UnsignedInteger.ONE));
        assertOk(r);
        assertThat(r.body().get("messages")).isInstanceOf(List.class);
        List<?> messages = (List<?>) r.body().get("messages");
        assertThat(messages).hasSize(1);
        Map<?, ?> entry = (Map<?, ?>) messages.get(0);
        assertThat(entry.get("message")).isInstanceOf(Binary.class);
        assertThat(entry.get("lock-token")).isInstanceOf(UUID.class);
        Message decoded = decode((Binary) entry.get("message"));
        assertThat(bodyText(decoded)).isEqualTo("a");
        assertThat(decoded.getMessageAnnotations().getValue().get(Symbol.valueOf("x-opt-sequence-number")))
                .isEqualTo(first.sequenceNumber());

        // Settle it through $management with the returned token.
        UUID token = (UUID) entry.get("lock-token");
        assertOk(h.call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens", new UUID[] {token},
                "disposition-status", "completed")));
        assertError(h.call("q", ManagementProcessor.RECEIVE_BY_SEQUENCE_NUMBER, args(
                        "sequence-numbers", new long[] {first.sequenceNumber()},
                        "receiver-settle-mode", UnsignedInteger.ONE)), 404, "com.microsoft:message-not-found");
    }

    @Test
    void receiveBySequenceNumberReceiveAndDelete() {
        queue("q");
        h.send("q", text("a"), text("b"));
        MgmtHarness.Sink sink = h.receive("q", ReceiveMode.PEEK_LOCK, 2);
        sink.receiver.close();
        for (ReceivedMessage m : sink.messages) {
            assertOk(h.call("q", ManagementProcessor.UPDATE_DISPOSITION, args("lock-tokens",
                    new UUID[] {m.lockToken()}, "disposition-status", "defered")));
        }
        ManagementResponse r = h.call("q", ManagementProcessor.RECEIVE_BY_SEQUENCE_NUMBER, args(
                "sequence-numbers", List.of(sink.messages.get(0).sequenceNumber(),
                        sink.messages.get(1).sequenceNumber()),
                "receiver-settle-mode", UnsignedByte.valueOf((byte) 0)));
        assertOk(r);
        List<?> messages = (List<?>) r.body().get("messages");
        assertThat(messages).hasSize(2);
        for (Object o : messages) {
            assertThat((Map<Object, Object>) o).containsOnlyKeys("message");
        }
        assertNoContent(h.call("q", ManagementProcessor.PEEK_MESSAGE,
                args("from-sequence-number", 0L, "message-count", 10)));
    }

    // ================================================================================================ sessions

    @Test
    void sessionLockAndState() {
        sessionQueue("sq");
        h.send("sq", text("a", "s1"));
        MgmtHarness.Sink sink = h.acceptSession("sq", "s1", 1);
        assertThat(sink.messages).hasSize(1);
        h.advance(Duration.ofSeconds(5));

        ManagementResponse r = h.call("sq", ManagementProcessor.RENEW_SESSION_LOCK, args("session-id", "s1"));
        assertOk(r);
        assertThat(r.body().get("expiration")).isInstanceOf(Date.class)
                .isEqualTo(new Date(h.clock.epochMillis() + LOCK.toMillis()));

        // get before set: null under the key
        r = h.call("sq", ManagementProcessor.GET_SESSION_STATE, args("session-id", "s1"));
        assertOk(r);
        assertThat(r.body()).containsEntry("session-state", null);

        assertOk(h.call("sq", ManagementProcessor.SET_SESSION_STATE, args("session-id", "s1",
                "session-state", new Binary(new byte[] {1, 2, 3}))));
        r = h.call("sq", ManagementProcessor.GET_SESSION_STATE, args("session-id", "s1"));
        assertThat(r.body().get("session-state")).isInstanceOf(Binary.class)
                .isEqualTo(new Binary(new byte[] {1, 2, 3}));

        assertOk(h.call("sq", ManagementProcessor.SET_SESSION_STATE, args("session-id", "s1",
                "session-state", null)));
        assertThat(h.call("sq", ManagementProcessor.GET_SESSION_STATE, args("session-id", "s1")).body())
                .containsEntry("session-state", null);

        // The session lock expires: renewal reports it lost.
        h.advance(LOCK.plusSeconds(1));
        assertError(h.call("sq", ManagementProcessor.RENEW_SESSION_LOCK, args("session-id", "s1")), 410,
                "com.microsoft:session-lock-lost");
        assertError(h.call("sq", ManagementProcessor.RENEW_SESSION_LOCK, args()), 400,
                "com.microsoft:argument-error");
    }

    @Test
    void getMessageSessionsWithDateTimeMaxValueListsEverySessionWithMessagesPagedWithAStringArray() {
        sessionQueue("sq");
        h.send("sq", text("a", "s1"), text("b", "s2"), text("c", "s3"));
        Date maxValue = new Date(253_402_300_800_000L); // what the SDKs send for "all sessions"

        ManagementResponse r = h.call("sq", ManagementProcessor.GET_MESSAGE_SESSIONS, args(
                "last-updated-time", maxValue, "skip", 0, "top", 2));
        assertOk(r);
        assertThat(r.body().get("sessions-ids")).isInstanceOf(String[].class);
        assertThat((String[]) r.body().get("sessions-ids")).containsExactly("s1", "s2");
        assertThat(r.body().get("skip")).isInstanceOf(Integer.class).isEqualTo(2);
        assertThat(overTheWire(r.body()).get("sessions-ids")).isInstanceOf(String[].class);

        // the old SDKs' next page: the skip answered and the last id received
        r = h.call("sq", ManagementProcessor.GET_MESSAGE_SESSIONS, args(
                "last-updated-time", maxValue, "skip", 2, "top", 2, "last-session-id", "s2"));
        assertThat((String[]) r.body().get("sessions-ids")).containsExactly("s3");
        r = h.call("sq", ManagementProcessor.GET_MESSAGE_SESSIONS, args("skip", 2, "top", 2));
        assertThat((String[]) r.body().get("sessions-ids")).containsExactly("s3");

        assertNoContent(h.call("sq", ManagementProcessor.GET_MESSAGE_SESSIONS, args("skip", 3, "top", 2)));
        assertNoContent(h.call("sq", ManagementProcessor.GET_MESSAGE_SESSIONS, args(
                "last-updated-time", maxValue, "skip", 0, "top", 2, "last-session-id", "s3")));
    }

    @Test
    void getMessageSessionsWithARealTimeListsTheSessionsWhoseStateChangedSince() {
        sessionQueue("sq");
        h.send("sq", text("a", "s1"), text("b", "s2"));
        Date before = new Date(h.clock.epochMillis());
        // sessions with messages but no state change: none listed for a real time
        assertNoContent(h.call("sq", ManagementProcessor.GET_MESSAGE_SESSIONS, args(
                "last-updated-time", new Date(0), "skip", 0, "top", 10)));
        h.await(h.engine.setSessionState(EntityAddress.parse("sq"), "s2", new byte[] {1}));
        ManagementResponse r = h.call("sq", ManagementProcessor.GET_MESSAGE_SESSIONS, args(
                "last-updated-time", before, "skip", 0, "top", 10));
        assertThat((String[]) r.body().get("sessions-ids")).containsExactly("s2");
        assertNoContent(h.call("sq", ManagementProcessor.GET_MESSAGE_SESSIONS, args(
                "last-updated-time", new Date(h.clock.epochMillis() + 60_000), "skip", 0, "top", 10)));
    }

    // ================================================================================================ peek

    @Test
    void peekReturnsMessagesAsBinariesAnd204AtTheEnd() {
        queue("q");
        h.send("q", text("a"), text("b"), text("c"));
        ManagementResponse r = h.call("q", ManagementProcessor.PEEK_MESSAGE, args(
                "from-sequence-number", 0L, "message-count", UnsignedInteger.valueOf(2)));
        assertOk(r);
        List<?> messages = (List<?>) r.body().get("messages");
        assertThat(messages).hasSize(2);
        for (Object o : messages) {
            assertThat((Map<Object, Object>) o).containsOnlyKeys("message");
            assertThat(((Map<?, ?>) o).get("message")).isInstanceOf(Binary.class);
        }
        Message second = decode((Binary) ((Map<?, ?>) messages.get(1)).get("message"));
        assertThat(bodyText(second)).isEqualTo("b");
        long lastSeq = (Long) second.getMessageAnnotations().getValue().get(Symbol.valueOf("x-opt-sequence-number"));

        r = h.call("q", ManagementProcessor.PEEK_MESSAGE, args(
                "from-sequence-number", lastSeq + 1, "message-count", 10));
        assertThat((List<Object>) r.body().get("messages")).hasSize(1);
        assertNoContent(h.call("q", ManagementProcessor.PEEK_MESSAGE, args(
                "from-sequence-number", lastSeq + 2, "message-count", 10)));

        Map<String, Object> wire = overTheWire(h.call("q", ManagementProcessor.PEEK_MESSAGE, args(
                "from-sequence-number", 0L, "message-count", 10)).body());
        assertThat((List<Object>) wire.get("messages")).hasSize(3);
    }

    @Test
    void peekWithOmitMessageBodyAnswersTheMessagesWithoutTheirBodies() {
        queue("q");
        h.send("q", text("a"));
        ManagementResponse r = h.call("q", ManagementProcessor.PEEK_MESSAGE, args(
                "from-sequence-number", 0L, "message-count", 10, "omit-message-body", true));
        Message peeked = decode((Binary) ((Map<?, ?>) ((List<?>) r.body().get("messages")).get(0)).get("message"));
        assertThat(peeked.getBody()).isNull();
        assertThat(peeked.getMessageAnnotations().getValue()).containsKey(Symbol.valueOf("x-opt-sequence-number"));
        r = h.call("q", ManagementProcessor.PEEK_MESSAGE, args(
                "from-sequence-number", 0L, "message-count", 10, "omit-message-body", false));
        peeked = decode((Binary) ((Map<?, ?>) ((List<?>) r.body().get("messages")).get(0)).get("message"));
        assertThat(bodyText(peeked)).isEqualTo("a");
    }

    @Test
    void sessionOperationsOnAnEntityWithoutSessionsAreRefused() {
        queue("q");
        for (String op : List.of(ManagementProcessor.GET_SESSION_STATE, ManagementProcessor.SET_SESSION_STATE,
                ManagementProcessor.RENEW_SESSION_LOCK)) {
            assertError(h.call("q", op, args("session-id", "s1")), 400, "amqp:not-allowed");
        }
    }

    @Test
    void peekWithinASession() {
        sessionQueue("sq");
        h.send("sq", text("a", "s1"), text("b", "s2"), text("c", "s1"));
        ManagementResponse r = h.call("sq", ManagementProcessor.PEEK_MESSAGE, args(
                "from-sequence-number", 0L, "message-count", 10, "session-id", "s1"));
        assertOk(r);
        List<?> messages = (List<?>) r.body().get("messages");
        assertThat(messages).extracting(o -> bodyText(decode((Binary) ((Map<?, ?>) o).get("message"))))
                .containsExactly("a", "c");
    }

    // ================================================================================================ schedule

    private static Binary encodedScheduledMessage(String body, long scheduledAtMs) {
        Message m = Message.Factory.create();
        m.setMessageId("sched-" + body);
        m.setBody(new Data(new Binary(body.getBytes(StandardCharsets.UTF_8))));
        Map<Symbol, Object> annotations = new LinkedHashMap<>();
        annotations.put(Symbol.valueOf("x-opt-scheduled-enqueue-time"), new Date(scheduledAtMs));
        m.setMessageAnnotations(new MessageAnnotations(annotations));
        m.setApplicationProperties(new ApplicationProperties(new LinkedHashMap<>(Map.of("k", "v"))));
        byte[] buf = new byte[4096];
        int n = m.encode(buf, 0, buf.length);
        return new Binary(buf, 0, n);
    }

    @Test
    void scheduleThenCancelLeavesNothingToPeek() {
        queue("q");
        long at = h.clock.epochMillis() + 3_600_000;
        ManagementResponse r = h.call("q", ManagementProcessor.SCHEDULE_MESSAGE, args("messages", List.of(
                args("message-id", "sched-a", "message", encodedScheduledMessage("a", at)),
                args("message-id", "sched-b", "message", encodedScheduledMessage("b", at)))));
        assertOk(r);
        // Boxed in the body (proton-j cannot size a primitive array inside a map), an AMQP array of long on the
        // wire, a long[] for the client.
        assertThat(r.body().get("sequence-numbers")).isInstanceOf(Long[].class);
        Object wire = overTheWire(r.body()).get("sequence-numbers");
        assertThat(wire).isInstanceOf(long[].class);
        long[] seqs = (long[]) wire;
        assertThat(seqs).hasSize(2).doesNotHaveDuplicates();
        assertThat(seqs).containsExactly((Long) ((Long[]) r.body().get("sequence-numbers"))[0],
                (Long) ((Long[]) r.body().get("sequence-numbers"))[1]);

        List<ReceivedMessage> peeked = h.await(h.engine.peek(EntityAddress.parse("q"), 0, 10, null));
        assertThat(peeked).extracting(ReceivedMessage::state).containsOnly(MessageState.SCHEDULED);
        assertThat(peeked).extracting(ReceivedMessage::scheduledEnqueueTimeMs).containsOnly(at);
        assertThat(peeked.get(0).message().applicationProperties()).containsEntry("k", "v");

        assertOk(h.call("q", ManagementProcessor.CANCEL_SCHEDULED_MESSAGE, args("sequence-numbers", seqs)));
        assertNoContent(h.call("q", ManagementProcessor.PEEK_MESSAGE,
                args("from-sequence-number", 0L, "message-count", 10)));
        // The schedule time passes: nothing appears.
        h.advance(Duration.ofHours(2));
        assertNoContent(h.call("q", ManagementProcessor.PEEK_MESSAGE,
                args("from-sequence-number", 0L, "message-count", 10)));
    }

    @Test
    void scheduledMessageIsEnqueuedOnTime() {
        queue("q");
        long at = h.clock.epochMillis() + 60_000;
        ManagementResponse r = h.call("q", ManagementProcessor.SCHEDULE_MESSAGE, args("messages", List.of(
                args("message-id", "sched-a", "message", encodedScheduledMessage("a", at)))));
        assertOk(r);
        h.advance(Duration.ofMinutes(2));
        MgmtHarness.Sink sink = h.receive("q", ReceiveMode.RECEIVE_AND_DELETE, 1);
        assertThat(sink.messages).hasSize(1);
        assertThat(new String(sink.messages.get(0).message().body(), StandardCharsets.UTF_8)).contains("a");
    }

    @Test
    void scheduleOnATopicAndOnASubscriptionNode() {
        h.await(h.engine.createTopic(TopicProperties.builder("t").build()));
        h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "s").build(), null));
        long at = h.clock.epochMillis() + 60_000;
        ManagementResponse r = h.call("t", ManagementProcessor.SCHEDULE_MESSAGE, args("messages", List.of(
                args("message-id", "sched-a", "message", encodedScheduledMessage("a", at)))));
        assertOk(r);
        Long[] seqs = (Long[]) r.body().get("sequence-numbers");
        assertOk(h.call("t", ManagementProcessor.CANCEL_SCHEDULED_MESSAGE,
                args("sequence-numbers", new Long[] {seqs[0]})));

        assertError(h.call("t/Subscriptions/s", ManagementProcessor.SCHEDULE_MESSAGE, args("messages", List.of(
                args("message-id", "sched-a", "message", encodedScheduledMessage("a", at))))), 400,
                "amqp:not-allowed");
    }

    // ================================================================================================ batch delete

    @Test
    void batchDeleteCountsDeletedMessages() {
        queue("q");
        h.send("q", text("a"), text("b"), text("c"));
        h.advance(Duration.ofSeconds(1));
        ManagementResponse r = h.call("q", ManagementProcessor.BATCH_DELETE_MESSAGES, args(
                "message-count", 2, "enqueued-time-utc", new Date(h.clock.epochMillis())));
        assertOk(r);
        assertThat(r.body().get("message-count")).isInstanceOf(Integer.class).isEqualTo(2);
        r = h.call("q", ManagementProcessor.BATCH_DELETE_MESSAGES, args(
                "message-count", 10L, "enqueued-time-utc", new Date(h.clock.epochMillis())));
        assertThat(r.body().get("message-count")).isEqualTo(1);
        assertNoContent(h.call("q", ManagementProcessor.PEEK_MESSAGE,
                args("from-sequence-number", 0L, "message-count", 10)));
        assertError(h.call("q", ManagementProcessor.BATCH_DELETE_MESSAGES, args("message-count", 10)), 400,
                "com.microsoft:argument-error");
    }

    @Test
    void batchDeleteOfOneSessionDeletesOnlyItsMessages() {
        sessionQueue("sq");
        h.send("sq", text("a", "s1"), text("b", "s2"), text("c", "s1"));
        h.advance(Duration.ofSeconds(1));
        ManagementResponse r = h.call("sq", ManagementProcessor.BATCH_DELETE_MESSAGES, args(
                "message-count", 10, "enqueued-time-utc", new Date(h.clock.epochMillis()), "session-id", "s1"));
        assertOk(r);
        assertThat(r.body().get("message-count")).isEqualTo(2);
        r = h.call("sq", ManagementProcessor.PEEK_MESSAGE, args("from-sequence-number", 0L, "message-count", 10));
        assertThat((List<?>) r.body().get("messages")).hasSize(1);
    }

    // ================================================================================================ rules

    @Test
    void enumerateRulesEncodesDescribedTypes() {
        h.await(h.engine.createTopic(TopicProperties.builder("t").build()));
        h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "s").build(), null));
        h.await(h.engine.addRule("t", "s", new RuleProperties("sql", new RuleProperties.SqlFilter("a = 1"),
                "SET b = 2")));
        h.await(h.engine.addRule("t", "s", new RuleProperties("corr", new RuleProperties.CorrelationFilter(
                "cid", null, null, null, "label", null, null, null, Map.of("p", 5L)), null)));
        h.await(h.engine.addRule("t", "s", new RuleProperties("never", RuleProperties.FalseFilter.INSTANCE, null)));
        long createdAt = h.engine.topic("t").subscription("s").createdAtMs();

        ManagementResponse r = h.call("t/Subscriptions/s", ManagementProcessor.ENUMERATE_RULES, args(
                "top", Integer.MAX_VALUE, "skip", 0));
        assertOk(r);
        List<?> rules = (List<?>) r.body().get("rules");
        assertThat(rules).hasSize(4);
        DescribedType def = (DescribedType) ((Map<?, ?>) rules.get(0)).get("rule-description");
        assertThat(def.getDescriptor()).isEqualTo(UnsignedLong.valueOf(0x0000013700000004L));
        List<?> fields = (List<?>) def.getDescribed();
        assertThat(fields).hasSize(4);
        assertThat(((DescribedType) fields.get(0)).getDescriptor()).isEqualTo(UnsignedLong.valueOf(0x1370000007L));
        assertThat(((DescribedType) fields.get(1)).getDescriptor()).isEqualTo(UnsignedLong.valueOf(0x13700000005L));
        assertThat(fields.get(2)).isEqualTo("$Default");
        assertThat(fields.get(3)).isEqualTo(new Date(createdAt));

        // Over the wire the described types keep their numeric descriptors and list shapes.
        Map<String, Object> wire = overTheWire(r.body());
        List<?> wireRules = (List<?>) wire.get("rules");
        DescribedType sql = (DescribedType) ((Map<?, ?>) wireRules.get(1)).get("rule-description");
        assertThat(sql.getDescriptor()).isEqualTo(UnsignedLong.valueOf(1335734829060L));
        List<?> sqlFields = (List<?>) sql.getDescribed();
        DescribedType sqlFilter = (DescribedType) sqlFields.get(0);
        assertThat(sqlFilter.getDescriptor()).isEqualTo(UnsignedLong.valueOf(83483426822L));
        assertThat((List<Object>) sqlFilter.getDescribed()).containsExactly("a = 1", 20);
        DescribedType sqlAction = (DescribedType) sqlFields.get(1);
        assertThat(sqlAction.getDescriptor()).isEqualTo(UnsignedLong.valueOf(1335734829062L));
        assertThat((List<Object>) sqlAction.getDescribed()).containsExactly("SET b = 2", 20);
        assertThat(sqlFields.get(2)).isEqualTo("sql");
        assertThat(sqlFields.get(3)).isInstanceOf(Date.class);

        DescribedType corr = (DescribedType) ((List<?>) ((DescribedType) ((Map<?, ?>) wireRules.get(2))
                .get("rule-description")).getDescribed()).get(0);
        assertThat(corr.getDescriptor()).isEqualTo(UnsignedLong.valueOf(83483426825L));
        List<?> corrFields = (List<?>) corr.getDescribed();
        assertThat(corrFields).hasSize(9);
        assertThat(corrFields.get(0)).isEqualTo("cid");
        assertThat(corrFields.get(4)).isEqualTo("label");
        assertThat(corrFields.get(1)).isNull();
        assertThat((Map<Object, Object>) corrFields.get(8)).containsEntry("p", 5L);

        DescribedType never = (DescribedType) ((List<?>) ((DescribedType) ((Map<?, ?>) wireRules.get(3))
                .get("rule-description")).getDescribed()).get(0);
        assertThat(never.getDescriptor()).isEqualTo(UnsignedLong.valueOf(83483426824L));
        assertThat((List<Object>) never.getDescribed()).isEmpty();

        // Paging, 204 past the end, and the wrong kind of node.
        r = h.call("t/Subscriptions/s", ManagementProcessor.ENUMERATE_RULES, args("top", 1, "skip", 1));
        assertThat((List<Object>) r.body().get("rules")).hasSize(1);
        assertNoContent(h.call("t/Subscriptions/s", ManagementProcessor.ENUMERATE_RULES,
                args("top", 10, "skip", 4)));
        assertError(h.call("t", ManagementProcessor.ENUMERATE_RULES, args("top", 10, "skip", 0)), 400,
                "amqp:not-allowed");
        assertError(h.call("t/Subscriptions/nope", ManagementProcessor.ENUMERATE_RULES,
                args("top", 10, "skip", 0)), 404, "amqp:not-found");
    }
}
