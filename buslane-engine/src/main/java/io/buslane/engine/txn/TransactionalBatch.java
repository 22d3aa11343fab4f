package io.buslane.engine.txn;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.message.Message;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The work a committed AMQP transaction applies at once through
 * {@link TransactionCommit#commit(TransactionalBatch)}: the messages sent and the settlements made under the
 * transaction, in the order they were staged. Built on one thread (the front end's connection loop), then handed to
 * the engine and never changed again.
 */
public final class TransactionalBatch {

    /**
     * What a staged settlement does to its locked message; its {@link #code()} is written in a carried commit: never
     * change one.
     */
    public enum SettleKind {
        COMPLETE(0), ABANDON(1), DEFER(2), DEAD_LETTER(3);

        private final int code;

        SettleKind(int code) {
            this.code = code;
        }

        /** The kind's code in the encoded batch (fixed, whatever the order of the constants). */
        public int code() {
            return code;
        }

        /** The kind with this code; fails on an unknown one. */
        public static SettleKind ofCode(int code) {
            for (SettleKind k : values()) {
                if (k.code == code) {
                    return k;
                }
            }
            throw new IllegalArgumentException("Unknown settlement kind " + code);
        }
    }

    /**
     * Messages sent to a queue or topic under the transaction; {@code via} names the queue they are sent through
     * (send-via, parked there until forwarded), or is null for a direct send.
     */
    public record Send(String entityPath, List<Message> messages, String via) {
        public Send {
            messages = List.copyOf(messages);
        }

        public Send(String entityPath, List<Message> messages) {
            this(entityPath, messages, null);
        }
    }

    /**
     * A message scheduled under the transaction ({@code schedule-message}): its sequence number was taken when it was
     * scheduled (the answer needs it), the message is stored at commit; {@code via} names the entity it is
     * scheduled through (parked there at commit, as a send-via message is), or is null when it is scheduled on the
     * transaction's own entity.
     */
    public record Schedule(String entityPath, Message message, long sequenceNumber, String via) {
        public Schedule(String entityPath, Message message, long sequenceNumber) {
            this(entityPath, message, sequenceNumber, null);
        }
    }

    /**
     * Scheduled messages of the transaction's own entity cancelled under it ({@code cancel-scheduled-message}):
     * cancelled at commit, left scheduled by a rollback, as on the service.
     */
    public record Cancel(String entityPath, long[] sequenceNumbers) {
        public Cancel {
            sequenceNumbers = sequenceNumbers.clone();
        }

        @Override
        public long[] sequenceNumbers() {
            return sequenceNumbers.clone();
        }
    }

    /** A settlement of a locked message under the transaction. */
    public record Settle(EntityAddress address, UUID lockToken, SettleKind kind, Map<String, Object> properties,
                         String deadLetterReason, String deadLetterDescription) {
    }

    private final List<Send> sends = new ArrayList<>();
    private final List<Settle> settlements = new ArrayList<>();
    private final List<Schedule> schedules = new ArrayList<>();
    private final List<Cancel> cancels = new ArrayList<>();
    private int messageCount;

    public TransactionalBatch addSend(String entityPath, List<Message> messages) {
        return addSend(entityPath, messages, null);
    }

    /** Messages sent to {@code entityPath} through the queue {@code via} (send-via), or directly when null. */
    public TransactionalBatch addSend(String entityPath, List<Message> messages, String via) {
        sends.add(new Send(entityPath, messages, via));
        messageCount += messages.size();
        return this;
    }

    public TransactionalBatch addSchedule(Schedule schedule) {
        schedules.add(schedule);
        return this;
    }

    public List<Schedule> schedules() {
        return Collections.unmodifiableList(schedules);
    }

    public TransactionalBatch addCancel(Cancel cancel) {
        cancels.add(cancel);
        return this;
    }

    public List<Cancel> cancels() {
        return Collections.unmodifiableList(cancels);
    }

    public TransactionalBatch addSettlement(Settle settlement) {
        settlements.add(settlement);
        return this;
    }

    public List<Send> sends() {
        return Collections.unmodifiableList(sends);
    }

    public List<Settle> settlements() {
        return Collections.unmodifiableList(settlements);
    }

    /** Number of messages sent under the transaction (the per-transaction limit counts these). */
    public int messageCount() {
        return messageCount;
    }

    public boolean isEmpty() {
        return sends.isEmpty() && settlements.isEmpty() && schedules.isEmpty() && cancels.isEmpty();
    }
}
