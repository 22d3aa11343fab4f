package io.buslane.engine.namespace;

import io.buslane.common.time.Clock;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.persist.MetaJournal;
import io.buslane.engine.shard.Shard;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The namespace of queues, topics and subscriptions, as a facade over its parts: the {@link EntityCatalog} (the
 * entities by name and every change of them, checked whole, written to the {@code meta} journal and synced before
 * it is acknowledged), the {@link PartitionBuilder} (partitions on the shards the {@link ShardPlacement} names),
 * {@link PartitionRecovery} (building and replaying them at start and when a shard is replaced), the
 * {@link IdleReaper} (AutoDeleteOnIdle) and, in cluster mode only, the {@link SharedCatalog} (the changes other
 * nodes made to the shared store).
 *
 * <p>Entity changes are serialised by a lock (they are rare); the namespace is published as immutable snapshots
 * (copy-on-write tables) that any thread reads without locking.
 */
public final class Namespace {

    private final MetaJournal meta;
    private final PartitionBuilder builder;
    private final IdleReaper idle;
    private final EntityCatalog catalog;
    private final PartitionRecovery recovery;
    /** Cluster mode only (a shared meta store); null otherwise. */
    private final SharedCatalog shared;

    public Namespace(MetaJournal meta, Clock clock, int shardCount, ShardPlacement placement) {
        this.meta = meta;
        this.builder = new PartitionBuilder(placement);
        this.idle = new IdleReaper(this, clock);
        this.catalog = new EntityCatalog(meta, clock, shardCount, builder, idle);
        this.recovery = new PartitionRecovery(catalog);
        this.shared = meta.shared() ? new SharedCatalog(catalog) : null;
        catalog.share(shared);
    }

    /** Who forwards the transfers of the partitions this namespace builds; set once, before {@link #recover}. */
    public void forwardThrough(Forwarding forwarding) {
        builder.forwardThrough(forwarding);
    }

    /** Builds the recovered entities, replays every shard's journal into their partitions and arms idle checks. */
    public void recover(RecoveredNamespace recovered, Shard[] shards) {
        recovery.recover(recovered, shards);
    }

    /** Stops AutoDeleteOnIdle (the engine is closing); timers that still fire do nothing. */
    public void stopReaping() {
        idle.stop();
    }

    /** Closes the meta journal. */
    public void close() {
        synchronized (catalog.lock) {
            meta.close();
        }
    }

    // ================================================================================================ lookups

    public QueueEntity queue(String name) {
        return catalog.queues.get(name);
    }

    public TopicEntity topic(String name) {
        return catalog.topics.get(name);
    }

    public Collection<QueueEntity> queues() {
        return catalog.queues.values();
    }

    public Collection<TopicEntity> topics() {
        return catalog.topics.values();
    }

    // ================================================================================================ cluster mode

    /**
     * Puts {@code shard} in the place of the shard with its index (cluster mode: this node takes a shard, or gives
     * one up and puts a dormant one there): every partition placed on that index is built anew, empty, on the new
     * shard, with its entity's current description, subscriptions and rules, and the entities are published with
     * the new partitions. A serving shard's journal is then replayed into them. Receivers bound to the old
     * partitions are not moved: the caller closed them. Returns the old partitions.
     */
    public List<PartitionRef> replaceShard(Shard[] slots, Shard shard) {
        return recovery.replaceShard(slots, shard);
    }

    /**
     * Cluster mode: reads the namespace again when another node changed it, and applies what changed (entities
     * created, updated or deleted elsewhere) to this node's entities and to the partitions it serves. Returns
     * whether anything was read. Outside cluster mode it does nothing.
     */
    public boolean refresh() {
        if (shared == null) {
            return false;
        }
        synchronized (catalog.lock) {
            return shared.refreshLocked();
        }
    }

    // ================================================================================================ entities

    /** Creates a queue; completes once it is durable and its partitions exist. */
    public CompletableFuture<QueueEntity> createQueue(QueueProperties p) {
        return catalog.createQueue(p);
    }

    /** Replaces a queue's description (partitioning and sessions cannot change). */
    public CompletableFuture<QueueEntity> updateQueue(QueueProperties p) {
        return catalog.updateQueue(p);
    }

    /** Deletes a queue and all its messages. */
    public CompletableFuture<Void> deleteQueue(String name) {
        return catalog.deleteQueue(name);
    }

    public CompletableFuture<TopicEntity> createTopic(TopicProperties p) {
        return catalog.createTopic(p);
    }

    public CompletableFuture<TopicEntity> updateTopic(TopicProperties p) {
        return catalog.updateTopic(p);
    }

    public CompletableFuture<Void> deleteTopic(String name) {
        return catalog.deleteTopic(name);
    }

    /** Creates a subscription; without rules it gets the {@code $Default} TrueFilter rule. */
    public CompletableFuture<SubscriptionEntity> createSubscription(SubscriptionProperties p,
                                                                    List<RuleProperties> rules) {
        return catalog.createSubscription(p, rules);
    }

    public CompletableFuture<SubscriptionEntity> updateSubscription(SubscriptionProperties p) {
        return catalog.updateSubscription(p);
    }

    public CompletableFuture<Void> deleteSubscription(String topicName, String name) {
        return catalog.deleteSubscription(topicName, name);
    }

    /** Adds a rule to a subscription. */
    public CompletableFuture<SubscriptionEntity> addRule(String topicName, String subscription, RuleProperties rule) {
        return catalog.addRule(topicName, subscription, rule);
    }

    /** Removes a rule from a subscription. */
    public CompletableFuture<SubscriptionEntity> removeRule(String topicName, String subscription, String ruleName) {
        return catalog.removeRule(topicName, subscription, ruleName);
    }
}
