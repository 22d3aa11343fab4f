package io.buslane.server.ops;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.Engine;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Test-isolation operations on the namespace: purge one entity (every message of a queue or subscription, or of one
 * of its sub-queues) and reset the namespace to its configured topology. Blocking: call from a worker thread.
 * Every removal is journaled and durable before the call returns, like any other operation.
 */
public final class NamespaceOps {

    private static final long TIMEOUT_SECONDS = 60;
    private static final int PEEK_PAGE = 256;

    private final Engine engine;
    private final Runnable applyTopology;
    private final Object resetLock = new Object();

    /**
     * @param engine        the engine
     * @param applyTopology re-creates the configured topology (the {@code --config} file or the starter config)
     */
    public NamespaceOps(Engine engine, Runnable applyTopology) {
        this.engine = engine;
        this.applyTopology = applyTopology;
    }

    /** What a purge removed, by where it was. */
    public record PurgeResult(String entity, long active, long deadLetter, long transferDeadLetter, long scheduled) {
        public long purged() {
            return active + deadLetter + transferDeadLetter + scheduled;
        }
    }

    /**
     * Purges an entity. A queue or subscription path empties its main queue, dead-letter queue and transfer
     * dead-letter queue (and, for a queue, cancels its scheduled messages); a path ending in
     * {@code /$DeadLetterQueue} or {@code /$Transfer/$DeadLetterQueue} empties only that sub-queue; a topic path
     * cancels the topic's scheduled messages and empties every subscription. Locked messages are removed too (their
     * lock tokens become invalid).
     *
     * @throws BrokerException ENTITY_NOT_FOUND (404) or ARGUMENT (400)
     */
    public PurgeResult purge(String path) {
        EntityAddress address = EntityAddress.parse(path);
        if (address == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required, e.g. /$admin/purge/myqueue.");
        }
        if (address.subQueue() != SubQueue.MAIN) {
            requireReceivable(address);
            long n = join(engine.purge(address));
            return new PurgeResult(address.toString(), 0, address.subQueue() == SubQueue.DEAD_LETTER ? n : 0,
                    address.subQueue() == SubQueue.TRANSFER_DEAD_LETTER ? n : 0, 0);
        }
        if (address.subscription() == null && engine.queue(address.entityPath()) == null) {
            TopicEntity topic = engine.topic(address.entityPath());
            if (topic == null) {
                throw BrokerException.entityNotFound(address.entityPath());
            }
            long scheduled = cancelScheduled(topic.properties().name());
            PurgeResult sum = new PurgeResult(topic.properties().name(), 0, 0, 0, scheduled);
            for (SubscriptionEntity s : topic.subscriptions()) {
                PurgeResult r = purgeAll(EntityAddress.subscription(topic.properties().name(),
                        s.properties().name()), 0);
                sum = new PurgeResult(sum.entity(), sum.active() + r.active(), sum.deadLetter() + r.deadLetter(),
                        sum.transferDeadLetter() + r.transferDeadLetter(), sum.scheduled());
            }
            return sum;
        }
        requireReceivable(address);
        long scheduled = address.subscription() == null ? cancelScheduled(address.entityPath()) : 0;
        return purgeAll(address, scheduled);
    }

    private void requireReceivable(EntityAddress address) {
        if (address.subscription() == null) {
            if (engine.queue(address.entityPath()) == null) {
                throw BrokerException.entityNotFound(address.entityPath());
            }
        } else {
            TopicEntity t = engine.topic(address.entityPath());
            if (t == null || t.subscription(address.subscription()) == null) {
                throw BrokerException.entityNotFound(address.entityName());
            }
        }
    }

    private PurgeResult purgeAll(EntityAddress main, long scheduled) {
        long active = join(engine.purge(main));
        long dead = join(engine.purge(main.withSubQueue(SubQueue.DEAD_LETTER)));
        long transferDead = join(engine.purge(main.withSubQueue(SubQueue.TRANSFER_DEAD_LETTER)));
        return new PurgeResult(main.entityName(), active, dead, transferDead, scheduled);
    }

    /** Cancels every scheduled message of a queue or topic; returns how many. */
    private long cancelScheduled(String entityPath) {
        EntityAddress address = EntityAddress.queueOrTopic(entityPath);
        List<Long> seqs = new ArrayList<>();
        long from = 0;
        while (true) {
            List<ReceivedMessage> page = join(engine.peek(address, from, PEEK_PAGE, null));
            if (page.isEmpty()) {
                break;
            }
            for (ReceivedMessage m : page) {
                if (m.state() == MessageState.SCHEDULED) {
                    seqs.add(m.sequenceNumber());
                }
                from = Math.max(from, m.sequenceNumber() + 1);
            }
            if (page.size() < PEEK_PAGE) {
                break;
            }
        }
        long cancelled = 0;
        for (long seq : seqs) {
            try {
                join(engine.cancelScheduled(entityPath, new long[] {seq}));
                cancelled++;
            } catch (BrokerException e) {
                // activated since the peek: the sub-queue purge that follows removes it
            }
        }
        return cancelled;
    }

    /** What a reset did. */
    public record ResetResult(int deletedQueues, int deletedTopics, int queues, int topics, int subscriptions) {
    }

    /**
     * Deletes every queue and topic (with their subscriptions and messages) and re-creates the configured
     * topology. Resets are serialised; clients attached to deleted entities see their links closed with
     * {@code amqp:not-found}.
     */
    public ResetResult reset() {
        synchronized (resetLock) {
            Map<String, TopicEntity> topics = new LinkedHashMap<>();
            for (TopicEntity t : engine.topics()) {
                topics.put(t.properties().name(), t);
            }
            List<String> queues = new ArrayList<>();
            for (QueueEntity q : engine.queues()) {
                queues.add(q.properties().name());
            }
            int deletedTopics = 0;
            for (String t : topics.keySet()) {
                if (deleted(engine.deleteTopic(t))) {
                    deletedTopics++;
                }
            }
            int deletedQueues = 0;
            for (String q : queues) {
                if (deleted(engine.deleteQueue(q))) {
                    deletedQueues++;
                }
            }
            applyTopology.run();
            int subscriptions = engine.topics().stream().mapToInt(t -> t.subscriptions().size()).sum();
            return new ResetResult(deletedQueues, deletedTopics, engine.queues().size(), engine.topics().size(),
                    subscriptions);
        }
    }

    /** Waits for a deletion; false when the entity was already gone (deleted concurrently). */
    private static boolean deleted(CompletableFuture<Void> f) {
        try {
            join(f);
            return true;
        } catch (BrokerException e) {
            if (e.kind() == ErrorKind.ENTITY_NOT_FOUND) {
                return false;
            }
            throw e;
        }
    }

    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException | CompletionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new BrokerException(ErrorKind.TIMEOUT, "The operation did not complete within "
                    + TIMEOUT_SECONDS + " seconds.");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BrokerException(ErrorKind.TIMEOUT, "Interrupted.");
        }
    }
}
