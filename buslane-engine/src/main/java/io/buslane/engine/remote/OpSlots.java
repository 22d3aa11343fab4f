package io.buslane.engine.remote;

import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.Message;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.persist.ValueCodec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The body of an operation on the cluster channel, protocol version 1: one layout for every operation, its slots
 * in a fixed order, each written whether the operation uses it or not (an absent one as its empty marker). An
 * operation value fills the slots it has ({@link PartitionOp#write}) and is read back from them by its
 * {@link OpCode}; which slot carries what is each operation's business, so a slot keeps one meaning per operation
 * and never changes it. Pinned byte for byte by {@code OpCodecTest}: nodes of one protocol version read
 * each other's bytes.
 */
public final class OpSlots {

    String path;
    int partition;
    List<Message> messages;
    String key;
    UUID lockToken;
    Map<String, Object> properties;
    String reason;
    String description;
    long[] sequences;
    int max;
    String sessionId;
    byte[] state;
    ReceiveMode mode;
    long waitMs;

    OpSlots(String path, int partition) {
        this.path = path;
        this.partition = partition;
    }

    void write(RecordWriter w) {
        w.writeString(path);
        w.writeVarInt(partition);
        w.writeVarInt(messages == null ? 0 : messages.size() + 1);
        if (messages != null) {
            for (Message m : messages) {
                MessageCodec.write(w, m);
            }
        }
        w.writeString(key);
        OpResult.writeUuid(w, lockToken);
        w.writeBoolean(properties != null);
        if (properties != null) {
            ValueCodec.writeStringMap(w, properties);
        }
        w.writeString(reason);
        w.writeString(description);
        w.writeVarInt(sequences == null ? 0 : sequences.length + 1);
        if (sequences != null) {
            for (long s : sequences) {
                w.writeLong(s);
            }
        }
        w.writeVarInt(max);
        w.writeString(sessionId);
        w.writeBytes(state);
        w.writeVarInt(mode == null ? 0 : mode.code() + 1);
        w.writeLong(waitMs);
    }

    static OpSlots read(RecordReader r) {
        OpSlots s = new OpSlots(r.readString(), r.readVarInt());
        int n = r.readVarInt();
        if (n > 0) {
            s.messages = new ArrayList<>(Math.min(n - 1, 1024));
            for (int i = 0; i < n - 1; i++) {
                s.messages.add(MessageCodec.read(r));
            }
        }
        s.key = r.readString();
        s.lockToken = OpResult.readUuid(r);
        s.properties = r.readBoolean() ? ValueCodec.readStringMap(r) : null;
        s.reason = r.readString();
        s.description = r.readString();
        int count = r.readVarInt();
        if (count > 0) {
            s.sequences = new long[Math.min(count - 1, r.remaining() / 8)];
            if (s.sequences.length != count - 1) {
                throw new IllegalArgumentException("Truncated sequence numbers");
            }
            for (int i = 0; i < s.sequences.length; i++) {
                s.sequences[i] = r.readLong();
            }
        }
        s.max = r.readVarInt();
        s.sessionId = r.readString();
        s.state = r.readBytes();
        int mode = r.readVarInt();
        s.mode = mode == 0 ? null : ReceiveMode.ofCode(mode - 1);
        s.waitMs = r.readLong();
        return s;
    }

    /** The one message of an operation that carries one. */
    Message message() {
        if (messages == null || messages.size() != 1) {
            throw new IllegalArgumentException("Exactly one message expected");
        }
        return messages.get(0);
    }

    /** The first sequence number of an operation that carries one. */
    long sequence() {
        if (sequences == null || sequences.length == 0) {
            throw new IllegalArgumentException("A sequence number expected");
        }
        return sequences[0];
    }

    List<Message> requiredMessages() {
        if (messages == null) {
            throw new IllegalArgumentException("Messages expected");
        }
        return messages;
    }

    long[] requiredSequences() {
        if (sequences == null) {
            throw new IllegalArgumentException("Sequence numbers expected");
        }
        return sequences;
    }
}
