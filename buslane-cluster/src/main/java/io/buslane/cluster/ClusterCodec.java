package io.buslane.cluster;

import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.persist.ValueCodec;
import io.buslane.engine.remote.PartitionOp;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The bodies of the cluster channel's requests and answers: a {@link PartitionOp} (its kind is the frame's op code)
 * and each kind's result, in the engine's record encoding ({@link RecordWriter}), messages in the journal's
 * {@link MessageCodec} and property maps in its {@link ValueCodec}.
 */
final class ClusterCodec {

    private ClusterCodec() {
    }

    static int opCode(PartitionOp.Kind kind) {
        return kind.code();
    }

    static PartitionOp.Kind kindOf(int opCode) {
        PartitionOp.Kind kind = PartitionOp.Kind.ofCode(opCode);
        if (kind == null) {
            throw new IllegalArgumentException("Unknown op code " + opCode);
        }
        return kind;
    }

    /** Writes an operation without its kind (the frame carries it as the op code). */
    static void writeOp(RecordWriter w, PartitionOp op) {
        w.writeString(op.path());
        w.writeVarInt(op.partition());
        List<Message> messages = op.messages();
        w.writeVarInt(messages == null ? 0 : messages.size() + 1);
        if (messages != null) {
            for (Message m : messages) {
                MessageCodec.write(w, m);
            }
        }
        w.writeString(op.key());
        writeUuid(w, op.lockToken());
        w.writeBoolean(op.properties() != null);
        if (op.properties() != null) {
            ValueCodec.writeStringMap(w, op.properties());
        }
        w.writeString(op.reason());
        w.writeString(op.description());
        long[] seqs = op.sequences();
        w.writeVarInt(seqs == null ? 0 : seqs.length + 1);
        if (seqs != null) {
            for (long s : seqs) {
                w.writeLong(s);
            }
        }
        w.writeVarInt(op.max());
        w.writeString(op.sessionId());
        w.writeBytes(op.state());
        w.writeVarInt(op.mode() == null ? 0 : op.mode().code() + 1);
        w.writeLong(op.waitMs());
    }

    static PartitionOp readOp(PartitionOp.Kind kind, RecordReader r) {
        String path = r.readString();
        int partition = r.readVarInt();
        int n = r.readVarInt();
        List<Message> messages = null;
        if (n > 0) {
            messages = new ArrayList<>(Math.min(n - 1, 1024));
            for (int i = 0; i < n - 1; i++) {
                messages.add(MessageCodec.read(r));
            }
        }
        String key = r.readString();
        UUID token = readUuid(r);
        Map<String, Object> props = r.readBoolean() ? ValueCodec.readStringMap(r) : null;
        String reason = r.readString();
        String description = r.readString();
        int s = r.readVarInt();
        long[] seqs = null;
        if (s > 0) {
            seqs = new long[Math.min(s - 1, r.remaining() / 8)];
            if (seqs.length != s - 1) {
                throw new IllegalArgumentException("Truncated sequence numbers");
            }
            for (int i = 0; i < seqs.length; i++) {
                seqs[i] = r.readLong();
            }
        }
        int max = r.readVarInt();
        String sessionId = r.readString();
        byte[] state = r.readBytes();
        int mode = r.readVarInt();
        long waitMs = r.readLong();
        return new PartitionOp(kind, path, partition, messages, key, token, props, reason, description, seqs, max,
                sessionId, state, mode == 0 ? null : ReceiveMode.ofCode(mode - 1), waitMs);
    }

    /** Writes the result of an operation of {@code kind}. */
    @SuppressWarnings("unchecked")
    static void writeResult(RecordWriter w, PartitionOp.Kind kind, Object result) {
        switch (kind) {
            case SCHEDULE, RENEW_LOCK, RENEW_SESSION_LOCK, RESERVE_SCHEDULED -> w.writeLong((Long) result);
            case RECEIVE_DEFERRED, PEEK, PEEK_SCHEDULED, RECEIVE -> {
                List<ReceivedMessage> list = (List<ReceivedMessage>) result;
                w.writeVarInt(list.size());
                for (ReceivedMessage m : list) {
                    writeReceived(w, m);
                }
            }
            case COUNTS -> {
                RuntimeCounts c = (RuntimeCounts) result;
                w.writeLong(c.activeMessageCount());
                w.writeLong(c.deadLetterMessageCount());
                w.writeLong(c.scheduledMessageCount());
                w.writeLong(c.transferMessageCount());
                w.writeLong(c.transferDeadLetterMessageCount());
                w.writeLong(c.sizeInBytes());
            }
            case GET_SESSION_STATE -> w.writeBytes((byte[]) result);
            case PURGE, DELETE_MESSAGES -> w.writeVarInt((Integer) result);
            case LIST_SESSIONS -> {
                List<String> ids = (List<String>) result;
                w.writeVarInt(ids.size());
                for (String id : ids) {
                    w.writeString(id);
                }
            }
            case ACCEPT_SESSION -> {
                PartitionOp.SessionGrant g = (PartitionOp.SessionGrant) result;
                writeUuid(w, g.holder());
                w.writeString(g.sessionId());
                w.writeLong(g.lockedUntilMs());
            }
            default -> {
                // no result
            }
        }
    }

    static Object readResult(RecordReader r, PartitionOp.Kind kind) {
        return switch (kind) {
            case SCHEDULE, RENEW_LOCK, RENEW_SESSION_LOCK, RESERVE_SCHEDULED -> r.readLong();
            case RECEIVE_DEFERRED, PEEK, PEEK_SCHEDULED, RECEIVE -> {
                int n = r.readVarInt();
                List<ReceivedMessage> list = new ArrayList<>(Math.min(n, 1024));
                for (int i = 0; i < n; i++) {
                    list.add(readReceived(r));
                }
                yield list;
            }
            case COUNTS -> new RuntimeCounts(r.readLong(), r.readLong(), r.readLong(), r.readLong(), r.readLong(),
                    r.readLong());
            case GET_SESSION_STATE -> r.readBytes();
            case ACCEPT_SESSION -> new PartitionOp.SessionGrant(readUuid(r), r.readString(), r.readLong());
            case PURGE, DELETE_MESSAGES -> r.readVarInt();
            case LIST_SESSIONS -> {
                int n = r.readVarInt();
                List<String> ids = new ArrayList<>(Math.min(n, 1024));
                for (int i = 0; i < n; i++) {
                    ids.add(r.readString());
                }
                yield ids;
            }
            default -> null;
        };
    }

    private static void writeReceived(RecordWriter w, ReceivedMessage m) {
        MessageCodec.write(w, m.message());
        w.writeLong(m.sequenceNumber());
        w.writeLong(m.enqueuedTimeMs());
        w.writeVarInt(m.deliveryCount());
        writeUuid(w, m.lockToken());
        w.writeLong(m.lockedUntilMs());
        w.writeVarInt(m.state() == null ? 0 : m.state().code() + 1);
        w.writeLong(m.expiresAtMs());
        w.writeNullableLong(m.scheduledEnqueueTimeMs());
        w.writeString(m.deadLetterSource());
        w.writeVarInt(m.partitionIndex());
    }

    private static ReceivedMessage readReceived(RecordReader r) {
        Message message = MessageCodec.read(r);
        long seq = r.readLong();
        long enqueued = r.readLong();
        int deliveryCount = r.readVarInt();
        UUID token = readUuid(r);
        long lockedUntil = r.readLong();
        int state = r.readVarInt();
        long expiresAt = r.readLong();
        Long scheduled = r.readNullableLong();
        String dlqSource = r.readString();
        int partition = r.readVarInt();
        return new ReceivedMessage(message, seq, enqueued, deliveryCount, token, lockedUntil,
                state == 0 ? null : MessageState.ofCode(state - 1), expiresAt, scheduled, dlqSource, partition);
    }

    private static void writeUuid(RecordWriter w, UUID u) {
        w.writeBoolean(u != null);
        if (u != null) {
            w.writeLong(u.getMostSignificantBits());
            w.writeLong(u.getLeastSignificantBits());
        }
    }

    private static UUID readUuid(RecordReader r) {
        return r.readBoolean() ? new UUID(r.readLong(), r.readLong()) : null;
    }
}
