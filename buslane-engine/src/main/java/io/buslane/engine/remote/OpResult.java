package io.buslane.engine.remote;

import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * How the result of an operation travels back on the cluster channel: one codec per result type, shared by the
 * operations that answer with it (protocol version 1, pinned by {@code OpCodecTest}).
 *
 * @param <R> the result type
 */
public abstract class OpResult<R> {

    /** No result (the answer is only "done"). */
    public static final OpResult<Void> NONE = new OpResult<>() {
        @Override
        void write(RecordWriter w, Void result) {
            // nothing
        }

        @Override
        Void read(RecordReader r) {
            return null;
        }
    };

    /** A sequence number or a locked-until time. */
    public static final OpResult<Long> LONG = new OpResult<>() {
        @Override
        void write(RecordWriter w, Long result) {
            w.writeLong(result);
        }

        @Override
        Long read(RecordReader r) {
            return r.readLong();
        }
    };

    /** A count of messages. */
    public static final OpResult<Integer> COUNT = new OpResult<>() {
        @Override
        void write(RecordWriter w, Integer result) {
            w.writeVarInt(result);
        }

        @Override
        Integer read(RecordReader r) {
            return r.readVarInt();
        }
    };

    /** Bytes, or null (a session's state). */
    public static final OpResult<byte[]> BYTES = new OpResult<>() {
        @Override
        void write(RecordWriter w, byte[] result) {
            w.writeBytes(result);
        }

        @Override
        byte[] read(RecordReader r) {
            return r.readBytes();
        }
    };

    /** Messages as received or browsed. */
    public static final OpResult<List<ReceivedMessage>> RECEIVED = new OpResult<>() {
        @Override
        void write(RecordWriter w, List<ReceivedMessage> result) {
            w.writeVarInt(result.size());
            for (ReceivedMessage m : result) {
                writeReceived(w, m);
            }
        }

        @Override
        List<ReceivedMessage> read(RecordReader r) {
            int n = r.readVarInt();
            List<ReceivedMessage> list = new ArrayList<>(Math.min(n, 1024));
            for (int i = 0; i < n; i++) {
                list.add(readReceived(r));
            }
            return list;
        }
    };

    /** A partition's message counts. */
    public static final OpResult<RuntimeCounts> COUNTS = new OpResult<>() {
        @Override
        void write(RecordWriter w, RuntimeCounts c) {
            w.writeLong(c.activeMessageCount());
            w.writeLong(c.deadLetterMessageCount());
            w.writeLong(c.scheduledMessageCount());
            w.writeLong(c.transferMessageCount());
            w.writeLong(c.transferDeadLetterMessageCount());
            w.writeLong(c.sizeInBytes());
        }

        @Override
        RuntimeCounts read(RecordReader r) {
            return new RuntimeCounts(r.readLong(), r.readLong(), r.readLong(), r.readLong(), r.readLong(),
                    r.readLong());
        }
    };

    /** Session ids. */
    public static final OpResult<List<String>> IDS = new OpResult<>() {
        @Override
        void write(RecordWriter w, List<String> ids) {
            w.writeVarInt(ids.size());
            for (String id : ids) {
                w.writeString(id);
            }
        }

        @Override
        List<String> read(RecordReader r) {
            int n = r.readVarInt();
            List<String> ids = new ArrayList<>(Math.min(n, 1024));
            for (int i = 0; i < n; i++) {
                ids.add(r.readString());
            }
            return ids;
        }
    };

    /** A session lock granted to a remote receiver. */
    public static final OpResult<PartitionOp.SessionGrant> GRANT = new OpResult<>() {
        @Override
        void write(RecordWriter w, PartitionOp.SessionGrant g) {
            writeUuid(w, g.holder());
            w.writeString(g.sessionId());
            w.writeLong(g.lockedUntilMs());
        }

        @Override
        PartitionOp.SessionGrant read(RecordReader r) {
            return new PartitionOp.SessionGrant(readUuid(r), r.readString(), r.readLong());
        }
    };

    private OpResult() {
    }

    abstract void write(RecordWriter w, R result);

    abstract R read(RecordReader r);

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

    static void writeUuid(RecordWriter w, UUID u) {
        w.writeBoolean(u != null);
        if (u != null) {
            w.writeLong(u.getMostSignificantBits());
            w.writeLong(u.getLeastSignificantBits());
        }
    }

    static UUID readUuid(RecordReader r) {
        return r.readBoolean() ? new UUID(r.readLong(), r.readLong()) : null;
    }
}
