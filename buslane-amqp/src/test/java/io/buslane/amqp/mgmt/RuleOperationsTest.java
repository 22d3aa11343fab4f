package io.buslane.amqp.mgmt;

import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import org.apache.qpid.proton.amqp.DescribedType;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.buslane.amqp.mgmt.MgmtHarness.args;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code add-rule} and {@code remove-rule} on a subscription's {@code $management} node (§6.2). */
@SuppressWarnings("unchecked")
class RuleOperationsTest {

    private static final String NODE = "t/Subscriptions/s";
    private final MgmtHarness h = new MgmtHarness();

    @BeforeEach
    void topology() {
        h.await(h.engine.createTopic(TopicProperties.builder("t").build()));
        h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "s").build(), null));
    }

    @AfterEach
    void tearDown() {
        h.close();
    }

    /** The request body the Java SDK builds (a HashMap with rule-name inside the description too). */
    private static Map<String, Object> addRule(String name, Map<String, Object> filter, String filterKey,
                                               String action) {
        Map<String, Object> description = new HashMap<>();
        description.put(filterKey, filter);
        description.put("sql-rule-action", action == null ? null : new HashMap<>(Map.of("expression", action)));
        description.put("rule-name", name);
        return args("rule-name", name, "rule-description", description);
    }

    private List<RuleProperties> rules() {
        return h.engine.topic("t").subscription("s").rules();
    }

    private static void assertStatus(ManagementResponse r, int status, String condition) {
        assertThat(r.statusCode()).as("%s", r).isEqualTo(status);
        assertThat(r.errorCondition()).isEqualTo(condition);
    }

    @Test
    void addsSqlRulesWithActions() {
        ManagementResponse r = h.call(NODE, ManagementProcessor.ADD_RULE, addRule("red",
                new HashMap<>(Map.of("expression", "color = 'red'")), "sql-filter", "SET tag = 1"));
        assertStatus(r, 200, null);
        assertThat(rules()).hasSize(2);
        RuleProperties red = rules().get(1);
        assertThat(red.name()).isEqualTo("red");
        assertThat(red.filter()).isEqualTo(new RuleProperties.SqlFilter("color = 'red'"));
        assertThat(red.sqlAction()).isEqualTo("SET tag = 1");

        ManagementResponse list = h.call(NODE, ManagementProcessor.ENUMERATE_RULES, args("top", 10, "skip", 0));
        DescribedType d = (DescribedType) ((Map<?, ?>) ((List<?>) list.body().get("rules")).get(1))
                .get("rule-description");
        List<?> fields = (List<?>) d.getDescribed();
        DescribedType filter = (DescribedType) fields.get(0);
        assertThat(filter.getDescriptor()).isEqualTo(UnsignedLong.valueOf(0x0000001370000006L));
        assertThat((List<Object>) filter.getDescribed()).containsExactly("color = 'red'", 20);
        DescribedType action = (DescribedType) fields.get(1);
        assertThat(action.getDescriptor()).isEqualTo(UnsignedLong.valueOf(0x0000013700000006L));
        assertThat((List<Object>) action.getDescribed()).containsExactly("SET tag = 1", 20);
        assertThat(fields.get(2)).isEqualTo("red");
    }

    @Test
    void addsCorrelationRules() {
        Map<String, Object> corr = new HashMap<>();
        corr.put("correlation-id", "cid");
        corr.put("message-id", null);
        corr.put("label", "lbl");
        corr.put("content-type", "application/json");
        corr.put("properties", new HashMap<>(Map.of("region", "eu", "n", 5)));
        assertStatus(h.call(NODE, ManagementProcessor.ADD_RULE, addRule("corr", corr, "correlation-filter", null)),
                200, null);
        RuleProperties rule = rules().get(1);
        assertThat(rule.sqlAction()).isNull();
        assertThat(rule.filter()).isEqualTo(new RuleProperties.CorrelationFilter("cid", null, null, null, "lbl",
                null, null, "application/json", Map.of("region", "eu", "n", 5)));
    }

    @Test
    void duplicatesConflictAndInvalidSqlIsABadRequest() {
        Map<String, Object> f = new HashMap<>(Map.of("expression", "1=1"));
        assertStatus(h.call(NODE, ManagementProcessor.ADD_RULE, addRule("$Default", f, "sql-filter", null)), 409,
                "com.microsoft:entity-already-exists");
        ManagementResponse bad = h.call(NODE, ManagementProcessor.ADD_RULE, addRule("bad",
                new HashMap<>(Map.of("expression", "color = ")), "sql-filter", null));
        assertStatus(bad, 400, "com.microsoft:argument-error");
        assertThat(bad.statusDescription()).contains("line 1, position");
        assertStatus(h.call(NODE, ManagementProcessor.ADD_RULE, addRule("badAction", f, "sql-filter",
                "SET")), 400, "com.microsoft:argument-error");
        assertStatus(h.call(NODE, ManagementProcessor.ADD_RULE, args("rule-name", "x", "rule-description",
                new HashMap<>())), 400, "com.microsoft:argument-error");
        assertStatus(h.call(NODE, ManagementProcessor.ADD_RULE, addRule("bad/name", f, "sql-filter", null)), 400,
                "com.microsoft:argument-error");
        assertStatus(h.call("t/Subscriptions/nope", ManagementProcessor.ADD_RULE, addRule("r", f, "sql-filter",
                null)), 404, "amqp:not-found");
        assertThat(rules()).extracting(RuleProperties::name).containsExactly("$Default");
    }

    @Test
    void removesRulesAndReportsMissingOnes() {
        assertStatus(h.call(NODE, ManagementProcessor.REMOVE_RULE, args("rule-name", "$Default")), 200, null);
        assertThat(rules()).isEmpty();
        ManagementResponse missing = h.call(NODE, ManagementProcessor.REMOVE_RULE, args("rule-name", "$Default"));
        assertStatus(missing, 404, "amqp:not-found");
        assertThat(missing.statusDescription()).contains("could not be found");
        assertStatus(h.call(NODE, ManagementProcessor.REMOVE_RULE, args()), 400, "com.microsoft:argument-error");
    }
}
