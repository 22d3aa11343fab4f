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
import io.buslane.engine.partition.QueueSettings;
import io.buslane.engine.persist.MetaJournal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import static io.buslane.engine.namespace.EntitySettings.duplicateWindowMs;
import static io.buslane.engine.namespace.EntitySettings.maxSizeBytes;
import static io.buslane.engine.namespace.EntitySettings.queueSettings;
import static io.buslane.engine.namespace.EntitySettings.subscriptionSettings;

/**
 * The entities of a namespace and their changes: creation, update and deletion of queues, topics, subscriptions
 * and rules. Each change is checked whole first (names, forwarding targets, quotas, rule syntax), then written to
 * the {@code meta} journal and synced, then published, then applied to the partitions this node serves: a refused
 * change leaves no trace. Changes are serialised by one lock (they are rare); the {@link EntityTable}s are read
 * without it.
 */
final class EntityCatalog {

    final MetaJournal meta;
    final Clock clock;
    final int shardCount;
    final PartitionBuilder builder;
    final IdleReaper idle;
    /** Serialises every change of the namespace: here, in recovery, when a shard is replaced, in the shared store. */
    final Object lock = new Object();
    final EntityTable<QueueEntity> queues = new EntityTable<>();
    final EntityTable<TopicEntity> topics = new EntityTable<>();
    /** The next entity id (under the lock). */
    long nextEntityId = 1;
    /** Cluster mode: re-reads the namespace other nodes changed before each change (null otherwise). */
    private SharedCatalog shared;

    EntityCatalog(MetaJournal meta, Clock clock, int shardCount, PartitionBuilder builder, IdleReaper idle) {
        this.meta = meta;
        this.clock = clock;
        this.shardCount = shardCount;
        this.builder = builder;
        this.idle = idle;
    }

    /** Cluster mode: installs the shared catalog that every change reads first. */
    void share(SharedCatalog sharedCatalog) {
        this.shared = sharedCatalog;
    }

    // ================================================================================================ checks

    private QueueEntity requireQueue(String name) {
        QueueEntity q = queues.get(name);
        if (q == null) {
            throw BrokerException.entityNotFound(name);
        }
        return q;
    }

    private TopicEntity requireTopic(String name) {
        TopicEntity t = topics.get(name);
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
        if (queues.contains(name) || topics.contains(name)) {
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
        if (forwardTo != null && queues.get(forwardTo) == null && topics.get(forwardTo) == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, property + " names '" + forwardTo
                    + "', which is neither a queue nor a topic of this namespace; the target must exist first.");
        }
    }

    // ================================================================================================ writing

    /**
     * Makes a namespace change under the lock: the namespace re-read first when another node changed it
     * (cluster mode), the change checked and written; a write that loses the race to another node's change at
     * commit is re-read, re-checked and retried, up to five times (then SERVER_BUSY).
     */
    private <T> T writeMeta(Supplier<T> change) {
        synchronized (lock) {
            for (int attempt = 1; ; attempt++) {
                if (shared != null) {
                    shared.refreshLocked();
                }
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

    /** Drops everything the partitions this node serves hold (the entity is gone); completes when done. */
    static CompletableFuture<Void> dropServed(PartitionRef[] partitions) {
        return PartitionRef.onServing(partitions, p -> {
            p.dropEverything();
            return null;
        }).thenApply(x -> null);
    }

    // ================================================================================================ queues

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
            queues.put(p.name(), found);
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
    CompletableFuture<QueueEntity> pushQueue(QueueEntity entity) {
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
            queues.remove(name);
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
            topics.put(p.name(), found);
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
    CompletableFuture<TopicEntity> pushTopic(TopicEntity t) {
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
            topics.remove(name);
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
            subs.put(EntityTable.key(named.name()), found);
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

    CompletableFuture<SubscriptionEntity> pushSubscription(SubscriptionEntity sub) {
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
            subs.remove(EntityTable.key(name));
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
