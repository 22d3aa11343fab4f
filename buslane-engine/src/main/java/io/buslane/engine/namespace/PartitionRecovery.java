package io.buslane.engine.namespace;

import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.persist.MetaJournal;
import io.buslane.engine.shard.Shard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.buslane.engine.namespace.EntitySettings.subscriptionSettings;

/**
 * Builds the namespace's partitions from what is stored and replays the shards' journals into them: at start
 * ({@link #recover}) and, in cluster mode, when a shard is taken or given up ({@link #replaceShard}).
 */
final class PartitionRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(Namespace.class);

    private final EntityCatalog catalog;
    private final PartitionBuilder builder;

    PartitionRecovery(EntityCatalog catalog) {
        this.catalog = catalog;
        this.builder = catalog.builder;
    }

    /** Builds the recovered entities, replays every shard's journal into their partitions and arms idle checks. */
    void recover(RecoveredNamespace recovered, Shard[] shards) {
        catalog.nextEntityId = recovered.nextId();
        Map<String, QueueEntity> q = new HashMap<>();
        Map<String, TopicEntity> t = new HashMap<>();
        Map<Long, TopicEntity> topicsById = new HashMap<>();
        for (Map.Entry<Long, RecoveredNamespace.Stored> e : recovered.entities.entrySet()) {
            RecoveredNamespace.Stored v = e.getValue();
            if (v.properties() instanceof QueueProperties p) {
                q.put(EntityTable.key(p.name()),
                        builder.newQueueEntity(e.getKey(), p, v.createdAtMs(), v.updatedAtMs()));
            } else if (v.properties() instanceof TopicProperties p) {
                TopicEntity topic = builder.newTopicEntity(e.getKey(), p, v.createdAtMs(), v.updatedAtMs());
                t.put(EntityTable.key(p.name()), topic);
                topicsById.put(e.getKey(), topic);
            }
        }
        for (Map.Entry<Long, RecoveredNamespace.Stored> e : recovered.entities.entrySet()) {
            RecoveredNamespace.Stored v = e.getValue();
            if (v.properties() instanceof SubscriptionProperties p) {
                TopicEntity topic = topicsById.get(v.topicId());
                if (topic == null) {
                    continue;
                }
                SubscriptionEntity sub = new SubscriptionEntity(e.getKey(), topic, p, v.rules(), v.createdAtMs(),
                        v.updatedAtMs());
                Map<String, SubscriptionEntity> subs = new LinkedHashMap<>(topic.subscriptions);
                subs.put(EntityTable.key(p.name()), sub);
                topic.subscriptions = Map.copyOf(subs);
                for (PartitionRef ref : topic.partitions) {
                    ref.partition().addSubscription(p.name(), sub.id, subscriptionSettings(topic.properties, p),
                            v.rules()).setForwarding(p.forwardTo(), p.forwardDeadLetteredMessagesTo());
                }
            }
        }
        catalog.queues.publish(q);
        catalog.topics.publish(t);
        replayShards(shards);
        for (QueueEntity queue : catalog.queues.values()) {
            catalog.idle.watch(queue);
        }
        for (TopicEntity topic : catalog.topics.values()) {
            catalog.idle.watch(topic);
            for (SubscriptionEntity sub : topic.subscriptions.values()) {
                catalog.idle.watch(sub);
            }
        }
        LOG.info("Namespace recovered: {} queues, {} topics, {} subscriptions", catalog.queues.size(),
                catalog.topics.size(),
                catalog.topics.values().stream().mapToInt(x -> x.subscriptions.size()).sum());
        if (recovered.shardCount == 0) {
            MetaJournal meta = catalog.meta;
            synchronized (catalog.lock) {
                try {
                    meta.putNamespace(catalog.nextEntityId, catalog.shardCount);
                    meta.sync();
                } catch (MetaJournal.ConflictException e) {
                    new SharedCatalog(catalog).reconcile(RecoveredNamespace.read(meta)); // another node was first
                }
            }
        }
    }

    private void replayShards(Shard[] shards) {
        List<PartitionRef> all = new ArrayList<>();
        Map<Long, PartitionRef[]> byEntity = new HashMap<>();
        for (QueueEntity queue : catalog.queues.values()) {
            all.addAll(List.of(queue.partitions));
            byEntity.put(queue.id, queue.partitions);
        }
        for (TopicEntity topic : catalog.topics.values()) {
            all.addAll(List.of(topic.partitions));
            byEntity.put(topic.id, topic.partitions);
        }
        for (Shard shard : shards) {
            if (!shard.serving()) {
                continue; // cluster mode: another node serves it
            }
            shard.runStartup(() -> {
                Set<Partition> known = shard.journal().replay(
                        (entityId, index) -> lookupPartition(byEntity, shard, entityId, index));
                for (PartitionRef ref : all) {
                    if (ref.shard() == shard) {
                        if (!known.contains(ref.partition())) {
                            shard.journalLog().partitionCreated(ref.partition());
                        }
                        ref.partition().afterReplay();
                    }
                }
            });
        }
    }

    private static Partition lookupPartition(Map<Long, PartitionRef[]> byEntity, Shard shard, long entityId,
                                             int index) {
        PartitionRef[] refs = byEntity.get(entityId);
        if (refs == null || index < 0 || index >= refs.length || refs[index].shard() != shard) {
            return null;
        }
        return refs[index].partition();
    }

    /**
     * Puts {@code shard} in the place of the shard with its index (cluster mode: this node takes a shard, or gives
     * one up and puts a dormant one there): every partition placed on that index is built anew, empty, on the new
     * shard, with its entity's current description, subscriptions and rules, and the entities are published with
     * the new partitions. A serving shard's journal is then replayed into them. Receivers bound to the old
     * partitions are not moved: the caller closed them. Returns the old partitions.
     */
    List<PartitionRef> replaceShard(Shard[] slots, Shard shard) {
        List<PartitionRef> old = new ArrayList<>();
        synchronized (catalog.lock) {
            int k = shard.index();
            for (QueueEntity queue : catalog.queues.values()) {
                PartitionRef[] refs = queue.partitions;
                for (int i = 0; i < refs.length; i++) {
                    if (refs[i].shard().index() == k) {
                        old.add(refs[i]);
                        refs[i] = builder.queuePartition(queue.id, i, queue.properties, shard);
                    }
                }
            }
            for (TopicEntity topic : catalog.topics.values()) {
                PartitionRef[] refs = topic.partitions;
                for (int i = 0; i < refs.length; i++) {
                    if (refs[i].shard().index() == k) {
                        old.add(refs[i]);
                        refs[i] = builder.topicPartitionWithSubscriptions(topic, i, shard);
                    }
                }
            }
            slots[k] = shard;
            if (shard.serving()) {
                replayShards(new Shard[] {shard});
            }
            // republished: a reader that reads the maps (volatile) after this sees the new partitions
            catalog.queues.republish();
            catalog.topics.republish();
        }
        return old;
    }
}
