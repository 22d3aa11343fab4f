package io.buslane.engine.namespace;

import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;

import java.util.List;

/** A subscription of a topic with its rules. Thread-safe (fields published, rules immutable). */
public final class SubscriptionEntity {
    final long id;
    final TopicEntity topic;
    volatile SubscriptionProperties properties;
    volatile List<RuleProperties> rules;
    final long createdAtMs;
    volatile long updatedAtMs;
    /** AutoDeleteOnIdle: last activity and the idle check. */
    final Idle idle = new Idle(0);

    SubscriptionEntity(long id, TopicEntity topic, SubscriptionProperties properties, List<RuleProperties> rules,
                       long createdAtMs, long updatedAtMs) {
        this.id = id;
        this.topic = topic;
        this.properties = properties;
        this.rules = List.copyOf(rules);
        this.createdAtMs = createdAtMs;
        this.updatedAtMs = updatedAtMs;
    }

    public long id() {
        return id;
    }

    public TopicEntity topic() {
        return topic;
    }

    public SubscriptionProperties properties() {
        return properties;
    }

    public List<RuleProperties> rules() {
        return rules;
    }

    public long createdAtMs() {
        return createdAtMs;
    }

    public long updatedAtMs() {
        return updatedAtMs;
    }

    /** Records activity (AutoDeleteOnIdle). */
    public void touch(long nowMs) {
        idle.touch(nowMs);
    }

    /** When the entity was last used (AutoDeleteOnIdle's notion of activity; since the restart at the earliest). */
    public long accessedAtMs() {
        return idle.lastActiveMs();
    }
}
