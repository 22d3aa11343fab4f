package io.buslane.server.config;

import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Immutable. A subscription of a {@link TopicDefinition} with its rules, in file order. Never empty: a subscription
 * whose Config.json entry lists no rules gets {@link RuleProperties#defaultRule()}.
 *
 * @param subscription the subscription's properties
 * @param rules        its rules, names unique case-insensitively
 */
public record SubscriptionDefinition(SubscriptionProperties subscription, List<RuleProperties> rules) {

    public SubscriptionDefinition {
        Objects.requireNonNull(subscription, "subscription");
        rules = List.copyOf(rules);
    }

    /** The rule with this name, compared case-insensitively. */
    public Optional<RuleProperties> findRule(String name) {
        return rules.stream().filter(r -> r.name().equalsIgnoreCase(name)).findFirst();
    }
}
