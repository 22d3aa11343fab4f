package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.Limits;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.DeadLetterReasons;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Entities created, changed and deleted at run time; validation; sessions and status rules. */
class EntityLifecycleTest {

    // ------------------------------------------------------------------------------------------------ helpers

    private static List<ReceivedMessage> peekAll(EngineHarness h, String address) {
        return h.await(h.engine.peek(EntityAddress.parse(address), 0, 1000, null));
    }

    private static void assertFails(ThrowingCallable call, ErrorKind kind) {
        assertThatThrownBy(call).isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).as(e.getMessage()).isEqualTo(kind));
    }

    private static void assertNotFound(ThrowingCallable call, String name) {
        assertThatThrownBy(call).isInstanceOfSatisfying(BrokerException.class, e -> {
            assertThat(e.kind()).isEqualTo(ErrorKind.ENTITY_NOT_FOUND);
            assertThat(e.description()).isEqualTo("The messaging entity '" + name + "' could not be found.");
        });
    }

    private static SubscriptionProperties sub(String topic, String name) {
        return SubscriptionProperties.builder(topic, name).build();
    }

    // -------------------------------------------------------------------------------------------- create/update/delete

    @Test
    void queuesAreCreatedUpdatedAndDeletedAtRunTime() {
        try (EngineHarness h = new EngineHarness()) {
            QueueEntity q = h.queue(QueueProperties.builder("orders").lockDuration(Duration.ofSeconds(30)).build());
            assertThat(h.engine.queue("orders")).isSameAs(q);
            assertThat(h.engine.queue("ORDERS")).as("names are case-insensitive").isSameAs(q);
            assertThat(h.engine.queues()).extracting(x -> x.properties().name()).containsExactly("orders");

            long t0 = h.clock.epochMillis();
            h.send("orders", text("a"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("orders", ReceiveMode.PEEK_LOCK, sink, 1);
            assertThat(sink.take().get(0).lockedUntilMs()).isEqualTo(t0 + 30_000);
            r.close();

            // an update takes effect on the running queue
            h.advance(Duration.ofSeconds(30)); // the first lock lapses
            QueueEntity updated = h.await(h.engine.updateQueue(q.properties().toBuilder()
                    .lockDuration(Duration.ofMinutes(2)).maxDeliveryCount(3).build()));
            assertThat(updated.properties().lockDuration()).isEqualTo(Duration.ofMinutes(2));
            assertThat(updated.properties().maxDeliveryCount()).isEqualTo(3);
            assertThat(h.engine.queue("orders").properties().lockDuration()).isEqualTo(Duration.ofMinutes(2));
            long t1 = h.clock.epochMillis();
            EngineHarness.Sink sink2 = h.sink();
            h.receiver("orders", ReceiveMode.PEEK_LOCK, sink2, 1);
            assertThat(sink2.take().get(0).lockedUntilMs()).isEqualTo(t1 + 120_000);

            h.await(h.engine.deleteQueue("orders"));
            assertThat(h.engine.queue("orders")).isNull();
            assertThat(h.engine.queues()).isEmpty();
            assertNotFound(() -> h.send("orders", text("b")), "orders");
            assertThat(sink2.closedWith).isNotNull();
            assertThat(sink2.closedWith.kind()).isEqualTo(ErrorKind.ENTITY_NOT_FOUND);
        }
    }

    @Test
    void topicsAndSubscriptionsAreCreatedUpdatedAndDeletedAtRunTime() {
        try (EngineHarness h = new EngineHarness()) {
            TopicEntity t = h.topic(TopicProperties.builder("events").build(), "a");
            SubscriptionEntity b = h.await(h.engine.createSubscription(sub("events", "b"), null));
            assertThat(b.rules()).extracting(RuleProperties::name).containsExactly(RuleProperties.DEFAULT_RULE_NAME);
            assertThat(t.subscriptions()).extracting(s -> s.properties().name()).containsExactlyInAnyOrder("a", "b");

            h.send("events", text("1"));
            assertThat(peekAll(h, "events/Subscriptions/a")).hasSize(1);
            assertThat(peekAll(h, "events/Subscriptions/b")).hasSize(1);

            // update a subscription: now its copies are dead-lettered on expiry and expire after 10 s
            h.await(h.engine.updateSubscription(b.properties().toBuilder()
                    .defaultMessageTimeToLive(Duration.ofSeconds(10)).deadLetteringOnMessageExpiration(true).build()));
            assertThat(h.engine.topic("events").subscription("b").properties().deadLetteringOnMessageExpiration())
                    .isTrue();
            h.send("events", text("2"));
            h.advance(Duration.ofSeconds(10));
            assertThat(peekAll(h, "events/Subscriptions/b")).extracting(EngineHarness::text).containsExactly("1");
            assertThat(peekAll(h, "events/Subscriptions/b/$DeadLetterQueue")).extracting(EngineHarness::text)
                    .containsExactly("2");

            // update the topic
            h.await(h.engine.updateTopic(t.properties().toBuilder().userMetadata("meta").build()));
            assertThat(h.engine.topic("events").properties().userMetadata()).isEqualTo("meta");

            // delete one subscription
            h.await(h.engine.deleteSubscription("events", "a"));
            assertThat(h.engine.topic("events").subscription("a")).isNull();
            assertNotFound(() -> peekAll(h, "events/Subscriptions/a"), "events/Subscriptions/a");
            h.send("events", text("3"));
            assertThat(peekAll(h, "events/Subscriptions/b")).extracting(EngineHarness::text).containsExactly("1", "3");

            // delete the topic with its subscriptions
            h.await(h.engine.deleteTopic("events"));
            assertThat(h.engine.topic("events")).isNull();
            assertNotFound(() -> h.send("events", text("4")), "events");
            assertNotFound(() -> peekAll(h, "events/Subscriptions/b"), "events/Subscriptions/b");
        }
    }

    @Test
    void updateCannotChangePartitioningOrSessions() {
        try (EngineHarness h = new EngineHarness()) {
            QueueEntity q = h.queue("q");
            assertFails(() -> h.await(h.engine.updateQueue(q.properties().toBuilder().enablePartitioning(true)
                    .build())), ErrorKind.INVALID_OPERATION);
            assertFails(() -> h.await(h.engine.updateQueue(q.properties().toBuilder().requiresSession(true)
                    .build())), ErrorKind.INVALID_OPERATION);
            TopicEntity t = h.topic(TopicProperties.builder("t").build(), "s");
            assertFails(() -> h.await(h.engine.updateTopic(t.properties().toBuilder().enablePartitioning(true)
                    .build())), ErrorKind.INVALID_OPERATION);
            assertFails(() -> h.await(h.engine.updateSubscription(sub("t", "s").toBuilder().requiresSession(true)
                    .build())), ErrorKind.INVALID_OPERATION);
            assertThat(h.engine.queue("q").properties()).isEqualTo(q.properties());
        }
    }

    @Test
    void duplicatesFailWithEntityAlreadyExists() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.topic(TopicProperties.builder("t").build(), "s");
            assertFails(() -> h.queue("q"), ErrorKind.ENTITY_ALREADY_EXISTS);
            assertFails(() -> h.queue("Q"), ErrorKind.ENTITY_ALREADY_EXISTS);
            // queues and topics share one namespace
            assertFails(() -> h.queue("t"), ErrorKind.ENTITY_ALREADY_EXISTS);
            assertFails(() -> h.await(h.engine.createTopic(TopicProperties.builder("q").build())),
                    ErrorKind.ENTITY_ALREADY_EXISTS);
            assertFails(() -> h.await(h.engine.createTopic(TopicProperties.builder("T").build())),
                    ErrorKind.ENTITY_ALREADY_EXISTS);
            assertFails(() -> h.await(h.engine.createSubscription(sub("t", "s"), null)),
                    ErrorKind.ENTITY_ALREADY_EXISTS);
            assertFails(() -> h.await(h.engine.createSubscription(sub("t", "S"), null)),
                    ErrorKind.ENTITY_ALREADY_EXISTS);
            // the original entities are untouched
            h.send("q", text("a"));
            assertThat(peekAll(h, "q")).hasSize(1);
            assertThat(h.engine.topic("t").subscriptions()).hasSize(1);
        }
    }

    @Test
    void missingEntitiesFailWithEntityNotFound() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "s");
            assertNotFound(() -> h.send("nope", text("a")), "nope");
            assertNotFound(() -> h.await(h.engine.schedule("nope", List.of(Message.builder()
                    .scheduledEnqueueTimeMs(h.clock.epochMillis() + 1000).build()))), "nope");
            assertNotFound(() -> h.await(h.engine.deleteQueue("nope")), "nope");
            assertNotFound(() -> h.await(h.engine.deleteTopic("nope")), "nope");
            assertNotFound(() -> h.await(h.engine.updateQueue(QueueProperties.builder("nope").build())), "nope");
            assertNotFound(() -> h.await(h.engine.updateTopic(TopicProperties.builder("nope").build())), "nope");
            assertNotFound(() -> h.await(h.engine.counts("nope")), "nope");
            assertNotFound(() -> peekAll(h, "nope"), "nope");
            assertNotFound(() -> h.engine.createReceiver(EntityAddress.parse("nope"), ReceiveMode.PEEK_LOCK,
                    h.sink()), "nope");
            assertNotFound(() -> h.await(h.engine.createSubscription(sub("nope", "s"), null)), "nope");
            assertNotFound(() -> h.await(h.engine.deleteSubscription("t", "missing")),
                    "t/Subscriptions/missing");
            assertNotFound(() -> h.await(h.engine.updateSubscription(sub("t", "missing"))),
                    "t/Subscriptions/missing");
            assertNotFound(() -> h.await(h.engine.counts("t/Subscriptions/missing")), "t/Subscriptions/missing");
            assertNotFound(() -> h.engine.createReceiver(EntityAddress.parse("t/Subscriptions/missing"),
                    ReceiveMode.PEEK_LOCK, h.sink()), "t/Subscriptions/missing");
        }
    }

    // ------------------------------------------------------------------------------------------------ validation

    @Test
    void lockDurationMustBeBetweenFiveSecondsAndFiveMinutes() {
        assertThatCode(() -> QueueProperties.builder("q").lockDuration(Duration.ofSeconds(5)).build())
                .doesNotThrowAnyException();
        assertThatCode(() -> QueueProperties.builder("q").lockDuration(Duration.ofMinutes(5)).build())
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> QueueProperties.builder("q").lockDuration(Duration.ofMillis(4_999)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LockDuration");
        assertThatThrownBy(() -> QueueProperties.builder("q").lockDuration(Duration.ofMinutes(5).plusMillis(1))
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LockDuration");
        assertThatThrownBy(() -> SubscriptionProperties.builder("t", "s").lockDuration(Duration.ofSeconds(4))
                .build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SubscriptionProperties.builder("t", "s").lockDuration(Duration.ofMinutes(6))
                .build()).isInstanceOf(IllegalArgumentException.class);
        assertThat(QueueProperties.builder("q").build().lockDuration()).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void maxDeliveryCountMustBeAtLeastOne() {
        assertThatThrownBy(() -> QueueProperties.builder("q").maxDeliveryCount(0).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MaxDeliveryCount");
        assertThatThrownBy(() -> SubscriptionProperties.builder("t", "s").maxDeliveryCount(0).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(QueueProperties.builder("q").maxDeliveryCount(1).build().maxDeliveryCount()).isEqualTo(1);
        // large values that frameworks use (NServiceBus: int.MaxValue) are accepted
        assertThat(QueueProperties.builder("q").maxDeliveryCount(Integer.MAX_VALUE).build().maxDeliveryCount())
                .isEqualTo(Integer.MAX_VALUE);
        assertThat(QueueProperties.builder("q").build().maxDeliveryCount()).isEqualTo(10);
    }

    @Test
    void timeToLiveMustBeAtLeastOneSecondAndTheMaximumIsAccepted() {
        assertThatThrownBy(() -> QueueProperties.builder("q").defaultMessageTimeToLive(Duration.ofMillis(999))
                .build()).isInstanceOf(IllegalArgumentException.class);
        assertThat(QueueProperties.builder("q").defaultMessageTimeToLive(Limits.MAX_DURATION).build()
                .defaultMessageTimeToLive()).isEqualTo(Limits.MAX_DURATION);
        assertThatThrownBy(() -> TopicProperties.builder("t").defaultMessageTimeToLive(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a~b", "a.b", "a-b", "a_b", "seg1/seg2", "MassTransit~Fault", "a/b.c/d-e_f~g",
            "x"})
    void entityPathsWithAzureCharactersAreAccepted(String name) {
        try (EngineHarness h = new EngineHarness()) {
            assertThatCode(() -> QueueProperties.builder(name).build()).doesNotThrowAnyException();
            assertThatCode(() -> TopicProperties.builder(name).build()).doesNotThrowAnyException();
            h.queue(name);
            h.send(name, text("hello"));
            EngineHarness.Sink sink = h.sink();
            h.receiver(name, ReceiveMode.RECEIVE_AND_DELETE, sink, 1);
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("hello");

            String topic = name + "-topic";
            h.topic(TopicProperties.builder(topic).build(), "sub~1.a-b_c");
            h.send(topic, text("t"));
            assertThat(peekAll(h, topic + "/Subscriptions/sub~1.a-b_c")).hasSize(1);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"a@b", "a?b", "a#b", "a*b", "/lead", "trail/", "a//b", "with space", "$reserved",
            "a/Subscriptions/b", ""})
    void entityPathsWithReservedCharactersAreRejected(String name) {
        assertThatThrownBy(() -> QueueProperties.builder(name).build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TopicProperties.builder(name).build()).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void pathLengthLimitsApply() {
        assertThatCode(() -> QueueProperties.builder("q".repeat(260)).build()).doesNotThrowAnyException();
        assertThatThrownBy(() -> QueueProperties.builder("q".repeat(261)).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatCode(() -> SubscriptionProperties.builder("t", "s".repeat(50)).build()).doesNotThrowAnyException();
        assertThatThrownBy(() -> SubscriptionProperties.builder("t", "s".repeat(51)).build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a/b", "a@b", "a?b", "a#b", "a*b", "a\\b", "$sub"})
    void subscriptionNamesAreSingleSegmentsWithoutReservedCharacters(String name) {
        assertThatThrownBy(() -> SubscriptionProperties.builder("t", name).build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void subscriptionNamesWithAzureCharactersAreAccepted() {
        for (String name : List.of("s~1", "s.1", "s-1", "s_1")) {
            assertThatCode(() -> SubscriptionProperties.builder("t/with/segments", name).build())
                    .doesNotThrowAnyException();
        }
    }

    // ------------------------------------------------------------------------------------------------ persistence

    @Test
    void entitiesSurviveARestartWithTheirProperties() {
        try (EngineHarness h = new EngineHarness()) {
            QueueProperties qp = QueueProperties.builder("app/orders~v1").lockDuration(Duration.ofSeconds(45))
                    .maxDeliveryCount(7).defaultMessageTimeToLive(Duration.ofHours(6))
                    .deadLetteringOnMessageExpiration(true).requiresDuplicateDetection(true)
                    .duplicateDetectionHistoryTimeWindow(Duration.ofMinutes(2)).maxSizeInMegabytes(2048)
                    .status(EntityStatus.RECEIVE_DISABLED).autoDeleteOnIdle(Duration.ofHours(1))
                    .enableBatchedOperations(false).userMetadata("owner=team-a").maxMessageSizeInKilobytes(1024)
                    .build();
            QueueProperties sp = QueueProperties.builder("sessions").requiresSession(true)
                    .enablePartitioning(true).build();
            h.queue(qp);
            h.queue(sp);
            h.queue("forward-target");
            QueueProperties fwd = QueueProperties.builder("forwarder").forwardTo("forward-target")
                    .forwardDeadLetteredMessagesTo("forward-target").build();
            h.queue(fwd);
            TopicProperties tp = TopicProperties.builder("events").defaultMessageTimeToLive(Duration.ofDays(2))
                    .enablePartitioning(true).supportOrdering(false).userMetadata("t").build();
            h.topic(tp);
            SubscriptionProperties s1 = SubscriptionProperties.builder("events", "audit")
                    .lockDuration(Duration.ofSeconds(20)).maxDeliveryCount(2).requiresSession(true)
                    .defaultMessageTimeToLive(Duration.ofHours(1)).deadLetteringOnMessageExpiration(true)
                    .deadLetteringOnFilterEvaluationExceptions(false).status(EntityStatus.SEND_DISABLED)
                    .userMetadata("s").build();
            RuleProperties rule = new RuleProperties("only-red", new RuleProperties.CorrelationFilter(null, null,
                    null, null, "red", null, null, null, Map.of("color", "red")), null);
            RuleProperties sql = new RuleProperties("sql", new RuleProperties.SqlFilter("amount > 10"),
                    "SET x = 1");
            h.await(h.engine.createSubscription(s1, List.of(rule, sql)));
            h.await(h.engine.createSubscription(sub("events", "all"), null));
            long qCreated = h.engine.queue(qp.name()).createdAtMs();

            h.clock.advance(Duration.ofMinutes(1));
            h.crashAndRestart();

            assertThat(h.engine.queue("app/orders~v1").properties()).isEqualTo(qp);
            assertThat(h.engine.queue("app/orders~v1").createdAtMs()).isEqualTo(qCreated);
            assertThat(h.engine.queue("sessions").properties()).isEqualTo(sp);
            assertThat(h.engine.queue("forwarder").properties()).isEqualTo(fwd);
            assertThat(h.engine.topic("events").properties()).isEqualTo(tp);
            SubscriptionEntity audit = h.engine.topic("events").subscription("audit");
            assertThat(audit.properties()).isEqualTo(s1);
            assertThat(audit.properties().lockDuration()).isEqualTo(Duration.ofSeconds(20));
            assertThat(audit.properties().maxDeliveryCount()).isEqualTo(2);
            assertThat(audit.properties().requiresSession()).isTrue();
            assertThat(audit.properties().status()).isEqualTo(EntityStatus.SEND_DISABLED);
            assertThat(audit.properties().deadLetteringOnFilterEvaluationExceptions()).isFalse();
            assertThat(audit.properties().userMetadata()).isEqualTo("s");
            assertThat(audit.rules()).containsExactly(rule, sql);
            assertThat(h.engine.topic("events").subscription("all").rules())
                    .containsExactly(RuleProperties.defaultRule());
            assertThat(h.engine.queues()).hasSize(4);
            assertThat(h.engine.topics()).hasSize(1);

            // updates and deletions survive too
            h.await(h.engine.updateQueue(qp.toBuilder().status(EntityStatus.ACTIVE).maxDeliveryCount(9).build()));
            h.await(h.engine.deleteSubscription("events", "all"));
            h.await(h.engine.deleteQueue("sessions"));
            h.crashAndRestart();
            assertThat(h.engine.queue("app/orders~v1").properties().maxDeliveryCount()).isEqualTo(9);
            assertThat(h.engine.queue("app/orders~v1").properties().status()).isEqualTo(EntityStatus.ACTIVE);
            assertThat(h.engine.queue("sessions")).isNull();
            assertThat(h.engine.topic("events").subscriptions()).extracting(s -> s.properties().name())
                    .containsExactly("audit");
            // the restored settings are in force: the queue's lock duration applies to deliveries
            long now = h.clock.epochMillis();
            h.send("app/orders~v1", text("x"));
            EngineHarness.Sink sink = h.sink();
            h.receiver("app/orders~v1", ReceiveMode.PEEK_LOCK, sink, 1);
            assertThat(sink.take().get(0).lockedUntilMs()).isEqualTo(now + 45_000);
        }
    }

    @Test
    void deletingAnEntityDropsItsMessagesAndARecreatedOneStartsEmptyAtOne() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.send("q", text("a"), text("b"), text("c"));
            h.await(h.engine.schedule("q", List.of(Message.builder()
                    .scheduledEnqueueTimeMs(h.clock.epochMillis() + 10_000).build())));
            h.await(h.engine.deleteQueue("q"));

            h.queue("q");
            assertThat(peekAll(h, "q")).isEmpty();
            assertThat(h.await(h.engine.counts("q"))).isEqualTo(RuntimeCounts.ZERO);
            h.send("q", text("new"));
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L);

            // the old entity's scheduled message does not fire into the new one
            h.advance(Duration.ofSeconds(30));
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("new");

            // nothing of the old entity comes back after a restart
            h.crashAndRestart();
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("new");
            h.send("q", text("next"));
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L, 2L);
        }
    }

    @Test
    void deletingAndRecreatingTopicsAndSubscriptionsStartsEmpty() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "s1", "s2");
            h.send("t", text("a"), text("b"));
            h.await(h.engine.deleteSubscription("t", "s1"));
            h.await(h.engine.createSubscription(sub("t", "s1"), null));
            assertThat(peekAll(h, "t/Subscriptions/s1")).isEmpty();
            assertThat(peekAll(h, "t/Subscriptions/s2")).hasSize(2);
            // the topic's numbering continues
            h.send("t", text("c"));
            assertThat(peekAll(h, "t/Subscriptions/s1")).extracting(ReceivedMessage::sequenceNumber)
                    .containsExactly(3L);

            h.await(h.engine.deleteTopic("t"));
            h.topic(TopicProperties.builder("t").build(), "s1");
            assertThat(peekAll(h, "t/Subscriptions/s1")).isEmpty();
            h.send("t", text("d"));
            assertThat(peekAll(h, "t/Subscriptions/s1")).extracting(ReceivedMessage::sequenceNumber)
                    .containsExactly(1L);

            h.crashAndRestart();
            assertThat(peekAll(h, "t/Subscriptions/s1")).extracting(EngineHarness::text).containsExactly("d");
            assertThat(h.engine.topic("t").subscriptions()).hasSize(1);
        }
    }

    @Test
    void aQueueCanReplaceADeletedTopicOfTheSameName() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("x").build(), "s");
            h.send("x", text("topic-message"));
            h.await(h.engine.deleteTopic("x"));
            h.queue("x");
            h.send("x", text("queue-message"));
            assertThat(peekAll(h, "x")).extracting(ReceivedMessage::sequenceNumber).containsExactly(1L);
            h.crashAndRestart();
            assertThat(h.engine.topic("x")).isNull();
            assertThat(peekAll(h, "x")).extracting(EngineHarness::text).containsExactly("queue-message");
        }
    }

    // ------------------------------------------------------------------------------------------------ sessions

    @Test
    void sessionEnabledQueueRejectsSessionlessSendsAndNonSessionReceivers() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("sq").requiresSession(true).build());
            assertFails(() -> h.send("sq", text("no-session")), ErrorKind.INVALID_OPERATION);
            // one session-less message fails the whole batch
            assertFails(() -> h.send("sq", text("ok", "s1"), text("no-session")), ErrorKind.INVALID_OPERATION);
            assertThat(peekAll(h, "sq")).isEmpty();

            assertFails(() -> h.engine.createReceiver(EntityAddress.parse("sq"), ReceiveMode.PEEK_LOCK, h.sink()),
                    ErrorKind.INVALID_OPERATION);

            h.send("sq", text("ok", "s1"));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.await(h.engine.acceptSession(EntityAddress.parse("sq"), "s1", ReceiveMode.PEEK_LOCK,
                    1000, sink));
            r.addCredit(1);
            h.engine.runUntilIdle();
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("ok");
            // the dead-letter queue of a session-enabled queue is read without sessions
            assertThatCode(() -> h.engine.createReceiver(EntityAddress.parse("sq/$DeadLetterQueue"),
                    ReceiveMode.PEEK_LOCK, h.sink())).doesNotThrowAnyException();
        }
    }

    @Test
    void partitionedSessionQueueRejectsSessionlessSends() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(QueueProperties.builder("psq").requiresSession(true).enablePartitioning(true).build());
            for (int i = 0; i < 3; i++) {
                assertFails(() -> h.send("psq", text("no-session")), ErrorKind.INVALID_OPERATION);
            }
            assertThat(h.await(h.engine.counts("psq")).activeMessageCount()).isZero();
        }
    }

    @Test
    void nonSessionEntitiesRejectAcceptSession() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.topic(TopicProperties.builder("t").build(), "s");
            h.send("q", text("a", "s1"));
            assertFails(() -> h.await(h.engine.acceptSession(EntityAddress.parse("q"), "s1", ReceiveMode.PEEK_LOCK,
                    1000, h.sink())), ErrorKind.INVALID_OPERATION);
            assertFails(() -> h.await(h.engine.acceptSession(EntityAddress.parse("q"), null, ReceiveMode.PEEK_LOCK,
                    1000, h.sink())), ErrorKind.INVALID_OPERATION);
            assertFails(() -> h.await(h.engine.acceptSession(EntityAddress.parse("t/Subscriptions/s"), "s1",
                    ReceiveMode.PEEK_LOCK, 1000, h.sink())), ErrorKind.INVALID_OPERATION);
            // the message was not touched
            assertThat(peekAll(h, "q")).extracting(ReceivedMessage::deliveryCount).containsExactly(0);
        }
    }

    @Test
    void sessionSubscriptionDeadLettersSessionlessCopies() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "plain");
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "sessions")
                    .requiresSession(true).build(), null));
            // the topic itself accepts session-less messages
            h.send("t", text("no-session"), text("with-session", "s1"));

            assertThat(peekAll(h, "t/Subscriptions/plain")).extracting(EngineHarness::text)
                    .containsExactly("no-session", "with-session");
            assertThat(peekAll(h, "t/Subscriptions/sessions")).extracting(EngineHarness::text)
                    .containsExactly("with-session");
            List<ReceivedMessage> dlq = peekAll(h, "t/Subscriptions/sessions/$DeadLetterQueue");
            assertThat(dlq).extracting(EngineHarness::text).containsExactly("no-session");
            assertThat(dlq.get(0).sequenceNumber()).isEqualTo(1L);
            assertThat(dlq.get(0).message().applicationProperties())
                    .containsEntry(DeadLetterReasons.DEAD_LETTER_REASON, "Session ID is null.");
            RuntimeCounts c = h.await(h.engine.counts("t/Subscriptions/sessions"));
            assertThat(c.activeMessageCount()).isEqualTo(1L);
            assertThat(c.deadLetterMessageCount()).isEqualTo(1L);

            h.crashAndRestart();
            List<ReceivedMessage> after = peekAll(h, "t/Subscriptions/sessions/$DeadLetterQueue");
            assertThat(after).extracting(EngineHarness::text).containsExactly("no-session");
            assertThat(after.get(0).message().applicationProperties())
                    .containsEntry(DeadLetterReasons.DEAD_LETTER_REASON, "Session ID is null.");
            assertThat(peekAll(h, "t/Subscriptions/sessions")).extracting(EngineHarness::text)
                    .containsExactly("with-session");
        }
    }

    // ------------------------------------------------------------------------------------------------ status

    @Test
    void sendDisabledRejectsSendsButAllowsReceives() {
        try (EngineHarness h = new EngineHarness()) {
            QueueEntity q = h.queue("q");
            h.send("q", text("before"));
            h.await(h.engine.updateQueue(q.properties().toBuilder().status(EntityStatus.SEND_DISABLED).build()));

            assertThatThrownBy(() -> h.send("q", text("x"))).isInstanceOfSatisfying(BrokerException.class, e -> {
                assertThat(e.kind()).isEqualTo(ErrorKind.ENTITY_DISABLED);
                assertThat(e.description()).contains("SendDisabled");
            });
            assertFails(() -> h.await(h.engine.schedule("q", List.of(Message.builder()
                    .scheduledEnqueueTimeMs(h.clock.epochMillis() + 1000).build()))), ErrorKind.ENTITY_DISABLED);

            EngineHarness.Sink sink = h.sink();
            h.receiver("q", ReceiveMode.RECEIVE_AND_DELETE, sink, 10);
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("before");

            // the status survives a restart, and re-enabling restores sends
            h.crashAndRestart();
            assertFails(() -> h.send("q", text("x")), ErrorKind.ENTITY_DISABLED);
            h.await(h.engine.updateQueue(h.engine.queue("q").properties().toBuilder().status(EntityStatus.ACTIVE)
                    .build()));
            h.send("q", text("after"));
            assertThat(peekAll(h, "q")).extracting(EngineHarness::text).containsExactly("after");
        }
    }

    @Test
    void sendDisabledTopicRejectsSendsAndDisabledStatusesBlockReceivers() {
        try (EngineHarness h = new EngineHarness()) {
            h.await(h.engine.createTopic(TopicProperties.builder("t").status(EntityStatus.SEND_DISABLED).build()));
            h.await(h.engine.createSubscription(sub("t", "s"), null));
            assertFails(() -> h.send("t", text("x")), ErrorKind.ENTITY_DISABLED);

            h.queue(QueueProperties.builder("rd").status(EntityStatus.RECEIVE_DISABLED).build());
            h.send("rd", text("ok")); // sends are allowed
            assertFails(() -> h.engine.createReceiver(EntityAddress.parse("rd"), ReceiveMode.PEEK_LOCK, h.sink()),
                    ErrorKind.ENTITY_DISABLED);

            h.queue(QueueProperties.builder("off").status(EntityStatus.DISABLED).build());
            assertFails(() -> h.send("off", text("x")), ErrorKind.ENTITY_DISABLED);
            assertFails(() -> h.engine.createReceiver(EntityAddress.parse("off"), ReceiveMode.PEEK_LOCK, h.sink()),
                    ErrorKind.ENTITY_DISABLED);
        }
    }
}
