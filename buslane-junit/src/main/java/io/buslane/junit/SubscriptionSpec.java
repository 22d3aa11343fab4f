package io.buslane.junit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A subscription defined in code, inside {@link TopicSpec#subscription(String, java.util.function.Consumer)}.
 * Without a rule it receives everything ({@code $Default}); {@link #sqlFilter} rules replace {@code $Default}.
 */
public final class SubscriptionSpec extends ReceivableSpec<SubscriptionSpec> {

    private final ArrayNode rules = JsonNodeFactory.instance.arrayNode();

    SubscriptionSpec(String name) {
        super(name);
    }

    /**
     * Adds a SQL filter rule, e.g. {@code sqlFilter("eu", "region = 'eu'")}: the subscription then receives only the
     * messages some rule of it matches.
     */
    public SubscriptionSpec sqlFilter(String ruleName, String expression) {
        ObjectNode rule = rules.addObject();
        rule.put("Name", ruleName);
        ObjectNode props = rule.putObject("Properties");
        props.put("FilterType", "Sql");
        props.putObject("SqlFilter").put("SqlExpression", expression);
        return this;
    }

    @Override
    ObjectNode toJson() {
        ObjectNode entry = super.toJson();
        if (!rules.isEmpty()) {
            entry.set("Rules", rules.deepCopy());
        }
        return entry;
    }
}
