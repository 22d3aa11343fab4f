package io.buslane.junit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Duration;

/**
 * A subscription defined in code, inside {@link TopicSpec#subscription(String, java.util.function.Consumer)}.
 * Without a rule it receives everything ({@code $Default}); {@link #sqlFilter} rules replace {@code $Default}.
 */
public final class SubscriptionSpec extends EntitySpec<SubscriptionSpec> {

    private final ArrayNode rules = JsonNodeFactory.instance.arrayNode();

    SubscriptionSpec(String name) {
        super(name);
    }

    /** Whether receivers must accept a session ({@code RequiresSession}). */
    public SubscriptionSpec requiresSession(boolean required) {
        return property("RequiresSession", required);
    }

    /** Deliveries before a message is dead-lettered ({@code MaxDeliveryCount}, default 10). */
    public SubscriptionSpec maxDeliveryCount(int count) {
        return property("MaxDeliveryCount", count);
    }

    /** How long a received message stays locked ({@code LockDuration}, default one minute). */
    public SubscriptionSpec lockDuration(Duration duration) {
        return property("LockDuration", duration);
    }

    /** Whether expired messages go to the dead-letter queue ({@code DeadLetteringOnMessageExpiration}). */
    public SubscriptionSpec deadLetteringOnMessageExpiration(boolean enabled) {
        return property("DeadLetteringOnMessageExpiration", enabled);
    }

    /** Forwards every message to this queue or topic ({@code ForwardTo}); it must be defined too. */
    public SubscriptionSpec forwardTo(String entity) {
        return property("ForwardTo", entity);
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
