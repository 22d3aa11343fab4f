package io.buslane.amqp.codec;

import io.buslane.engine.message.Message;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.UnsignedShort;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.codec.EncoderImpl;
import org.apache.qpid.proton.codec.WritableBuffer;

/**
 * Decodes transfer payloads (one message, or a batch) into engine {@link Message}s: the sections the Service Bus
 * model reasons about become message fields, the body sections and the footer are kept verbatim.
 */
final class MessageDecoder {

    /** Annotations only the broker sets: dropped when a client sends them. */
    private static final Set<String> BROKER_OWNED = Set.of(AmqpCodec.SEQUENCE_NUMBER,
            AmqpCodec.ENQUEUE_SEQUENCE_NUMBER, AmqpCodec.ENQUEUED_TIME, AmqpCodec.LOCKED_UNTIL,
            AmqpCodec.MESSAGE_STATE, AmqpCodec.DEADLETTER_SOURCE, AmqpCodec.LOCK_TOKEN,
            AmqpCodec.TRANSFER_HOP_COUNT, Message.ENQUEUED_SEQUENCE_NUMBER, Message.WAS_SCHEDULED);

    private MessageDecoder() {
    }

    /** Implements {@link AmqpCodec#decodeTransfer}. */
    static List<Message> decodeTransfer(byte[] payload, int offset, int length, long messageFormat)
            throws AmqpDecodeException {
        Objects.requireNonNull(payload, "payload");
        Objects.checkFromIndexSize(offset, length, payload.length);
        if (messageFormat == 0L) {
            return List.of(decodeMessage(payload, offset, length));
        }
        if (messageFormat != AmqpCodec.BATCH_FORMAT) {
            throw new AmqpDecodeException("unsupported message-format 0x" + Long.toHexString(messageFormat)
                    + " (supported: 0 and the batch format 0x80013700)");
        }
        SectionParser.Sections envelope = SectionParser.parse(payload, offset, length, true, "batch envelope");
        if (envelope.valueCount > 0 || envelope.sequenceCount > 0) {
            throw new AmqpDecodeException("malformed batch envelope: its body must consist of data sections"
                    + " (one encoded message each), found "
                    + (envelope.valueCount > 0 ? "amqp-value" : "amqp-sequence"));
        }
        List<Message> messages = new ArrayList<>(envelope.data.size());
        for (int i = 0; i < envelope.data.size(); i++) {
            Binary inner = envelope.data.get(i);
            try {
                messages.add(decodeMessage(inner.getArray(), inner.getArrayOffset(), inner.getLength()));
            } catch (AmqpDecodeException e) {
                throw new AmqpDecodeException("batch message " + i + " of " + envelope.data.size() + ": "
                        + e.getMessage(), e.getCause());
            }
        }
        return Collections.unmodifiableList(messages);
    }

    /** Implements {@link AmqpCodec#decodeMessage}. */
    static Message decodeMessage(byte[] encoded, int offset, int length) throws AmqpDecodeException {
        Objects.requireNonNull(encoded, "encoded");
        Objects.checkFromIndexSize(offset, length, encoded.length);
        SectionParser.Sections s = SectionParser.parse(encoded, offset, length, false, "AMQP message");
        checkPropertyQuotas(s, offset, length);
        Message.Builder b = Message.builder();
        applyHeader(b, s.header);
        applyMessageAnnotations(b, s.messageAnnotations);
        applyProperties(b, s.properties);
        if (s.applicationProperties != null && s.applicationProperties.getValue() != null) {
            try {
                b.applicationProperties(AmqpValues.toEngineStringMap(s.applicationProperties.getValue()));
            } catch (IllegalArgumentException e) {
                throw new AmqpDecodeException("malformed AMQP message: application-properties: " + e.getMessage(), e);
            }
        }
        int end = offset + length;
        byte[] body = verbatimBody(encoded, s, end);
        if (s.footer != null && hasStringKey(s.footer.getValue())) {
            body = withSymbolKeyedFooter(body, body.length - (s.footerEnd - s.footerStart), s.footer);
        }
        b.bodyFormat(AmqpCodec.BODY_AMQP_SECTIONS).body(body).encodedSize(length);
        return b.build();
    }

    /**
     * The body sections as sent, then the footer (wherever the sender put it: before the body, between body
     * sections or last), so that the message is handed back in the standard section order.
     */
    private static byte[] verbatimBody(byte[] encoded, SectionParser.Sections s, int end) {
        if (s.bodyStart < 0) {
            return new byte[0];
        }
        if (s.footer == null || s.footerEnd == end) {
            return Arrays.copyOfRange(encoded, s.bodyStart, end);
        }
        int footerLength = s.footerEnd - s.footerStart;
        ByteArrayOutputStream out = new ByteArrayOutputStream(end - Math.min(s.bodyStart,
                s.footerStart));
        if (s.footerStart < s.bodyStart) {
            out.write(encoded, s.bodyStart, end - s.bodyStart);
        } else {
            out.write(encoded, s.bodyStart, s.footerStart - s.bodyStart);
            out.write(encoded, s.footerEnd, end - s.footerEnd);
        }
        out.write(encoded, s.footerStart, footerLength);
        return out.toByteArray();
    }

    private static boolean hasStringKey(Map<?, ?> map) {
        if (map != null) {
            for (Object key : map.keySet()) {
                if (key instanceof String) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The verbatim body with its footer re-encoded with symbol keys where the sender used strings: the service
     * hands footers back (like the other annotation maps) with symbol keys, and the SDKs' readers cast them to
     * symbols.
     */
    private static byte[] withSymbolKeyedFooter(byte[] body, int footerAt, Footer footer) {
        Map<Object, Object> keys = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) footer.getValue()).entrySet()) {
            keys.put(e.getKey() instanceof String k ? Symbol.valueOf(k) : e.getKey(), e.getValue());
        }
        ProtonCodecs.Codec codec = ProtonCodecs.codec();
        GrowableWritableBuffer out = codec.scratch();
        EncoderImpl encoder = codec.encoder;
        try {
            encoder.setByteBuffer(out);
            encoder.writeObject(new Footer(keys));
            byte[] encoded = out.toByteArray();
            byte[] rewritten = Arrays.copyOf(body, footerAt + encoded.length);
            System.arraycopy(encoded, 0, rewritten, footerAt, encoded.length);
            return rewritten;
        } finally {
            encoder.setByteBuffer((WritableBuffer) null);
            codec.releaseScratch(out);
        }
    }

    /** Service Bus's quota on one property (key and value encoded), and on all of a message's properties. */
    static final int MAX_PROPERTY_BYTES = 32 * 1024;
    static final int MAX_HEADER_BYTES = 64 * 1024;

    /**
     * Refuses a message whose properties exceed the service's quotas: one application property over 32 KB, or all
     * sections before the body (header, annotations, properties, application-properties) over 64 KB.
     */
    private static void checkPropertyQuotas(SectionParser.Sections s, int offset, int length)
            throws AmqpDecodeException {
        int headerBytes = (s.bodyStart < 0 ? offset + length : s.bodyStart) - offset;
        if (s.footer != null && s.footerStart < s.bodyStart) {
            headerBytes -= s.footerEnd - s.footerStart; // a footer before the body is not a property
        }
        if (headerBytes > MAX_HEADER_BYTES) {
            throw AmqpDecodeException.overQuota("The message's properties take " + headerBytes + " bytes (system and "
                    + "application properties together); Service Bus allows at most " + MAX_HEADER_BYTES + ".");
        }
        if (s.applicationPropertiesBytes > MAX_PROPERTY_BYTES) { // else no single property can be over
            ProtonCodecs.Codec codec = ProtonCodecs.codec();
            GrowableWritableBuffer out = codec.scratch();
            EncoderImpl encoder = codec.encoder;
            try {
                encoder.setByteBuffer(out);
                for (Map.Entry<?, ?> e : ((Map<?, ?>) s.applicationProperties.getValue()).entrySet()) {
                    out.reset();
                    encoder.writeObject(e.getKey());
                    encoder.writeObject(e.getValue());
                    if (out.position() > MAX_PROPERTY_BYTES) {
                        throw AmqpDecodeException.overQuota("The application property '" + e.getKey() + "' takes "
                                + out.position() + " bytes; Service Bus allows at most " + MAX_PROPERTY_BYTES
                                + " for one property.");
                    }
                }
            } finally {
                encoder.setByteBuffer((WritableBuffer) null);
                codec.releaseScratch(out);
            }
        }
    }

    private static void applyHeader(Message.Builder b, Header h) {
        if (h == null) {
            b.durable(false).priority(AmqpCodec.DEFAULT_PRIORITY);
            return;
        }
        b.durable(Boolean.TRUE.equals(h.getDurable()));
        b.priority(h.getPriority() == null ? AmqpCodec.DEFAULT_PRIORITY : (int) h.getPriority().longValue());
        UnsignedInteger ttl = h.getTtl();
        b.timeToLiveMs(ttl == null || ttl.longValue() == 0 ? null : ttl.longValue());
        // the sender's first-acquirer is handed back as sent (the Java SDK's tests expect it); delivery-count is
        // the broker's business on output: ignored
        b.firstAcquirer(Boolean.TRUE.equals(h.getFirstAcquirer()));
    }

    private static void applyMessageAnnotations(Message.Builder b, MessageAnnotations section)
            throws AmqpDecodeException {
        Map<?, ?> map = section == null ? null : section.getValue();
        if (map == null) {
            return;
        }
        Map<String, Object> kept = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            Object k = e.getKey();
            if (!(k instanceof Symbol) && !(k instanceof String)) {
                continue; // numeric (ulong) annotation keys are reserved by AMQP: dropped
            }
            String key = k.toString();
            Object value = e.getValue();
            switch (key) {
                case AmqpCodec.SCHEDULED_ENQUEUE_TIME -> b.scheduledEnqueueTimeMs(timestampMillis(key, value));
                case AmqpCodec.PARTITION_KEY -> b.partitionKey(annotationString(key, value));
                case AmqpCodec.VIA_PARTITION_KEY -> b.viaPartitionKey(annotationString(key, value));
                default -> {
                    if (!BROKER_OWNED.contains(key)) {
                        try {
                            kept.put(key, AmqpValues.toEngine(value));
                        } catch (IllegalArgumentException ex) {
                            throw new AmqpDecodeException("malformed AMQP message: message annotation " + key + ": "
                                    + ex.getMessage(), ex);
                        }
                    }
                }
            }
        }
        b.annotations(kept);
    }

    /** A timestamp annotation as epoch milliseconds: a timestamp, or (as Python re-sends them) an integer. */
    private static Long timestampMillis(String key, Object value) throws AmqpDecodeException {
        if (value == null) {
            return null;
        }
        if (value instanceof Date d) {
            return d.getTime();
        }
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte
                || value instanceof UnsignedLong || value instanceof UnsignedInteger
                || value instanceof UnsignedShort || value instanceof UnsignedByte) {
            return ((Number) value).longValue();
        }
        throw new AmqpDecodeException("malformed AMQP message: message annotation " + key
                + " must be a timestamp, found " + AmqpValues.describe(value));
    }

    private static String annotationString(String key, Object value) throws AmqpDecodeException {
        if (value == null) {
            return null;
        }
        if (value instanceof String || value instanceof Symbol) {
            return value.toString();
        }
        throw new AmqpDecodeException("malformed AMQP message: message annotation " + key
                + " must be a string, found " + AmqpValues.describe(value));
    }

    private static void applyProperties(Message.Builder b, Properties p) throws AmqpDecodeException {
        if (p == null) {
            return;
        }
        try {
            b.messageId(AmqpValues.toEngine(p.getMessageId()));
            b.correlationId(AmqpValues.toEngine(p.getCorrelationId()));
        } catch (IllegalArgumentException e) {
            throw new AmqpDecodeException("malformed AMQP message: properties: " + e.getMessage(), e);
        }
        if (p.getUserId() != null) {
            b.userId(p.getUserId().getArray() == null ? new byte[0] : (byte[]) AmqpValues.toEngine(p.getUserId()));
        }
        b.to(p.getTo());
        b.subject(p.getSubject());
        b.replyTo(p.getReplyTo());
        b.contentType(p.getContentType() == null ? null : p.getContentType().toString());
        b.contentEncoding(p.getContentEncoding() == null ? null : p.getContentEncoding().toString());
        b.absoluteExpiryTimeMs(p.getAbsoluteExpiryTime() == null ? null : p.getAbsoluteExpiryTime().getTime());
        b.creationTimeMs(p.getCreationTime() == null ? null : p.getCreationTime().getTime());
        b.sessionId(p.getGroupId());
        b.groupSequence(p.getGroupSequence() == null ? null : p.getGroupSequence().longValue());
        b.replyToSessionId(p.getReplyToGroupId());
    }
}
