package io.buslane.management.atom;

import io.buslane.engine.entity.RuleProperties;

import java.util.Map;

/**
 * {@code RuleDescription}: {@code Filter} (typed by {@code i:type}), {@code Action}, {@code CreatedAt},
 * {@code Name}. SQL filters and actions carry {@code CompatibilityLevel} 20 and their {@code Parameters} when they
 * have any; true and false filters are written
 * as the service writes them, as SQL {@code 1=1} and {@code 1=0}; correlation filters omit unset fields.
 */
final class RuleWriter {

    private static final String COMPATIBILITY_LEVEL = "20";

    private RuleWriter() {
    }

    static void rule(XmlOut o, RuleProperties rule, long createdMs) {
        DescriptionWriter.root(o, "RuleDescription");
        filter(o, rule.filter());
        action(o, rule.sqlAction(), rule.actionParameters());
        o.leaf("CreatedAt", XmlTimes.format(createdMs));
        o.leaf("Name", rule.name());
        o.close();
    }

    private static void filter(XmlOut o, RuleProperties.Filter filter) {
        if (filter instanceof RuleProperties.SqlFilter sql) {
            sql(o, "Filter", "SqlFilter", sql.expression(), sql.parameters());
        } else if (filter instanceof RuleProperties.TrueFilter) {
            sql(o, "Filter", "TrueFilter", "1=1", Map.of());
        } else if (filter instanceof RuleProperties.FalseFilter) {
            sql(o, "Filter", "FalseFilter", "1=0", Map.of());
        } else {
            correlation(o, (RuleProperties.CorrelationFilter) filter);
        }
    }

    private static void action(XmlOut o, String sqlAction, Map<String, Object> parameters) {
        if (sqlAction == null) {
            o.empty("Action");
            o.attribute("i", Xmlns.XSI, "type", "EmptyRuleAction");
        } else {
            sql(o, "Action", "SqlRuleAction", sqlAction, parameters);
        }
    }

    /** A SQL filter or action; its parameters, when it has any, after the compatibility level. */
    private static void sql(XmlOut o, String element, String type, String expression,
                            Map<String, Object> parameters) {
        o.open(element).attribute("i", Xmlns.XSI, "type", type);
        o.leaf("SqlExpression", expression);
        o.leaf("CompatibilityLevel", COMPATIBILITY_LEVEL);
        if (!parameters.isEmpty()) {
            o.open("Parameters");
            keyValues(o, parameters);
            o.close();
        }
        o.close();
    }

    /** {@code KeyValueOfstringanyType} entries: the key, and the value typed (or {@code i:nil}). */
    private static void keyValues(XmlOut o, Map<String, Object> values) {
        for (Map.Entry<String, Object> p : values.entrySet()) {
            o.open("KeyValueOfstringanyType").leaf("Key", p.getKey());
            if (p.getValue() == null) {
                o.empty("Value");
                o.attribute("i", Xmlns.XSI, "nil", "true");
            } else {
                XmlValues.write(o, p.getValue());
            }
            o.close();
        }
    }

    private static void correlation(XmlOut o, RuleProperties.CorrelationFilter c) {
        o.open("Filter").attribute("i", Xmlns.XSI, "type", "CorrelationFilter");
        o.leaf("CorrelationId", c.correlationId());
        o.leaf("MessageId", c.messageId());
        o.leaf("To", c.to());
        o.leaf("ReplyTo", c.replyTo());
        o.leaf("Label", c.subject());
        o.leaf("SessionId", c.sessionId());
        o.leaf("ReplyToSessionId", c.replyToSessionId());
        o.leaf("ContentType", c.contentType());
        o.open("Properties");
        keyValues(o, c.properties());
        o.close();
        o.close();
    }
}
