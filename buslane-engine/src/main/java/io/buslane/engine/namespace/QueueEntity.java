package io.buslane.engine.namespace;

import io.buslane.engine.entity.QueueProperties;

import java.util.concurrent.atomic.AtomicInteger;

/** A queue of the namespace: its id, description, timestamps and partitions. Thread-safe (fields published). */
public final class QueueEntity {
    final long id;
    volatile QueueProperties properties;
    final long createdAtMs;
    volatile long updatedAtMs;
    final PartitionRef[] partitions;
    final AtomicInteger roundRobin = new AtomicInteger();
    /** AutoDeleteOnIdle: last activity and the idle check. */
    final Idle idle = new Idle(0);

    QueueEntity(long id, QueueProperties properties, long createdAtMs, long updatedAtMs, PartitionRef[] partitions) {
        this.id = id;
        this.properties = properties;
        this.createdAtMs = createdAtMs;
        this.updatedAtMs = updatedAtMs;
        this.partitions = partitions;
    }

    public long id() {
        return id;
    }

    public QueueProperties properties() {
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
}
