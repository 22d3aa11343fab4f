package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.filter.RuleSet;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** SQL filters and actions applied when a topic message fans out to its subscriptions. */
class RulesFanInTest {

    static Message msg(String body, Map<String, Object> props) {
        return EngineHarness.text(body).toBuilder().applicationProperties(props).build();
    }

    static RuleProperties sql(String name, String filter, String action) {
        return new RuleProperties(name, new RuleProperties.SqlFilter(filter), action);
    }

    static void subscription(EngineHarness h, String sub, List<RuleProperties> rules) {
        subscription(h, SubscriptionProperties.builder("t", sub).build(), rules);
    }

    static void subscription(EngineHarness h, SubscriptionProperties p, List<RuleProperties> rules) {
        h.await(h.engine.createSubscription(p, rules));
    }

    static List<ReceivedMessage> peek(EngineHarness h, String address) {
        return h.await(h.engine.peek(EntityAddress.parse(address), 0, 100, null));
    }

    static List<String> bodies(List<ReceivedMessage> ms) {
        return ms.stream().map(EngineHarness::text).toList();
    }

    @Test
    void sqlFiltersRouteMessagesBySystemAndUserProperties() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build());
            subscription(h, "red", List.of(sql("red", "color = 'red' AND quantity > 5", null)));
            subscription(h, "labelled", List.of(sql("lbl", "sys.Label LIKE 'order-%'", null)));
            subscription(h, "all", null);
            h.send("t", msg("a", Map.of("color", "red", "quantity", 10)),
                    msg("b", Map.of("color", "red", "quantity", 1)),
                    msg("c", Map.of("color", "blue")).toBuilder().subject("order-1").build(),
                    msg("d", Map.of()));
            assertThat(bodies(peek(h, "t/Subscriptions/red"))).containsExactly("a");
            assertThat(bodies(peek(h, "t/Subscriptions/labelled"))).containsExactly("c");
            assertThat(bodies(peek(h, "t/Subscriptions/all"))).containsExactly("a", "b", "c", "d");
        }
    }

    @Test
    void matchingRulesWithoutActionGiveOneCopyAndEachRuleWithAnActionItsOwn() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build());
            subscription(h, "s", List.of(RuleProperties.defaultRule(), sql("also", "1=1", null),
                    sql("tagA", "color = 'red'", "SET tag = 'A'; SET sys.Label = 'from-' + color"),
                    sql("tagB", "color = 'red'", "SET tag = 'B'; REMOVE color"),
                    sql("never", "color = 'blue'", "SET tag = 'X'")));
            h.send("t", msg("m", Map.of("color", "red")));
            List<ReceivedMessage> copies = peek(h, "t/Subscriptions/s");
            assertThat(copies).hasSize(3);
            // each copy in one subscription has its own sequence number (deferral and lookups need them distinct)
            assertThat(copies).extracting(ReceivedMessage::sequenceNumber).doesNotHaveDuplicates();
            ReceivedMessage plain = copies.stream().filter(c -> !c.message().applicationProperties()
                    .containsKey("tag")).findFirst().orElseThrow();
            assertThat(plain.message().applicationProperties()).isEqualTo(Map.of("color", "red"));
            assertThat(plain.sequenceNumber()).isEqualTo(copies.get(0).sequenceNumber());
            ReceivedMessage a = byTag(copies, "A");
            assertThat(a.message().applicationProperties()).containsEntry(RuleSet.RULE_NAME_PROPERTY, "tagA")
                    .containsEntry("color", "red");
            assertThat(a.message().subject()).isEqualTo("from-red");
            ReceivedMessage b = byTag(copies, "B");
            assertThat(b.message().applicationProperties()).containsEntry(RuleSet.RULE_NAME_PROPERTY, "tagB")
                    .doesNotContainKey("color");
            assertThat(EngineHarness.text(b)).isEqualTo("m");
            assertThat(h.await(h.engine.counts("t/Subscriptions/s")).activeMessageCount()).isEqualTo(3);
        }
    }

    @Test
    void actionCopiesAreReceivedAndCompletedIndependently() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build());
            subscription(h, "s", List.of(RuleProperties.defaultRule(), sql("act", "1=1", "SET n = 1")));
            subscription(h, "other", null);
            h.send("t", msg("m", Map.of()));
            EngineHarness.Sink sink = h.sink();
            Receiver r = h.receiver("t/Subscriptions/s", ReceiveMode.PEEK_LOCK, sink, 10);
            List<ReceivedMessage> got = sink.take();
            assertThat(got).hasSize(2);
            for (ReceivedMessage m : got) {
                h.await(r.complete(m.lockToken()));
            }
            assertThat(h.await(h.engine.counts("t/Subscriptions/s")).activeMessageCount()).isZero();
            assertThat(bodies(peek(h, "t/Subscriptions/other"))).containsExactly("m");
        }
    }

    @Test
    void withoutTheDefaultRuleNothingMatchesAndRemovingARuleStopsRouting() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "s");
            h.await(h.engine.addRule("t", "s", sql("red", "color = 'red'", null)));
            h.send("t", msg("1", Map.of("color", "blue")));
            assertThat(bodies(peek(h, "t/Subscriptions/s"))).containsExactly("1");
            h.await(h.engine.removeRule("t", "s", RuleProperties.DEFAULT_RULE_NAME));
            h.send("t", msg("2", Map.of("color", "blue")), msg("3", Map.of("color", "red")));
            assertThat(bodies(peek(h, "t/Subscriptions/s"))).containsExactly("1", "3");
            h.await(h.engine.removeRule("t", "s", "red"));
            h.send("t", msg("4", Map.of("color", "red")));
            assertThat(bodies(peek(h, "t/Subscriptions/s"))).containsExactly("1", "3");
        }
    }

    @Test
    void aFilterErrorDeadLettersWithTheExceptionNameWhenTheSubscriptionSaysSo() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build());
            subscription(h, "dlq", List.of(sql("div", "quantity / divisor > 1", null)));
            subscription(h, SubscriptionProperties.builder("t", "drop")
                    .deadLetteringOnFilterEvaluationExceptions(false).build(),
                    List.of(sql("div", "quantity / divisor > 1", null)));
            h.send("t", msg("bad", Map.of("quantity", 4, "divisor", 0)), msg("ok", Map.of("quantity", 4,
                    "divisor", 2)), msg("typo", Map.of("quantity", "four", "divisor", 2)));
            assertThat(bodies(peek(h, "t/Subscriptions/dlq"))).containsExactly("ok");
            List<ReceivedMessage> dead = peek(h, "t/Subscriptions/dlq/$DeadLetterQueue");
            assertThat(bodies(dead)).containsExactly("bad", "typo");
            assertThat(dead.get(0).message().applicationProperties())
                    .containsEntry("DeadLetterReason", "DivideByZeroException")
                    .containsEntry("DeadLetterErrorDescription", "Attempted to divide by zero.");
            assertThat(dead.get(1).message().applicationProperties())
                    .containsEntry("DeadLetterReason", "InvalidOperationException");
            assertThat(bodies(peek(h, "t/Subscriptions/drop"))).containsExactly("ok");
            assertThat(peek(h, "t/Subscriptions/drop/$DeadLetterQueue")).isEmpty();
            assertThat(h.await(h.engine.counts("t/Subscriptions/dlq")).deadLetterMessageCount()).isEqualTo(2);
        }
    }

    @Test
    void actionCopiesAndFilterDeadLettersSurviveARestart() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build());
            subscription(h, "s", List.of(RuleProperties.defaultRule(), sql("act", "EXISTS(n)", "SET n = n + 1")));
            subscription(h, "e", List.of(sql("div", "n / 0 = 1", null)));
            h.send("t", msg("m", Map.of("n", 1)));
            h.crashAndRestart();
            List<ReceivedMessage> copies = peek(h, "t/Subscriptions/s");
            assertThat(copies).hasSize(2);
            assertThat(byTagKey(copies, "act").message().applicationProperties()).containsEntry("n", 2L);
            assertThat(copies.stream().filter(c -> !c.message().applicationProperties()
                    .containsKey(RuleSet.RULE_NAME_PROPERTY)).findFirst().orElseThrow().message()
                    .applicationProperties()).isEqualTo(Map.of("n", 1));
            assertThat(peek(h, "t/Subscriptions/e/$DeadLetterQueue").get(0).message().applicationProperties())
                    .containsEntry("DeadLetterReason", "DivideByZeroException");
            // rules are compiled again on load
            h.send("t", msg("after", Map.of("n", 5)));
            assertThat(peek(h, "t/Subscriptions/s")).hasSize(4);
        }
    }

    @Test
    void invalidSqlIsRejectedWhenTheRuleIsCreated() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build(), "s");
            assertThatThrownBy(() -> h.await(h.engine.addRule("t", "s", sql("bad", "color = = 'x'", null))))
                    .isInstanceOfSatisfying(BrokerException.class, e -> {
                        assertThat(e.kind()).isEqualTo(ErrorKind.ARGUMENT);
                        assertThat(e.getMessage()).contains("Rule 'bad'").contains("position 9");
                    });
            assertThatThrownBy(() -> h.await(h.engine.addRule("t", "s",
                    sql("bad", "1=1", "SET sys.SequenceNumber = 1"))))
                    .isInstanceOfSatisfying(BrokerException.class, e -> assertThat(e.kind())
                            .isEqualTo(ErrorKind.ARGUMENT));
            assertThatThrownBy(() -> h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "s2")
                    .build(), List.of(sql("bad", "sys.Nope = 1", null)))))
                    .isInstanceOfSatisfying(BrokerException.class, e -> assertThat(e.kind())
                            .isEqualTo(ErrorKind.ARGUMENT));
            assertThat(h.engine.topic("t").subscription("s").rules()).hasSize(1);
        }
    }

    @Test
    void theTopicQuotaOfSqlFiltersIsEnforced() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build());
            List<RuleProperties> many = new java.util.ArrayList<>();
            for (int i = 0; i < RuleSet.MAX_SQL_FILTERS_PER_TOPIC; i++) {
                many.add(sql("r" + i, "n = " + i, null));
            }
            subscription(h, "full", many);
            subscription(h, "other", null);
            assertThatThrownBy(() -> h.await(h.engine.addRule("t", "other", sql("one-more", "n = -1", null))))
                    .isInstanceOfSatisfying(BrokerException.class, e -> {
                        assertThat(e.kind()).isEqualTo(ErrorKind.QUOTA_EXCEEDED);
                        assertThat(e.getMessage()).contains("SqlFiltersExceeded");
                    });
            // correlation and true filters do not count against the SQL quota
            h.await(h.engine.addRule("t", "other", new RuleProperties("corr", new RuleProperties.CorrelationFilter(
                    "c", null, null, null, null, null, null, null, null), null)));
            h.send("t", msg("hit", Map.of("n", 1999)));
            assertThat(bodies(peek(h, "t/Subscriptions/full"))).containsExactly("hit");
        }
    }

    private static ReceivedMessage byTag(List<ReceivedMessage> copies, String tag) {
        return copies.stream().filter(c -> tag.equals(c.message().applicationProperties().get("tag")))
                .findFirst().orElseThrow();
    }

    private static ReceivedMessage byTagKey(List<ReceivedMessage> copies, String rule) {
        return copies.stream().filter(c -> rule.equals(c.message().applicationProperties()
                .get(RuleSet.RULE_NAME_PROPERTY))).findFirst().orElseThrow();
    }
}
