package io.buslane.engine.persist;

import io.buslane.engine.message.Message;

/**
 * Stateless and thread-safe. Encodes a {@link Message} with every one of its fields, so that it reads back equal
 * field for field (byte arrays by content, maps in their order, property values with their types).
 *
 * <p>Format, version 1 (primitives as in {@link RecordWriter}, values as in {@link ValueCodec}):
 * <ol>
 *   <li>version byte {@value #VERSION};</li>
 *   <li>var-int flags: the {@code durable} flag, one bit per nullable field that is set and one per non-empty
 *       map (bit numbers in the {@code F_} constants: the fields most messages carry are lowest, so the flags
 *       usually take one byte);</li>
 *   <li>the present fields, in {@link Message}'s declaration order: message id (value), user id (bytes), to,
 *       subject, reply-to (strings), correlation id (value), content type, content encoding (strings), absolute
 *       expiry time, creation time (signed var-longs), session id (string), group sequence (signed var-long),
 *       reply-to session id (string), time to live, scheduled enqueue time (signed var-longs), partition key,
 *       via partition key (strings), application properties, annotations (string maps);</li>
 *   <li>always: priority, body format (signed var-ints), encoded size (var-int), body (bytes) last.</li>
 * </ol>
 * Absent fields take no space. A record with another version or unknown flags is rejected with an
 * {@link IllegalArgumentException}.
 */
public final class MessageCodec {

    /** The format version this codec writes and reads. */
    public static final int VERSION = 1;

    // Bit numbers put the fields most messages carry lowest, so that the flags usually fit in one byte.
    static final int F_DURABLE = 1;
    static final int F_MESSAGE_ID = 1 << 1;
    static final int F_APPLICATION_PROPERTIES = 1 << 2;
    static final int F_ANNOTATIONS = 1 << 3;
    static final int F_CONTENT_TYPE = 1 << 4;
    static final int F_SESSION_ID = 1 << 5;
    static final int F_CORRELATION_ID = 1 << 6;
    static final int F_SUBJECT = 1 << 7;
    static final int F_TO = 1 << 8;
    static final int F_REPLY_TO = 1 << 9;
    static final int F_TIME_TO_LIVE = 1 << 10;
    static final int F_CREATION_TIME = 1 << 11;
    static final int F_ABSOLUTE_EXPIRY_TIME = 1 << 12;
    static final int F_PARTITION_KEY = 1 << 13;
    static final int F_SCHEDULED_ENQUEUE_TIME = 1 << 14;
    static final int F_USER_ID = 1 << 15;
    static final int F_CONTENT_ENCODING = 1 << 16;
    static final int F_GROUP_SEQUENCE = 1 << 17;
    static final int F_REPLY_TO_SESSION_ID = 1 << 18;
    static final int F_VIA_PARTITION_KEY = 1 << 19;
    /** The header's first-acquirer as sent (a flag, no field). */
    static final int F_FIRST_ACQUIRER = 1 << 20;
    private static final int KNOWN_FLAGS = (1 << 21) - 1;

    private MessageCodec() {
    }

    /** Appends the message's record to {@code w}. */
    public static void write(RecordWriter w, Message m) {
        int flags = flags(m);
        w.writeByte(VERSION);
        w.writeVarInt(flags);
        if ((flags & F_MESSAGE_ID) != 0) {
            ValueCodec.writeValue(w, m.messageId());
        }
        if ((flags & F_USER_ID) != 0) {
            w.writeBytes(m.userId());
        }
        if ((flags & F_TO) != 0) {
            w.writeString(m.to());
        }
        if ((flags & F_SUBJECT) != 0) {
            w.writeString(m.subject());
        }
        if ((flags & F_REPLY_TO) != 0) {
            w.writeString(m.replyTo());
        }
        if ((flags & F_CORRELATION_ID) != 0) {
            ValueCodec.writeValue(w, m.correlationId());
        }
        if ((flags & F_CONTENT_TYPE) != 0) {
            w.writeString(m.contentType());
        }
        if ((flags & F_CONTENT_ENCODING) != 0) {
            w.writeString(m.contentEncoding());
        }
        if ((flags & F_ABSOLUTE_EXPIRY_TIME) != 0) {
            w.writeSignedVarLong(m.absoluteExpiryTimeMs());
        }
        if ((flags & F_CREATION_TIME) != 0) {
            w.writeSignedVarLong(m.creationTimeMs());
        }
        if ((flags & F_SESSION_ID) != 0) {
            w.writeString(m.sessionId());
        }
        if ((flags & F_GROUP_SEQUENCE) != 0) {
            w.writeSignedVarLong(m.groupSequence());
        }
        if ((flags & F_REPLY_TO_SESSION_ID) != 0) {
            w.writeString(m.replyToSessionId());
        }
        if ((flags & F_TIME_TO_LIVE) != 0) {
            w.writeSignedVarLong(m.timeToLiveMs());
        }
        if ((flags & F_SCHEDULED_ENQUEUE_TIME) != 0) {
            w.writeSignedVarLong(m.scheduledEnqueueTimeMs());
        }
        if ((flags & F_PARTITION_KEY) != 0) {
            w.writeString(m.partitionKey());
        }
        if ((flags & F_VIA_PARTITION_KEY) != 0) {
            w.writeString(m.viaPartitionKey());
        }
        if ((flags & F_APPLICATION_PROPERTIES) != 0) {
            ValueCodec.writeStringMap(w, m.applicationProperties());
        }
        if ((flags & F_ANNOTATIONS) != 0) {
            ValueCodec.writeStringMap(w, m.annotations());
        }
        w.writeSignedVarInt(m.priority());
        w.writeSignedVarInt(m.bodyFormat());
        w.writeVarInt(m.encodedSize());
        w.writeBytes(m.body());
    }

    /** Reads a message record written by {@link #write}. */
    public static Message read(RecordReader r) {
        int version = r.readUnsignedByte();
        if (version != VERSION) {
            throw new IllegalArgumentException("unsupported message record version " + version + " (expected "
                    + VERSION + ")");
        }
        int flags = r.readVarInt();
        if ((flags & ~KNOWN_FLAGS) != 0) {
            throw new IllegalArgumentException("malformed record: unknown message flags 0x"
                    + Integer.toHexString(flags & ~KNOWN_FLAGS));
        }
        Message.Builder b = Message.builder();
        if ((flags & F_MESSAGE_ID) != 0) {
            b.messageId(ValueCodec.readValue(r));
        }
        if ((flags & F_USER_ID) != 0) {
            b.userId(r.readBytes());
        }
        if ((flags & F_TO) != 0) {
            b.to(r.readString());
        }
        if ((flags & F_SUBJECT) != 0) {
            b.subject(r.readString());
        }
        if ((flags & F_REPLY_TO) != 0) {
            b.replyTo(r.readString());
        }
        if ((flags & F_CORRELATION_ID) != 0) {
            b.correlationId(ValueCodec.readValue(r));
        }
        if ((flags & F_CONTENT_TYPE) != 0) {
            b.contentType(r.readString());
        }
        if ((flags & F_CONTENT_ENCODING) != 0) {
            b.contentEncoding(r.readString());
        }
        if ((flags & F_ABSOLUTE_EXPIRY_TIME) != 0) {
            b.absoluteExpiryTimeMs(r.readSignedVarLong());
        }
        if ((flags & F_CREATION_TIME) != 0) {
            b.creationTimeMs(r.readSignedVarLong());
        }
        if ((flags & F_SESSION_ID) != 0) {
            b.sessionId(r.readString());
        }
        if ((flags & F_GROUP_SEQUENCE) != 0) {
            b.groupSequence(r.readSignedVarLong());
        }
        if ((flags & F_REPLY_TO_SESSION_ID) != 0) {
            b.replyToSessionId(r.readString());
        }
        if ((flags & F_TIME_TO_LIVE) != 0) {
            b.timeToLiveMs(r.readSignedVarLong());
        }
        if ((flags & F_SCHEDULED_ENQUEUE_TIME) != 0) {
            b.scheduledEnqueueTimeMs(r.readSignedVarLong());
        }
        if ((flags & F_PARTITION_KEY) != 0) {
            b.partitionKey(r.readString());
        }
        if ((flags & F_VIA_PARTITION_KEY) != 0) {
            b.viaPartitionKey(r.readString());
        }
        if ((flags & F_APPLICATION_PROPERTIES) != 0) {
            ValueCodec.readStringMap(r, b::applicationProperty);
        }
        if ((flags & F_ANNOTATIONS) != 0) {
            ValueCodec.readStringMap(r, b::annotation);
        }
        b.durable((flags & F_DURABLE) != 0);
        b.firstAcquirer((flags & F_FIRST_ACQUIRER) != 0);
        b.priority(r.readSignedVarInt());
        b.bodyFormat(r.readSignedVarInt());
        b.encodedSize(r.readVarInt());
        b.body(r.readBytes());
        return b.build();
    }

    private static int flags(Message m) {
        int f = 0;
        if (m.messageId() != null) {
            f |= F_MESSAGE_ID;
        }
        if (m.userId() != null) {
            f |= F_USER_ID;
        }
        if (m.to() != null) {
            f |= F_TO;
        }
        if (m.subject() != null) {
            f |= F_SUBJECT;
        }
        if (m.replyTo() != null) {
            f |= F_REPLY_TO;
        }
        if (m.correlationId() != null) {
            f |= F_CORRELATION_ID;
        }
        if (m.contentType() != null) {
            f |= F_CONTENT_TYPE;
        }
        if (m.contentEncoding() != null) {
            f |= F_CONTENT_ENCODING;
        }
        if (m.absoluteExpiryTimeMs() != null) {
            f |= F_ABSOLUTE_EXPIRY_TIME;
        }
        if (m.creationTimeMs() != null) {
            f |= F_CREATION_TIME;
        }
        if (m.sessionId() != null) {
            f |= F_SESSION_ID;
        }
        if (m.groupSequence() != null) {
            f |= F_GROUP_SEQUENCE;
        }
        if (m.replyToSessionId() != null) {
            f |= F_REPLY_TO_SESSION_ID;
        }
        if (m.timeToLiveMs() != null) {
            f |= F_TIME_TO_LIVE;
        }
        if (m.scheduledEnqueueTimeMs() != null) {
            f |= F_SCHEDULED_ENQUEUE_TIME;
        }
        if (m.partitionKey() != null) {
            f |= F_PARTITION_KEY;
        }
        if (m.viaPartitionKey() != null) {
            f |= F_VIA_PARTITION_KEY;
        }
        if (!m.applicationProperties().isEmpty()) {
            f |= F_APPLICATION_PROPERTIES;
        }
        if (!m.annotations().isEmpty()) {
            f |= F_ANNOTATIONS;
        }
        if (m.durable()) {
            f |= F_DURABLE;
        }
        if (m.firstAcquirer()) {
            f |= F_FIRST_ACQUIRER;
        }
        return f;
    }
}
