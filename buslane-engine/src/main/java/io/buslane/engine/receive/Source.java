package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.SubQueueState;

/**
 * A receivable entity resolved from an address: what a receive or settlement needs of it; made per call, so a
 * subscription's path (for error messages only) is built when asked for, not on every settlement.
 */
public record Source(EntityAddress address, PartitionRef[] partitions, boolean partitioned, boolean requiresSession,
                     EntityStatus status, String queueName, SubscriptionProperties subscription) {

    /** The entity's path, for error messages. */
    public String name() {
        return subscription != null ? subscription.path() : queueName;
    }

    /** Fails as the service does when the entity does not give out messages (disabled, receive-disabled). */
    public void requireReceivable() {
        if (!status.canReceive()) {
            throw status.error(name(), false);
        }
    }

    /** The queue or subscription an address names; records activity on it. */
    public static Source of(Namespace namespace, EntityAddress address, long nowMs) {
        if (address == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required.");
        }
        if (address.subscription() == null) {
            QueueEntity q = namespace.queue(address.entityPath());
            if (q == null) {
                if (namespace.topic(address.entityPath()) != null) {
                    throw new BrokerException(ErrorKind.INVALID_OPERATION, "Cannot receive from topic '"
                            + address.entityPath() + "'; receive from one of its subscriptions.");
                }
                throw BrokerException.entityNotFound(address.entityPath());
            }
            q.touch(nowMs);
            QueueProperties p = q.properties();
            return new Source(address, q.partitions(), p.enablePartitioning(), p.requiresSession(), p.status(),
                    p.name(), null);
        }
        TopicEntity t = namespace.topic(address.entityPath());
        SubscriptionEntity s = t == null ? null : t.subscription(address.subscription());
        if (s == null) {
            throw BrokerException.entityNotFound(address.entityName());
        }
        s.touch(nowMs);
        SubscriptionProperties sp = s.properties();
        return new Source(address, t.partitions(), t.properties().enablePartitioning(), sp.requiresSession(),
                sp.status(), null, sp);
    }

    /** Partition {@code index} of the source (cluster mode: the one another node names); ARGUMENT if none. */
    public static PartitionRef partition(Source source, int index) {
        if (index < 0 || index >= source.partitions().length) {
            throw new BrokerException(ErrorKind.ARGUMENT, "No partition " + index + " in '" + source.address()
                    + "'.");
        }
        return source.partitions()[index];
    }

    /** The sub-queue an address names within one partition (shard thread only). */
    public static SubQueueState subQueue(PartitionRef ref, EntityAddress address) {
        Partition p = ref.partition();
        SubQueueState main = address.subscription() == null ? p.queue() : p.subscription(address.subscription());
        if (main == null) {
            throw BrokerException.entityNotFound(address.entityName());
        }
        return main.subQueue(address.subQueue());
    }
}
