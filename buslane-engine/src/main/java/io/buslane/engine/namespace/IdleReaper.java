package io.buslane.engine.namespace;

import io.buslane.common.error.BrokerException;
import io.buslane.common.time.Clock;
import io.buslane.engine.partition.SubQueueState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import static io.buslane.engine.namespace.EntitySettings.idleMs;

/**
 * AutoDeleteOnIdle: each entity's {@link Idle} timer runs on the shard of the entity's first partition and, once
 * the entity has been idle for its period (no activity, no receiver attached), deletes it through the namespace's
 * ordinary delete path. Last activity is not journaled: a restart counts as activity.
 */
final class IdleReaper {

    private static final Logger LOG = LoggerFactory.getLogger(IdleReaper.class);

    private final Namespace namespace;
    private final Clock clock;
    private volatile boolean stopped;

    IdleReaper(Namespace namespace, Clock clock) {
        this.namespace = namespace;
        this.clock = clock;
    }

    void stop() {
        stopped = true;
    }

    /** Records activity now and arms the idle check of a queue created, updated or recovered. */
    void watch(QueueEntity q) {
        q.idle.onDue = now -> check(q.partitions[0], q.idle, idleMs(q.properties.autoDeleteOnIdle(),
                q.properties.forwardTo()), namespace.queue(q.properties.name()) == q,
                q.partitions[0].partition().queue().hasConsumers(), () -> namespace.deleteQueue(q.properties.name()),
                "queue '" + q.properties.name() + "'", now);
        arm(q.partitions[0], q.idle, idleMs(q.properties.autoDeleteOnIdle(), q.properties.forwardTo()));
    }

    void watch(TopicEntity t) {
        t.idle.onDue = now -> check(t.partitions[0], t.idle, idleMs(t.properties.autoDeleteOnIdle(), null),
                namespace.topic(t.properties.name()) == t, false, () -> namespace.deleteTopic(t.properties.name()),
                "topic '" + t.properties.name() + "'", now);
        arm(t.partitions[0], t.idle, idleMs(t.properties.autoDeleteOnIdle(), null));
    }

    void watch(SubscriptionEntity s) {
        PartitionRef ref = s.topic.partitions[0];
        s.idle.onDue = now -> {
            SubQueueState state = ref.partition().subscription(s.properties.name());
            check(ref, s.idle, idleMs(s.properties.autoDeleteOnIdle(), s.properties.forwardTo()),
                    namespace.topic(s.topic.properties.name()) == s.topic
                            && s.topic.subscription(s.properties.name()) == s,
                    state != null && state.hasConsumers(),
                    () -> namespace.deleteSubscription(s.topic.properties.name(), s.properties.name()),
                    "subscription '" + s.properties.path() + "'", now);
        };
        arm(ref, s.idle, idleMs(s.properties.autoDeleteOnIdle(), s.properties.forwardTo()));
    }

    private void arm(PartitionRef ref, Idle idle, long idleMs) {
        idle.touch(clock.epochMillis());
        if (idleMs == Long.MAX_VALUE) {
            return;
        }
        long due = saturatedAdd(idle.lastActiveMs(), idleMs);
        ref.shard().submit(() -> ref.shard().schedule(idle, due));
    }

    /** On the shard of the entity's first partition: deletes the entity once it has been idle long enough. */
    private void check(PartitionRef ref, Idle idle, long idleMs, boolean current, boolean receiving,
                       Supplier<CompletableFuture<Void>> delete, String what, long nowMs) {
        if (!current || idleMs == Long.MAX_VALUE || stopped) {
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
                Instant.ofEpochMilli(idle.lastActiveMs()), idleMs);
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

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
    }
}
