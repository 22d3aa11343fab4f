package io.buslane.engine.namespace;

import io.buslane.engine.entity.Limits;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.shard.Shard;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.buslane.engine.namespace.EntitySettings.duplicateWindowMs;
import static io.buslane.engine.namespace.EntitySettings.maxSizeBytes;
import static io.buslane.engine.namespace.EntitySettings.partitionCount;
import static io.buslane.engine.namespace.EntitySettings.queueSettings;
import static io.buslane.engine.namespace.EntitySettings.subscriptionSettings;

/**
 * Builds an entity's partitions on the shards the {@link ShardPlacement} names, configured from its description
 * (settings, duplicate detection, auto-forwarding, a topic's subscriptions), and logs new ones in their shards'
 * journals. Holds no entity: the {@link Namespace} publishes what it builds.
 */
final class PartitionBuilder {

    private final ShardPlacement placement;
    private Forwarding forwarding;

    PartitionBuilder(ShardPlacement placement) {
        this.placement = placement;
    }

    /** Who forwards the transfers of the partitions built from now on; set once, before the first. */
    void forwardThrough(Forwarding forwarding) {
        this.forwarding = forwarding;
    }


    QueueEntity newQueueEntity(long id, QueueProperties p, long createdAtMs, long updatedAtMs) {
        int n = partitionCount(p.enablePartitioning());
        PartitionRef[] refs = new PartitionRef[n];
        for (int i = 0; i < n; i++) {
            refs[i] = queuePartition(id, i, p, placement.shardOf(id, i));
        }
        return new QueueEntity(id, p, createdAtMs, updatedAtMs, refs);
    }

    PartitionRef queuePartition(long id, int i, QueueProperties p, Shard shard) {
        PartitionRef ref = new PartitionRef(shard, Partition.forQueue(id, i, p.enablePartitioning(),
                queueSettings(p), shard));
        configureQueue(ref, p);
        return ref;
    }

    TopicEntity newTopicEntity(long id, TopicProperties p, long createdAtMs, long updatedAtMs) {
        int n = partitionCount(p.enablePartitioning());
        PartitionRef[] refs = new PartitionRef[n];
        for (int i = 0; i < n; i++) {
            refs[i] = topicPartition(id, i, p, placement.shardOf(id, i));
        }
        return new TopicEntity(id, p, createdAtMs, updatedAtMs, refs);
    }

    private PartitionRef topicPartition(long id, int i, TopicProperties p, Shard shard) {
        PartitionRef ref = new PartitionRef(shard, Partition.forTopic(id, p.name(), i, p.enablePartitioning(),
                Limits.toMillisSaturated(p.defaultMessageTimeToLive()), maxSizeBytes(p.maxSizeInMegabytes()),
                shard));
        ref.partition().setForwarder(forwarding.forwarderFor(ref));
        ref.partition().setDuplicateDetection(duplicateWindowMs(p.requiresDuplicateDetection(),
                p.duplicateDetectionHistoryTimeWindow()));
        return ref;
    }

    /** A topic partition with the topic's current subscriptions (a shard taken or given up in cluster mode). */
    PartitionRef topicPartitionWithSubscriptions(TopicEntity topic, int i, Shard shard) {
        PartitionRef ref = topicPartition(topic.id, i, topic.properties, shard);
        for (SubscriptionEntity sub : topic.subscriptions.values()) {
            ref.partition().addSubscription(sub.properties.name(), sub.id,
                    subscriptionSettings(topic.properties, sub.properties), sub.rules)
                    .setForwarding(sub.properties.forwardTo(), sub.properties.forwardDeadLetteredMessagesTo());
        }
        return ref;
    }

    /** Duplicate detection and auto-forwarding of a queue partition (on its shard thread, or before publication). */
    void configureQueue(PartitionRef ref, QueueProperties p) {
        ref.partition().setForwarder(forwarding.forwarderFor(ref));
        ref.partition().setDuplicateDetection(duplicateWindowMs(p.requiresDuplicateDetection(),
                p.duplicateDetectionHistoryTimeWindow()));
        ref.partition().queue().setForwarding(p.forwardTo(), p.forwardDeadLetteredMessagesTo());
    }

    CompletableFuture<Void> registerPartitions(PartitionRef[] refs) {
        List<CompletableFuture<Object>> all = new ArrayList<>();
        for (PartitionRef ref : refs) {
            if (!ref.shard().serving()) {
                continue; // cluster mode: the node that serves the shard logs the partition when it builds it
            }
            all.add(ref.shard().call(() -> {
                ref.shard().journalLog().partitionCreated(ref.partition());
                return null;
            }));
        }
        return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
    }
}
