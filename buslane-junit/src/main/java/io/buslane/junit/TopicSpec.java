package io.buslane.junit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * A topic defined in code with its subscriptions: {@code .topic("events", t -> t.subscription("all"))}.
 */
public final class TopicSpec extends EntitySpec<TopicSpec> {

    private final ArrayNode subscriptions = JsonNodeFactory.instance.arrayNode();

    TopicSpec(String name) {
        super(name);
    }

    /** Adds a subscription that receives every message. */
    public TopicSpec subscription(String name) {
        return subscription(name, s -> { });
    }

    /** Adds a subscription configured by {@code spec}. */
    public TopicSpec subscription(String name, Consumer<SubscriptionSpec> spec) {
        SubscriptionSpec s = new SubscriptionSpec(name);
        spec.accept(s);
        subscriptions.add(s.toJson());
        return this;
    }

    /** Turns duplicate detection on with this history window. */
    public TopicSpec duplicateDetection(Duration window) {
        property("RequiresDuplicateDetection", true);
        return property("DuplicateDetectionHistoryTimeWindow", window);
    }

    @Override
    ObjectNode toJson() {
        ObjectNode entry = super.toJson();
        entry.set("Subscriptions", subscriptions.deepCopy());
        return entry;
    }
}
