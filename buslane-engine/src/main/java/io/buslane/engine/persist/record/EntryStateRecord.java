package io.buslane.engine.persist.record;

import io.buslane.engine.api.SubQueue;
import io.buslane.engine.message.Message;
import io.buslane.engine.persist.MessageCodec;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;

/**
 * Type 6, UPDATE of a message record ({@link QueueMessageRecord} or {@link SubscriptionRefRecord}): the message's
 * state. Layout: {@code subQueue} byte ({@link SubQueue#code()}), {@code deliveryCount} varint, {@code deferred}
 * bool, {@code modified} bool, the modified message when modified, {@code deadLetterSource} nullable string.
 *
 * @param modifiedMessage the message with its properties modified (abandon, defer, dead-letter), or null
 */
public record EntryStateRecord(SubQueue subQueue, int deliveryCount, boolean deferred, Message modifiedMessage,
                               String deadLetterSource) {

    public static final byte TYPE = 6;

    public static void write(RecordWriter w, SubQueue subQueue, int deliveryCount, boolean deferred,
                             Message modifiedMessage, String deadLetterSource) {
        w.writeByte(subQueue.code());
        w.writeVarInt(deliveryCount);
        w.writeBoolean(deferred);
        w.writeBoolean(modifiedMessage != null);
        if (modifiedMessage != null) {
            MessageCodec.write(w, modifiedMessage);
        }
        w.writeString(deadLetterSource);
    }

    public static EntryStateRecord read(RecordReader in) {
        SubQueue q = SubQueue.ofCode(in.readByte());
        int deliveryCount = in.readVarInt();
        boolean deferred = in.readBoolean();
        Message m = in.readBoolean() ? MessageCodec.read(in) : null;
        return new EntryStateRecord(q, deliveryCount, deferred, m, in.readString());
    }

    /** Moves {@code in} to the record's modified message; false when it holds none. */
    public static boolean skipToMessage(RecordReader in) {
        in.readByte();
        in.readVarInt();
        in.readBoolean();
        return in.readBoolean();
    }
}
