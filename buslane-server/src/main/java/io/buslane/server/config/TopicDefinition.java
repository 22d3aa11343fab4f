package io.buslane.server.config;

import io.buslane.engine.entity.TopicProperties;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Immutable. A topic of a {@link Topology} with its subscriptions, in file order. The list may be empty: Buslane
 * accepts topics without subscriptions although the emulator's schema requires at least one.
 *
 * @param topic         the topic's properties
 * @param subscriptions its subscriptions, names unique case-insensitively
 */
public record TopicDefinition(TopicProperties topic, List<SubscriptionDefinition> subscriptions) {

    public TopicDefinition {
        Objects.requireNonNull(topic, "topic");
        subscriptions = List.copyOf(subscriptions);
    }

    /** The subscription with this name, compared case-insensitively. */
    public Optional<SubscriptionDefinition> findSubscription(String name) {
        return subscriptions.stream().filter(s -> s.subscription().name().equalsIgnoreCase(name)).findFirst();
    }
}
