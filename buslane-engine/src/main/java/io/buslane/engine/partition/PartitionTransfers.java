package io.buslane.engine.partition;

import io.buslane.engine.dedup.DedupWindow;
import io.buslane.engine.message.Message;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The forwarding section of one {@link Partition}: its auto-forwarding (a queue's or subscription's messages moved
 * to their ForwardTo), the messages a transaction parks in it for another entity (send-via), the pending transfers
 * both journal until the destination holds them, and the forwarded messages it accepts once by transfer key.
 * Confined to the shard thread, as its partition.
 */
final class PartitionTransfers {

    private final Partition p;
    /** Messages waiting to be auto-forwarded, by record id. */
    final Map<Long, Transfer> transfers = new LinkedHashMap<>();
    private Forwarder forwarder;

    PartitionTransfers(Partition p) {
        this.p = p;
    }

    void setForwarder(Forwarder forwarder) {
        this.forwarder = forwarder;
    }

    boolean forwardsAway(SubQueueState s, Message m, long seq, long nowMs) {
        if (s.forwardTo == null) {
            return false;
        }
        transferOut(s, m, seq, nowMs, false);
        return true;
    }

    /**
     * Starts moving a message of {@code owner} (a queue or subscription) to its forwarding destination: journals
     * a transfer and forwards it once that record is durable. A message forwarded {@link Transfer#MAX_HOPS} times
     * already goes to the owner's transfer dead-letter queue instead.
     */
    void transferOut(SubQueueState owner, Message m, long seq, long enqueuedTimeMs, boolean fromDeadLetter) {
        long nowMs = p.ctx.nowMs();
        if (Transfer.hops(m) >= Transfer.MAX_HOPS) {
            Map<String, Object> reason = new LinkedHashMap<>();
            reason.put(DeadLetterReasons.DEAD_LETTER_REASON, DeadLetterReasons.MAX_HOPS_REASON);
            reason.put(DeadLetterReasons.DEAD_LETTER_DESCRIPTION, DeadLetterReasons.MAX_HOPS_DESCRIPTION);
            addDirect(owner.transferDeadLetter, seq, m.withApplicationProperties(reason), enqueuedTimeMs, nowMs);
            return;
        }
        Transfer t = new Transfer(p.ctx.log().nextRecordId(), seq, enqueuedTimeMs, fromDeadLetter, m, owner);
        p.ctx.log().transferAdded(p, t);
        addTransfer(t);
        p.ctx.afterSync(() -> forwardNow(t));
    }

    SubQueueState viaOwner(String preferredSubscription) {
        if (p.queue != null) {
            return p.queue;
        }
        SubQueueState preferred = preferredSubscription == null ? null : p.subscription(preferredSubscription);
        if (preferred != null) {
            return preferred;
        }
        return p.subscriptions.isEmpty() ? null : p.subscriptions.values().iterator().next();
    }

    void sendVia(SubQueueState owner, String destination, List<Message> messages, long nowMs) {
        for (Message m : messages) {
            park(new Transfer(p.ctx.log().nextRecordId(), -1, nowMs, false, m, owner, destination, -1));
        }
    }

    void scheduleVia(SubQueueState owner, String destination, Message m, long reservedSeq, long nowMs) {
        park(new Transfer(p.ctx.log().nextRecordId(), -1, nowMs, false, m, owner, destination, reservedSeq));
    }

    private void park(Transfer t) {
        p.ctx.log().transferAdded(p, t);
        addTransfer(t);
        p.ctx.afterSync(() -> forwardNow(t));
        p.ctx.markDirty(p);
    }

    private void addTransfer(Transfer t) {
        transfers.put(t.recordId, t);
        t.owner.transferCount++;
        t.owner.transferBytes += t.sizeBytes;
    }

    void removeTransfer(Transfer t) {
        if (transfers.remove(t.recordId) == t) {
            t.owner.transferCount--;
            t.owner.transferBytes -= t.sizeBytes;
        }
        t.done = true;
        if (t.isScheduled()) {
            p.ctx.cancel(t);
        }
    }

    /** Hands a pending transfer to the forwarder; without a destination (forwarding switched off) it stays here. */
    void forwardNow(Transfer t) {
        if (t.done || transfers.get(t.recordId) != t) {
            return;
        }
        if (t.destination() == null || forwarder == null) {
            SubQueueState target = t.fromDeadLetter ? t.owner.deadLetter : t.owner;
            long expires = t.fromDeadLetter ? Long.MAX_VALUE
                    : Partition.expiresAt(t.enqueuedTimeMs, t.message, t.owner.settings.timeToLiveMs());
            addDirect(target, t.sequenceNumber, t.message, t.enqueuedTimeMs, expires);
            removeTransfer(t);
            p.ctx.log().transferRemoved(t);
            return;
        }
        forwarder.forward(t);
    }

    void transferDone(Transfer t) {
        if (t.done || transfers.get(t.recordId) != t) {
            return;
        }
        removeTransfer(t);
        p.ctx.log().transferRemoved(t);
    }

    void transferFailed(Transfer t, String reason, String description) {
        if (t.done || transfers.get(t.recordId) != t) {
            return;
        }
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(DeadLetterReasons.DEAD_LETTER_REASON, reason);
        if (description != null) {
            props.put(DeadLetterReasons.DEAD_LETTER_DESCRIPTION, description);
        }
        // a send-via message has no sequence number here yet: the transfer dead-letter queue gives it one
        long seq = t.sequenceNumber >= 0 ? t.sequenceNumber : p.sequence.take();
        p.ctx.markDirty(p);
        addDirect(t.owner.transferDeadLetter, seq, t.message.withApplicationProperties(props),
                t.enqueuedTimeMs, Long.MAX_VALUE);
        removeTransfer(t);
        p.ctx.log().transferRemoved(t);
    }

    void retryTransferLater(Transfer t) {
        if (!t.done && transfers.get(t.recordId) == t && !t.isScheduled()) {
            p.ctx.schedule(t, p.ctx.nowMs() + 1_000);
        }
    }

    void acceptForwarded(Message m, String transferKey, long nowMs) {
        acceptForwarded(List.of(m), transferKey, nowMs);
    }

    void acceptForwarded(List<Message> batch, String transferKey, long nowMs) {
        onceByTransferKey(transferKey, nowMs, () -> p.send(batch, nowMs));
    }

    /** Runs {@code store} unless the transfer key was seen before, then remembers the key (after it stored). */
    private void onceByTransferKey(String transferKey, long nowMs, Runnable store) {
        DedupWindow w = p.transferKeys();
        w.expire(nowMs);
        if (w.containsKey(transferKey)) {
            return;
        }
        store.run();
        w.addKey(transferKey, nowMs);
        p.ctx.markDirty(p);
    }

    void acceptForwardedScheduled(Message m, long reservedSeq, String transferKey, long nowMs) {
        long at = m.scheduledEnqueueTimeMs() != null ? m.scheduledEnqueueTimeMs() : nowMs;
        // the number was taken (and checkpointed) when reserved
        onceByTransferKey(transferKey, nowMs, () -> p.scheduleReserved(m, at, reservedSeq, nowMs));
    }

    boolean restoreTransfer(long ownerEntityId, long recordId, long seq, long enqueuedTimeMs,
                            boolean fromDeadLetter, Message m, String viaDestination, long reservedSeq) {
        SubQueueState owner = p.queue != null ? p.queue
                : viaDestination != null && ownerEntityId == p.entityId ? viaOwner(null)
                : p.subscriptionByEntityId(ownerEntityId);
        if (owner == null) {
            return false;
        }
        addTransfer(new Transfer(recordId, seq, enqueuedTimeMs, fromDeadLetter, m, owner, viaDestination,
                reservedSeq));
        return true;
    }

    void forgetTransferForReplay(long recordId) {
        Transfer t = transfers.get(recordId);
        if (t != null) {
            removeTransfer(t);
        }
    }

    int transferCount() {
        return transfers.size();
    }

    /** Puts a message straight into a sub-queue with a given sequence number (logged; a topic gets a body). */
    private void addDirect(SubQueueState target, long seq, Message m, long enqueuedTimeMs, long expiresAtMs) {
        Entry e;
        if (!p.topic) {
            e = target.newEntry(seq, p.ctx.log().nextRecordId(), enqueuedTimeMs, expiresAtMs, m, m.encodedSize());
            e.owner = target;
            p.ctx.log().entryAdded(e);
            p.ctx.bodies().admit(e);
        } else {
            TopicBody body = new TopicBody(p.ctx.log().nextRecordId(), seq, enqueuedTimeMs, m);
            body.references = 1;
            p.ctx.log().topicBodyAdded(p, body);
            p.ctx.bodies().admit(body);
            e = target.newEntry(seq, p.ctx.log().nextRecordId(), enqueuedTimeMs, expiresAtMs, null, body.sizeBytes);
            e.body = body;
            e.owner = target;
            p.ctx.log().entryAdded(e);
        }
        target.add(e, p.ctx.nowMs());
    }
}
