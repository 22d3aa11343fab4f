package io.buslane.engine.message;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A protocol-neutral message as a client sent it: the properties the Service Bus model reasons about, the
 * application properties, the annotations the broker does not own (kept as given), and the body as opaque bytes
 * that only a front end interprets. Immutable; the maps are unmodifiable.
 *
 * <p>Broker-assigned values (sequence number, enqueued time, lock, delivery count, state) are not part of the
 * message; they live in the engine's entries and travel beside the message in a {@link ReceivedMessage}.
 *
 * <p>Property values use neutral Java types: {@code null}, {@link Boolean}, {@link Byte}, {@link Short},
 * {@link Integer}, {@link Long}, {@link Float}, {@link Double}, {@link Character}, {@link String},
 * {@link java.util.UUID}, {@code byte[]}, {@link java.time.Instant} (timestamp), {@link Symbol}, {@link Unsigned},
 * {@link Decimal} (an AMQP decimal, kept as its encoding), {@link Described}, {@link java.util.List} and
 * {@link Map} of those.
 */
public final class Message {

    /** {@link #bodyFormat()}: the body is the payload's bytes as they are (the default). */
    public static final int BODY_RAW = 0;
    /**
     * {@link #bodyFormat()}: the body is the verbatim AMQP encoding of every section after application-properties
     * (body sections and footer), as the AMQP front end keeps it; readers in other front ends decode it.
     */
    public static final int BODY_AMQP_SECTIONS = 1;

    private final Object messageId;
    private final byte[] userId;
    private final String to;
    private final String subject;
    private final String replyTo;
    private final Object correlationId;
    private final String contentType;
    private final String contentEncoding;
    private final Long absoluteExpiryTimeMs;
    private final Long creationTimeMs;
    private final String sessionId;
    private final Long groupSequence;
    private final String replyToSessionId;
    private final Long timeToLiveMs;
    private final boolean durable;
    /** The header's first-acquirer as the sender set it (kept and handed back, as the service does). */
    private final boolean firstAcquirer;
    private final int priority;
    private final Long scheduledEnqueueTimeMs;
    private final String partitionKey;
    private final String viaPartitionKey;
    private final Map<String, Object> applicationProperties;
    private final Map<String, Object> annotations;
    private final int bodyFormat;
    private final byte[] body;
    private final int encodedSize;

    private Message(Builder b) {
        this.messageId = b.messageId;
        this.userId = b.userId;
        this.to = b.to;
        this.subject = b.subject;
        this.replyTo = b.replyTo;
        this.correlationId = b.correlationId;
        this.contentType = b.contentType;
        this.contentEncoding = b.contentEncoding;
        this.absoluteExpiryTimeMs = b.absoluteExpiryTimeMs;
        this.creationTimeMs = b.creationTimeMs;
        this.sessionId = b.sessionId;
        this.groupSequence = b.groupSequence;
        this.replyToSessionId = b.replyToSessionId;
        this.timeToLiveMs = b.timeToLiveMs;
        this.durable = b.durable;
        this.firstAcquirer = b.firstAcquirer;
        this.priority = b.priority;
        this.scheduledEnqueueTimeMs = b.scheduledEnqueueTimeMs;
        this.partitionKey = b.partitionKey;
        this.viaPartitionKey = b.viaPartitionKey;
        this.applicationProperties = freeze(b.applicationProperties);
        this.annotations = freeze(b.annotations);
        this.bodyFormat = b.bodyFormat;
        this.body = b.body == null ? new byte[0] : b.body;
        this.encodedSize = b.encodedSize > 0 ? b.encodedSize : estimateSize(this);
    }

    private static Map<String, Object> freeze(Map<String, Object> map) {
        if (map == null || map.isEmpty()) {
            return Map.of();
        }
        return Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }

    private static int estimateSize(Message m) {
        int size = m.body.length + 64;
        size += m.applicationProperties.size() * 32;
        for (Map.Entry<String, Object> e : m.applicationProperties.entrySet()) {
            size += e.getKey().length();
            if (e.getValue() instanceof String s) {
                size += s.length();
            } else if (e.getValue() instanceof byte[] bytes) {
                size += bytes.length;
            }
        }
        return size;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this message's values, for making a modified copy. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.messageId = messageId;
        b.userId = userId;
        b.to = to;
        b.subject = subject;
        b.replyTo = replyTo;
        b.correlationId = correlationId;
        b.contentType = contentType;
        b.contentEncoding = contentEncoding;
        b.absoluteExpiryTimeMs = absoluteExpiryTimeMs;
        b.creationTimeMs = creationTimeMs;
        b.sessionId = sessionId;
        b.groupSequence = groupSequence;
        b.replyToSessionId = replyToSessionId;
        b.timeToLiveMs = timeToLiveMs;
        b.durable = durable;
        b.firstAcquirer = firstAcquirer;
        b.priority = priority;
        b.scheduledEnqueueTimeMs = scheduledEnqueueTimeMs;
        b.partitionKey = partitionKey;
        b.viaPartitionKey = viaPartitionKey;
        b.applicationProperties = new LinkedHashMap<>(applicationProperties);
        b.annotations = new LinkedHashMap<>(annotations);
        b.bodyFormat = bodyFormat;
        b.body = body;
        return b;
    }

    /** A copy whose application properties are these ones overlaid with {@code modifications}. */
    public Message withApplicationProperties(Map<String, Object> modifications) {
        if (modifications == null || modifications.isEmpty()) {
            return this;
        }
        Builder b = toBuilder();
        b.applicationProperties.putAll(modifications);
        return b.build();
    }

    public Object messageId() { return messageId; }
    public byte[] userId() { return userId; }
    public String to() { return to; }
    public String subject() { return subject; }
    public String replyTo() { return replyTo; }
    public Object correlationId() { return correlationId; }
    public String contentType() { return contentType; }
    public String contentEncoding() { return contentEncoding; }
    public Long absoluteExpiryTimeMs() { return absoluteExpiryTimeMs; }
    public Long creationTimeMs() { return creationTimeMs; }
    /** The Service Bus SessionId (AMQP {@code group-id}). */
    public String sessionId() { return sessionId; }
    public Long groupSequence() { return groupSequence; }
    public String replyToSessionId() { return replyToSessionId; }
    /** The message's own time-to-live, or null when it has none (the entity default applies). */
    public Long timeToLiveMs() { return timeToLiveMs; }
    public boolean durable() { return durable; }
    public boolean firstAcquirer() { return firstAcquirer; }
    public int priority() { return priority; }
    /** The requested scheduled enqueue time, or null. */
    public Long scheduledEnqueueTimeMs() { return scheduledEnqueueTimeMs; }
    public String partitionKey() { return partitionKey; }
    public String viaPartitionKey() { return viaPartitionKey; }
    public Map<String, Object> applicationProperties() { return applicationProperties; }
    /** Message annotations the broker does not own, kept as the client sent them. */
    public Map<String, Object> annotations() { return annotations; }

    /**
     * Internal annotation (never shown to clients as such): the sequence number first assigned to an auto-forwarded
     * message at its original point of submission, which clients read as {@code EnqueuedSequenceNumber}.
     */
    public static final String ENQUEUED_SEQUENCE_NUMBER = "x-opt-buslane-enqueue-sequence-number";

    /** The sequence number this message first had, when it was auto-forwarded; null for a message never forwarded. */
    public Long enqueuedSequenceNumber() {
        return annotations.get(ENQUEUED_SEQUENCE_NUMBER) instanceof Number n ? n.longValue() : null;
    }

    /**
     * Internal annotation (never shown to clients as such, dropped when a client sends it): set on a message when it
     * is enqueued from the scheduled state, so that it reports that state ({@link ReceivedMessage#reportedState}).
     */
    public static final String WAS_SCHEDULED = "x-opt-buslane-scheduled";

    /** Whether this message was scheduled before it was enqueued. */
    public boolean wasScheduled() {
        return Boolean.TRUE.equals(annotations.get(WAS_SCHEDULED));
    }

    /** This message as it is enqueued from the scheduled state (marked {@link #wasScheduled}); same size. */
    public Message activated() {
        if (wasScheduled()) {
            return this;
        }
        Builder b = toBuilder();
        b.annotations.put(WAS_SCHEDULED, Boolean.TRUE);
        return b.encodedSize(encodedSize).build();
    }

    /** A front-end-defined code saying how {@link #body()} is encoded. */
    public int bodyFormat() { return bodyFormat; }
    /** The body, opaque to the engine. Not copied: do not mutate. */
    public byte[] body() { return body; }
    /** The message's size as the front end measured it (for quotas and counts). */
    public int encodedSize() { return encodedSize; }

    @Override
    public String toString() {
        return "Message{messageId=" + messageId + ", sessionId=" + sessionId + ", bodyBytes=" + body.length + '}';
    }

    /** Mutable builder. Not thread-safe. */
    public static final class Builder {
        private Object messageId;
        private byte[] userId;
        private String to;
        private String subject;
        private String replyTo;
        private Object correlationId;
        private String contentType;
        private String contentEncoding;
        private Long absoluteExpiryTimeMs;
        private Long creationTimeMs;
        private String sessionId;
        private Long groupSequence;
        private String replyToSessionId;
        private Long timeToLiveMs;
        private boolean durable = true;
        private boolean firstAcquirer;
        private int priority = 4;
        private Long scheduledEnqueueTimeMs;
        private String partitionKey;
        private String viaPartitionKey;
        private Map<String, Object> applicationProperties = new LinkedHashMap<>();
        private Map<String, Object> annotations = new LinkedHashMap<>();
        private int bodyFormat;
        private byte[] body;
        private int encodedSize;

        private Builder() {
        }

        public Builder messageId(Object v) { this.messageId = v; return this; }
        public Builder userId(byte[] v) { this.userId = v; return this; }
        public Builder to(String v) { this.to = v; return this; }
        public Builder subject(String v) { this.subject = v; return this; }
        public Builder replyTo(String v) { this.replyTo = v; return this; }
        public Builder correlationId(Object v) { this.correlationId = v; return this; }
        public Builder contentType(String v) { this.contentType = v; return this; }
        public Builder contentEncoding(String v) { this.contentEncoding = v; return this; }
        public Builder absoluteExpiryTimeMs(Long v) { this.absoluteExpiryTimeMs = v; return this; }
        public Builder creationTimeMs(Long v) { this.creationTimeMs = v; return this; }
        public Builder sessionId(String v) { this.sessionId = v; return this; }
        public Builder groupSequence(Long v) { this.groupSequence = v; return this; }
        public Builder replyToSessionId(String v) { this.replyToSessionId = v; return this; }
        public Builder timeToLiveMs(Long v) { this.timeToLiveMs = v; return this; }
        public Builder durable(boolean v) { this.durable = v; return this; }
        public Builder firstAcquirer(boolean v) { this.firstAcquirer = v; return this; }
        public Builder priority(int v) { this.priority = v; return this; }
        public Builder scheduledEnqueueTimeMs(Long v) { this.scheduledEnqueueTimeMs = v; return this; }
        public Builder partitionKey(String v) { this.partitionKey = v; return this; }
        public Builder viaPartitionKey(String v) { this.viaPartitionKey = v; return this; }
        public Builder applicationProperty(String key, Object value) {
            this.applicationProperties.put(key, value); return this; }
        public Builder applicationProperties(Map<String, Object> v) {
            this.applicationProperties = new LinkedHashMap<>(v); return this; }
        public Builder removeApplicationProperty(String key) {
            this.applicationProperties.remove(key); return this; }
        public Builder annotation(String key, Object value) { this.annotations.put(key, value); return this; }
        public Builder annotations(Map<String, Object> v) { this.annotations = new LinkedHashMap<>(v); return this; }
        public Builder bodyFormat(int v) { this.bodyFormat = v; return this; }
        public Builder body(byte[] v) { this.body = v; return this; }
        public Builder encodedSize(int v) { this.encodedSize = v; return this; }

        public Message build() {
            return new Message(this);
        }
    }
}
