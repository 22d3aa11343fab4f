package io.buslane.engine.namespace;

import io.buslane.engine.partition.EngineTimer;

import java.util.function.LongConsumer;

/**
 * AutoDeleteOnIdle bookkeeping of one entity: when it was last used, and the timer (on the shard of the entity's
 * first partition) that checks whether it has been idle for its configured period. Activity is recorded from any
 * thread; the timer runs on its shard.
 *
 * <p>What counts as activity follows the service (message-expiration.md): for a queue, sends, receives (receiver
 * attach, settlements, deferred receives), peeks, schedules and updates; for a topic, sends, schedules and
 * updates; for a subscription, receives, peeks, rule changes and updates. An entity with a receiver attached is
 * never idle. The time of last activity is not journaled: after a restart the idle period starts again from the
 * restart, so an entity is never deleted earlier than its AutoDeleteOnIdle says.
 */
final class Idle extends EngineTimer {

    private volatile long lastActiveMs;
    volatile LongConsumer onDue;

    Idle(long nowMs) {
        this.lastActiveMs = nowMs;
    }

    /** Records activity (one volatile write per millisecond at most). */
    void touch(long nowMs) {
        if (nowMs > lastActiveMs) {
            lastActiveMs = nowMs;
        }
    }

    long lastActiveMs() {
        return lastActiveMs;
    }

    @Override
    public void onTimer(long nowMs) {
        LongConsumer c = onDue;
        if (c != null) {
            c.accept(nowMs);
        }
    }
}
