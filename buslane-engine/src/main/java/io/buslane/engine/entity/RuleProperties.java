package io.buslane.engine.entity;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A subscription rule: a filter and an optional action. Immutable. Evaluation lives with the topic-rules work; the
 * model is complete so that Config.json, the admin API and {@code $management} all meet here.
 *
 * @param actionParameters the values of the {@code @name} parameters the SQL action refers to (the
 *                         {@code Parameters} of the service's {@code SqlRuleAction}); empty when none
 */
public record RuleProperties(String name, Filter filter, String sqlAction, Map<String, Object> actionParameters) {

    /** The name of the rule every subscription starts with. */
    public static final String DEFAULT_RULE_NAME = "$Default";

    public RuleProperties {
        EntityNames.requireValidRuleName(name);
        Objects.requireNonNull(filter, "filter");
        sqlAction = sqlAction == null || sqlAction.isBlank() ? null : sqlAction;
        actionParameters = sqlAction == null ? Map.of() : copyOf(actionParameters);
    }

    /** A rule whose action, if any, has no parameters. */
    public RuleProperties(String name, Filter filter, String sqlAction) {
        this(name, filter, sqlAction, Map.of());
    }

    /** An immutable copy keeping the order; null is empty. */
    private static Map<String, Object> copyOf(Map<String, Object> p) {
        return p == null || p.isEmpty() ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(p));
    }

    /** The {@code $Default} rule: a TrueFilter without action. */
    public static RuleProperties defaultRule() {
        return new RuleProperties(DEFAULT_RULE_NAME, TrueFilter.INSTANCE, null);
    }

    /** A rule filter. */
    public sealed interface Filter permits TrueFilter, FalseFilter, SqlFilter, CorrelationFilter {
    }

    /** Matches every message ({@code 1=1}). */
    public enum TrueFilter implements Filter {
        INSTANCE
    }

    /** Matches no message ({@code 1=0}). */
    public enum FalseFilter implements Filter {
        INSTANCE
    }

    /**
     * A SQL filter expression, kept byte-for-byte as given, with the values of the {@code @name} parameters it
     * refers to (keys as given, with or without the {@code @}; empty when none).
     */
    public record SqlFilter(String expression, Map<String, Object> parameters) implements Filter {
        public SqlFilter {
            Objects.requireNonNull(expression, "expression");
            parameters = copyOf(parameters);
        }

        /** A filter without parameters. */
        public SqlFilter(String expression) {
            this(expression, Map.of());
        }
    }

    /** Exact, case-sensitive matches on system properties and application properties, ANDed. */
    public record CorrelationFilter(String correlationId, String messageId, String to, String replyTo,
                                    String subject, String sessionId, String replyToSessionId, String contentType,
                                    Map<String, Object> properties) implements Filter {
        public CorrelationFilter {
            properties = properties == null ? Map.of() : Collections.unmodifiableMap(
                    new LinkedHashMap<>(properties));
        }
    }
}
