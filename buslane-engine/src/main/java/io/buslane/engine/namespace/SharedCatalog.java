package io.buslane.engine.namespace;

import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.partition.QueueSettings;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.buslane.engine.namespace.EntitySettings.subscriptionSettings;

/**
 * Cluster mode's side of the namespace: the entities live in a shared store (PostgreSQL) that every node changes.
 * Installed by the namespace when its store is shared; before each change of this node, and when the node's refresh
 * asks, it reads the namespace again if another node changed it and applies what changed (entities created,
 * updated or deleted elsewhere) to this node's entities and to the partitions it serves. Runs under the
 * {@link EntityCatalog}'s lock.
 */
final class SharedCatalog {

    private final EntityCatalog catalog;

    SharedCatalog(EntityCatalog catalog) {
        this.catalog = catalog;
    }

    /** Reads and applies the namespace if another node changed it; returns whether it did. Under the lock. */
    boolean refreshLocked() {
        if (!catalog.meta.changedElsewhere()) {
            return false;
        }
        reconcile(RecoveredNamespace.read(catalog.meta));
        return true;
    }

    /** Applies the stored namespace to this node's (cluster mode): called with the lock held. */
    void reconcile(RecoveredNamespace latest) {
        catalog.nextEntityId = latest.nextId();
        Map<Long, RecoveredNamespace.Stored> stored = latest.entities;
        Map<String, QueueEntity> q = catalog.queues.copy();
        Set<Long> queueIds = new HashSet<>();
        for (QueueEntity queue : catalog.queues.values()) {
            RecoveredNamespace.Stored s = stored.get(queue.id);
            if (!(s != null && s.properties() instanceof QueueProperties p)) {
                q.remove(EntityTable.key(queue.properties.name()));
                EntityCatalog.dropServed(queue.partitions);
                continue;
            }
            queueIds.add(queue.id);
            if (s.updatedAtMs() != queue.updatedAtMs || !p.equals(queue.properties)) {
                queue.properties = p;
                queue.updatedAtMs = s.updatedAtMs();
                catalog.pushQueue(queue);
            }
        }
        Map<String, TopicEntity> t = catalog.topics.copy();
        Map<Long, TopicEntity> topicsById = new HashMap<>();
        for (TopicEntity topic : catalog.topics.values()) {
            RecoveredNamespace.Stored s = stored.get(topic.id);
            if (!(s != null && s.properties() instanceof TopicProperties p)) {
                t.remove(EntityTable.key(topic.properties.name()));
                EntityCatalog.dropServed(topic.partitions);
                continue;
            }
            topicsById.put(topic.id, topic);
            if (s.updatedAtMs() != topic.updatedAtMs || !p.equals(topic.properties)) {
                topic.properties = p;
                topic.updatedAtMs = s.updatedAtMs();
                catalog.pushTopic(topic);
            }
        }
        for (Map.Entry<Long, RecoveredNamespace.Stored> e : stored.entrySet()) {
            RecoveredNamespace.Stored s = e.getValue();
            if (s.properties() instanceof QueueProperties p && !queueIds.contains(e.getKey())) {
                QueueEntity entity = catalog.builder.newQueueEntity(e.getKey(), p, s.createdAtMs(), s.updatedAtMs());
                q.put(EntityTable.key(p.name()), entity);
                queueIds.add(entity.id);
                catalog.idle.watch(entity);
                catalog.builder.registerPartitions(entity.partitions);
            } else if (s.properties() instanceof TopicProperties p && !topicsById.containsKey(e.getKey())) {
                TopicEntity entity = catalog.builder.newTopicEntity(e.getKey(), p, s.createdAtMs(), s.updatedAtMs());
                t.put(EntityTable.key(p.name()), entity);
                topicsById.put(entity.id, entity);
                catalog.idle.watch(entity);
                catalog.builder.registerPartitions(entity.partitions);
            }
        }
        for (TopicEntity topic : topicsById.values()) {
            reconcileSubscriptions(topic, stored);
        }
        catalog.queues.publish(q);
        catalog.topics.publish(t);
    }

    private void reconcileSubscriptions(TopicEntity topic, Map<Long, RecoveredNamespace.Stored> stored) {
        Map<String, SubscriptionEntity> subs = new LinkedHashMap<>(topic.subscriptions);
        Set<Long> known = new HashSet<>();
        for (SubscriptionEntity sub : topic.subscriptions.values()) {
            RecoveredNamespace.Stored s = stored.get(sub.id);
            if (!(s != null && s.properties() instanceof SubscriptionProperties p)) {
                subs.remove(EntityTable.key(sub.properties.name()));
                String name = sub.properties.name();
                PartitionRef.onServing(topic.partitions, x -> {
                    x.removeSubscription(name);
                    return null;
                });
                continue;
            }
            known.add(sub.id);
            if (s.updatedAtMs() != sub.updatedAtMs || !p.equals(sub.properties) || !s.rules().equals(sub.rules)) {
                sub.properties = p;
                sub.rules = List.copyOf(s.rules());
                sub.updatedAtMs = s.updatedAtMs();
                catalog.pushSubscription(sub);
            }
        }
        for (Map.Entry<Long, RecoveredNamespace.Stored> e : stored.entrySet()) {
            RecoveredNamespace.Stored s = e.getValue();
            if (s.properties() instanceof SubscriptionProperties p && s.topicId() == topic.id
                    && !known.contains(e.getKey())) {
                SubscriptionEntity sub = new SubscriptionEntity(e.getKey(), topic, p, s.rules(), s.createdAtMs(),
                        s.updatedAtMs());
                subs.put(EntityTable.key(p.name()), sub);
                catalog.idle.watch(sub);
                QueueSettings settings = subscriptionSettings(topic.properties, p);
                PartitionRef.onServing(topic.partitions, x -> {
                    x.addSubscription(p.name(), sub.id, settings, sub.rules)
                            .setForwarding(p.forwardTo(), p.forwardDeadLetteredMessagesTo());
                    return null;
                });
            }
        }
        topic.subscriptions = Map.copyOf(subs);
    }

}
