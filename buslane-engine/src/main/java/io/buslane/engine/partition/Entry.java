package io.buslane.engine.partition;

import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;

import java.util.UUID;

/**
 * One message in one sub-queue (a queue's, or a subscription's copy of a topic message), with the broker's
 * state for it. The entry is its own lock-expiry timer. Confined to its shard thread.
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
    Message message;
    /** The shared body of a subscription's copy, or null for a queue's own message. */
    TopicBody body;
    /** True when {@link #message} differs from what the ADD record holds (properties were modified). */
    boolean messageModified;
    String deadLetterSource;
    SubQueueState owner;
    SessionEntry session;
    UUID lockToken;
    long lockedUntilMs;
    ConsumerSlot holder;
    TtlTimer ttlTimer;
    ReadyQueue readyIn;
    byte readyPlace;

    Entry(long seq, long recordId, long enqueuedTimeMs, long expiresAtMs, Message message) {
        this.seq = seq;
        this.recordId = recordId;
        this.enqueuedTimeMs = enqueuedTimeMs;
        this.expiresAtMs = expiresAtMs;
        this.message = message;
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

    public Message message() {
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
        return message.encodedSize();
    }

    ReceivedMessage view(int partitionIndex) {
        return new ReceivedMessage(message, seq, enqueuedTimeMs, deliveryCount, lockToken,
                locked() ? effectiveLockedUntilMs() : 0L,
                deferred() ? MessageState.DEFERRED : MessageState.ACTIVE, expiresAtMs, null, deadLetterSource,
                partitionIndex);
    }

    long effectiveLockedUntilMs() {
        return session != null ? session.lockedUntilMs : lockedUntilMs;
    }

    @Override
    public void onTimer(long nowMs) {
        if (owner != null) {
            owner.onLockTimer(this, nowMs);
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
                entry.owner.onTtlTimer(entry, nowMs);
            }
        }
    }
}
