package io.buslane.engine;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.Limits;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.filter.RuleSet;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.EngineTimer;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.QueueSettings;
import io.buslane.engine.partition.SequenceCounter;
import io.buslane.engine.partition.SubQueueState;
import io.buslane.engine.persist.MetaJournal;
import io.buslane.engine.shard.Shard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * The Service Bus engine: the namespace of queues, topics and subscriptions, and every messaging operation on
 * them, with no knowledge of any protocol. Front ends call it from any thread; each call becomes a command on the
 * shard that owns the partition concerned, and its future completes (on a shard thread) only after the records
 * behind it are durable. Callers must not block in completion callbacks; they hop to their own threads.
 *
 * <p>Entity changes are serialised by a lock (they are rare) and written to the {@code meta} journal before
 * they are acknowledged; the namespace is published as immutable snapshots that any thread reads without
 * locking.
 */
public final class Engine implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Engine.class);
    /** Above this many queued commands on a shard, sends are refused with SERVER_BUSY (back-pressure). */
    static final int MAX_QUEUED_COMMANDS = 200_000;

    private final EngineConfig config;
    private final Shard[] shards;
    private final MetaJournal meta;
    private final Object metaLock = new Object();
    private volatile Map<String, QueueEntity> queues = Map.of();
    private volatile Map<String, TopicEntity> topics = Map.of();
    private long nextEntityId = 1;
    private volatile boolean closed;
    // ops (metrics): cumulative counters
    private final EngineStats stats = new EngineStats();

    private Engine(EngineConfig config, MetaJournal meta, Shard[] shards) {
        this.config = config;
        this.meta = meta;
        this.shards = shards;
    }

    // ================================================================================================ lifecycle

    /** Opens the journals, replays them and starts the shards. */
    public static Engine start(EngineConfig config) {
        MetaJournal meta = config.storage().openMeta();
        Recovered recovered = new Recovered();
        meta.replay(recovered);
        int shardCount = recovered.shardCount > 0 ? recovered.shardCount : config.shardCount();
        if (recovered.shardCount > 0 && recovered.shardCount != config.shardCount()) {
            LOG.warn("The data directory was created with {} shards; using {} (configured {}).",
                    recovered.shardCount, recovered.shardCount, config.shardCount());
        }
        Shard[] shards = new Shard[shardCount];
        for (int i = 0; i < shardCount; i++) {
            shards[i] = new Shard(i, config.clock(), config.storage().openShard(i, config.residentBytesPerShard()));
        }
        Engine engine = new Engine(config, meta, shards);
        engine.nextEntityId = Math.max(recovered.nextEntityId, recovered.maxId + 1);
        engine.restore(recovered);
        if (recovered.shardCount == 0) {
            synchronized (engine.metaLock) {
                meta.putNamespace(engine.nextEntityId, shardCount);
                meta.sync();
            }
        }
        if (config.threadingMode() == ThreadingMode.DEDICATED) {
            for (Shard s : shards) {
                s.start();
            }
        }
        return engine;
    }

    /** The namespace as replayed from the meta journal. */
    private static final class Recovered implements MetaJournal.Handler {
        long nextEntityId = 1;
        int shardCount;
        long maxId;
        final Map<Long, Object[]> entities = new LinkedHashMap<>();

        @Override
        public void onNamespace(long next, int count) {
            nextEntityId = next;
            shardCount = count;
        }

        @Override
        public void onQueue(long id, long createdAtMs, long updatedAtMs, QueueProperties p) {
            maxId = Math.max(maxId, id);
            entities.put(id, new Object[] {p, createdAtMs, updatedAtMs});
        }

        @Override
        public void onTopic(long id, long createdAtMs, long updatedAtMs, TopicProperties p) {
            maxId = Math.max(maxId, id);
            entities.put(id, new Object[] {p, createdAtMs, updatedAtMs});
        }

        @Override
        public void onSubscription(long id, long topicId, long createdAtMs, long updatedAtMs,
                                   SubscriptionProperties p, List<RuleProperties> rules) {
            maxId = Math.max(maxId, id);
            entities.put(id, new Object[] {p, createdAtMs, updatedAtMs, topicId, rules});
        }

        @Override
        public void onDelete(long id) {
            entities.remove(id);
        }
    }

    private void restore(Recovered recovered) {
        Map<String, QueueEntity> q = new HashMap<>();
        Map<String, TopicEntity> t = new HashMap<>();
        Map<Long, TopicEntity> topicsById = new HashMap<>();
        for (Map.Entry<Long, Object[]> e : recovered.entities.entrySet()) {
            Object[] v = e.getValue();
            if (v[0] instanceof QueueProperties p) {
                q.put(key(p.name()), newQueueEntity(e.getKey(), p, (Long) v[1], (Long) v[2]));
            } else if (v[0] instanceof TopicProperties p) {
                TopicEntity topic = newTopicEntity(e.getKey(), p, (Long) v[1], (Long) v[2]);
                t.put(key(p.name()), topic);
                topicsById.put(e.getKey(), topic);
            }
        }
        for (Map.Entry<Long, Object[]> e : recovered.entities.entrySet()) {
            Object[] v = e.getValue();
            if (v[0] instanceof SubscriptionProperties p) {
                TopicEntity topic = topicsById.get((Long) v[3]);
                if (topic == null) {
                    continue;
                }
                @SuppressWarnings("unchecked")
                List<RuleProperties> rules = (List<RuleProperties>) v[4];
                SubscriptionEntity sub = new SubscriptionEntity(e.getKey(), topic, p, rules, (Long) v[1],
                        (Long) v[2]);
                Map<String, SubscriptionEntity> subs = new LinkedHashMap<>(topic.subscriptions);
                subs.put(key(p.name()), sub);
                topic.subscriptions = Map.copyOf(subs);
                for (PartitionRef ref : topic.partitions) {
                    ref.partition().addSubscription(p.name(), sub.id, subscriptionSettings(topic.properties, p),
                            rules).setForwarding(p.forwardTo(), p.forwardDeadLetteredMessagesTo());
                }
            }
        }
        queues = Map.copyOf(q);
        topics = Map.copyOf(t);
        List<PartitionRef> all = allPartitions();
        Map<Long, PartitionRef[]> byEntity = new HashMap<>();
        for (QueueEntity queue : queues.values()) {
            byEntity.put(queue.id, queue.partitions);
        }
        for (TopicEntity topic : topics.values()) {
            byEntity.put(topic.id, topic.partitions);
        }
        for (Shard shard : shards) {
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
        for (QueueEntity queue : queues.values()) {
            watchIdle(queue);
        }
        for (TopicEntity topic : topics.values()) {
            watchIdle(topic);
            for (SubscriptionEntity sub : topic.subscriptions.values()) {
                watchIdle(sub);
            }
        }
        LOG.info("Namespace recovered: {} queues, {} topics, {} subscriptions", queues.size(), topics.size(),
                topics.values().stream().mapToInt(x -> x.subscriptions.size()).sum());
    }

    private static Partition lookupPartition(Map<Long, PartitionRef[]> byEntity, Shard shard, long entityId,
                                             int index) {
        PartitionRef[] refs = byEntity.get(entityId);
        if (refs == null || index < 0 || index >= refs.length || refs[index].shard() != shard) {
            return null;
        }
        return refs[index].partition();
    }

    private List<PartitionRef> allPartitions() {
        List<PartitionRef> all = new ArrayList<>();
        for (QueueEntity q : queues.values()) {
            all.addAll(List.of(q.partitions));
        }
        for (TopicEntity t : topics.values()) {
            all.addAll(List.of(t.partitions));
        }
        return all;
    }

    /** In manual threading mode: runs one duty cycle on every shard; returns the work done. */
    public int doWork() {
        int work = 0;
        for (Shard s : shards) {
            work += s.doWork();
        }
        return work;
    }

    /** In manual threading mode: runs duty cycles until no shard has anything to do. */
    public void runUntilIdle() {
        for (int i = 0; i < 10_000; i++) {
            if (doWork() == 0) {
                return;
            }
        }
        throw new IllegalStateException("engine did not become idle after 10000 cycles");
    }

    public int shardCount() {
        return shards.length;
    }

    /**
     * Encoded bytes of the message bodies all shards hold in the heap, as of each shard's last duty cycle; each shard
     * keeps its share under {@link EngineConfig#residentBytesPerShard()} once its records are durable (see
     * {@link io.buslane.engine.partition.MessageBodies}).
     */
    public long residentMessageBytes() {
        long total = 0;
        for (Shard s : shards) {
            total += s.bodies().publishedResidentBytes();
        }
        return total;
    }

    /** Message bodies read back from the journals so far (a metric; exact in manual threading mode). */
    public long messageBodyReads() {
        long total = 0;
        for (Shard s : shards) {
            total += s.bodies().reads();
        }
        return total;
    }

    /** Commands waiting in all shard queues (back-pressure signal). */
    public int queuedCommands() {
        int n = 0;
        for (Shard s : shards) {
            n += s.queuedCommands();
        }
        return n;
    }

    // ops (metrics): begin
    /** Cumulative message counters (sent, delivered, settled by outcome), for metrics. */
    public EngineStats stats() {
        return stats;
    }

    /** Message locks that expired before settlement, on every shard since start. */
    public long lockExpiries() {
        long n = 0;
        for (Shard s : shards) {
            n += s.lockExpiries();
        }
        return n;
    }
    // ops (metrics): end

    /**
     * Calls {@code listener} (on the failing shard's thread) if an error ends a shard's thread: the engine cannot
     * serve that shard's entities any more, and the process should report itself unhealthy and stop.
     */
    public void onFatal(java.util.function.Consumer<Throwable> listener) {
        for (Shard s : shards) {
            s.onFatal(listener);
        }
    }

    /** The first error that ended a shard's thread, or null while every shard runs. */
    public Throwable fatalError() {
        for (Shard s : shards) {
            if (s.fatal() != null) {
                return s.fatal();
            }
        }
        return null;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (config.threadingMode() == ThreadingMode.DEDICATED) {
            for (Shard s : shards) {
                s.stop();
            }
        } else {
            runUntilIdle();
        }
        for (Shard s : shards) {
            s.journal().close();
        }
        synchronized (metaLock) {
            meta.close();
        }
    }

    // ================================================================================================ namespace

    private static String key(String name) {
        return name.toLowerCase(Locale.ROOT);
    }

    private int shardIndexFor(long entityId, int partitionIndex) {
        long h = entityId * 31 + partitionIndex;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (int) Math.floorMod(h, (long) shards.length);
    }

    private static int partitionCount(boolean partitioned) {
        return partitioned ? Limits.PARTITION_COUNT : 1;
    }

    private QueueEntity newQueueEntity(long id, QueueProperties p, long createdAtMs, long updatedAtMs) {
        int n = partitionCount(p.enablePartitioning());
        PartitionRef[] refs = new PartitionRef[n];
        for (int i = 0; i < n; i++) {
            Shard shard = shards[shardIndexFor(id, i)];
            refs[i] = new PartitionRef(shard, Partition.forQueue(id, i, p.enablePartitioning(), queueSettings(p),
                    shard));
            configureQueue(refs[i], p);
        }
        return new QueueEntity(id, p, createdAtMs, updatedAtMs, refs);
    }

    private TopicEntity newTopicEntity(long id, TopicProperties p, long createdAtMs, long updatedAtMs) {
        int n = partitionCount(p.enablePartitioning());
        PartitionRef[] refs = new PartitionRef[n];
        for (int i = 0; i < n; i++) {
            Shard shard = shards[shardIndexFor(id, i)];
            refs[i] = new PartitionRef(shard, Partition.forTopic(id, p.name(), i, p.enablePartitioning(),
                    Limits.toMillisSaturated(p.defaultMessageTimeToLive()), maxSizeBytes(p.maxSizeInMegabytes()),
                    shard));
            PartitionRef ref = refs[i];
            ref.partition().setForwarder(t -> forward(ref, t));
            ref.partition().setDuplicateDetection(duplicateWindowMs(p.requiresDuplicateDetection(),
                    p.duplicateDetectionHistoryTimeWindow()));
        }
        return new TopicEntity(id, p, createdAtMs, updatedAtMs, refs);
    }

    /** Duplicate detection and auto-forwarding of a queue partition (on its shard thread, or before publication). */
    private void configureQueue(PartitionRef ref, QueueProperties p) {
        ref.partition().setForwarder(t -> forward(ref, t));
        ref.partition().setDuplicateDetection(duplicateWindowMs(p.requiresDuplicateDetection(),
                p.duplicateDetectionHistoryTimeWindow()));
        ref.partition().queue().setForwarding(p.forwardTo(), p.forwardDeadLetteredMessagesTo());
    }

    private static long duplicateWindowMs(boolean on, java.time.Duration window) {
        return on ? Math.max(1, Limits.toMillisSaturated(window)) : 0;
    }

    private static long maxSizeBytes(long megabytes) {
        return megabytes >= Long.MAX_VALUE / (1024 * 1024) ? Long.MAX_VALUE : megabytes * 1024 * 1024;
    }

    static QueueSettings queueSettings(QueueProperties p) {
        return new QueueSettings(p.name(), Limits.toMillisSaturated(p.lockDuration()), p.maxDeliveryCount(),
                p.requiresSession(), Limits.toMillisSaturated(p.defaultMessageTimeToLive()),
                p.deadLetteringOnMessageExpiration(), p.status(), maxSizeBytes(p.maxSizeInMegabytes()));
    }

    static QueueSettings subscriptionSettings(TopicProperties topic, SubscriptionProperties p) {
        long ttl = Math.min(Limits.toMillisSaturated(topic.defaultMessageTimeToLive()),
                Limits.toMillisSaturated(p.defaultMessageTimeToLive()));
        return new QueueSettings(p.path(), Limits.toMillisSaturated(p.lockDuration()), p.maxDeliveryCount(),
                p.requiresSession(), ttl, p.deadLetteringOnMessageExpiration(), p.status(),
                maxSizeBytes(topic.maxSizeInMegabytes()), p.deadLetteringOnFilterEvaluationExceptions());
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

    private void requireNameFree(String name) {
        if (queues.containsKey(key(name)) || topics.containsKey(key(name))) {
            throw new BrokerException(ErrorKind.ENTITY_ALREADY_EXISTS, "The messaging entity '" + name
                    + "' already exists.");
        }
    }

    private void requireForwardTarget(String forwardTo) {
        if (forwardTo != null && queue(forwardTo) == null && topic(forwardTo) == null) {
            throw new BrokerException(ErrorKind.ENTITY_NOT_FOUND, "The messaging entity '" + forwardTo
                    + "' could not be found. ForwardTo must name an existing queue or topic.");
        }
    }

    /** Creates a queue; completes once it is durable and its partitions exist. */
    public CompletableFuture<QueueEntity> createQueue(QueueProperties p) {
        QueueEntity entity;
        synchronized (metaLock) {
            requireNameFree(p.name());
            requireForwardTarget(p.forwardTo());
            requireForwardTarget(p.forwardDeadLetteredMessagesTo());
            long now = config.clock().epochMillis();
            long id = nextEntityId++;
            meta.putQueue(id, true, now, now, p);
            meta.putNamespace(nextEntityId, shards.length);
            meta.sync();
            entity = newQueueEntity(id, p, now, now);
            Map<String, QueueEntity> copy = new HashMap<>(queues);
            copy.put(key(p.name()), entity);
            queues = Map.copyOf(copy);
        }
        watchIdle(entity);
        return registerPartitions(entity.partitions).thenApply(x -> entity);
    }

    private CompletableFuture<Void> registerPartitions(PartitionRef[] refs) {
        List<CompletableFuture<Object>> all = new ArrayList<>();
        for (PartitionRef ref : refs) {
            all.add(ref.shard().call(() -> {
                ref.shard().journalLog().partitionCreated(ref.partition());
                return null;
            }));
        }
        return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
    }

    /** Replaces a queue's description (partitioning and sessions cannot change). */
    public CompletableFuture<QueueEntity> updateQueue(QueueProperties p) {
        QueueEntity entity;
        synchronized (metaLock) {
            entity = requireQueue(p.name());
            QueueProperties old = entity.properties;
            if (old.enablePartitioning() != p.enablePartitioning()) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION,
                        "EnablePartitioning cannot be changed after the queue is created.");
            }
            if (old.requiresSession() != p.requiresSession()) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION,
                        "RequiresSession cannot be changed after the queue is created.");
            }
            requireForwardTarget(p.forwardTo());
            requireForwardTarget(p.forwardDeadLetteredMessagesTo());
            long now = config.clock().epochMillis();
            QueueProperties renamed = p.toBuilder().name(old.name()).build();
            meta.putQueue(entity.id, false, entity.createdAtMs, now, renamed);
            meta.sync();
            entity.properties = renamed;
            entity.updatedAtMs = now;
        }
        watchIdle(entity);
        QueueSettings settings = queueSettings(entity.properties);
        QueueEntity updated = entity;
        return onAllPartitions(entity.partitions, p0 -> {
            p0.updateQueue(settings);
            configureQueue(updated.partitions[p0.index()], updated.properties);
            return null;
        }).thenApply(x -> entity);
    }

    /** Deletes a queue and all its messages. */
    public CompletableFuture<Void> deleteQueue(String name) {
        QueueEntity entity;
        synchronized (metaLock) {
            entity = requireQueue(name);
            meta.delete(entity.id);
            meta.sync();
            Map<String, QueueEntity> copy = new HashMap<>(queues);
            copy.remove(key(name));
            queues = Map.copyOf(copy);
        }
        return onAllPartitions(entity.partitions, p -> {
            p.dropEverything();
            return null;
        }).thenApply(x -> null);
    }

    public CompletableFuture<TopicEntity> createTopic(TopicProperties p) {
        TopicEntity entity;
        synchronized (metaLock) {
            requireNameFree(p.name());
            long now = config.clock().epochMillis();
            long id = nextEntityId++;
            meta.putTopic(id, true, now, now, p);
            meta.putNamespace(nextEntityId, shards.length);
            meta.sync();
            entity = newTopicEntity(id, p, now, now);
            Map<String, TopicEntity> copy = new HashMap<>(topics);
            copy.put(key(p.name()), entity);
            topics = Map.copyOf(copy);
        }
        watchIdle(entity);
        return registerPartitions(entity.partitions).thenApply(x -> entity);
    }

    public CompletableFuture<TopicEntity> updateTopic(TopicProperties p) {
        TopicEntity entity;
        synchronized (metaLock) {
            entity = requireTopic(p.name());
            TopicProperties old = entity.properties;
            if (old.enablePartitioning() != p.enablePartitioning()) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION,
                        "EnablePartitioning cannot be changed after the topic is created.");
            }
            long now = config.clock().epochMillis();
            TopicProperties renamed = p.toBuilder().name(old.name()).build();
            meta.putTopic(entity.id, false, entity.createdAtMs, now, renamed);
            meta.sync();
            entity.properties = renamed;
            entity.updatedAtMs = now;
        }
        TopicEntity t = entity;
        watchIdle(t);
        long ttl = Limits.toMillisSaturated(t.properties.defaultMessageTimeToLive());
        long max = maxSizeBytes(t.properties.maxSizeInMegabytes());
        Map<String, QueueSettings> subSettings = new HashMap<>();
        for (SubscriptionEntity s : t.subscriptions.values()) {
            subSettings.put(s.properties.name(), subscriptionSettings(t.properties, s.properties));
        }
        long dedupMs = duplicateWindowMs(t.properties.requiresDuplicateDetection(),
                t.properties.duplicateDetectionHistoryTimeWindow());
        return onAllPartitions(t.partitions, p0 -> {
            p0.updateTopic(ttl, max);
            p0.setDuplicateDetection(dedupMs);
            for (SubscriptionEntity s : t.subscriptions.values()) {
                p0.updateSubscription(s.properties.name(), subSettings.get(s.properties.name()), s.rules);
            }
            return null;
        }).thenApply(x -> t);
    }

    public CompletableFuture<Void> deleteTopic(String name) {
        TopicEntity entity;
        synchronized (metaLock) {
            entity = requireTopic(name);
            for (SubscriptionEntity s : entity.subscriptions.values()) {
                meta.delete(s.id);
            }
            meta.delete(entity.id);
            meta.sync();
            Map<String, TopicEntity> copy = new HashMap<>(topics);
            copy.remove(key(name));
            topics = Map.copyOf(copy);
        }
        return onAllPartitions(entity.partitions, p -> {
            p.dropEverything();
            return null;
        }).thenApply(x -> null);
    }

    /** Creates a subscription; without rules it gets the {@code $Default} TrueFilter rule. */
    public CompletableFuture<SubscriptionEntity> createSubscription(SubscriptionProperties p,
                                                                    List<RuleProperties> rules) {
        List<RuleProperties> effective = rules == null || rules.isEmpty() ? List.of(RuleProperties.defaultRule())
                : List.copyOf(rules);
        SubscriptionEntity sub;
        TopicEntity topic;
        synchronized (metaLock) {
            topic = requireTopic(p.topicName());
            if (topic.subscription(p.name()) != null) {
                throw new BrokerException(ErrorKind.ENTITY_ALREADY_EXISTS, "The messaging entity '"
                        + topic.properties.name() + "/Subscriptions/" + p.name() + "' already exists.");
            }
            if (topic.subscriptions.size() >= Limits.MAX_SUBSCRIPTIONS_PER_TOPIC) {
                throw new BrokerException(ErrorKind.QUOTA_EXCEEDED, "The maximum number of subscriptions ("
                        + Limits.MAX_SUBSCRIPTIONS_PER_TOPIC + ") for topic '" + topic.properties.name()
                        + "' has been reached.");
            }
            requireForwardTarget(p.forwardTo());
            requireForwardTarget(p.forwardDeadLetteredMessagesTo());
            checkRules(topic, effective);
            SubscriptionProperties named = SubscriptionProperties.builder(topic.properties.name(), p.name())
                    .lockDuration(p.lockDuration()).maxDeliveryCount(p.maxDeliveryCount())
                    .requiresSession(p.requiresSession()).defaultMessageTimeToLive(p.defaultMessageTimeToLive())
                    .deadLetteringOnMessageExpiration(p.deadLetteringOnMessageExpiration())
                    .deadLetteringOnFilterEvaluationExceptions(p.deadLetteringOnFilterEvaluationExceptions())
                    .forwardTo(p.forwardTo()).forwardDeadLetteredMessagesTo(p.forwardDeadLetteredMessagesTo())
                    .status(p.status()).autoDeleteOnIdle(p.autoDeleteOnIdle())
                    .enableBatchedOperations(p.enableBatchedOperations()).userMetadata(p.userMetadata()).build();
            long now = config.clock().epochMillis();
            long id = nextEntityId++;
            meta.putSubscription(id, true, topic.id, now, now, named, effective);
            meta.putNamespace(nextEntityId, shards.length);
            meta.sync();
            sub = new SubscriptionEntity(id, topic, named, effective, now, now);
            Map<String, SubscriptionEntity> subs = new LinkedHashMap<>(topic.subscriptions);
            subs.put(key(named.name()), sub);
            topic.subscriptions = Map.copyOf(subs);
        }
        watchIdle(sub);
        QueueSettings settings = subscriptionSettings(topic.properties, sub.properties);
        SubscriptionEntity s = sub;
        return onAllPartitions(topic.partitions, p0 -> {
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
        SubscriptionEntity sub;
        synchronized (metaLock) {
            TopicEntity topic = requireTopic(p.topicName());
            sub = requireSubscription(topic, p.name());
            if (sub.properties.requiresSession() != p.requiresSession()) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION,
                        "RequiresSession cannot be changed after the subscription is created.");
            }
            requireForwardTarget(p.forwardTo());
            requireForwardTarget(p.forwardDeadLetteredMessagesTo());
            long now = config.clock().epochMillis();
            meta.putSubscription(sub.id, false, topic.id, sub.createdAtMs, now, p, sub.rules);
            meta.sync();
            sub.properties = p;
            sub.updatedAtMs = now;
        }
        return pushSubscription(sub);
    }

    private CompletableFuture<SubscriptionEntity> pushSubscription(SubscriptionEntity sub) {
        watchIdle(sub);
        QueueSettings settings = subscriptionSettings(sub.topic.properties, sub.properties);
        List<RuleProperties> rules = sub.rules;
        String name = sub.properties.name();
        SubscriptionProperties props = sub.properties;
        return onAllPartitions(sub.topic.partitions, p0 -> {
            p0.updateSubscription(name, settings, rules);
            if (p0.subscription(name) != null) {
                p0.subscription(name).setForwarding(props.forwardTo(), props.forwardDeadLetteredMessagesTo());
            }
            return null;
        }).thenApply(x -> sub);
    }

    public CompletableFuture<Void> deleteSubscription(String topicName, String name) {
        TopicEntity topic;
        SubscriptionEntity sub;
        synchronized (metaLock) {
            topic = requireTopic(topicName);
            sub = requireSubscription(topic, name);
            meta.delete(sub.id);
            meta.sync();
            Map<String, SubscriptionEntity> subs = new LinkedHashMap<>(topic.subscriptions);
            subs.remove(key(name));
            topic.subscriptions = Map.copyOf(subs);
        }
        String subName = sub.properties.name();
        return onAllPartitions(topic.partitions, p -> {
            p.removeSubscription(subName);
            return null;
        }).thenApply(x -> null);
    }

    /** Adds a rule to a subscription. */
    public CompletableFuture<SubscriptionEntity> addRule(String topicName, String subscription, RuleProperties rule) {
        SubscriptionEntity sub;
        synchronized (metaLock) {
            sub = requireSubscription(requireTopic(topicName), subscription);
            for (RuleProperties r : sub.rules) {
                if (r.name().equalsIgnoreCase(rule.name())) {
                    throw new BrokerException(ErrorKind.ENTITY_ALREADY_EXISTS, "The messaging entity '"
                            + sub.properties.path() + "/Rules/" + rule.name() + "' already exists.");
                }
            }
            checkRules(sub.topic, List.of(rule));
            List<RuleProperties> rules = new ArrayList<>(sub.rules);
            rules.add(rule);
            long now = config.clock().epochMillis();
            meta.putSubscription(sub.id, false, sub.topic.id, sub.createdAtMs, now, sub.properties, rules);
            meta.sync();
            sub.rules = List.copyOf(rules);
        }
        return pushSubscription(sub);
    }

    /** Removes a rule from a subscription. */
    public CompletableFuture<SubscriptionEntity> removeRule(String topicName, String subscription, String ruleName) {
        SubscriptionEntity sub;
        synchronized (metaLock) {
            sub = requireSubscription(requireTopic(topicName), subscription);
            List<RuleProperties> rules = new ArrayList<>(sub.rules);
            if (!rules.removeIf(r -> r.name().equalsIgnoreCase(ruleName))) {
                throw new BrokerException(ErrorKind.ENTITY_NOT_FOUND, "The messaging entity '"
                        + sub.properties.path() + "/Rules/" + ruleName + "' could not be found.");
            }
            long now = config.clock().epochMillis();
            meta.putSubscription(sub.id, false, sub.topic.id, sub.createdAtMs, now, sub.properties, rules);
            meta.sync();
            sub.rules = List.copyOf(rules);
        }
        return pushSubscription(sub);
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

    private <T> CompletableFuture<List<T>> onAllPartitions(PartitionRef[] refs, Function<Partition, T> action) {
        List<CompletableFuture<T>> all = new ArrayList<>(refs.length);
        for (PartitionRef ref : refs) {
            all.add(ref.shard().call(() -> action.apply(ref.partition())));
        }
        return CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).thenApply(x -> {
            List<T> out = new ArrayList<>(all.size());
            for (CompletableFuture<T> f : all) {
                out.add(f.join());
            }
            return out;
        });
    }

    // ================================================================================================ routing

    /** A sendable entity: a queue or a topic. */
    private record Target(String name, PartitionRef[] partitions, boolean partitioned, boolean dedup,
                          EntityStatus status, boolean requiresSession, int maxMessageSizeKb,
                          java.util.concurrent.atomic.AtomicInteger roundRobin) {
    }

    private Target sendTarget(String path) {
        EntityAddress address = EntityAddress.parse(path);
        if (address == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required.");
        }
        if (address.subscription() != null || address.subQueue() != SubQueue.MAIN) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "Cannot send to '" + address
                    + "': messages can only be sent to a queue or a topic.");
        }
        QueueEntity q = queue(address.entityPath());
        if (q != null) {
            q.idle.touch(config.clock().epochMillis());
            QueueProperties p = q.properties;
            return new Target(p.name(), q.partitions, p.enablePartitioning(), p.requiresDuplicateDetection(),
                    p.status(), p.requiresSession(), p.maxMessageSizeInKilobytes(), q.roundRobin);
        }
        TopicEntity t = topic(address.entityPath());
        if (t != null) {
            t.idle.touch(config.clock().epochMillis());
            TopicProperties p = t.properties;
            return new Target(p.name(), t.partitions, p.enablePartitioning(), p.requiresDuplicateDetection(),
                    p.status(), false, p.maxMessageSizeInKilobytes(), t.roundRobin);
        }
        throw BrokerException.entityNotFound(address.entityPath());
    }

    private static void validate(Target target, Message m) {
        if (m.sessionId() != null && m.sessionId().length() > Limits.MAX_SESSION_ID_LENGTH) {
            throw new BrokerException(ErrorKind.ARGUMENT_OUT_OF_RANGE, "The SessionId exceeds the maximum length "
                    + "of " + Limits.MAX_SESSION_ID_LENGTH + " characters.");
        }
        if (m.messageId() instanceof String id && id.length() > Limits.MAX_MESSAGE_ID_LENGTH) {
            throw new BrokerException(ErrorKind.ARGUMENT_OUT_OF_RANGE, "The MessageId exceeds the maximum length "
                    + "of " + Limits.MAX_MESSAGE_ID_LENGTH + " characters.");
        }
        if (m.partitionKey() != null && m.sessionId() != null && !m.partitionKey().equals(m.sessionId())) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "The PartitionKey '" + m.partitionKey()
                    + "' does not match the SessionId '" + m.sessionId() + "'; when both are set they must be "
                    + "equal.");
        }
        long max = (long) target.maxMessageSizeKb() * 1024;
        if (m.encodedSize() > max) {
            throw new BrokerException(ErrorKind.MESSAGE_SIZE_EXCEEDED, "The received message (size "
                    + m.encodedSize() + " bytes) exceeds the limit (" + max + " bytes) currently allowed on the "
                    + "entity '" + target.name() + "'.");
        }
    }

    /**
     * The partition a message goes to: by SessionId, else PartitionKey, else MessageId when duplicate detection
     * is on; otherwise {@code unkeyed} (round-robin, chosen once per send so a batch stays together).
     */
    static int partitionIndexFor(Message m, boolean dedup, int partitions, int unkeyed) {
        if (partitions == 1) {
            return 0;
        }
        String key = m.sessionId() != null ? m.sessionId() : m.partitionKey();
        if (key == null && dedup && m.messageId() != null) {
            key = m.messageId().toString();
        }
        if (key == null) {
            return unkeyed;
        }
        return Math.floorMod(stableHash(key), partitions);
    }

    /** FNV-1a over the key's UTF-16 code units: stable across processes and versions. */
    static int stableHash(String key) {
        int h = 0x811C9DC5;
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            h = (h ^ (c & 0xff)) * 0x01000193;
            h = (h ^ (c >>> 8)) * 0x01000193;
        }
        return h;
    }

    private static int sessionPartition(String sessionId, int partitions) {
        return partitions == 1 ? 0 : Math.floorMod(stableHash(sessionId), partitions);
    }

    private Map<Integer, List<Message>> route(Target target, List<Message> messages) {
        Map<Integer, List<Message>> byPartition = new LinkedHashMap<>();
        int n = target.partitions().length;
        int unkeyed = n == 1 ? 0 : Math.floorMod(target.roundRobin().getAndIncrement(), n);
        for (Message m : prepared(target, messages)) {
            int p = partitionIndexFor(m, target.dedup(), n, unkeyed);
            byPartition.computeIfAbsent(p, k -> new ArrayList<>()).add(m);
        }
        return byPartition;
    }

    /** The messages validated and each with a MessageId: the given list itself when every one had one. */
    private List<Message> prepared(Target target, List<Message> messages) {
        List<Message> out = messages;
        for (int i = 0; i < messages.size(); i++) {
            Message given = messages.get(i);
            validate(target, given);
            Message m = withMessageId(given);
            if (m != given && out == messages) {
                out = new ArrayList<>(messages);
            }
            if (out != messages) {
                out.set(i, m);
            }
        }
        return out;
    }

    /**
     * Service Bus gives every message a MessageId: when the sender set none, the broker assigns one (a GUID as 32
     * hex digits). Clients rely on it: the JavaScript SDK keys its lock renewal by MessageId and fails to close a
     * receiver that got a message without one. The encoded size is kept as the sender's.
     */
    private static Message withMessageId(Message m) {
        if (m.messageId() != null) {
            return m;
        }
        return m.toBuilder().messageId(newMessageId()).encodedSize(m.encodedSize()).build();
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /**
     * A random (version 4 layout) GUID as 32 lower-case hex digits. A MessageId needs uniqueness, not secrecy:
     * {@code UUID.randomUUID()} draws from {@code SecureRandom} (a synchronized read of the OS entropy source),
     * which the broker benchmark's profile showed at about 11 % of the broker's CPU on pipelined sends without
     * MessageIds; {@link java.util.concurrent.ThreadLocalRandom} costs a few nanoseconds and does not contend.
     */
    static String newMessageId() {
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        long hi = (r.nextLong() & ~0xF000L) | 0x4000L;
        long lo = (r.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        char[] c = new char[32];
        for (int i = 0; i < 16; i++) {
            c[i] = HEX[(int) (hi >>> (60 - 4 * i)) & 0xF];
            c[16 + i] = HEX[(int) (lo >>> (60 - 4 * i)) & 0xF];
        }
        return new String(c);
    }

    // ================================================================================================ sending

    /** Fails like a send would when the path is not a queue or topic that accepts messages. */
    public void checkSendable(String entityPath) {
        Target target = sendTarget(entityPath);
        if (!target.status().canSend()) {
            throw target.status().error(target.name(), true);
        }
    }

    /** The largest message the entity accepts, in bytes. */
    public long maxMessageSizeBytes(String entityPath) {
        return (long) sendTarget(entityPath).maxMessageSizeKb() * 1024;
    }

    /** Fails like attaching a receiver would when the address does not name a receivable queue. */
    public void checkReceivable(EntityAddress address) {
        Source source = source(address);
        if (!source.status().canReceive()) {
            throw source.status().error(source.name(), false);
        }
    }

    /** Whether the receivable entity an address names requires sessions (its main queue). */
    public boolean requiresSession(EntityAddress address) {
        return source(address).requiresSession() && address.subQueue() == SubQueue.MAIN;
    }

    /**
     * Sends messages to a queue or topic. Messages with a future {@code ScheduledEnqueueTimeUtc} are scheduled.
     * Completes when every message is durable. The list is used as given (not copied): the caller must not change it
     * afterwards.
     */
    public CompletableFuture<Void> send(String entityPath, List<Message> messages) {
        try {
            Target target = sendTarget(entityPath);
            if (!target.status().canSend()) {
                throw target.status().error(target.name(), true);
            }
            config.storage().requireFreeSpace(config.clock().monotonicNanos());
            if (target.partitions().length == 1) {
                // one partition (every entity that is not partitioned): no routing map
                List<Message> batch = prepared(target, messages);
                checkNotBusy(target.partitions()[0]);
                return batch.isEmpty() ? CompletableFuture.completedFuture(null)
                        : sendToPartition(target.partitions()[0], batch);
            }
            Map<Integer, List<Message>> routed = route(target, messages);
            for (Integer p : routed.keySet()) {
                checkNotBusy(target.partitions()[p]);
            }
            if (routed.size() == 1) {
                Map.Entry<Integer, List<Message>> only = routed.entrySet().iterator().next();
                return sendToPartition(target.partitions()[only.getKey()], only.getValue());
            }
            List<CompletableFuture<Void>> all = new ArrayList<>(routed.size());
            for (Map.Entry<Integer, List<Message>> e : routed.entrySet()) {
                all.add(sendToPartition(target.partitions()[e.getKey()], e.getValue()));
            }
            return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static void checkNotBusy(PartitionRef ref) {
        if (ref.shard().queuedCommands() > MAX_QUEUED_COMMANDS) {
            throw new BrokerException(ErrorKind.SERVER_BUSY, "The broker is busy and cannot accept more "
                    + "messages right now; retry shortly.");
        }
    }

    /** Sends one partition's share of a send; its messages count as sent once they are durable. */
    private CompletableFuture<Void> sendToPartition(PartitionRef ref, List<Message> batch) {
        return ref.shard().call(() -> {
            ref.partition().send(batch, ref.shard().nowMs());
            return null;
        }, stats.sentCounter(), batch.size());
    }

    /**
     * Schedules messages (each must carry its scheduled enqueue time); completes with their sequence numbers, in
     * order, valid while they are scheduled.
     */
    public CompletableFuture<long[]> schedule(String entityPath, List<Message> messages) {
        try {
            Target target = sendTarget(entityPath);
            if (!target.status().canSend()) {
                throw target.status().error(target.name(), true);
            }
            config.storage().requireFreeSpace(config.clock().monotonicNanos());
            int n = target.partitions().length;
            int unkeyed = n == 1 ? 0 : Math.floorMod(target.roundRobin().getAndIncrement(), n);
            List<CompletableFuture<Long>> all = new ArrayList<>(messages.size());
            for (Message given : messages) {
                validate(target, given);
                Message m = withMessageId(given);
                if (m.scheduledEnqueueTimeMs() == null) {
                    throw new BrokerException(ErrorKind.ARGUMENT, "A scheduled message needs a "
                            + "ScheduledEnqueueTimeUtc.");
                }
                PartitionRef ref = target.partitions()[partitionIndexFor(m, target.dedup(), n, unkeyed)];
                all.add(ref.shard().call(() -> ref.partition().schedule(m, m.scheduledEnqueueTimeMs(),
                        ref.shard().nowMs()), stats.sentCounter(), 1));
            }
            return CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).thenApply(x -> {
                long[] seqs = new long[all.size()];
                for (int i = 0; i < seqs.length; i++) {
                    seqs[i] = all.get(i).join();
                }
                return seqs;
            });
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Cancels scheduled messages by the sequence numbers the schedule operation returned. */
    public CompletableFuture<Void> cancelScheduled(String entityPath, long[] sequenceNumbers) {
        try {
            Target target = sendTarget(entityPath);
            List<CompletableFuture<Object>> all = new ArrayList<>();
            for (long seq : sequenceNumbers) {
                PartitionRef ref = partitionOfSequence(target.partitions(), target.partitioned(), seq);
                all.add(ref.shard().call(() -> {
                    ref.partition().cancelScheduled(seq);
                    return null;
                }));
            }
            return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static PartitionRef partitionOfSequence(PartitionRef[] refs, boolean partitioned, long seq) {
        if (!partitioned) {
            return refs[0];
        }
        int p = SequenceCounter.partitionOf(seq);
        if (p >= refs.length) {
            throw new BrokerException(ErrorKind.MESSAGE_NOT_FOUND, "No message with sequence number " + seq
                    + " exists.");
        }
        return refs[p];
    }

    // ================================================================================================ auto-delete on idle

    private static long idleMs(java.time.Duration autoDeleteOnIdle, String forwardTo) {
        // the service sets AutoDeleteOnIdle to its maximum on an entity that auto-forwards
        return forwardTo != null ? Long.MAX_VALUE : Limits.toMillisSaturated(autoDeleteOnIdle);
    }

    /** Records activity now and arms the idle check of an entity created, updated or recovered. */
    private void watchIdle(QueueEntity q) {
        q.idle.onDue = now -> checkIdle(q.partitions[0], q.idle, idleMs(q.properties.autoDeleteOnIdle(),
                q.properties.forwardTo()), queue(q.properties.name()) == q,
                q.partitions[0].partition().queue().hasConsumers(), () -> deleteQueue(q.properties.name()),
                "queue '" + q.properties.name() + "'", now);
        armIdle(q.partitions[0], q.idle, idleMs(q.properties.autoDeleteOnIdle(), q.properties.forwardTo()));
    }

    private void watchIdle(TopicEntity t) {
        t.idle.onDue = now -> checkIdle(t.partitions[0], t.idle, idleMs(t.properties.autoDeleteOnIdle(), null),
                topic(t.properties.name()) == t, false, () -> deleteTopic(t.properties.name()),
                "topic '" + t.properties.name() + "'", now);
        armIdle(t.partitions[0], t.idle, idleMs(t.properties.autoDeleteOnIdle(), null));
    }

    private void watchIdle(SubscriptionEntity s) {
        PartitionRef ref = s.topic.partitions[0];
        s.idle.onDue = now -> {
            SubQueueState state = ref.partition().subscription(s.properties.name());
            checkIdle(ref, s.idle, idleMs(s.properties.autoDeleteOnIdle(), s.properties.forwardTo()),
                    topic(s.topic.properties.name()) == s.topic && s.topic.subscription(s.properties.name()) == s,
                    state != null && state.hasConsumers(),
                    () -> deleteSubscription(s.topic.properties.name(), s.properties.name()),
                    "subscription '" + s.properties.path() + "'", now);
        };
        armIdle(ref, s.idle, idleMs(s.properties.autoDeleteOnIdle(), s.properties.forwardTo()));
    }

    private void armIdle(PartitionRef ref, Idle idle, long idleMs) {
        idle.touch(config.clock().epochMillis());
        if (idleMs == Long.MAX_VALUE) {
            return;
        }
        long due = saturatedAdd(idle.lastActiveMs(), idleMs);
        ref.shard().submit(() -> ref.shard().schedule(idle, due));
    }

    /** On the shard of the entity's first partition: deletes the entity once it has been idle long enough. */
    private void checkIdle(PartitionRef ref, Idle idle, long idleMs, boolean current, boolean receiving,
                           java.util.function.Supplier<CompletableFuture<Void>> delete, String what, long nowMs) {
        if (!current || idleMs == Long.MAX_VALUE || closed) {
            return;
        }
        if (receiving) {
            ref.shard().schedule(idle, saturatedAdd(nowMs, idleMs));
            return;
        }
        long due = saturatedAdd(idle.lastActiveMs(), idleMs);
        if (due > nowMs) {
            ref.shard().schedule(idle, due);
            return;
        }
        LOG.info("Deleting {}: idle since {} for longer than its AutoDeleteOnIdle ({} ms).", what,
                java.time.Instant.ofEpochMilli(idle.lastActiveMs()), idleMs);
        try {
            delete.get().whenComplete((x, e) -> {
                if (e != null) {
                    LOG.warn("AutoDeleteOnIdle of {} failed", what, e);
                }
            });
        } catch (BrokerException e) {
            LOG.debug("AutoDeleteOnIdle of {}: {}", what, e.getMessage());
        }
    }

    // ================================================================================================ forwarding

    /**
     * Forwards a pending transfer of {@code source} (on the source's shard thread, its record durable): the
     * destination partition is chosen from the message's keys, or from the transfer key when it has none, so a
     * re-forward after a crash reaches the same partition, which remembers the key and takes the message once.
     * The outcome goes back to the source's shard: done (the source forgets the transfer), refused for good (it
     * goes to the source's transfer dead-letter queue), or refused for now (retried).
     */
    private void forward(PartitionRef source, io.buslane.engine.partition.Transfer t) {
        try {
            Target target = sendTarget(t.destination());
            if (!target.status().canSend()) {
                throw target.status().error(target.name(), true);
            }
            Message m = t.forwardedMessage();
            String key = t.key();
            int n = target.partitions().length;
            PartitionRef ref = target.partitions()[partitionIndexFor(m, target.dedup(), n,
                    Math.floorMod(stableHash(key), n))];
            ref.shard().call(() -> {
                ref.partition().acceptForwarded(m, key, ref.shard().nowMs());
                return null;
            }).whenComplete((x, error) -> afterForward(source, t, error));
        } catch (BrokerException e) {
            afterForward(source, t, e);
        } catch (RuntimeException e) {
            LOG.warn("Forwarding a message of '{}' to '{}' failed; retrying", t.owner().settings().entityPath(),
                    t.destination(), e);
            afterForward(source, t, new BrokerException(ErrorKind.INTERNAL, String.valueOf(e.getMessage())));
        }
    }

    private static void afterForward(PartitionRef source, io.buslane.engine.partition.Transfer t, Throwable error) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause() : error;
        source.shard().submit(() -> {
            if (cause == null) {
                source.partition().transferDone(t);
            } else if (cause instanceof BrokerException be && refusedForGood(be.kind())) {
                source.partition().transferFailed(t, transferFailureReason(be.kind()), be.getMessage());
            } else {
                source.partition().retryTransferLater(t);
            }
        });
    }

    private static boolean refusedForGood(ErrorKind kind) {
        return switch (kind) {
            case ENTITY_NOT_FOUND, ENTITY_DISABLED, QUOTA_EXCEEDED, MESSAGE_SIZE_EXCEEDED, INVALID_OPERATION,
                 ARGUMENT, ARGUMENT_OUT_OF_RANGE -> true;
            default -> false;
        };
    }

    /** The DeadLetterReason of a message the forwarding destination refused. */
    static String transferFailureReason(ErrorKind kind) {
        return switch (kind) {
            case ENTITY_NOT_FOUND -> "MessagingEntityNotFound";
            case ENTITY_DISABLED -> "MessagingEntityDisabled";
            case QUOTA_EXCEEDED -> "QuotaExceeded";
            case MESSAGE_SIZE_EXCEEDED -> "MessageSizeExceeded";
            default -> "TransferFailed";
        };
    }

    // ================================================================================================ receiving

    /**
     * A receivable entity resolved from an address: what a receive or settlement needs of it; made per call, so a subscription's path (for error messages
     * only) is built when asked for, not on every settlement.
     */
    private record Source(EntityAddress address, PartitionRef[] partitions, boolean partitioned,
                          boolean requiresSession, EntityStatus status, String queueName,
                          SubscriptionProperties subscription) {
        String name() {
            return subscription != null ? subscription.path() : queueName;
        }
    }

    private Source source(EntityAddress address) {
        if (address == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required.");
        }
        if (address.subscription() == null) {
            QueueEntity q = queue(address.entityPath());
            if (q == null) {
                if (topic(address.entityPath()) != null) {
                    throw new BrokerException(ErrorKind.INVALID_OPERATION, "Cannot receive from topic '"
                            + address.entityPath() + "'; receive from one of its subscriptions.");
                }
                throw BrokerException.entityNotFound(address.entityPath());
            }
            q.idle.touch(config.clock().epochMillis());
            QueueProperties p = q.properties;
            return new Source(address, q.partitions, p.enablePartitioning(), p.requiresSession(), p.status(),
                    p.name(), null);
        }
        TopicEntity t = topic(address.entityPath());
        SubscriptionEntity s = t == null ? null : t.subscription(address.subscription());
        if (s == null) {
            throw BrokerException.entityNotFound(address.entityName());
        }
        s.idle.touch(config.clock().epochMillis());
        SubscriptionProperties sp = s.properties;
        return new Source(address, t.partitions, t.properties.enablePartitioning(), sp.requiresSession(),
                sp.status(), null, sp);
    }

    /** The sub-queue an address names within one partition (shard thread only). */
    private static SubQueueState resolve(PartitionRef ref, EntityAddress address) {
        Partition p = ref.partition();
        SubQueueState main = address.subscription() == null ? p.queue() : p.subscription(address.subscription());
        if (main == null) {
            throw BrokerException.entityNotFound(address.entityName());
        }
        return main.subQueue(address.subQueue());
    }

    /** Attaches a non-session receiver. Fails for session-enabled main queues. */
    public Receiver createReceiver(EntityAddress address, ReceiveMode mode, DeliverySink sink) {
        Source source = source(address);
        if (!source.status().canReceive()) {
            throw source.status().error(source.name(), false);
        }
        if (source.requiresSession() && address.subQueue() == SubQueue.MAIN) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "It is not possible for an entity that "
                    + "requires sessions to create a non-sessionful message receiver.");
        }
        Receiver receiver = new Receiver(this, address, mode, sink);
        receiver.bind(source.partitions());
        for (int i = 0; i < source.partitions().length; i++) {
            int index = i;
            PartitionRef ref = source.partitions()[i];
            ref.shard().submit(() -> {
                if (receiver.isClosed()) {
                    return;
                }
                try {
                    SubQueueState q = resolve(ref, address);
                    receiver.setSlot(index, q.addConsumer(receiver));
                    q.pump();
                } catch (BrokerException e) {
                    receiver.closedByEngine(e);
                }
            });
        }
        return receiver;
    }

    /**
     * Accepts a session: the named one, or (with a null id) the next available one, waiting up to
     * {@code timeoutMs} for one to free up. Completes with a receiver holding the session's lock.
     */
    public CompletableFuture<Receiver> acceptSession(EntityAddress address, String sessionId, ReceiveMode mode,
                                                     long timeoutMs, DeliverySink sink) {
        try {
            Source source = source(address);
            if (!source.status().canReceive()) {
                throw source.status().error(source.name(), false);
            }
            if (!source.requiresSession() || address.subQueue() != SubQueue.MAIN) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION, "A sessionful message receiver cannot be "
                        + "created on an entity that does not require sessions. Ensure RequiresSession is set to "
                        + "true when creating a Queue or Subscription to enable sessionful behavior.");
            }
            Receiver receiver = new Receiver(this, address, mode, sink);
            if (sessionId != null) {
                PartitionRef ref = source.partitions()[sessionPartition(sessionId, source.partitions().length)];
                receiver.bind(new PartitionRef[] {ref});
                return ref.shard().call(() -> {
                    SubQueueState q = resolve(ref, address);
                    var slot = q.acceptSession(sessionId, receiver, ref.shard().nowMs());
                    receiver.setSlot(0, slot);
                    receiver.bindSession(sessionId, q.sessionLockedUntil(sessionId, ref.shard().nowMs()));
                    return receiver;
                });
            }
            return acceptNext(source, receiver, timeoutMs);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<Receiver> acceptNext(Source source, Receiver receiver, long timeoutMs) {
        CompletableFuture<Receiver> result = new CompletableFuture<>();
        PartitionRef[] refs = source.partitions();
        AtomicBoolean claimed = new AtomicBoolean();
        io.buslane.engine.partition.SessionWaiter waiter = new io.buslane.engine.partition.SessionWaiter() {
            @Override
            public io.buslane.engine.partition.ConsumerHandle consumer() {
                return receiver;
            }

            @Override
            public boolean tryClaim() {
                return claimed.compareAndSet(false, true);
            }

            @Override
            public boolean isClaimed() {
                return claimed.get();
            }

            @Override
            public void onAccepted(io.buslane.engine.partition.ConsumerSlot slot, String id, long lockedUntilMs) {
                for (int i = 0; i < refs.length; i++) {
                    if (refs[i].partition() == slot.queue().partition()) {
                        receiver.bind(new PartitionRef[] {refs[i]});
                        receiver.setSlot(0, slot);
                        receiver.bindSession(id, lockedUntilMs);
                        result.complete(receiver);
                        return;
                    }
                }
            }
        };
        EntityAddress address = source.address();
        for (PartitionRef ref : refs) {
            ref.shard().submit(() -> {
                try {
                    resolve(ref, address).acceptNextSession(waiter);
                } catch (BrokerException e) {
                    if (waiter.tryClaim()) {
                        result.completeExceptionally(e);
                    }
                }
            });
        }
        PartitionRef first = refs[0];
        first.shard().submit(() -> first.shard().schedule(new EngineTimer() {
            @Override
            public void onTimer(long nowMs) {
                if (waiter.tryClaim()) {
                    result.completeExceptionally(new BrokerException(ErrorKind.TIMEOUT, "No session available to "
                            + "accept on '" + address + "' within " + timeoutMs + " ms."));
                }
            }
        }, saturatedAdd(first.shard().nowMs(), Math.max(0, timeoutMs))));
        return result;
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }

    // ================================================================================================ settlement

    private <T> CompletableFuture<T> onLockPartition(EntityAddress address, UUID lockToken,
                                                     Function<SubQueueState, T> action) {
        return onLockPartition(address, lockToken, null, action);
    }

    /** As above; a successful settlement counts in {@code settled} (unless null) once durable. */
    private <T> CompletableFuture<T> onLockPartition(EntityAddress address, UUID lockToken,
                                                     EngineStats.Outcome settled, Function<SubQueueState, T> action) {
        try {
            Source source = source(address);
            int p = lockToken == null ? Integer.MAX_VALUE
                    : io.buslane.engine.shard.Shard.partitionOfLockToken(lockToken);
            if (p >= source.partitions().length) {
                throw new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, "The lock supplied is invalid.");
            }
            PartitionRef ref = source.partitions()[p];
            return ref.shard().call(() -> action.apply(resolve(ref, address)),
                    settled == null ? null : stats.settledCounter(settled), 1);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    public CompletableFuture<Void> complete(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.COMPLETE, q -> {
            q.complete(lockToken, q.partition().ctxNowMs());
            return null;
        });
    }

    public CompletableFuture<Void> abandon(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.ABANDON, q -> {
            q.abandon(lockToken, props, q.partition().ctxNowMs());
            return null;
        });
    }

    /** Unlocks a message without counting a delivery (AMQP {@code released}). */
    public CompletableFuture<Void> release(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.RELEASE, q -> {
            q.release(lockToken, q.partition().ctxNowMs());
            return null;
        });
    }

    public CompletableFuture<Void> defer(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.DEFER, q -> {
            q.defer(lockToken, props, q.partition().ctxNowMs());
            return null;
        });
    }

    public CompletableFuture<Void> deadLetter(EntityAddress address, UUID lockToken, String reason,
                                              String description, Map<String, Object> props) {
        return onLockPartition(address, lockToken, EngineStats.Outcome.DEAD_LETTER, q -> {
            q.deadLetter(lockToken, reason, description, props, q.partition().ctxNowMs());
            return null;
        });
    }

    /** Renews a message lock; completes with the new locked-until time. */
    public CompletableFuture<Long> renewLock(EntityAddress address, UUID lockToken) {
        return onLockPartition(address, lockToken, q -> q.renewLock(lockToken, q.partition().ctxNowMs()));
    }

    /** Receives deferred messages by sequence number. */
    public CompletableFuture<List<ReceivedMessage>> receiveDeferred(EntityAddress address, long[] sequenceNumbers,
                                                                    ReceiveMode mode, String sessionId) {
        try {
            Source source = source(address);
            Map<PartitionRef, List<Long>> byPartition = new LinkedHashMap<>();
            for (long seq : sequenceNumbers) {
                byPartition.computeIfAbsent(partitionOfSequence(source.partitions(), source.partitioned(), seq),
                        k -> new ArrayList<>()).add(seq);
            }
            List<CompletableFuture<List<ReceivedMessage>>> all = new ArrayList<>();
            for (Map.Entry<PartitionRef, List<Long>> e : byPartition.entrySet()) {
                PartitionRef ref = e.getKey();
                long[] seqs = e.getValue().stream().mapToLong(Long::longValue).toArray();
                all.add(ref.shard().call(() -> resolve(ref, address).receiveDeferred(seqs, mode, sessionId,
                        ref.shard().nowMs())));
            }
            return stats.countDelivered(CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).thenApply(x -> {
                List<ReceivedMessage> out = new ArrayList<>();
                for (CompletableFuture<List<ReceivedMessage>> f : all) {
                    out.addAll(f.join());
                }
                return out;
            }));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // ================================================================================================ browsing

    /**
     * Browses messages from a sequence number, in sequence order, without locking them or counting a delivery;
     * includes deferred and (for a queue) scheduled messages. On a topic address, browses its scheduled messages.
     */
    public CompletableFuture<List<ReceivedMessage>> peek(EntityAddress address, long fromSeq, int max,
                                                         String sessionId) {
        try {
            if (max <= 0) {
                return CompletableFuture.completedFuture(List.of());
            }
            if (address != null && address.subscription() == null && address.subQueue() == SubQueue.MAIN
                    && queue(address.entityPath()) == null && topic(address.entityPath()) != null) {
                TopicEntity t = topic(address.entityPath());
                return peekChain(t.partitions, t.properties.enablePartitioning(), fromSeq, max,
                        (ref, from, count) -> ref.partition().peekScheduled(from, count));
            }
            Source source = source(address);
            PartitionRef[] refs = source.partitions();
            if (sessionId != null) {
                PartitionRef ref = refs[sessionPartition(sessionId, refs.length)];
                return ref.shard().call(() -> ref.partition().peek(resolve(ref, address), fromSeq, max, sessionId));
            }
            return peekChain(refs, source.partitioned(), fromSeq, max,
                    (ref, from, count) -> ref.partition().peek(resolve(ref, address), from, count, null));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private interface PeekStep {
        List<ReceivedMessage> peek(PartitionRef ref, long fromSeq, int max);
    }

    /** Browses partition after partition in sequence-number order (the partition id is the top 16 bits). */
    private CompletableFuture<List<ReceivedMessage>> peekChain(PartitionRef[] refs, boolean partitioned,
                                                               long fromSeq, int max, PeekStep step) {
        if (!partitioned) {
            PartitionRef ref = refs[0];
            return ref.shard().call(() -> step.peek(ref, fromSeq, max));
        }
        int startPartition = fromSeq < 0 ? 0 : SequenceCounter.partitionOf(fromSeq);
        List<ReceivedMessage> out = new ArrayList<>();
        CompletableFuture<List<ReceivedMessage>> chain = CompletableFuture.completedFuture(out);
        for (int p = startPartition; p < refs.length; p++) {
            PartitionRef ref = refs[p];
            long from = p == startPartition ? fromSeq : ((long) p) << 48;
            chain = chain.thenCompose(acc -> {
                if (acc.size() >= max) {
                    return CompletableFuture.completedFuture(acc);
                }
                return ref.shard().call(() -> step.peek(ref, from, max - acc.size())).thenApply(more -> {
                    acc.addAll(more);
                    return acc;
                });
            });
        }
        return chain;
    }

    // ================================================================================================ sessions

    private <T> CompletableFuture<T> onSession(EntityAddress address, String sessionId,
                                               Function<SubQueueState, T> action) {
        try {
            Source source = source(address);
            if (sessionId == null) {
                throw new BrokerException(ErrorKind.ARGUMENT, "A session id is required.");
            }
            PartitionRef ref = source.partitions()[sessionPartition(sessionId, source.partitions().length)];
            return ref.shard().call(() -> action.apply(resolve(ref, address)));
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    public CompletableFuture<Long> renewSessionLock(EntityAddress address, String sessionId) {
        return onSession(address, sessionId, q -> q.renewSessionLock(sessionId, q.partition().ctxNowMs()));
    }

    /**
     * Completes while the session is locked by a session receiver, else fails with SESSION_LOCK_LOST: Service Bus
     * refuses a session receiver's get/set-session-state once its session lock is lost. Entities without sessions
     * pass, so that the state operation reports its own error.
     */
    public CompletableFuture<Void> checkSessionLocked(EntityAddress address, String sessionId) {
        try {
            if (sessionId == null || !requiresSession(address)) {
                return CompletableFuture.completedFuture(null);
            }
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
        return onSession(address, sessionId, q -> {
            q.sessionLockedUntil(sessionId, q.partition().ctxNowMs());
            return null;
        });
    }

    /** The session's state (null when it has none). */
    public CompletableFuture<byte[]> getSessionState(EntityAddress address, String sessionId) {
        return onSession(address, sessionId, q -> q.getSessionState(sessionId));
    }

    /** Sets the session's state; null clears it. The state may be as large as the entity's largest message. */
    public CompletableFuture<Void> setSessionState(EntityAddress address, String sessionId, byte[] state) {
        if (state != null && address != null) {
            try {
                config.storage().requireFreeSpace(config.clock().monotonicNanos());
            } catch (BrokerException e) {
                return CompletableFuture.failedFuture(e);
            }
            long max = maxReceivableMessageBytes(address);
            if (state.length > max) {
                return CompletableFuture.failedFuture(new BrokerException(ErrorKind.MESSAGE_SIZE_EXCEEDED,
                        "The session state (" + state.length + " bytes) exceeds the maximum message size of the "
                                + "entity (" + max + " bytes)."));
            }
        }
        return onSession(address, sessionId, q -> {
            q.setSessionState(sessionId, state, q.partition().ctxNowMs());
            return null;
        });
    }

    private long maxReceivableMessageBytes(EntityAddress address) {
        QueueEntity q = address.subscription() == null ? queue(address.entityPath()) : null;
        if (q != null) {
            return (long) q.properties.maxMessageSizeInKilobytes() * 1024;
        }
        TopicEntity t = topic(address.entityPath());
        return t == null ? Long.MAX_VALUE : (long) t.properties.maxMessageSizeInKilobytes() * 1024;
    }

    /** Ids of sessions with messages or state, updated since the given time; paged with skip and top. */
    public CompletableFuture<List<String>> listSessions(EntityAddress address, long updatedSinceMs, int skip,
                                                        int top) {
        try {
            Source source = source(address);
            return onAllPartitions(source.partitions(), p -> {
                SubQueueState main = source.address().subscription() == null ? p.queue()
                        : p.subscription(source.address().subscription());
                return main == null ? List.<String>of() : main.sessionIds(updatedSinceMs);
            }).thenApply(lists -> {
                List<String> all = new ArrayList<>();
                lists.forEach(all::addAll);
                all.sort(null);
                int from = Math.min(Math.max(skip, 0), all.size());
                int to = (int) Math.min(all.size(), (long) from + Math.max(top, 0));
                return new ArrayList<>(all.subList(from, to));
            });
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // ================================================================================================ deletion and counts

    /** Deletes up to {@code max} unlocked messages enqueued before {@code beforeMs}; completes with how many. */
    public CompletableFuture<Integer> deleteMessages(EntityAddress address, int max, long beforeMs) {
        try {
            Source source = source(address);
            CompletableFuture<Integer> chain = CompletableFuture.completedFuture(0);
            for (PartitionRef ref : source.partitions()) {
                chain = chain.thenCompose(done -> done >= max ? CompletableFuture.completedFuture(done)
                        : ref.shard().call(() -> resolve(ref, address).deleteMessages(max - done, beforeMs))
                        .thenApply(n -> done + n));
            }
            return chain;
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Deletes every message of the addressed sub-queue; completes with how many. */
    public CompletableFuture<Integer> purge(EntityAddress address) {
        try {
            Source source = source(address);
            return onAllPartitions(source.partitions(), p -> resolve(findRef(source, p), address).purge())
                    .thenApply(list -> list.stream().mapToInt(Integer::intValue).sum());
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static PartitionRef findRef(Source source, Partition p) {
        return source.partitions()[p.index()];
    }

    /** Message counts of a queue, a subscription, or a topic (scheduled messages only). */
    public CompletableFuture<RuntimeCounts> counts(String entityPath) {
        EntityAddress address = EntityAddress.parse(entityPath);
        try {
            if (address == null) {
                throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required.");
            }
            if (address.subscription() != null) {
                TopicEntity t = topic(address.entityPath());
                if (t == null || t.subscription(address.subscription()) == null) {
                    throw BrokerException.entityNotFound(address.entityName());
                }
                return sumCounts(onAllPartitions(t.partitions, p -> p.subscriptionCounts(address.subscription())));
            }
            QueueEntity q = queue(address.entityPath());
            if (q != null) {
                return sumCounts(onAllPartitions(q.partitions, Partition::counts));
            }
            TopicEntity t = topic(address.entityPath());
            if (t != null) {
                return sumCounts(onAllPartitions(t.partitions, Partition::counts));
            }
            throw BrokerException.entityNotFound(address.entityPath());
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static CompletableFuture<RuntimeCounts> sumCounts(CompletableFuture<List<RuntimeCounts>> parts) {
        return parts.thenApply(list -> {
            RuntimeCounts sum = RuntimeCounts.ZERO;
            for (RuntimeCounts c : list) {
                sum = sum.plus(c);
            }
            return sum;
        });
    }

    // ================================================================================================ transactions
    // (AMQP transactions, branch txn: this section only; the staging itself lives in the AMQP front end)

    /**
     * Applies a committed transaction: every staged send and settlement. The work of each shard runs as one shard
     * command, so it is applied in one go and made durable by one journal sync: first every settlement's lock is
     * checked (a lost lock fails the command before anything changed), then the sends, then the settlements. Work
     * spread over several shards (partitioned entities, or entities on different shards) is one command per
     * shard: each is atomic, together they are not.
     */
    public CompletableFuture<Void> commit(TransactionalBatch batch) {
        try {
            Map<PartitionRef, List<Message>> sends = new LinkedHashMap<>();
            for (TransactionalBatch.Send send : batch.sends()) {
                Target target = sendTarget(send.entityPath());
                if (!target.status().canSend()) {
                    throw target.status().error(target.name(), true);
                }
                if (target.requiresSession()) {
                    for (Message m : send.messages()) {
                        if (m.sessionId() == null) {
                            throw new BrokerException(ErrorKind.INVALID_OPERATION, "The SessionId was not set on a "
                                    + "message, and it cannot be sent to the entity. Entities that have session "
                                    + "support enabled can only receive messages that have the SessionId set to a "
                                    + "valid value.");
                        }
                    }
                }
                for (Map.Entry<Integer, List<Message>> e : route(target, send.messages()).entrySet()) {
                    sends.computeIfAbsent(target.partitions()[e.getKey()], k -> new ArrayList<>())
                            .addAll(e.getValue());
                }
            }
            if (!sends.isEmpty()) {
                config.storage().requireFreeSpace(config.clock().monotonicNanos());
            }
            Map<PartitionRef, List<TransactionalBatch.Settle>> settles = new LinkedHashMap<>();
            Set<UUID> tokens = new java.util.HashSet<>();
            for (TransactionalBatch.Settle settle : batch.settlements()) {
                if (!tokens.add(settle.lockToken())) {
                    throw new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, "The message with lock token '"
                            + settle.lockToken() + "' is settled more than once in the transaction.");
                }
                Source source = source(settle.address());
                int p = settle.lockToken() == null ? Integer.MAX_VALUE : Shard.partitionOfLockToken(settle.lockToken());
                if (p >= source.partitions().length) {
                    throw new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, "The lock supplied is invalid.");
                }
                settles.computeIfAbsent(source.partitions()[p], k -> new ArrayList<>()).add(settle);
            }
            Map<Shard, List<PartitionRef>> byShard = new LinkedHashMap<>();
            for (PartitionRef ref : sends.keySet()) {
                byShard.computeIfAbsent(ref.shard(), k -> new ArrayList<>()).add(ref);
            }
            for (PartitionRef ref : settles.keySet()) {
                List<PartitionRef> refs = byShard.computeIfAbsent(ref.shard(), k -> new ArrayList<>());
                if (!refs.contains(ref)) {
                    refs.add(ref);
                }
            }
            List<CompletableFuture<Object>> all = new ArrayList<>(byShard.size());
            for (Map.Entry<Shard, List<PartitionRef>> e : byShard.entrySet()) {
                Shard shard = e.getKey();
                List<PartitionRef> refs = e.getValue();
                all.add(shard.call(() -> {
                    long now = shard.nowMs();
                    for (PartitionRef ref : refs) {
                        for (TransactionalBatch.Settle s : settles.getOrDefault(ref, List.of())) {
                            resolve(ref, s.address()).requireLock(s.lockToken(), now);
                        }
                    }
                    for (PartitionRef ref : refs) {
                        List<Message> messages = sends.get(ref);
                        if (messages != null) {
                            ref.partition().send(messages, now);
                        }
                    }
                    for (PartitionRef ref : refs) {
                        for (TransactionalBatch.Settle s : settles.getOrDefault(ref, List.of())) {
                            SubQueueState q = resolve(ref, s.address());
                            switch (s.kind()) {
                                case COMPLETE -> q.complete(s.lockToken(), now);
                                case ABANDON -> q.abandon(s.lockToken(), s.properties(), now);
                                case DEFER -> q.defer(s.lockToken(), s.properties(), now);
                                case DEAD_LETTER -> q.deadLetter(s.lockToken(), s.deadLetterReason(),
                                        s.deadLetterDescription(), s.properties(), now);
                            }
                        }
                    }
                    return null;
                }));
            }
            return stats.countCommitted(CompletableFuture.allOf(all.toArray(new CompletableFuture[0])), batch);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
