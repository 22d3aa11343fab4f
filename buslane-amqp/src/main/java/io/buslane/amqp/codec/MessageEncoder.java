package io.buslane.amqp.codec;

import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;

import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.DeliveryAnnotations;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.codec.EncoderImpl;
import org.apache.qpid.proton.codec.WritableBuffer;

/**
 * Encodes received messages as the broker hands them out: the client's sections with the broker's annotations
 * (of the exact types the SDKs cast to), in the standard section order.
 */
final class MessageEncoder {

    /** Annotations written from broker values or message fields on output, never from Message.annotations. */
    private static final Set<String> WRITTEN_FROM_FIELDS = Set.of(AmqpCodec.SEQUENCE_NUMBER,
            AmqpCodec.ENQUEUE_SEQUENCE_NUMBER, AmqpCodec.ENQUEUED_TIME, AmqpCodec.LOCKED_UNTIL,
            AmqpCodec.MESSAGE_STATE, AmqpCodec.DEADLETTER_SOURCE, AmqpCodec.LOCK_TOKEN,
            AmqpCodec.SCHEDULED_ENQUEUE_TIME, AmqpCodec.PARTITION_KEY, AmqpCodec.VIA_PARTITION_KEY,
            AmqpCodec.TRANSFER_HOP_COUNT, Message.ENQUEUED_SEQUENCE_NUMBER, Message.WAS_SCHEDULED);

    private static final Symbol SYM_SEQUENCE_NUMBER = Symbol.valueOf(AmqpCodec.SEQUENCE_NUMBER);
    private static final Symbol SYM_ENQUEUED_TIME = Symbol.valueOf(AmqpCodec.ENQUEUED_TIME);
    private static final Symbol SYM_ENQUEUE_SEQUENCE_NUMBER = Symbol.valueOf(AmqpCodec.ENQUEUE_SEQUENCE_NUMBER);
    private static final Symbol SYM_LOCKED_UNTIL = Symbol.valueOf(AmqpCodec.LOCKED_UNTIL);
    private static final Symbol SYM_MESSAGE_STATE = Symbol.valueOf(AmqpCodec.MESSAGE_STATE);
    private static final Symbol SYM_DEADLETTER_SOURCE = Symbol.valueOf(AmqpCodec.DEADLETTER_SOURCE);
    private static final Symbol SYM_LOCK_TOKEN = Symbol.valueOf(AmqpCodec.LOCK_TOKEN);
    private static final Symbol SYM_SCHEDULED_ENQUEUE_TIME = Symbol.valueOf(AmqpCodec.SCHEDULED_ENQUEUE_TIME);
    private static final Symbol SYM_PARTITION_KEY = Symbol.valueOf(AmqpCodec.PARTITION_KEY);
    private static final Symbol SYM_VIA_PARTITION_KEY = Symbol.valueOf(AmqpCodec.VIA_PARTITION_KEY);

    private static final long UINT_LIMIT = 1L << 32;

    private MessageEncoder() {
    }

    /** Implements {@link AmqpCodec#encode(ReceivedMessage, AmqpCodec.Purpose)}. */
    static byte[] encode(ReceivedMessage r, AmqpCodec.Purpose purpose) {
        Objects.requireNonNull(r, "message");
        Objects.requireNonNull(purpose, "purpose");
        Message m = r.message();
        GrowableWritableBuffer out = new GrowableWritableBuffer(initialCapacity(m));
        encodeInto(r, purpose, ProtonCodecs.codec(), out);
        return out.toByteArray();
    }

    /** Implements {@link AmqpCodec#encode(ReceivedMessage, AmqpCodec.Purpose, AmqpCodec.EncodedSink)}. */
    static void encode(ReceivedMessage r, AmqpCodec.Purpose purpose, AmqpCodec.EncodedSink sink) {
        Objects.requireNonNull(r, "message");
        Objects.requireNonNull(purpose, "purpose");
        Objects.requireNonNull(sink, "sink");
        ProtonCodecs.Codec codec = ProtonCodecs.codec();
        GrowableWritableBuffer out = codec.scratch();
        try {
            encodeInto(r, purpose, codec, out);
            sink.accept(out.array(), 0, out.size());
        } finally {
            codec.releaseScratch(out);
        }
    }

    private static int initialCapacity(Message m) {
        return m.body().length + 256 + 64 * (m.applicationProperties().size() + m.annotations().size());
    }

    private static void encodeInto(ReceivedMessage r, AmqpCodec.Purpose purpose, ProtonCodecs.Codec codec,
            GrowableWritableBuffer out) {
        Message m = r.message();

        Header header = header(r, m);

        DeliveryAnnotations deliveryAnnotations = null;
        if (r.lockToken() != null && purpose == AmqpCodec.Purpose.RECEIVE_BY_SEQUENCE) {
            Map<Symbol, Object> da = new LinkedHashMap<>();
            da.put(SYM_LOCK_TOKEN, r.lockToken());
            deliveryAnnotations = new DeliveryAnnotations(da);
        }

        Map<Symbol, Object> ma = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : m.annotations().entrySet()) {
            if (e.getKey() != null && !WRITTEN_FROM_FIELDS.contains(e.getKey())) {
                ma.put(Symbol.valueOf(e.getKey()), AmqpValues.toProton(e.getValue(), 0, codec));
            }
        }
        ma.put(SYM_SEQUENCE_NUMBER, r.sequenceNumber());
        Long original = m.enqueuedSequenceNumber();
        if (original != null) {
            ma.put(SYM_ENQUEUE_SEQUENCE_NUMBER, original);
        }
        ma.put(SYM_ENQUEUED_TIME, new Date(r.enqueuedTimeMs()));
        if (r.lockToken() != null) {
            ma.put(SYM_LOCKED_UNTIL, new Date(r.lockedUntilMs()));
        }
        // a received message that was scheduled reports it; browsing shows where a message stands (a scheduled one
        // that was enqueued since is active, so that a peek tells what still waits for its time)
        MessageState state = purpose == AmqpCodec.Purpose.DELIVERY
                || purpose == AmqpCodec.Purpose.RECEIVE_BY_SEQUENCE
                ? r.reportedState() : r.state() == null ? MessageState.ACTIVE : r.state();
        if (purpose != AmqpCodec.Purpose.DELIVERY || state != MessageState.ACTIVE) {
            ma.put(SYM_MESSAGE_STATE, state.code());
        }
        Long scheduled = r.scheduledEnqueueTimeMs() != null ? r.scheduledEnqueueTimeMs() : m.scheduledEnqueueTimeMs();
        if (scheduled != null) {
            ma.put(SYM_SCHEDULED_ENQUEUE_TIME, new Date(scheduled));
        }
        if (m.partitionKey() != null) {
            ma.put(SYM_PARTITION_KEY, m.partitionKey());
        }
        if (m.viaPartitionKey() != null) {
            ma.put(SYM_VIA_PARTITION_KEY, m.viaPartitionKey());
        }
        if (r.deadLetterSource() != null) {
            ma.put(SYM_DEADLETTER_SOURCE, r.deadLetterSource());
        }

        Properties properties = properties(r, m, codec);

        ApplicationProperties applicationProperties = null;
        if (!m.applicationProperties().isEmpty()) {
            Map<String, Object> ap = new LinkedHashMap<>();
            for (Map.Entry<String, Object> e : m.applicationProperties().entrySet()) {
                ap.put(e.getKey(), AmqpValues.toProton(e.getValue(), 0, codec));
            }
            applicationProperties = new ApplicationProperties(ap);
        }

        byte[] body = m.body();
        EncoderImpl encoder = codec.encoder;
        encoder.setByteBuffer(out);
        try {
            encoder.writeObject(header);
            if (deliveryAnnotations != null) {
                encoder.writeObject(deliveryAnnotations);
            }
            encoder.writeObject(new MessageAnnotations(ma));
            if (properties != null) {
                encoder.writeObject(properties);
            }
            if (applicationProperties != null) {
                encoder.writeObject(applicationProperties);
            }
            if (purpose == AmqpCodec.Purpose.PEEK_WITHOUT_BODY) {
                return; // no body section: the peeker asked for the rest only
            }
            if (m.bodyFormat() == AmqpCodec.BODY_AMQP_SECTIONS) {
                out.put(body, 0, body.length);
            } else {
                encoder.writeObject(new Data(new Binary(body)));
            }
        } finally {
            encoder.setByteBuffer((WritableBuffer) null);
        }
    }

    private static Header header(ReceivedMessage r, Message m) {
        Header h = new Header();
        if (m.durable()) {
            h.setDurable(Boolean.TRUE);
        }
        if (m.firstAcquirer()) {
            h.setFirstAcquirer(Boolean.TRUE);
        }
        if (m.priority() != AmqpCodec.DEFAULT_PRIORITY) {
            h.setPriority(UnsignedByte.valueOf((byte) Math.max(0, Math.min(255, m.priority()))));
        }
        long ttl = 0;
        if (r.expiresAtMs() != Long.MAX_VALUE && r.expiresAtMs() > r.enqueuedTimeMs()) {
            ttl = r.expiresAtMs() - r.enqueuedTimeMs();
        } else if (m.timeToLiveMs() != null) {
            // a dead-lettered message no longer expires but keeps showing the time-to-live it was sent with
            ttl = m.timeToLiveMs();
        }
        if (ttl > 0 && ttl < UINT_LIMIT) {
            h.setTtl(UnsignedInteger.valueOf(ttl));
        }
        h.setDeliveryCount(UnsignedInteger.valueOf(Math.max(0, r.deliveryCount())));
        return h;
    }

    private static Properties properties(ReceivedMessage r, Message m, ProtonCodecs.Codec codec) {
        Properties p = new Properties();
        boolean any = false;
        if (m.messageId() != null) {
            p.setMessageId(AmqpValues.toProton(m.messageId(), 0, codec));
            any = true;
        }
        if (m.userId() != null) {
            p.setUserId(new Binary(m.userId()));
            any = true;
        }
        if (m.to() != null) {
            p.setTo(m.to());
            any = true;
        }
        if (m.subject() != null) {
            p.setSubject(m.subject());
            any = true;
        }
        if (m.replyTo() != null) {
            p.setReplyTo(m.replyTo());
            any = true;
        }
        if (m.correlationId() != null) {
            p.setCorrelationId(AmqpValues.toProton(m.correlationId(), 0, codec));
            any = true;
        }
        if (m.contentType() != null) {
            p.setContentType(Symbol.valueOf(m.contentType()));
            any = true;
        }
        if (m.contentEncoding() != null) {
            p.setContentEncoding(Symbol.valueOf(m.contentEncoding()));
            any = true;
        }
        if (m.absoluteExpiryTimeMs() != null) {
            // the bare message is immutable: the sender's value as sent (the SDKs read the time-to-live back as
            // absolute-expiry-time minus creation-time; the broker's own expiry is the header's ttl from enqueuing)
            p.setAbsoluteExpiryTime(new Date(m.absoluteExpiryTimeMs()));
            any = true;
        } else if (r.expiresAtMs() != Long.MAX_VALUE) {
            p.setAbsoluteExpiryTime(new Date(r.expiresAtMs()));
            any = true;
        }
        if (m.creationTimeMs() != null) {
            p.setCreationTime(new Date(m.creationTimeMs()));
            any = true;
        }
        if (m.sessionId() != null) {
            p.setGroupId(m.sessionId());
            any = true;
        }
        if (m.groupSequence() != null && m.groupSequence() >= 0 && m.groupSequence() < UINT_LIMIT) {
            p.setGroupSequence(UnsignedInteger.valueOf(m.groupSequence()));
            any = true;
        }
        if (m.replyToSessionId() != null) {
            p.setReplyToGroupId(m.replyToSessionId());
            any = true;
        }
        return any ? p : null;
    }
}
