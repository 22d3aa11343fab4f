package io.buslane.amqp.mgmt;

import io.buslane.amqp.codec.AmqpCodec;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.RuleProperties;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Encodes subscription rules as the described types {@code enumerate-rules} returns (§6.3): numeric descriptors
 * (Java compares them to {@code UnsignedLong}; symbolic descriptors are not understood), a 2-element SQL filter
 * list with compatibility level 20 (Python insists) and a 9-element correlation filter list (Python insists).
 */
public final class RuleDescriptions {

    /** {@code [filter, action, name, created-at]}. Note the grouping: 0x137_0000000N. */
    public static final long RULE_DESCRIPTION = 0x0000013700000004L;
    /** {@code [expression, 20]}. Note the grouping: 0x1370_000000N. */
    public static final long SQL_FILTER = 0x0000001370000006L;
    public static final long TRUE_FILTER = 0x0000001370000007L;
    public static final long FALSE_FILTER = 0x0000001370000008L;
    /**
     * 9 elements: correlation-id, message-id, to, reply-to, label, session-id, reply-to-session-id, content-type,
     * properties.
     */
    public static final long CORRELATION_FILTER = 0x0000001370000009L;
    public static final long EMPTY_RULE_ACTION = 0x0000013700000005L;
    /** {@code [expression, 20]}. */
    public static final long SQL_RULE_ACTION = 0x0000013700000006L;

    /** The SQL compatibility level Service Bus reports. */
    public static final int COMPATIBILITY_LEVEL = 20;

    // keys of an add-rule request's rule-description map (§6.2)
    public static final String SQL_FILTER_KEY = "sql-filter";
    public static final String CORRELATION_FILTER_KEY = "correlation-filter";
    public static final String SQL_RULE_ACTION_KEY = "sql-rule-action";
    public static final String EXPRESSION = "expression";

    private RuleDescriptions() {
    }

    /**
     * The rule an {@code add-rule} request describes: {@code sql-filter {expression}} or
     * {@code correlation-filter {correlation-id, message-id, to, reply-to, label, session-id, reply-to-session-id,
     * content-type, properties}}, and {@code sql-rule-action} (null, or {@code {expression}}). SQL is checked when the
     * engine adds the rule.
     *
     * @throws BrokerException {@link ErrorKind#ARGUMENT} for a malformed description or rule name
     */
    public static RuleProperties fromRequest(String name, Map<String, Object> description) {
        Object sql = description.get(SQL_FILTER_KEY);
        Object correlation = description.get(CORRELATION_FILTER_KEY);
        RuleProperties.Filter filter;
        if (sql != null) {
            filter = new RuleProperties.SqlFilter(expression(sql, SQL_FILTER_KEY));
        } else if (correlation != null) {
            filter = correlation(map(correlation, CORRELATION_FILTER_KEY));
        } else {
            throw new BrokerException(ErrorKind.ARGUMENT, "The rule description must hold a '" + SQL_FILTER_KEY
                    + "' or a '" + CORRELATION_FILTER_KEY + "'.");
        }
        Object action = description.get(SQL_RULE_ACTION_KEY);
        String sqlAction = action == null ? null : expression(action, SQL_RULE_ACTION_KEY);
        try {
            return new RuleProperties(name, filter, sqlAction);
        } catch (IllegalArgumentException e) {
            throw new BrokerException(ErrorKind.ARGUMENT, e.getMessage());
        }
    }

    private static Map<String, Object> map(Object v, String key) {
        if (!(v instanceof Map<?, ?> m)) {
            throw new BrokerException(ErrorKind.ARGUMENT, "The '" + key + "' value must be a map.");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        m.forEach((k, x) -> out.put(String.valueOf(k), x));
        return out;
    }

    private static String expression(Object v, String key) {
        Object e = map(v, key).get(EXPRESSION);
        if (!(e instanceof String s) || s.isBlank()) {
            throw new BrokerException(ErrorKind.ARGUMENT, "The '" + key + "' needs a non-empty '" + EXPRESSION
                    + "' string.");
        }
        return s;
    }

    private static RuleProperties.CorrelationFilter correlation(Map<String, Object> m) {
        Object props = m.get("properties");
        Map<String, Object> properties = props instanceof Map<?, ?> p ? AmqpCodec.toEngineStringMap(p) : Map.of();
        return new RuleProperties.CorrelationFilter(text(m, "correlation-id"), text(m, "message-id"), text(m, "to"),
                text(m, "reply-to"), text(m, "label"), text(m, "session-id"), text(m, "reply-to-session-id"),
                text(m, "content-type"), properties);
    }

    private static String text(Map<String, Object> m, String key) {
        Object v = m.get(key);
        return v == null ? null : v.toString();
    }

    /** The {@code rule-description} described value of a rule. */
    public static DescribedValue ruleDescription(RuleProperties rule, long createdAtMs) {
        return new DescribedValue(RULE_DESCRIPTION, Arrays.asList(filter(rule.filter()), action(rule.sqlAction()),
                rule.name(), new Date(createdAtMs)));
    }

    public static DescribedValue filter(RuleProperties.Filter filter) {
        if (filter instanceof RuleProperties.TrueFilter) {
            return new DescribedValue(TRUE_FILTER, List.of());
        }
        if (filter instanceof RuleProperties.FalseFilter) {
            return new DescribedValue(FALSE_FILTER, List.of());
        }
        if (filter instanceof RuleProperties.SqlFilter sql) {
            return new DescribedValue(SQL_FILTER, List.of(sql.expression(), COMPATIBILITY_LEVEL));
        }
        RuleProperties.CorrelationFilter c = (RuleProperties.CorrelationFilter) filter;
        Map<String, Object> properties = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : c.properties().entrySet()) {
            properties.put(e.getKey(), AmqpCodec.toProton(e.getValue()));
        }
        List<Object> fields = new ArrayList<>(9);
        fields.add(c.correlationId());
        fields.add(c.messageId());
        fields.add(c.to());
        fields.add(c.replyTo());
        fields.add(c.subject());
        fields.add(c.sessionId());
        fields.add(c.replyToSessionId());
        fields.add(c.contentType());
        fields.add(properties);
        return new DescribedValue(CORRELATION_FILTER, fields);
    }

    public static DescribedValue action(String sqlAction) {
        if (sqlAction == null) {
            return new DescribedValue(EMPTY_RULE_ACTION, List.of());
        }
        return new DescribedValue(SQL_RULE_ACTION, List.of(sqlAction, COMPATIBILITY_LEVEL));
    }
}
