package io.buslane.engine.namespace;

import io.buslane.engine.entity.TopicProperties;

import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** A topic of the namespace with its subscriptions. Thread-safe (copy-on-write subscription map). */
public final class TopicEntity {
    final long id;
    volatile TopicProperties properties;
    final long createdAtMs;
    volatile long updatedAtMs;
    final PartitionRef[] partitions;
    final AtomicInteger roundRobin = new AtomicInteger();
    /** AutoDeleteOnIdle: last activity and the idle check. */
    final Idle idle = new Idle(0);
    volatile Map<String, SubscriptionEntity> subscriptions = Map.of();

    TopicEntity(long id, TopicProperties properties, long createdAtMs, long updatedAtMs, PartitionRef[] partitions) {
        this.id = id;
        this.properties = properties;
        this.createdAtMs = createdAtMs;
        this.updatedAtMs = updatedAtMs;
        this.partitions = partitions;
    }

    public long id() {
        return id;
    }

    public TopicProperties properties() {
        return properties;
    }

    public long createdAtMs() {
        return createdAtMs;
    }

    public long updatedAtMs() {
        return updatedAtMs;
    }

    /** The entity's partitions, each with its shard (engine-internal: touched only through shard commands). */
    public PartitionRef[] partitions() {
        return partitions;
    }

    /** The round-robin counter that spreads unkeyed sends over the partitions. */
    public AtomicInteger roundRobin() {
        return roundRobin;
    }

    /** Records activity (AutoDeleteOnIdle). */
    public void touch(long nowMs) {
        idle.touch(nowMs);
    }

    /** When the entity was last used (AutoDeleteOnIdle's notion of activity; since the restart at the earliest). */
    public long accessedAtMs() {
        return idle.lastActiveMs();
    }

    /** The subscription with this name (case-insensitive), or null. */
    public SubscriptionEntity subscription(String name) {
        return subscriptions.get(name.toLowerCase(Locale.ROOT));
    }

    public Collection<SubscriptionEntity> subscriptions() {
        return subscriptions.values();
    }
}
