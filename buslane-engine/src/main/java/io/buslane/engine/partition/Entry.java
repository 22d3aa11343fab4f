package io.buslane.engine.partition;

import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;

import java.util.UUID;

/**
 * One message in one sub-queue (a queue's, or a subscription's copy of a topic message), with the broker's
 * state for it. The entry is its own lock-expiry timer. Confined to its shard thread.
 *
 * <p>The message itself may be evicted from the heap ({@link #message} null): read it through
 * {@link MessageBodies#of(Entry)}, never through the field. A subscription's copy never holds the message unless its
 * properties were modified: it shares its {@link TopicBody}'s.
 */
public final class Entry extends EngineTimer {

    static final byte AVAILABLE = 0;
    static final byte LOCKED = 1;
    static final byte DEFERRED = 2;
    static final byte DEFERRED_LOCKED = 3;
    static final byte REMOVED = 4;

    final long seq;
    long recordId;
    long enqueuedTimeMs;
    long expiresAtMs;
    /** Failed deliveries so far (abandons and lock expiries). */
    int deliveryCount;
    byte status;
    /** The encoded size of the message, kept so that sizes stay exact while the message is evicted. */
    final int sizeBytes;
    /** The message while resident, or null (evicted, or a subscription copy reading its body's); see the class. */
    Message message;
    /** The shared body of a subscription's copy, or null for a queue's own message. */
    TopicBody body;
    /** True when the message differs from what the ADD record holds (properties were modified). */
    boolean messageModified;
    /** Never evicted: its latest records may not be durable (a sync failed after they were written). */
    boolean pinned;
    String deadLetterSource;
    SubQueueState owner;
    SessionEntry session;
    UUID lockToken;
    /** The token of a message lock that ran out while the message waits, untaken, to be delivered again. */
    UUID lapsedToken;
    long lockedUntilMs;
    ConsumerSlot holder;
    TtlTimer ttlTimer;
    ReadyQueue readyIn;
    byte readyPlace;

    /**
     * @param message   the message, or null for a subscription's copy (which reads its body's)
     * @param sizeBytes the message's encoded size
     */
    Entry(long seq, long recordId, long enqueuedTimeMs, long expiresAtMs, Message message, int sizeBytes) {
        this.seq = seq;
        this.recordId = recordId;
        this.enqueuedTimeMs = enqueuedTimeMs;
        this.expiresAtMs = expiresAtMs;
        this.message = message;
        this.sizeBytes = sizeBytes;
    }

    public long sequenceNumber() {
        return seq;
    }

    public long recordId() {
        return recordId;
    }

    public long enqueuedTimeMs() {
        return enqueuedTimeMs;
    }

    public long expiresAtMs() {
        return expiresAtMs;
    }

    public int deliveryCount() {
        return deliveryCount;
    }

    /** The message if it is held in the heap by this entry, else null; {@link MessageBodies#of(Entry)} reads it. */
    public Message residentMessage() {
        return message;
    }

    public boolean messageModified() {
        return messageModified;
    }

    public boolean deferred() {
        return status == DEFERRED || status == DEFERRED_LOCKED;
    }

    public TopicBody body() {
        return body;
    }

    public SubQueueState owner() {
        return owner;
    }

    public String deadLetterSource() {
        return deadLetterSource;
    }

    boolean locked() {
        return status == LOCKED || status == DEFERRED_LOCKED;
    }

    int sizeBytes() {
        return sizeBytes;
    }

    /** The broker's view of this entry carrying {@code m}, its message as read through {@link MessageBodies}. */
    ReceivedMessage view(Message m, int partitionIndex) {
        return new ReceivedMessage(m, seq, enqueuedTimeMs, deliveryCount, lockToken,
                locked() ? effectiveLockedUntilMs() : 0L,
                deferred() ? MessageState.DEFERRED : MessageState.ACTIVE, expiresAtMs, null,
                deadLetterSource != null ? deadLetterSource
                        : m.annotations().get(Transfer.DEADLETTER_SOURCE) instanceof String s ? s : null,
                partitionIndex);
    }

    long effectiveLockedUntilMs() {
        return session != null ? session.lockedUntilMs : lockedUntilMs;
    }

    @Override
    public void onTimer(long nowMs) {
        if (owner != null) {
            owner.settlements.onLockTimer(this, nowMs);
        }
    }

    /** The TTL timer of an entry with a finite time-to-live. */
    static final class TtlTimer extends EngineTimer {
        final Entry entry;

        TtlTimer(Entry entry) {
            this.entry = entry;
        }

        @Override
        public void onTimer(long nowMs) {
            if (entry.owner != null) {
                entry.owner.settlements.onTtlTimer(entry, nowMs);
            }
        }
    }
}
