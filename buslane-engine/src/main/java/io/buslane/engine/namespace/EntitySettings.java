package io.buslane.engine.namespace;

import io.buslane.engine.entity.Limits;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.partition.QueueSettings;

import java.time.Duration;

/** What a partition is told of its entity's description: the description translated into milliseconds and bytes. */
public final class EntitySettings {

    private EntitySettings() {
    }

    /** Number of partitions of an entity: {@link Limits#PARTITION_COUNT} when partitioned, else one. */
    public static int partitionCount(boolean partitioned) {
        return partitioned ? Limits.PARTITION_COUNT : 1;
    }

    /** The duplicate-detection window in ms, or 0 when duplicate detection is off. */
    public static long duplicateWindowMs(boolean on, Duration window) {
        return on ? Math.max(1, Limits.toMillisSaturated(window)) : 0;
    }

    public static long maxSizeBytes(long megabytes) {
        return megabytes >= Long.MAX_VALUE / (1024 * 1024) ? Long.MAX_VALUE : megabytes * 1024 * 1024;
    }

    public static QueueSettings queueSettings(QueueProperties p) {
        return new QueueSettings(p.name(), Limits.toMillisSaturated(p.lockDuration()), p.maxDeliveryCount(),
                p.requiresSession(), Limits.toMillisSaturated(p.defaultMessageTimeToLive()),
                p.deadLetteringOnMessageExpiration(), p.status(), maxSizeBytes(p.maxSizeInMegabytes()));
    }

    public static QueueSettings subscriptionSettings(TopicProperties topic, SubscriptionProperties p) {
        long ttl = Math.min(Limits.toMillisSaturated(topic.defaultMessageTimeToLive()),
                Limits.toMillisSaturated(p.defaultMessageTimeToLive()));
        return new QueueSettings(p.path(), Limits.toMillisSaturated(p.lockDuration()), p.maxDeliveryCount(),
                p.requiresSession(), ttl, p.deadLetteringOnMessageExpiration(), p.status(),
                maxSizeBytes(topic.maxSizeInMegabytes()), p.deadLetteringOnFilterEvaluationExceptions());
    }

    /** AutoDeleteOnIdle in ms; the service sets it to its maximum on an entity that auto-forwards. */
    static long idleMs(Duration autoDeleteOnIdle, String forwardTo) {
        return forwardTo != null ? Long.MAX_VALUE : Limits.toMillisSaturated(autoDeleteOnIdle);
    }
}
