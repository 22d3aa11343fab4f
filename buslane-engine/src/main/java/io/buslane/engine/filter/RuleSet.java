package io.buslane.engine.filter;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.filter.sql.SqlAction;
import io.buslane.engine.filter.sql.SqlEvaluationException;
import io.buslane.engine.filter.sql.SqlFilterExpression;
import io.buslane.engine.filter.sql.SqlMessage;
import io.buslane.engine.filter.sql.SqlSyntaxException;
import io.buslane.engine.message.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A subscription's rules, compiled once (when the subscription is created or loaded, or its rules change) and then
 * evaluated for every message published to the topic. Immutable and thread-safe.
 *
 * <p>Fan-in (service-bus-behaviour.md §2.9): every matching rule without an action contributes to one unmodified
 * copy; each matching rule with an action yields a copy of its own, with the action applied and the application
 * property {@value #RULE_NAME_PROPERTY} set to the rule's name. A filter or action that fails on a message makes the
 * whole routing fail with the exception's name and message (the subscription dead-letters or drops it).
 */
public final class RuleSet {

    private static final Logger LOG = LoggerFactory.getLogger(RuleSet.class);

    /** The application property stamped on a copy made by a rule with an action. */
    public static final String RULE_NAME_PROPERTY = "RuleName";

    /** No rules: nothing matches. */
    public static final RuleSet EMPTY = new RuleSet(List.of());

    private final List<Compiled> rules;

    private record Compiled(RuleProperties rule, SqlFilterExpression sql, SqlAction action, boolean broken) {
    }

    /** The outcome for one message. */
    public record Routing(boolean plainCopy, List<Message> actionCopies, String errorName, String errorDescription) {

        static final Routing NONE = new Routing(false, List.of(), null, null);

        /** Whether the filters failed on the message. */
        public boolean failed() {
            return errorName != null;
        }

        /** Whether the subscription gets no copy. */
        public boolean none() {
            return !plainCopy && actionCopies.isEmpty() && errorName == null;
        }
    }

    private RuleSet(List<Compiled> rules) {
        this.rules = rules;
    }

    /**
     * Checks that a rule's SQL filter and action compile.
     *
     * @throws BrokerException {@link ErrorKind#ARGUMENT} naming the rule and the problem
     */
    public static void validate(RuleProperties rule) {
        try {
            requireXmlText(rule);
        } catch (IllegalArgumentException e) {
            throw new BrokerException(ErrorKind.ARGUMENT, "Rule '" + rule.name() + "': " + e.getMessage());
        }
        try {
            if (rule.filter() instanceof RuleProperties.SqlFilter sql) {
                SqlFilterExpression.compile(sql.expression(), sql.parameters());
            }
            if (rule.sqlAction() != null) {
                SqlAction.compile(rule.sqlAction(), rule.actionParameters());
            }
        } catch (SqlSyntaxException e) {
            throw new BrokerException(ErrorKind.ARGUMENT, "Rule '" + rule.name() + "': " + e.getMessage());
        }
    }

    /** Rule text the service keeps in XML: every string of the rule must be one XML 1.0 can carry. */
    private static void requireXmlText(RuleProperties rule) {
        XmlText.require(rule.name(), "The rule name");
        XmlText.require(rule.sqlAction(), "The SqlExpression of the action");
        requireXmlText(rule.actionParameters(), "action");
        if (rule.filter() instanceof RuleProperties.SqlFilter sql) {
            XmlText.require(sql.expression(), "The SqlExpression of the filter");
            requireXmlText(sql.parameters(), "filter");
        } else if (rule.filter() instanceof RuleProperties.CorrelationFilter c) {
            for (String field : new String[] {c.correlationId(), c.messageId(), c.to(), c.replyTo(), c.subject(),
                    c.sessionId(), c.replyToSessionId(), c.contentType()}) {
                XmlText.require(field, "A field of the correlation filter");
            }
            for (Map.Entry<String, Object> p : c.properties().entrySet()) {
                XmlText.require(p.getKey(), "The name of a correlation filter property");
                if (p.getValue() instanceof String v) {
                    XmlText.require(v, "The value of the correlation filter property '" + p.getKey() + "'");
                }
            }
        }
    }

    private static void requireXmlText(Map<String, Object> parameters, String of) {
        for (Map.Entry<String, Object> p : parameters.entrySet()) {
            XmlText.require(p.getKey(), "The name of a parameter of the " + of);
            if (p.getValue() instanceof String v) {
                XmlText.require(v, "The value of the parameter '" + p.getKey() + "' of the " + of);
            }
        }
    }

    /** The service's quota of SQL filters (and rules with a SQL action) per topic. */
    public static final int MAX_SQL_FILTERS_PER_TOPIC = 2000;
    /** The service's quota of correlation filters per topic. */
    public static final int MAX_CORRELATION_FILTERS_PER_TOPIC = 100_000;

    /**
     * Checks the topic's filter quotas (service-bus-behaviour.md §2.1) before rules are added.
     *
     * @param existing the rules of all the topic's subscriptions
     * @throws BrokerException {@link ErrorKind#QUOTA_EXCEEDED}
     */
    public static void checkQuotas(String topicName, List<RuleProperties> existing, List<RuleProperties> adding) {
        int sql = countSql(existing);
        int correlation = countCorrelation(existing);
        if (countSql(adding) > 0 && sql + countSql(adding) > MAX_SQL_FILTERS_PER_TOPIC) {
            throw new BrokerException(ErrorKind.QUOTA_EXCEEDED, "SqlFiltersExceeded: the topic '" + topicName
                    + "' already has " + sql + " SQL filters and actions; the maximum is "
                    + MAX_SQL_FILTERS_PER_TOPIC + ".");
        }
        if (countCorrelation(adding) > 0
                && correlation + countCorrelation(adding) > MAX_CORRELATION_FILTERS_PER_TOPIC) {
            throw new BrokerException(ErrorKind.QUOTA_EXCEEDED, "CorrelationFiltersExceeded: the topic '"
                    + topicName + "' already has " + correlation + " correlation filters; the maximum is "
                    + MAX_CORRELATION_FILTERS_PER_TOPIC + ".");
        }
    }

    private static int countSql(List<RuleProperties> rules) {
        int n = 0;
        for (RuleProperties r : rules) {
            if (r.filter() instanceof RuleProperties.SqlFilter || r.sqlAction() != null) {
                n++;
            }
        }
        return n;
    }

    private static int countCorrelation(List<RuleProperties> rules) {
        int n = 0;
        for (RuleProperties r : rules) {
            if (r.filter() instanceof RuleProperties.CorrelationFilter) {
                n++;
            }
        }
        return n;
    }

    /**
     * Compiles rules. A rule that no longer compiles (stored by an earlier version that did not check SQL) matches
     * nothing and is logged, so that the broker still starts.
     */
    public static RuleSet compile(List<RuleProperties> rules) {
        List<Compiled> out = new ArrayList<>(rules.size());
        for (RuleProperties r : rules) {
            try {
                SqlFilterExpression sql = r.filter() instanceof RuleProperties.SqlFilter f
                        ? SqlFilterExpression.compile(f.expression(), f.parameters()) : null;
                SqlAction action = r.sqlAction() == null ? null
                        : SqlAction.compile(r.sqlAction(), r.actionParameters());
                out.add(new Compiled(r, sql, action, false));
            } catch (SqlSyntaxException e) {
                LOG.warn("Rule '{}' does not compile and matches no message: {}", r.name(), e.getMessage());
                out.add(new Compiled(r, null, null, true));
            }
        }
        return new RuleSet(List.copyOf(out));
    }

    public List<RuleProperties> rules() {
        List<RuleProperties> out = new ArrayList<>(rules.size());
        for (Compiled c : rules) {
            out.add(c.rule);
        }
        return out;
    }

    /**
     * Routes a message through the rules.
     *
     * @param seq            the message's sequence number ({@code sys.SequenceNumber})
     * @param enqueuedTimeMs its enqueue time ({@code sys.EnqueuedTimeUtc})
     */
    public Routing route(Message m, long seq, long enqueuedTimeMs) {
        boolean plain = false;
        List<Message> copies = null;
        try {
            for (Compiled c : rules) {
                if (c.broken || !matches(c, m, seq, enqueuedTimeMs)) {
                    continue;
                }
                if (c.action == null) {
                    plain = true;
                    continue;
                }
                Message modified = c.action.apply(new SqlMessage(m, seq, enqueuedTimeMs));
                if (copies == null) {
                    copies = new ArrayList<>(2);
                }
                copies.add(modified.withApplicationProperties(Map.of(RULE_NAME_PROPERTY, c.rule.name())));
            }
        } catch (SqlEvaluationException e) {
            return new Routing(false, List.of(), e.exceptionName(), e.getMessage());
        }
        if (!plain && copies == null) {
            return Routing.NONE;
        }
        return new Routing(plain, copies == null ? List.of() : copies, null, null);
    }

    private static boolean matches(Compiled c, Message m, long seq, long enqueuedTimeMs) {
        if (c.sql != null) {
            return c.sql.matches(new SqlMessage(m, seq, enqueuedTimeMs));
        }
        return RuleMatcher.matches(c.rule.filter(), m);
    }
}
