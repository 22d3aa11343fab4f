package io.buslane.engine.partition;

import io.buslane.engine.message.Message;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A message waiting to be auto-forwarded from a queue or subscription (or from its dead-letter queue) to another
 * entity; counted as {@code TransferMessageCount}. It is journaled before it is forwarded and deleted only once the
 * destination holds the message durably, so a crash re-forwards it; the destination remembers {@link #key()} so it
 * never enqueues it twice. It is its own retry timer. Confined to its shard thread.
 */
public final class Transfer extends EngineTimer {

    /** Internal annotation: how many times the message was auto-forwarded. Never shown to clients. */
    public static final String HOP_COUNT = "x-opt-buslane-transfer-hop-count";
    /** The annotation clients read as {@code DeadLetterSource}. */
    public static final String DEADLETTER_SOURCE = "x-opt-deadletter-source";
    /** Hops allowed: a message forwarded more often is dead-lettered. */
    public static final int MAX_HOPS = 4;

    final long recordId;
    final long sequenceNumber;
    final long enqueuedTimeMs;
    final boolean fromDeadLetter;
    final Message message;
    final int sizeBytes;
    SubQueueState owner;
    boolean done;
    /**
     * A message sent through this entity under a transaction (send-via): the entity it goes to, fixed when it was
     * parked here; null for auto-forwarding (the destination is the owner's ForwardTo).
     */
    final String viaDestination;
    /**
     * A message scheduled under a transaction through this entity: the sequence number the destination's
     * partition reserved for it (the schedule's answer carried it), under which the destination stores it; -1
     * otherwise.
     */
    final long reservedSequenceNumber;

    Transfer(long recordId, long sequenceNumber, long enqueuedTimeMs, boolean fromDeadLetter, Message message,
             SubQueueState owner) {
        this(recordId, sequenceNumber, enqueuedTimeMs, fromDeadLetter, message, owner, null, -1);
    }

    Transfer(long recordId, long sequenceNumber, long enqueuedTimeMs, boolean fromDeadLetter, Message message,
             SubQueueState owner, String viaDestination, long reservedSequenceNumber) {
        this.viaDestination = viaDestination;
        this.reservedSequenceNumber = reservedSequenceNumber;
        this.recordId = recordId;
        this.sequenceNumber = sequenceNumber;
        this.enqueuedTimeMs = enqueuedTimeMs;
        this.fromDeadLetter = fromDeadLetter;
        this.message = message;
        this.sizeBytes = message.encodedSize();
        this.owner = owner;
    }

    public long recordId() {
        return recordId;
    }

    public long sequenceNumber() {
        return sequenceNumber;
    }

    public long enqueuedTimeMs() {
        return enqueuedTimeMs;
    }

    public boolean fromDeadLetter() {
        return fromDeadLetter;
    }

    /** The message as it is stored at the source. */
    public Message message() {
        return message;
    }

    /** The owning queue or subscription (its main sub-queue). */
    public SubQueueState owner() {
        return owner;
    }

    /** The entity the message goes to now, or null when forwarding was switched off meanwhile. */
    public String destination() {
        if (viaDestination != null) {
            return viaDestination;
        }
        return fromDeadLetter ? owner.forwardDeadLetteredMessagesTo : owner.forwardTo;
    }

    /** The destination of a message sent through this entity (send-via), or null for auto-forwarding. */
    public String viaDestination() {
        return viaDestination;
    }

    /**
     * The sequence number the destination reserved for a message scheduled under a transaction through this entity
     * (stored there as scheduled, under that number), or -1 for every other transfer.
     */
    public long reservedSequenceNumber() {
        return reservedSequenceNumber;
    }

    /**
     * Identifies this transfer at the destination: source entity, partition, sub-queue and sequence number (for a
     * message parked by a transaction, which has no sequence number here: the via entity, partition and record id).
     */
    public String key() {
        if (viaDestination != null) { // by the via entity, not its holder: a topic's holder may change
            return owner.partition().entityId + "/" + owner.partition().index + "/v/" + recordId;
        }
        return owner.entityId + "/" + owner.partition().index + (fromDeadLetter ? "/d/" : "/m/") + sequenceNumber;
    }

    /**
     * The message as the destination receives it: one more hop, its dead-letter source when it has one, and the
     * sequence number of its original point of submission (kept from the first forward on).
     */
    public Message forwardedMessage() {
        if (viaDestination != null) {
            return message; // sent to the destination, only through this entity: not a forward
        }
        Map<String, Object> ann = new LinkedHashMap<>(message.annotations());
        ann.put(HOP_COUNT, hops(message) + 1);
        ann.putIfAbsent(Message.ENQUEUED_SEQUENCE_NUMBER, sequenceNumber);
        ann.remove(Message.WAS_SCHEDULED); // enqueued at the destination as it arrives, never scheduled there
        if (fromDeadLetter) {
            ann.put(DEADLETTER_SOURCE, owner.settings().entityPath());
        }
        return message.toBuilder().annotations(ann).encodedSize(message.encodedSize()).build();
    }

    /** Times a message was forwarded so far. */
    public static int hops(Message m) {
        Object v = m.annotations().get(HOP_COUNT);
        return v instanceof Number n ? n.intValue() : 0;
    }

    @Override
    public void onTimer(long nowMs) {
        if (!done && owner != null) {
            owner.partition().forwardNow(this);
        }
    }
}
