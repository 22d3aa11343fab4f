package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.message.Message;

import java.util.List;

/**
 * The scheduling section of one {@link Partition}: its scheduled messages taken in (the schedule operation, a
 * transaction's reserved sequence numbers, replay), cancelled, and activated when their time comes. The scheduled
 * entries themselves stay in the partition, which browses and counts them. Confined to the shard thread, as its
 * partition.
 */
final class PartitionSchedule {

    private final Partition p;

    PartitionSchedule(Partition p) {
        this.p = p;
    }

    long scheduleRequested(Message message, long scheduledTimeMs, long nowMs) {
        Partition.Admission a = p.admit(List.of(message), nowMs);
        long seq = p.sequence.take();
        p.ctx.markDirty(p);
        if (!a.nothingToStore()) {
            p.remember(a, nowMs);
            scheduleAs(message, scheduledTimeMs, seq, nowMs);
        }
        return seq;
    }

    private void requireSessionIdIfNeeded(Message message) {
        if (!p.topic && p.queue.settings.requiresSession() && message.sessionId() == null) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, Partition.SESSION_REQUIRED_TEXT);
        }
    }

    long reserveScheduled(Message message) {
        requireSessionIdIfNeeded(message);
        long seq = p.sequence.take();
        p.ctx.markDirty(p);
        return seq;
    }

    void scheduleReserved(Message message, long scheduledTimeMs, long seq, long nowMs) {
        Partition.Admission a = p.admit(List.of(message), nowMs);
        if (!a.nothingToStore()) {
            p.remember(a, nowMs);
            scheduleAs(message, scheduledTimeMs, seq, nowMs);
        }
    }

    long schedule(Message message, long scheduledTimeMs, long nowMs) {
        requireSessionIdIfNeeded(message);
        long seq = p.sequence.take();
        scheduleAs(message, scheduledTimeMs, seq, nowMs);
        return seq;
    }

    void scheduleAs(Message message, long scheduledTimeMs, long seq, long nowMs) {
        p.ctx.markDirty(p);
        ScheduledEntry se = new ScheduledEntry(seq, p.ctx.log().nextRecordId(), nowMs, scheduledTimeMs, message);
        p.ctx.log().scheduledAdded(p, se);
        restoreScheduled(se);
    }

    void restoreScheduled(ScheduledEntry se) {
        se.partition = p;
        p.scheduled.put(se.seq, se);
        p.ctx.schedule(se, se.scheduledTimeMs);
        p.ctx.bodies().admit(se, p.ctx.nowMs());
    }

    void cancelScheduled(long seq) {
        ScheduledEntry se = p.scheduled.remove(seq);
        if (se == null) {
            throw new BrokerException(ErrorKind.MESSAGE_NOT_FOUND, "The scheduled message with SequenceNumber = "
                    + seq + " was not found in '" + p.entityPath + "': it has already been enqueued or cancelled.");
        }
        se.partition = null;
        p.ctx.cancel(se);
        p.ctx.log().scheduledRemoved(se);
        p.ctx.bodies().release(se);
    }

    boolean cancelScheduledIfPresent(long seq) {
        if (p.scheduled.get(seq) == null) {
            return false;
        }
        cancelScheduled(seq);
        return true;
    }

    void activate(ScheduledEntry se, long nowMs) {
        if (p.scheduled.get(se.seq) != se) {
            return;
        }
        Message m = p.ctx.bodies().of(se); // first: if it cannot be read, the message stays scheduled
        p.scheduled.remove(se.seq);
        se.partition = null;
        p.ctx.log().scheduledRemoved(se);
        p.ctx.bodies().release(se);
        p.enqueueActive(m.activated(), nowMs); // it reports the scheduled state from now on, as on the service
    }
}
