package io.buslane.engine.filter;

import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Message;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Objects;

/**
 * Evaluates the filters that need no compilation: true, false and correlation filters (correlation: exact,
 * case-sensitive matches on the system properties and application properties, ANDed). SQL filters are compiled
 * and evaluated by {@link RuleSet}. Stateless and thread-safe.
 */
public final class RuleMatcher {

    private RuleMatcher() {
    }

    public static boolean matches(RuleProperties.Filter filter, Message m) {
        if (filter instanceof RuleProperties.TrueFilter) {
            return true;
        }
        if (filter instanceof RuleProperties.FalseFilter) {
            return false;
        }
        if (filter instanceof RuleProperties.SqlFilter) {
            throw new IllegalArgumentException("SQL filters are evaluated by RuleSet");
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

    private static boolean eq(String expected, Object actual) {
        return expected == null || (actual != null && expected.equals(actual.toString()));
    }

    private static boolean propertiesMatch(Map<String, Object> expected, Map<String, Object> actual) {
        for (Map.Entry<String, Object> e : expected.entrySet()) {
            if (!actual.containsKey(e.getKey())) {
                return false;
            }
            Object a = exact(actual.get(e.getKey()));
            Object x = exact(e.getValue());
            if (x instanceof BigDecimal xd && a instanceof BigDecimal ad) {
                if (xd.compareTo(ad) != 0) {
                    return false;
                }
            } else if (x instanceof Number xn && a instanceof Number an) {
                if (xn.doubleValue() != an.doubleValue()) {
                    return false;
                }
            } else if (!Objects.equals(x, a) && !(x != null && a != null && x.toString().equals(a.toString()))) {
                return false;
            }
        }
        return true;
    }

    /** An AMQP decimal as its number (BigDecimal, or a double for NaN and the infinities); others unchanged. */
    private static Object exact(Object v) {
        return v instanceof Decimal d ? d.toNumber() : v;
    }
}
