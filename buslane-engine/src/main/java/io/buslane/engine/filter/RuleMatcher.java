package io.buslane.engine.filter;

import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.message.Message;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Decides whether a message matches a subscription's rules. Stateless and thread-safe.
 *
 * <p>True, false and correlation filters are evaluated exactly (correlation: exact, case-sensitive matches on
 * the system properties and application properties, ANDed). SQL filters are evaluated by the SQL filter engine
 * of the topic-rules work; until it lands only the constant expressions {@code 1=1} and {@code 1=0} are
 * understood and any other SQL filter matches nothing (a warning is logged when such a rule is created).
 */
public final class RuleMatcher {

    private RuleMatcher() {
    }

    /** True when at least one rule matches. */
    public static boolean matchesAny(List<RuleProperties> rules, Message message) {
        for (RuleProperties rule : rules) {
            if (matches(rule.filter(), message)) {
                return true;
            }
        }
        return false;
    }

    public static boolean matches(RuleProperties.Filter filter, Message m) {
        if (filter instanceof RuleProperties.TrueFilter) {
            return true;
        }
        if (filter instanceof RuleProperties.FalseFilter) {
            return false;
        }
        if (filter instanceof RuleProperties.SqlFilter sql) {
            return isConstantTrue(sql.expression());
        }
        RuleProperties.CorrelationFilter c = (RuleProperties.CorrelationFilter) filter;
        return eq(c.correlationId(), m.correlationId())
                && eq(c.messageId(), m.messageId())
                && eq(c.to(), m.to())
                && eq(c.replyTo(), m.replyTo())
                && eq(c.subject(), m.subject())
                && eq(c.sessionId(), m.sessionId())
                && eq(c.replyToSessionId(), m.replyToSessionId())
                && eq(c.contentType(), m.contentType())
                && propertiesMatch(c.properties(), m.applicationProperties());
    }

    /** Whether a SQL expression is one the interim evaluator understands. */
    public static boolean isUnderstoodSql(String expression) {
        String e = normalize(expression);
        return e.equals("1=1") || e.equals("1=0");
    }

    private static boolean isConstantTrue(String expression) {
        return normalize(expression).equals("1=1");
    }

    private static String normalize(String expression) {
        return expression.replace(" ", "").toLowerCase(Locale.ROOT);
    }

    private static boolean eq(String expected, Object actual) {
        return expected == null || (actual != null && expected.equals(actual.toString()));
    }

    private static boolean propertiesMatch(Map<String, Object> expected, Map<String, Object> actual) {
        for (Map.Entry<String, Object> e : expected.entrySet()) {
            if (!actual.containsKey(e.getKey())) {
                return false;
            }
            Object a = actual.get(e.getKey());
            Object x = e.getValue();
            if (x instanceof Number xn && a instanceof Number an) {
                if (xn.doubleValue() != an.doubleValue()) {
                    return false;
                }
            } else if (!Objects.equals(x, a) && !(x != null && a != null && x.toString().equals(a.toString()))) {
                return false;
            }
        }
        return true;
    }
}
