package io.buslane.engine.namespace;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.entity.Limits;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.filter.RuleSet;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.QueueSettings;
import io.buslane.engine.persist.MetaJournal;
import io.buslane.engine.shard.Shard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static io.buslane.engine.namespace.EntitySettings.duplicateWindowMs;
import static io.buslane.engine.namespace.EntitySettings.maxSizeBytes;
import static io.buslane.engine.namespace.EntitySettings.queueSettings;
import static io.buslane.engine.namespace.EntitySettings.subscriptionSettings;

/**
 * The namespace of queues, topics and subscriptions: creation, update and deletion of entities and their rules,
 * written to the {@code meta} journal and synced before they are acknowledged, and the entities' partitions, built
 * on the shards the {@link ShardPlacement} names.
 *
 * <p>Entity changes are serialised by a lock (they are rare); the namespace is published as immutable snapshots
 * (copy-on-write maps) that any thread reads without locking.
 */
public final class Namespace {

    private static final Logger LOG = LoggerFactory.getLogger(Namespace.class);

    private final MetaJournal meta;
    private final Clock clock;
    private final int shardCount;
    private final IdleReaper idle;
    private final Object metaLock = new Object();
    private volatile Map<String, QueueEntity> queues = Map.of();
    private volatile Map<String, TopicEntity> topics = Map.of();
    private long nextEntityId = 1;
    private final PartitionBuilder builder;

    public Namespace(MetaJournal meta, Clock clock, int shardCount, ShardPlacement placement) {
        this.meta = meta;
        this.clock = clock;
        this.shardCount = shardCount;
        this.builder = new PartitionBuilder(placement);
        this.idle = new IdleReaper(this, clock);
    }

    /** Who forwards the transfers of the partitions this namespace builds; set once, before {@link #recover}. */
    public void forwardThrough(Forwarding forwarding) {
        builder.forwardThrough(forwarding);
    }

    // ================================================================================================ recovery

    /** Builds the recovered entities, replays every shard's journal into their partitions and arms idle checks. */
    public void recover(RecoveredNamespace recovered, Shard[] shards) {
        nextEntityId = recovered.nextId();
        Map<String, QueueEntity> q = new HashMap<>();
        Map<String, TopicEntity> t = new HashMap<>();
        Map<Long, TopicEntity> topicsById = new HashMap<>();
        for (Map.Entry<Long, RecoveredNamespace.Stored> e : recovered.entities.entrySet()) {
            RecoveredNamespace.Stored v = e.getValue();
            if (v.properties() instanceof QueueProperties p) {
                q.put(key(p.name()), builder.newQueueEntity(e.getKey(), p, v.createdAtMs(), v.updatedAtMs()));
            } else if (v.properties() instanceof TopicProperties p) {
                TopicEntity topic = builder.newTopicEntity(e.getKey(), p, v.createdAtMs(), v.updatedAtMs());
                t.put(key(p.name()), topic);
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
                subs.put(key(p.name()), sub);
                topic.subscriptions = Map.copyOf(subs);
                for (PartitionRef ref : topic.partitions) {
                    ref.partition().addSubscription(p.name(), sub.id, subscriptionSettings(topic.properties, p),
                            v.rules()).setForwarding(p.forwardTo(), p.forwardDeadLetteredMessagesTo());
                }
            }
        }
        queues = Map.copyOf(q);
        topics = Map.copyOf(t);
        replayShards(shards);
        for (QueueEntity queue : queues.values()) {
            idle.watch(queue);
        }
        for (TopicEntity topic : topics.values()) {
            idle.watch(topic);
            for (SubscriptionEntity sub : topic.subscriptions.values()) {
                idle.watch(sub);
            }
        }
        LOG.info("Namespace recovered: {} queues, {} topics, {} subscriptions", queues.size(), topics.size(),
                topics.values().stream().mapToInt(x -> x.subscriptions.size()).sum());
        if (recovered.shardCount == 0) {
            synchronized (metaLock) {
                try {
                    meta.putNamespace(nextEntityId, shardCount);
                    meta.sync();
                } catch (MetaJournal.ConflictException e) {
                    reconcile(RecoveredNamespace.read(meta)); // another node started the namespace first
                }
            }
        }
    }

    private void replayShards(Shard[] shards) {
        List<PartitionRef> all = new ArrayList<>();
        Map<Long, PartitionRef[]> byEntity = new HashMap<>();
        for (QueueEntity queue : queues.values()) {
            all.addAll(List.of(queue.partitions));
            byEntity.put(queue.id, queue.partitions);
        }
        for (TopicEntity topic : topics.values()) {
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

    /** Stops AutoDeleteOnIdle (the engine is closing); timers that still fire do nothing. */
    public void stopReaping() {
        idle.stop();
    }

    /** Closes the meta journal. */
    public void close() {
        synchronized (metaLock) {
            meta.close();
        }
    }

    // ================================================================================================ lookups

    static String key(String name) {
        return name.toLowerCase(Locale.ROOT);
    }

    public QueueEntity queue(String name) {
        return queues.get(key(name));
    }

    public TopicEntity topic(String name) {
        return topics.get(key(name));
    }

    public Collection<QueueEntity> queues() {
        return queues.values();
    }

    public Collection<TopicEntity> topics() {
        return topics.values();
    }

    private QueueEntity requireQueue(String name) {
        QueueEntity q = queue(name);
        if (q == null) {
            throw BrokerException.entityNotFound(name);
        }
        return q;
    }

    private TopicEntity requireTopic(String name) {
        TopicEntity t = topic(name);
        if (t == null) {
            throw BrokerException.entityNotFound(name);
        }
        return t;
    }

    private static SubscriptionEntity requireSubscription(TopicEntity topic, String name) {
        SubscriptionEntity s = topic.subscription(name);
        if (s == null) {
            throw BrokerException.entityNotFound(topic.properties.name() + "/Subscriptions/" + name);
        }
        return s;
    }

    private void requireNameFree(String name) {
        if (queues.containsKey(key(name)) || topics.containsKey(key(name))) {
            throw new BrokerException(ErrorKind.ENTITY_ALREADY_EXISTS, "The messaging entity '" + name
                    + "' already exists.");
        }
    }

    /** Service Bus does not forward from session-enabled queues and subscriptions (their dead letters it may). */
    private static void requireNoForwardingFromSessions(String entity, boolean requiresSession, String forwardTo) {
        if (requiresSession && forwardTo != null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "Auto-forwarding (ForwardTo) is not supported on an entity "
                    + "that requires sessions: '" + entity + "' has RequiresSession set. Forward to a session-enabled "
                    + "entity from one without sessions instead.");
        }
    }

    /** A forwarding target must exist: a bad argument of the create or update (the admin API answers 400). */
    private void requireForwardTarget(String forwardTo, String property) {
        if (forwardTo != null && queue(forwardTo) == null && topic(forwardTo) == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, property + " names '" + forwardTo
                    + "', which is neither a queue nor a topic of this namespace; the target must exist first.");
        }
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
        List<PartitionRef> old = new ArrayList<>();
        synchronized (metaLock) {
            int k = shard.index();
            for (QueueEntity queue : queues.values()) {
                PartitionRef[] refs = queue.partitions;
                for (int i = 0; i < refs.length; i++) {
                    if (refs[i].shard().index() == k) {
                        old.add(refs[i]);
                        refs[i] = builder.queuePartition(queue.id, i, queue.properties, shard);
                    }
                }
            }
            for (TopicEntity topic : topics.values()) {
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
            queues = Map.copyOf(queues);
            topics = Map.copyOf(topics);
        }
        return old;
    }

    // ================================================================================================ shared metadata

    /**
     * Cluster mode: reads the namespace again when another node changed it, and applies what changed (entities
     * created, updated or deleted elsewhere) to this node's entities and to the partitions it serves. Returns
     * whether anything was read. Outside cluster mode it does nothing.
     */
    public boolean refresh() {
        if (!meta.shared()) {
            return false;
        }
        synchronized (metaLock) {
            return refreshLocked();
        }
    }

    private boolean refreshLocked() {
        if (!meta.shared() || !meta.changedElsewhere()) {
            return false;
        }
        reconcile(RecoveredNamespace.read(meta));
        return true;
    }

    /**
     * Makes a namespace change under the meta lock: the namespace re-read first when another node changed it
     * (cluster mode), the change checked and written; a write that loses the race to another node's change at
     * commit is re-read, re-checked and retried, up to five times (then SERVER_BUSY).
     */
    private <T> T writeMeta(java.util.function.Supplier<T> change) {
        synchronized (metaLock) {
            for (int attempt = 1; ; attempt++) {
                refreshLocked();
                try {
                    return change.get();
                } catch (MetaJournal.ConflictException e) {
                    giveUpAfter(attempt, e);
                }
            }
        }
    }

    /** A change lost the race to another node's change (read and re-checked each time): retry, up to five times. */
    private static void giveUpAfter(int attempt, MetaJournal.ConflictException e) {
        if (attempt >= 5) {
            throw new BrokerException(ErrorKind.SERVER_BUSY, "The namespace was changed concurrently through other "
                    + "nodes; the change was not made. Retry.", e);
        }
    }

    /** Applies the stored namespace to this node's (cluster mode): called with the meta lock held. */
    private void reconcile(RecoveredNamespace latest) {
        nextEntityId = latest.nextId();
        Map<Long, RecoveredNamespace.Stored> stored = latest.entities;
        Map<String, QueueEntity> q = new HashMap<>(queues);
        Set<Long> queueIds = new HashSet<>();
        for (QueueEntity queue : queues.values()) {
            RecoveredNamespace.Stored s = stored.get(queue.id);
            if (!(s != null && s.properties() instanceof QueueProperties p)) {
                q.remove(key(queue.properties.name()));
                dropServed(queue.partitions);
                continue;
            }
            queueIds.add(queue.id);
            if (s.updatedAtMs() != queue.updatedAtMs || !p.equals(queue.properties)) {
                queue.properties = p;
                queue.updatedAtMs = s.updatedAtMs();
                pushQueue(queue);
            }
        }
        Map<String, TopicEntity> t = new HashMap<>(topics);
        Map<Long, TopicEntity> topicsById = new HashMap<>();
        for (TopicEntity topic : topics.values()) {
            RecoveredNamespace.Stored s = stored.get(topic.id);
            if (!(s != null && s.properties() instanceof TopicProperties p)) {
                t.remove(key(topic.properties.name()));
                dropServed(topic.partitions);
                continue;
            }
            topicsById.put(topic.id, topic);
            if (s.updatedAtMs() != topic.updatedAtMs || !p.equals(topic.properties)) {
                topic.properties = p;
                topic.updatedAtMs = s.updatedAtMs();
                pushTopic(topic);
            }
        }
        for (Map.Entry<Long, RecoveredNamespace.Stored> e : stored.entrySet()) {
            RecoveredNamespace.Stored s = e.getValue();
            if (s.properties() instanceof QueueProperties p && !queueIds.contains(e.getKey())) {
                QueueEntity entity = builder.newQueueEntity(e.getKey(), p, s.createdAtMs(), s.updatedAtMs());
                q.put(key(p.name()), entity);
                queueIds.add(entity.id);
                idle.watch(entity);
                builder.registerPartitions(entity.partitions);
            } else if (s.properties() instanceof TopicProperties p && !topicsById.containsKey(e.getKey())) {
                TopicEntity entity = builder.newTopicEntity(e.getKey(), p, s.createdAtMs(), s.updatedAtMs());
                t.put(key(p.name()), entity);
                topicsById.put(entity.id, entity);
                idle.watch(entity);
                builder.registerPartitions(entity.partitions);
            }
        }
        for (TopicEntity topic : topicsById.values()) {
            reconcileSubscriptions(topic, stored);
        }
        queues = Map.copyOf(q);
        topics = Map.copyOf(t);
    }

    /** Drops everything the partitions this node serves hold (the entity is gone); completes when done. */
    private static CompletableFuture<Void> dropServed(PartitionRef[] partitions) {
        return PartitionRef.onServing(partitions, p -> {
            p.dropEverything();
            return null;
        }).thenApply(x -> null);
    }

    private void reconcileSubscriptions(TopicEntity topic, Map<Long, RecoveredNamespace.Stored> stored) {
        Map<String, SubscriptionEntity> subs = new LinkedHashMap<>(topic.subscriptions);
        java.util.Set<Long> known = new java.util.HashSet<>();
        for (SubscriptionEntity sub : topic.subscriptions.values()) {
            RecoveredNamespace.Stored s = stored.get(sub.id);
            if (!(s != null && s.properties() instanceof SubscriptionProperties p)) {
                subs.remove(key(sub.properties.name()));
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
                pushSubscription(sub);
            }
        }
        for (Map.Entry<Long, RecoveredNamespace.Stored> e : stored.entrySet()) {
            RecoveredNamespace.Stored s = e.getValue();
            if (s.properties() instanceof SubscriptionProperties p && s.topicId() == topic.id
                    && !known.contains(e.getKey())) {
                SubscriptionEntity sub = new SubscriptionEntity(e.getKey(), topic, p, s.rules(), s.createdAtMs(),
                        s.updatedAtMs());
                subs.put(key(p.name()), sub);
                idle.watch(sub);
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

    // ================================================================================================ queues

    /** Creates a queue; completes once it is durable and its partitions exist. */
    public CompletableFuture<QueueEntity> createQueue(QueueProperties p) {
        QueueEntity entity = writeMeta(() -> {
            requireNameFree(p.name());
            requireNoForwardingFromSessions(p.name(), p.requiresSession(), p.forwardTo());
            requireForwardTarget(p.forwardTo(), "ForwardTo");
            requireForwardTarget(p.forwardDeadLetteredMessagesTo(), "ForwardDeadLetteredMessagesTo");
            long now = clock.epochMillis();
            long id = nextEntityId++;
            meta.putQueue(id, true, now, now, p);
            meta.putNamespace(nextEntityId, shardCount);
            meta.sync();
            QueueEntity found = builder.newQueueEntity(id, p, now, now);
            Map<String, QueueEntity> copy = new HashMap<>(queues);
            copy.put(key(p.name()), found);
            queues = Map.copyOf(copy);
            return found;
        });
        idle.watch(entity);
        QueueEntity created = entity;
        return builder.registerPartitions(created.partitions).thenApply(x -> created);
    }

    /** Replaces a queue's description (partitioning and sessions cannot change). */
    public CompletableFuture<QueueEntity> updateQueue(QueueProperties p) {
        QueueEntity entity = writeMeta(() -> {
            QueueEntity found = requireQueue(p.name());
            QueueProperties old = found.properties;
            if (old.enablePartitioning() != p.enablePartitioning()) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION,
                        "EnablePartitioning cannot be changed after the queue is created.");
            }
            if (old.requiresSession() != p.requiresSession()) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION,
                        "RequiresSession cannot be changed after the queue is created.");
            }
            requireNoForwardingFromSessions(old.name(), p.requiresSession(), p.forwardTo());
            requireForwardTarget(p.forwardTo(), "ForwardTo");
            requireForwardTarget(p.forwardDeadLetteredMessagesTo(), "ForwardDeadLetteredMessagesTo");
            long now = clock.epochMillis();
            QueueProperties renamed = p.toBuilder().name(old.name()).build();
            meta.putQueue(found.id, false, found.createdAtMs, now, renamed);
            meta.sync();
            found.properties = renamed;
            found.updatedAtMs = now;
            return found;
        });
        return pushQueue(entity);
    }

    /** Brings the served partitions of a queue in line with its description. */
    private CompletableFuture<QueueEntity> pushQueue(QueueEntity entity) {
        idle.watch(entity);
        QueueSettings settings = queueSettings(entity.properties);
        return PartitionRef.onServing(entity.partitions, p0 -> {
            p0.updateQueue(settings);
            builder.configureQueue(entity.partitions[p0.index()], entity.properties);
            return null;
        }).thenApply(x -> entity);
    }

    /** Deletes a queue and all its messages. */
    public CompletableFuture<Void> deleteQueue(String name) {
        QueueEntity entity = writeMeta(() -> {
            QueueEntity found = requireQueue(name);
            meta.delete(found.id);
            meta.sync();
            Map<String, QueueEntity> copy = new HashMap<>(queues);
            copy.remove(key(name));
            queues = Map.copyOf(copy);
            return found;
        });
        return dropServed(entity.partitions);
    }

    // ================================================================================================ topics

    public CompletableFuture<TopicEntity> createTopic(TopicProperties p) {
        TopicEntity entity = writeMeta(() -> {
            requireNameFree(p.name());
            long now = clock.epochMillis();
            long id = nextEntityId++;
            meta.putTopic(id, true, now, now, p);
            meta.putNamespace(nextEntityId, shardCount);
            meta.sync();
            TopicEntity found = builder.newTopicEntity(id, p, now, now);
            Map<String, TopicEntity> copy = new HashMap<>(topics);
            copy.put(key(p.name()), found);
            topics = Map.copyOf(copy);
            return found;
        });
        idle.watch(entity);
        TopicEntity created = entity;
        return builder.registerPartitions(created.partitions).thenApply(x -> created);
    }

    public CompletableFuture<TopicEntity> updateTopic(TopicProperties p) {
        TopicEntity entity = writeMeta(() -> {
            TopicEntity found = requireTopic(p.name());
            TopicProperties old = found.properties;
            if (old.enablePartitioning() != p.enablePartitioning()) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION,
                        "EnablePartitioning cannot be changed after the topic is created.");
            }
            long now = clock.epochMillis();
            TopicProperties renamed = p.toBuilder().name(old.name()).build();
            meta.putTopic(found.id, false, found.createdAtMs, now, renamed);
            meta.sync();
            found.properties = renamed;
            found.updatedAtMs = now;
            return found;
        });
        return pushTopic(entity);
    }

    /** Brings the served partitions of a topic (and its subscriptions) in line with its description. */
    private CompletableFuture<TopicEntity> pushTopic(TopicEntity t) {
        idle.watch(t);
        long ttl = Limits.toMillisSaturated(t.properties.defaultMessageTimeToLive());
        long max = maxSizeBytes(t.properties.maxSizeInMegabytes());
        Map<String, QueueSettings> subSettings = new HashMap<>();
        for (SubscriptionEntity s : t.subscriptions.values()) {
            subSettings.put(s.properties.name(), subscriptionSettings(t.properties, s.properties));
        }
        long dedupMs = duplicateWindowMs(t.properties.requiresDuplicateDetection(),
                t.properties.duplicateDetectionHistoryTimeWindow());
        return PartitionRef.onServing(t.partitions, p0 -> {
            p0.updateTopic(ttl, max);
            p0.setDuplicateDetection(dedupMs);
            for (SubscriptionEntity s : t.subscriptions.values()) {
                p0.updateSubscription(s.properties.name(), subSettings.get(s.properties.name()), s.rules);
            }
            return null;
        }).thenApply(x -> t);
    }

    public CompletableFuture<Void> deleteTopic(String name) {
        TopicEntity entity = writeMeta(() -> {
            TopicEntity found = requireTopic(name);
            for (SubscriptionEntity s : found.subscriptions.values()) {
                meta.delete(s.id);
            }
            meta.delete(found.id);
            meta.sync();
            Map<String, TopicEntity> copy = new HashMap<>(topics);
            copy.remove(key(name));
            topics = Map.copyOf(copy);
            return found;
        });
        return dropServed(entity.partitions);
    }

    // ================================================================================================ subscriptions

    /** Creates a subscription; without rules it gets the {@code $Default} TrueFilter rule. */
    public CompletableFuture<SubscriptionEntity> createSubscription(SubscriptionProperties p,
                                                                    List<RuleProperties> rules) {
        List<RuleProperties> effective = rules == null || rules.isEmpty() ? List.of(RuleProperties.defaultRule())
                : List.copyOf(rules);
        SubscriptionEntity sub = writeMeta(() -> {
            TopicEntity topic = requireTopic(p.topicName());
            if (topic.subscription(p.name()) != null) {
                throw new BrokerException(ErrorKind.ENTITY_ALREADY_EXISTS, "The messaging entity '"
                        + topic.properties.name() + "/Subscriptions/" + p.name() + "' already exists.");
            }
            if (topic.subscriptions.size() >= Limits.MAX_SUBSCRIPTIONS_PER_TOPIC) {
                throw new BrokerException(ErrorKind.QUOTA_EXCEEDED, "The maximum number of subscriptions ("
                        + Limits.MAX_SUBSCRIPTIONS_PER_TOPIC + ") for topic '" + topic.properties.name()
                        + "' has been reached.");
            }
            requireNoForwardingFromSessions(p.topicName() + "/Subscriptions/" + p.name(), p.requiresSession(),
                    p.forwardTo());
            requireForwardTarget(p.forwardTo(), "ForwardTo");
            requireForwardTarget(p.forwardDeadLetteredMessagesTo(), "ForwardDeadLetteredMessagesTo");
            checkRules(topic, effective);
            SubscriptionProperties named = SubscriptionProperties.builder(topic.properties.name(), p.name())
                    .lockDuration(p.lockDuration()).maxDeliveryCount(p.maxDeliveryCount())
                    .requiresSession(p.requiresSession()).defaultMessageTimeToLive(p.defaultMessageTimeToLive())
                    .deadLetteringOnMessageExpiration(p.deadLetteringOnMessageExpiration())
                    .deadLetteringOnFilterEvaluationExceptions(p.deadLetteringOnFilterEvaluationExceptions())
                    .forwardTo(p.forwardTo()).forwardDeadLetteredMessagesTo(p.forwardDeadLetteredMessagesTo())
                    .status(p.status()).autoDeleteOnIdle(p.autoDeleteOnIdle())
                    .enableBatchedOperations(p.enableBatchedOperations()).userMetadata(p.userMetadata())
                    .forwardToAddress(p.forwardToAddress())
                    .forwardDeadLetteredMessagesToAddress(p.forwardDeadLetteredMessagesToAddress())
                    .build();
            long now = clock.epochMillis();
            long id = nextEntityId++;
            meta.putSubscription(id, true, topic.id, now, now, named, effective);
            meta.putNamespace(nextEntityId, shardCount);
            meta.sync();
            SubscriptionEntity found = new SubscriptionEntity(id, topic, named, effective, now, now);
            Map<String, SubscriptionEntity> subs = new LinkedHashMap<>(topic.subscriptions);
            subs.put(key(named.name()), found);
            topic.subscriptions = Map.copyOf(subs);
            return found;
        });
        idle.watch(sub);
        QueueSettings settings = subscriptionSettings(sub.topic.properties, sub.properties);
        SubscriptionEntity s = sub;
        return PartitionRef.onServing(sub.topic.partitions, p0 -> {
            p0.addSubscription(s.properties.name(), s.id, settings, s.rules)
                    .setForwarding(s.properties.forwardTo(), s.properties.forwardDeadLetteredMessagesTo());
            return null;
        }).thenApply(x -> s);
    }

    /** Rejects rules whose SQL does not compile, or that would exceed the topic's filter quotas. */
    private static void checkRules(TopicEntity topic, List<RuleProperties> adding) {
        List<RuleProperties> existing = new ArrayList<>();
        for (SubscriptionEntity s : topic.subscriptions.values()) {
            existing.addAll(s.rules);
        }
        RuleSet.checkQuotas(topic.properties.name(), existing, adding);
        adding.forEach(RuleSet::validate);
    }

    public CompletableFuture<SubscriptionEntity> updateSubscription(SubscriptionProperties p) {
        SubscriptionEntity sub = writeMeta(() -> {
            TopicEntity topic = requireTopic(p.topicName());
            SubscriptionEntity found = requireSubscription(topic, p.name());
            if (found.properties.requiresSession() != p.requiresSession()) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION,
                        "RequiresSession cannot be changed after the subscription is created.");
            }
            requireNoForwardingFromSessions(p.topicName() + "/Subscriptions/" + p.name(), p.requiresSession(),
                    p.forwardTo());
            requireForwardTarget(p.forwardTo(), "ForwardTo");
            requireForwardTarget(p.forwardDeadLetteredMessagesTo(), "ForwardDeadLetteredMessagesTo");
            long now = clock.epochMillis();
            meta.putSubscription(found.id, false, topic.id, found.createdAtMs, now, p, found.rules);
            meta.sync();
            found.properties = p;
            found.updatedAtMs = now;
            return found;
        });
        return pushSubscription(sub);
    }

    private CompletableFuture<SubscriptionEntity> pushSubscription(SubscriptionEntity sub) {
        idle.watch(sub);
        QueueSettings settings = subscriptionSettings(sub.topic.properties, sub.properties);
        List<RuleProperties> rules = sub.rules;
        String name = sub.properties.name();
        SubscriptionProperties props = sub.properties;
        return PartitionRef.onServing(sub.topic.partitions, p0 -> {
            p0.updateSubscription(name, settings, rules);
            if (p0.subscription(name) != null) {
                p0.subscription(name).setForwarding(props.forwardTo(), props.forwardDeadLetteredMessagesTo());
            }
            return null;
        }).thenApply(x -> sub);
    }

    public CompletableFuture<Void> deleteSubscription(String topicName, String name) {
        SubscriptionEntity sub = writeMeta(() -> {
            TopicEntity topic = requireTopic(topicName);
            SubscriptionEntity found = requireSubscription(topic, name);
            meta.delete(found.id);
            meta.sync();
            Map<String, SubscriptionEntity> subs = new LinkedHashMap<>(topic.subscriptions);
            subs.remove(key(name));
            topic.subscriptions = Map.copyOf(subs);
            return found;
        });
        String subName = sub.properties.name();
        return PartitionRef.onServing(sub.topic.partitions, p -> {
            p.removeSubscription(subName);
            return null;
        }).thenApply(x -> null);
    }

    // ================================================================================================ rules

    /** Adds a rule to a subscription. */
    public CompletableFuture<SubscriptionEntity> addRule(String topicName, String subscription, RuleProperties rule) {
        SubscriptionEntity sub = writeMeta(() -> {
            SubscriptionEntity found = requireSubscription(requireTopic(topicName), subscription);
            for (RuleProperties r : found.rules) {
                if (r.name().equalsIgnoreCase(rule.name())) {
                    throw new BrokerException(ErrorKind.ENTITY_ALREADY_EXISTS, "The messaging entity '"
                            + found.properties.path() + "/Rules/" + rule.name() + "' already exists.");
                }
            }
            checkRules(found.topic, List.of(rule));
            List<RuleProperties> rules = new ArrayList<>(found.rules);
            rules.add(rule);
            long now = clock.epochMillis();
            meta.putSubscription(found.id, false, found.topic.id, found.createdAtMs, now, found.properties, rules);
            meta.sync();
            found.rules = List.copyOf(rules);
            return found;
        });
        return pushSubscription(sub);
    }

    /** Removes a rule from a subscription. */
    public CompletableFuture<SubscriptionEntity> removeRule(String topicName, String subscription, String ruleName) {
        SubscriptionEntity sub = writeMeta(() -> {
            SubscriptionEntity found = requireSubscription(requireTopic(topicName), subscription);
            List<RuleProperties> rules = new ArrayList<>(found.rules);
            if (!rules.removeIf(r -> r.name().equalsIgnoreCase(ruleName))) {
                throw new BrokerException(ErrorKind.ENTITY_NOT_FOUND, "The messaging entity '"
                        + found.properties.path() + "/Rules/" + ruleName + "' could not be found.");
            }
            long now = clock.epochMillis();
            meta.putSubscription(found.id, false, found.topic.id, found.createdAtMs, now, found.properties, rules);
            meta.sync();
            found.rules = List.copyOf(rules);
            return found;
        });
        return pushSubscription(sub);
    }
}
