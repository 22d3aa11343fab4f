package io.buslane.engine.filter.sql;

import io.buslane.engine.message.Message;

import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.HashMap;
import java.util.HexFormat;

/**
 * The system properties a filter reads with {@code sys.<name>} (names are case-insensitive) and, for the settable
 * ones, an action writes with {@code SET sys.<name> = ...} or clears with {@code REMOVE sys.<name>}.
 */
enum SystemProperty {
    MESSAGE_ID("MessageId", c -> id(c.message().messageId()), (b, v) -> b.messageId(text(v))),
    CORRELATION_ID("CorrelationId", c -> id(c.message().correlationId()), (b, v) -> b.correlationId(text(v))),
    TO("To", c -> c.message().to(), (b, v) -> b.to(text(v))),
    REPLY_TO("ReplyTo", c -> c.message().replyTo(), (b, v) -> b.replyTo(text(v))),
    LABEL("Label", c -> c.message().subject(), (b, v) -> b.subject(text(v))),
    SUBJECT("Subject", c -> c.message().subject(), (b, v) -> b.subject(text(v))),
    SESSION_ID("SessionId", c -> c.message().sessionId(), (b, v) -> b.sessionId(text(v))),
    REPLY_TO_SESSION_ID("ReplyToSessionId", c -> c.message().replyToSessionId(),
            (b, v) -> b.replyToSessionId(text(v))),
    CONTENT_TYPE("ContentType", c -> c.message().contentType(), (b, v) -> b.contentType(text(v))),
    PARTITION_KEY("PartitionKey", c -> c.message().partitionKey(), (b, v) -> b.partitionKey(text(v))),
    VIA_PARTITION_KEY("ViaPartitionKey", c -> c.message().viaPartitionKey(), null),
    SEQUENCE_NUMBER("SequenceNumber", SqlMessage::sequenceNumber, null),
    ENQUEUED_SEQUENCE_NUMBER("EnqueuedSequenceNumber", SqlMessage::enqueuedSequenceNumber, null),
    ENQUEUED_TIME_UTC("EnqueuedTimeUtc", c -> Instant.ofEpochMilli(c.enqueuedTimeMs()), null),
    SCHEDULED_ENQUEUE_TIME_UTC("ScheduledEnqueueTimeUtc", c -> c.message().scheduledEnqueueTimeMs() == null ? null
            : Instant.ofEpochMilli(c.message().scheduledEnqueueTimeMs()), null),
    DELIVERY_COUNT("DeliveryCount", c -> 0L, null),
    SIZE("Size", c -> (long) c.message().encodedSize(), null);

    private static final Map<String, SystemProperty> BY_NAME = new HashMap<>();

    static {
        for (SystemProperty p : values()) {
            BY_NAME.put(p.propertyName.toLowerCase(Locale.ROOT), p);
        }
    }

    final String propertyName;
    private final Function<SqlMessage, Object> getter;
    private final BiConsumer<Message.Builder, Object> setter;

    SystemProperty(String propertyName, Function<SqlMessage, Object> getter,
                   BiConsumer<Message.Builder, Object> setter) {
        this.propertyName = propertyName;
        this.getter = getter;
        this.setter = setter;
    }

    /** The property with this name (any case), or null. */
    static SystemProperty named(String name) {
        return BY_NAME.get(name.toLowerCase(Locale.ROOT));
    }

    Object get(SqlMessage c) {
        return getter.apply(c);
    }

    boolean settable() {
        return setter != null;
    }

    void set(Message.Builder b, Object value) {
        setter.accept(b, value);
    }

    /** An AMQP message-id or correlation-id (string, uuid, ulong or binary) as the string the SDKs show. */
    private static String id(Object v) {
        if (v instanceof byte[] b) {
            return HexFormat.of().formatHex(b);
        }
        return text(v);
    }

    private static String text(Object v) {
        return v == null ? null : Values.toText(v);
    }
}
