package io.buslane.amqp.mgmt;

import io.buslane.amqp.codec.AmqpCodec;
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
    /** 9 elements: correlation-id, message-id, to, reply-to, label, session-id, reply-to-session-id, content-type, properties. */
    public static final long CORRELATION_FILTER = 0x0000001370000009L;
    public static final long EMPTY_RULE_ACTION = 0x0000013700000005L;
    /** {@code [expression, 20]}. */
    public static final long SQL_RULE_ACTION = 0x0000013700000006L;

    /** The SQL compatibility level Service Bus reports. */
    public static final int COMPATIBILITY_LEVEL = 20;

    private RuleDescriptions() {
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
