package io.buslane.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.buslane.common.error.BrokerException;
import io.buslane.engine.entity.EntityNames;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.filter.RuleSet;
import io.buslane.engine.filter.sql.SqlAction;
import io.buslane.engine.filter.sql.SqlFilterExpression;
import io.buslane.engine.filter.sql.SqlSyntaxException;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Stateless. Reads one entry of a subscription's {@code Rules[]}: {@code Name} and {@code Properties} with
 * {@code FilterType} ({@code Correlation} or {@code Sql}, any case), the matching {@code CorrelationFilter} or
 * {@code SqlFilter.SqlExpression}, and an optional {@code Action.SqlExpression}.
 *
 * <p>An unknown {@code FilterType} is an error. The emulator silently drops such a rule (so a subscription meant to be
 * filtered receives everything through {@code $Default}); Buslane refuses to start instead.
 */
final class RuleReader {

    /** The service's limit on a filter or action expression (service-bus-behaviour.md §2.1). */
    static final int MAX_SQL_EXPRESSION_LENGTH = 1024;

    private RuleReader() {
    }

    /**
     * Reads a rule.
     *
     * @param rule the rule object
     * @param warn called with the path and the reason for each property that is present but not used
     */
    static RuleProperties read(JsonObjectView rule, BiConsumer<String, String> warn) {
        String name = rule.requiredString("Name");
        try {
            EntityNames.requireValidRuleName(name);
        } catch (IllegalArgumentException e) {
            throw new ConfigProblem(rule.pathOf("Name"), e.getMessage(), e);
        }
        JsonObjectView props = rule.requiredObject("Properties");
        String filterType = props.requiredString("FilterType");
        RuleProperties.Filter filter;
        switch (filterType.toLowerCase(Locale.ROOT)) {
            case "correlation" -> {
                filter = correlation(props.requiredObject("CorrelationFilter"), warn);
                ignoreIfPresent(props, "SqlFilter", "Correlation", warn);
            }
            case "sql" -> {
                filter = new RuleProperties.SqlFilter(expression(props.requiredObject("SqlFilter"), true, warn));
                ignoreIfPresent(props, "CorrelationFilter", "Sql", warn);
            }
            default -> throw new ConfigProblem(props.pathOf("FilterType"), "FilterType must be \"Correlation\" or "
                    + "\"Sql\", was \"" + filterType + "\" (the emulator would silently drop this rule and leave "
                    + "the subscription unfiltered)");
        }
        JsonObjectView action = props.object("Action");
        String sqlAction = action == null ? null : expression(action, false, warn);
        warnUnread(props, warn);
        warnUnread(rule, warn);
        RuleProperties result = new RuleProperties(name, filter, sqlAction);
        try { // the text the service cannot keep in XML, refused here so that the message names the rule's place
            RuleSet.validate(result);
        } catch (BrokerException e) {
            throw new ConfigProblem(rule.path(), e.description(), e);
        }
        return result;
    }

    private static void ignoreIfPresent(JsonObjectView props, String name, String filterType,
                                        BiConsumer<String, String> warn) {
        if (props.has(name)) {
            props.ignore(name);
            warn.accept(props.pathOf(name), "not used because FilterType is " + filterType);
        }
    }

    private static void warnUnread(JsonObjectView view, BiConsumer<String, String> warn) {
        view.forEachUnread(path -> warn.accept(path, ConfigLoader.UNKNOWN_PROPERTY));
    }

    private static String expression(JsonObjectView holder, boolean required, BiConsumer<String, String> warn) {
        String expr = required ? holder.requiredString("SqlExpression") : holder.string("SqlExpression");
        if (expr != null && required && expr.isBlank()) {
            throw new ConfigProblem(holder.pathOf("SqlExpression"), "SqlExpression must not be empty");
        }
        if (expr != null && expr.length() > MAX_SQL_EXPRESSION_LENGTH) {
            throw new ConfigProblem(holder.pathOf("SqlExpression"), "SqlExpression must be at most "
                    + MAX_SQL_EXPRESSION_LENGTH + " characters long, was " + expr.length());
        }
        if (expr != null) {
            try { // compiled once here so that a bad expression names its place in the file
                if (required) {
                    SqlFilterExpression.compile(expr);
                } else {
                    SqlAction.compile(expr);
                }
            } catch (SqlSyntaxException e) {
                throw new ConfigProblem(holder.pathOf("SqlExpression"), e.getMessage(), e);
            }
        }
        warnUnread(holder, warn);
        return expr;
    }

    private static RuleProperties.CorrelationFilter correlation(JsonObjectView cf, BiConsumer<String, String> warn) {
        String contentType = cf.string("ContentType");
        String correlationId = cf.string("CorrelationId");
        String subject = cf.string("Label", "Subject");
        String messageId = cf.string("MessageId");
        String replyTo = cf.string("ReplyTo");
        String replyToSessionId = cf.string("ReplyToSessionId");
        String sessionId = cf.string("SessionId");
        String to = cf.string("To");
        Map<String, Object> properties = applicationProperties(cf.find("Properties"));
        warnUnread(cf, warn);
        boolean none = contentType == null && correlationId == null && subject == null && messageId == null
                && replyTo == null && replyToSessionId == null && sessionId == null && to == null;
        if (none && properties.isEmpty()) {
            throw new ConfigProblem(cf.path(), "CorrelationFilter must set at least one of ContentType, "
                    + "CorrelationId, Label, MessageId, ReplyTo, ReplyToSessionId, SessionId, To or Properties");
        }
        return new RuleProperties.CorrelationFilter(correlationId, messageId, to, replyTo, subject, sessionId,
                replyToSessionId, contentType, properties);
    }

    /**
     * Application properties of a correlation filter. Keys are kept exactly (they are matched case-sensitively);
     * values may be strings, booleans or numbers: integers become {@code Integer} when they fit, else {@code Long},
     * other numbers {@code Double}.
     */
    private static Map<String, Object> applicationProperties(JsonObjectView.Entry entry) {
        Map<String, Object> result = new LinkedHashMap<>();
        if (entry == null) {
            return result;
        }
        if (!entry.value().isObject()) {
            throw new ConfigProblem(entry.path(), "Properties must be a JSON object, was "
                    + JsonObjectView.describe(entry.value()));
        }
        for (Map.Entry<String, JsonNode> p : entry.value().properties()) {
            result.put(p.getKey(), propertyValue(JsonPaths.child(entry.path(), p.getKey()), p.getValue()));
        }
        return result;
    }

    private static Object propertyValue(String path, JsonNode v) {
        if (v.isTextual()) {
            return v.textValue();
        }
        if (v.isBoolean()) {
            return v.booleanValue();
        }
        if (v.isIntegralNumber() && v.canConvertToInt()) {
            return v.intValue();
        }
        if (v.isIntegralNumber() && v.canConvertToLong()) {
            return v.longValue();
        }
        if (v.isFloatingPointNumber()) {
            return v.doubleValue();
        }
        throw new ConfigProblem(path, "a correlation filter property must be a string, a boolean or a number "
                + "(64-bit integer or floating point), was " + JsonObjectView.describe(v));
    }
}
