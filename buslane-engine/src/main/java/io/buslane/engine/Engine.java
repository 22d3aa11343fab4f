package io.buslane.engine;

import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.api.ShardMonitor;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.RecoveredNamespace;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.persist.MetaJournal;
import io.buslane.engine.owner.OwnerSide;
import io.buslane.engine.receive.Browser;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.receive.MessageCounts;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.receive.Receivers;
import io.buslane.engine.receive.RemoteConsumers;
import io.buslane.engine.receive.SessionStates;
import io.buslane.engine.receive.Settlements;
import io.buslane.engine.routing.PartitionDirectory;
import io.buslane.engine.routing.SendRouter;
import io.buslane.engine.shard.Shard;
import io.buslane.engine.shard.Shards;
import io.buslane.engine.txn.TransactionCommit;
import io.buslane.engine.txn.TransactionalBatch;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntPredicate;

/**
 * The Service Bus engine: the namespace of queues, topics and subscriptions, and every messaging operation on
 * them, with no knowledge of any protocol. Front ends call it from any thread; each call becomes a command on the
 * shard that owns the partition concerned, and its future completes (on a shard thread) only after the records
 * behind it are durable. Callers must not block in completion callbacks; they hop to their own threads.
 *
 * <p>This class is the facade: it starts and stops the shards and hands every operation to the package that owns
 * it: {@code namespace} (entities, meta journal, AutoDeleteOnIdle), {@code routing} (partition directory, sends),
 * {@code receive} (receivers, settlement, browse, sessions, counts) and {@code txn} (transactions).
 */
public final class Engine implements AutoCloseable {

    private final EngineConfig config;
    private final Shards shards;
    private final Namespace namespace;
    private final SendRouter router;
    private final Receivers receivers;
    private final Settlements settlements;
    private final SessionStates sessions;
    private final EngineCluster cluster;
    private final Browser browser;
    private final MessageCounts counts;
    private final TransactionCommit transactions;
    private final EngineStats stats = new EngineStats();
    private final ShardOwnership ownership;
    private volatile boolean closed;

    private Engine(EngineConfig config, MetaJournal meta, Shard[] shards) {
        this.config = config;
        this.shards = new Shards(shards);
        PartitionDirectory directory = new PartitionDirectory(shards);
        this.namespace = new Namespace(meta, config.clock(), shards.length, directory);
        this.router = new SendRouter(namespace, directory, config.storage(), config.clock(), stats);
        namespace.forwardThrough(router);
        this.settlements = new Settlements(namespace, directory, config.clock(), stats);
        this.sessions = new SessionStates(namespace, directory, config.clock(), config.storage());
        this.receivers = new Receivers(namespace, directory, config.clock(), stats, settlements, sessions);
        this.browser = new Browser(namespace, directory, config.clock());
        this.counts = new MessageCounts(namespace, directory, config.clock());
        this.transactions = new TransactionCommit(namespace, directory, router, config.clock(), stats);
        this.ownership = new ShardOwnership(config, this.shards, namespace);
        this.cluster = new EngineCluster(ownership, namespace, directory, new OwnerSide(namespace, config.clock(),
                stats, router, transactions, new RemoteConsumers(namespace, config.clock())));
    }

    // ================================================================================================ lifecycle

    /** Opens the journals, replays them and starts the shards. */
    public static Engine start(EngineConfig config) {
        return start(config, shard -> true);
    }

    /**
     * Opens the namespace journal and the journals of the shards {@code servedAtStart} accepts, replays them and
     * starts those shards; the others are dormant until {@link EngineCluster#serveShard} (cluster mode: other nodes
     * serve them).
     */
    public static Engine start(EngineConfig config, IntPredicate servedAtStart) {
        return start(config, servedAtStart, config.storage().openMeta());
    }

    /**
     * Starts one node of a cluster: the namespace journal is shared with the other nodes (any node may change the
     * namespace; {@link EngineCluster#refreshNamespace} applies their changes), and the node serves no shard until
     * {@link EngineCluster#serveShard} (its cluster controller decides).
     */
    public static Engine startClusterNode(EngineConfig config) {
        return start(config, shard -> false, config.storage().openSharedMeta());
    }

    private static Engine start(EngineConfig config, IntPredicate servedAtStart, MetaJournal meta) {
        RecoveredNamespace recovered = RecoveredNamespace.read(meta);
        Shard[] shards = ShardOwnership.open(config, recovered.shardCount(), servedAtStart);
        Engine engine = new Engine(config, meta, shards);
        engine.namespace.recover(recovered, shards);
        if (config.threadingMode() == ThreadingMode.DEDICATED) {
            engine.shards.start();
        }
        return engine;
    }

    /** Cluster mode's controls: the shards this node serves, other nodes' namespace changes, the node channel. */
    public EngineCluster cluster() {
        return cluster;
    }

    /** In manual threading mode: runs one duty cycle on every shard; returns the work done. */
    public int doWork() {
        return shards.doWork();
    }

    /** In manual threading mode: runs duty cycles until no shard has anything to do. */
    public void runUntilIdle() {
        shards.runUntilIdle();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        ownership.close();
        namespace.stopReaping();
        if (config.threadingMode() == ThreadingMode.DEDICATED) {
            shards.stop();
        } else {
            shards.runUntilIdle();
        }
        shards.closeJournals();
        namespace.close();
    }

    public int shardCount() {
        return shards.count();
    }

    /** What the shards report about themselves: heap held, commands queued, locks expired, a fatal error. */
    public ShardMonitor shards() {
        return shards;
    }

    /** Cumulative message counters (sent, delivered, settled by outcome), for metrics. */
    public EngineStats stats() {
        return stats;
    }

    // ================================================================================================ namespace

    public QueueEntity queue(String name) {
        return namespace.queue(name);
    }

    public TopicEntity topic(String name) {
        return namespace.topic(name);
    }

    public Collection<QueueEntity> queues() {
        return namespace.queues();
    }

    public Collection<TopicEntity> topics() {
        return namespace.topics();
    }

    /** Creates a queue; completes once it is durable and its partitions exist. */
    public CompletableFuture<QueueEntity> createQueue(QueueProperties p) {
        return namespace.createQueue(p);
    }

    /** Replaces a queue's description (partitioning and sessions cannot change). */
    public CompletableFuture<QueueEntity> updateQueue(QueueProperties p) {
        return namespace.updateQueue(p);
    }

    /** Deletes a queue and all its messages. */
    public CompletableFuture<Void> deleteQueue(String name) {
        return namespace.deleteQueue(name);
    }

    public CompletableFuture<TopicEntity> createTopic(TopicProperties p) {
        return namespace.createTopic(p);
    }

    public CompletableFuture<TopicEntity> updateTopic(TopicProperties p) {
        return namespace.updateTopic(p);
    }

    public CompletableFuture<Void> deleteTopic(String name) {
        return namespace.deleteTopic(name);
    }

    /** Creates a subscription; without rules it gets the {@code $Default} TrueFilter rule. */
    public CompletableFuture<SubscriptionEntity> createSubscription(SubscriptionProperties p,
                                                                    List<RuleProperties> rules) {
        return namespace.createSubscription(p, rules);
    }

    public CompletableFuture<SubscriptionEntity> updateSubscription(SubscriptionProperties p) {
        return namespace.updateSubscription(p);
    }

    public CompletableFuture<Void> deleteSubscription(String topicName, String name) {
        return namespace.deleteSubscription(topicName, name);
    }

    public CompletableFuture<SubscriptionEntity> addRule(String topicName, String subscription, RuleProperties rule) {
        return namespace.addRule(topicName, subscription, rule);
    }

    public CompletableFuture<SubscriptionEntity> removeRule(String topicName, String subscription, String ruleName) {
        return namespace.removeRule(topicName, subscription, ruleName);
    }

    // ================================================================================================ sending

    /** Fails like a send would when the path is not a queue or topic that accepts messages. */
    public void checkSendable(String entityPath) {
        router.checkSendable(entityPath);
    }

    /** The largest message the entity accepts, in bytes. */
    public long maxMessageSizeBytes(String entityPath) {
        return router.maxMessageSizeBytes(entityPath);
    }

    /**
     * Sends messages to a queue or topic. Messages with a future {@code ScheduledEnqueueTimeUtc} are scheduled.
     * Completes when every message is durable. The list is used as given (not copied): the caller must not change it
     * afterwards.
     */
    public CompletableFuture<Void> send(String entityPath, List<Message> messages) {
        return router.send(entityPath, messages);
    }

    /** Schedules messages; completes with their sequence numbers, in order, valid while they are scheduled. */
    public CompletableFuture<long[]> schedule(String entityPath, List<Message> messages) {
        return router.schedule(entityPath, messages);
    }

    /**
     * Numbers messages scheduled under a transaction: completes with their sequence numbers, in order; they are
     * stored only if the transaction commits ({@link #commit}).
     */
    public CompletableFuture<long[]> reserveScheduled(String entityPath, List<Message> messages) {
        return router.reserveScheduled(entityPath, messages);
    }

    /** Cancels scheduled messages by the sequence numbers the schedule operation returned. */
    public CompletableFuture<Void> cancelScheduled(String entityPath, long[] sequenceNumbers) {
        return router.cancelScheduled(entityPath, sequenceNumbers);
    }

    // ================================================================================================ receiving

    /** Fails like attaching a receiver would when the address does not name a receivable queue. */
    public void checkReceivable(EntityAddress address) {
        receivers.checkReceivable(address);
    }

    /** Whether the receivable entity an address names requires sessions (its main queue). */
    public boolean requiresSession(EntityAddress address) {
        return receivers.requiresSession(address);
    }

    /** Attaches a non-session receiver. Fails for session-enabled main queues. */
    public Receiver createReceiver(EntityAddress address, ReceiveMode mode, DeliverySink sink) {
        return receivers.createReceiver(address, mode, sink);
    }

    /** Accepts the named session, or (null id) the next free one within {@code timeoutMs}. */
    public CompletableFuture<Receiver> acceptSession(EntityAddress address, String sessionId, ReceiveMode mode,
                                                     long timeoutMs, DeliverySink sink) {
        return receivers.acceptSession(address, sessionId, mode, timeoutMs, sink);
    }

    public CompletableFuture<Void> complete(EntityAddress address, UUID lockToken) {
        return settlements.complete(address, lockToken);
    }

    public CompletableFuture<Void> abandon(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return settlements.abandon(address, lockToken, props);
    }

    /** Unlocks a message without counting a delivery (AMQP {@code released}). */
    public CompletableFuture<Void> release(EntityAddress address, UUID lockToken) {
        return settlements.release(address, lockToken);
    }

    public CompletableFuture<Void> defer(EntityAddress address, UUID lockToken, Map<String, Object> props) {
        return settlements.defer(address, lockToken, props);
    }

    public CompletableFuture<Void> deadLetter(EntityAddress address, UUID lockToken, String reason,
                                              String description, Map<String, Object> props) {
        return settlements.deadLetter(address, lockToken, reason, description, props);
    }

    /** Renews a message lock; completes with the new locked-until time. */
    public CompletableFuture<Long> renewLock(EntityAddress address, UUID lockToken) {
        return settlements.renewLock(address, lockToken);
    }

    /** Receives deferred messages by sequence number; a session's only for {@code by}, its holder (null: any). */
    public CompletableFuture<List<ReceivedMessage>> receiveDeferred(EntityAddress address, long[] sequenceNumbers,
                                                                    ReceiveMode mode, String sessionId, Receiver by) {
        return settlements.receiveDeferred(address, sequenceNumbers, mode, sessionId, by);
    }

    /** Browses messages from a sequence number without locking them (see {@link Browser#peek}). */
    public CompletableFuture<List<ReceivedMessage>> peek(EntityAddress address, long fromSeq, int max,
                                                         String sessionId) {
        return browser.peek(address, fromSeq, max, sessionId);
    }

    // ================================================================================================ sessions

    /** Renews a session's lock held by {@code by} (the request's associated link; null: any holder). */
    public CompletableFuture<Long> renewSessionLock(EntityAddress address, String sessionId, Receiver by) {
        return sessions.renewSessionLock(address, sessionId, by);
    }

    /** Completes while the session is locked by {@code by} (null: by any receiver), else fails as lost. */
    public CompletableFuture<Void> checkSessionLocked(EntityAddress address, String sessionId, Receiver by) {
        return sessions.checkSessionLocked(address, sessionId, by);
    }

    /** The session's state (null when it has none). */
    public CompletableFuture<byte[]> getSessionState(EntityAddress address, String sessionId) {
        return sessions.getSessionState(address, sessionId);
    }

    /** Sets the session's state; null clears it. The state may be as large as the entity's largest message. */
    public CompletableFuture<Void> setSessionState(EntityAddress address, String sessionId, byte[] state) {
        return sessions.setSessionState(address, sessionId, state);
    }

    /** {@link #listSessions}'s time for "every session with messages or state". */
    public static final long ALL_ACTIVE_SESSIONS = Long.MIN_VALUE;

    /**
     * Ids of sessions in id order: for {@link #ALL_ACTIVE_SESSIONS} every session with messages or state, otherwise
     * those whose state was written at or after {@code stateUpdatedSinceMs}; paged with skip and top, the page
     * starting after {@code lastSessionId} (null: from the first).
     */
    public CompletableFuture<List<String>> listSessions(EntityAddress address, long stateUpdatedSinceMs, int skip,
                                                        int top, String lastSessionId) {
        return sessions.listSessions(address, stateUpdatedSinceMs, skip, top, lastSessionId);
    }

    // ================================================================================================ counts

    /**
     * Deletes up to {@code max} unlocked messages enqueued before {@code beforeMs}, only those of one session when
     * {@code sessionId} is not null; completes with how many.
     */
    public CompletableFuture<Integer> deleteMessages(EntityAddress address, int max, long beforeMs, String sessionId) {
        return counts.deleteMessages(address, max, beforeMs, sessionId);
    }

    /** Deletes every message of the addressed sub-queue; completes with how many. */
    public CompletableFuture<Integer> purge(EntityAddress address) {
        return counts.purge(address);
    }

    /** Message counts of a queue, a subscription, or a topic (scheduled messages only). */
    public CompletableFuture<RuntimeCounts> counts(String entityPath) {
        return counts.counts(entityPath);
    }

    // ================================================================================================ transactions

    /** Applies a committed transaction's sends and settlements (see {@link TransactionCommit}). */
    public CompletableFuture<Void> commit(TransactionalBatch batch) {
        return transactions.commit(batch);
    }
}
