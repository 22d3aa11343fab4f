package io.buslane.management.atom;

import io.buslane.engine.entity.RuleProperties;
import org.w3c.dom.Element;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A {@code RuleDescription} (or {@code DefaultRuleDescription}) to an engine rule. The filter kind comes from
 * {@code xsi:type}: {@code SqlFilter}, {@code TrueFilter}, {@code FalseFilter} or {@code CorrelationFilter}; the
 * action is a {@code SqlRuleAction} or an {@code EmptyRuleAction}. SQL text is kept exactly as received.
 */
final class RuleReader {

    /** The service's limit on a filter's or action's SQL text. */
    static final int MAX_SQL_LENGTH = 1024;

    private RuleReader() {
    }

    static RuleProperties rule(Element description, String name) {
        Element filter = AtomReader.child(description, "Filter");
        Element action = AtomReader.child(description, "Action");
        RuleProperties.Filter f = filter == null || AtomReader.isNil(filter) ? RuleProperties.TrueFilter.INSTANCE
                : filter(filter);
        boolean hasAction = action != null && !AtomReader.isNil(action);
        String sqlAction = hasAction ? action(action) : null;
        return new RuleProperties(name, f, sqlAction, hasAction ? parameters(action) : null);
    }

    static RuleProperties.Filter filter(Element e) {
        String type = AtomReader.xsiType(e);
        if (type == null) {
            type = AtomReader.child(e, "SqlExpression") != null ? "SqlFilter" : "CorrelationFilter";
        }
        return switch (type) {
            case "TrueFilter" -> RuleProperties.TrueFilter.INSTANCE;
            case "FalseFilter" -> RuleProperties.FalseFilter.INSTANCE;
            case "SqlFilter" -> new RuleProperties.SqlFilter(sql(e, "SqlFilter"), parameters(e));
            case "CorrelationFilter" -> correlation(e);
            default -> throw new IllegalArgumentException("Unknown filter type '" + type
                    + "' (expected SqlFilter, TrueFilter, FalseFilter or CorrelationFilter).");
        };
    }

    /** The action's SQL text, or null for an {@code EmptyRuleAction}. */
    static String action(Element e) {
        String type = AtomReader.xsiType(e);
        if (type == null) {
            type = AtomReader.child(e, "SqlExpression") != null ? "SqlRuleAction" : "EmptyRuleAction";
        }
        return switch (type) {
            case "EmptyRuleAction" -> null;
            case "SqlRuleAction" -> sql(e, "SqlRuleAction");
            default -> throw new IllegalArgumentException("Unknown rule action type '" + type
                    + "' (expected SqlRuleAction or EmptyRuleAction).");
        };
    }

    private static String sql(Element e, String kind) {
        String expression = new Fields(e).text("SqlExpression");
        if (expression == null || expression.isBlank()) {
            throw new IllegalArgumentException("A " + kind + " needs a non-empty SqlExpression.");
        }
        if (expression.length() > MAX_SQL_LENGTH) {
            throw new IllegalArgumentException("The SqlExpression of the " + kind + " is " + expression.length()
                    + " characters long; the maximum is " + MAX_SQL_LENGTH + ".");
        }
        return expression;
    }

    /**
     * The {@code Parameters} of a SQL filter or action: {@code KeyValueOfstringanyType} entries (keys such as
     * {@code @color}, values typed by {@code xsi:type} as correlation properties are), in order; empty when none.
     */
    static Map<String, Object> parameters(Element e) {
        Map<String, Object> out = new LinkedHashMap<>();
        Element parameters = AtomReader.child(e, "Parameters");
        if (parameters == null || AtomReader.isNil(parameters)) {
            return out;
        }
        for (Element kv : AtomReader.children(parameters, "KeyValueOfstringanyType")) {
            String key = new Fields(kv).text("Key");
            if (key == null || key.isBlank()) {
                throw new IllegalArgumentException("A parameter of a SQL filter or action needs a non-empty Key.");
            }
            Element value = AtomReader.child(kv, "Value");
            out.put(key.trim(), value == null || AtomReader.isNil(value) ? null : XmlValues.parse(value, key.trim()));
        }
        return out;
    }

    private static RuleProperties.CorrelationFilter correlation(Element e) {
        Fields f = new Fields(e);
        Map<String, Object> properties = new LinkedHashMap<>();
        Element props = AtomReader.child(e, "Properties");
        if (props != null) {
            for (Element kv : AtomReader.children(props, "KeyValueOfstringanyType")) {
                String key = new Fields(kv).text("Key");
                Element value = AtomReader.child(kv, "Value");
                if (key == null || key.isEmpty()) {
                    throw new IllegalArgumentException("A correlation filter property needs a non-empty Key.");
                }
                properties.put(key, value == null || AtomReader.isNil(value) ? null : XmlValues.parse(value, key));
            }
        }
        return new RuleProperties.CorrelationFilter(blankToNull(f.text("CorrelationId")),
                blankToNull(f.text("MessageId")), blankToNull(f.text("To")), blankToNull(f.text("ReplyTo")),
                blankToNull(f.text("Label")), blankToNull(f.text("SessionId")),
                blankToNull(f.text("ReplyToSessionId")), blankToNull(f.text("ContentType")), properties);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
