package io.buslane.amqp.codec;

import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Described;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.message.Unsigned;

import java.lang.reflect.Array;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Decimal128;
import org.apache.qpid.proton.amqp.Decimal32;
import org.apache.qpid.proton.amqp.Decimal64;
import org.apache.qpid.proton.amqp.DescribedType;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnknownDescribedType;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.UnsignedShort;
import org.apache.qpid.proton.amqp.messaging.AmqpSequence;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.DeliveryAnnotations;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.DescribedTypeConstructor;
import org.apache.qpid.proton.codec.EncoderImpl;
import org.apache.qpid.proton.codec.WritableBuffer;
import org.apache.qpid.proton.codec.messaging.AmqpSequenceType;
import org.apache.qpid.proton.codec.messaging.AmqpValueType;
import org.apache.qpid.proton.codec.messaging.ApplicationPropertiesType;
import org.apache.qpid.proton.codec.messaging.DataType;
import org.apache.qpid.proton.codec.messaging.DeliveryAnnotationsType;
import org.apache.qpid.proton.codec.messaging.FastPathAmqpSequenceType;
import org.apache.qpid.proton.codec.messaging.FastPathAmqpValueType;
import org.apache.qpid.proton.codec.messaging.FastPathApplicationPropertiesType;
import org.apache.qpid.proton.codec.messaging.FastPathDataType;
import org.apache.qpid.proton.codec.messaging.FastPathDeliveryAnnotationsType;
import org.apache.qpid.proton.codec.messaging.FastPathFooterType;
import org.apache.qpid.proton.codec.messaging.FastPathHeaderType;
import org.apache.qpid.proton.codec.messaging.FastPathMessageAnnotationsType;
import org.apache.qpid.proton.codec.messaging.FastPathPropertiesType;
import org.apache.qpid.proton.codec.messaging.FooterType;
import org.apache.qpid.proton.codec.messaging.HeaderType;
import org.apache.qpid.proton.codec.messaging.MessageAnnotationsType;
import org.apache.qpid.proton.codec.messaging.PropertiesType;

/**
 * Translates between AMQP 1.0 messages in the Service Bus dialect and the engine's {@link Message} /
 * {@link ReceivedMessage}. Stateless and thread-safe (each thread uses its own proton-j encoder/decoder).
 *
 * <h2>Decoding (client to broker)</h2>
 * Sections are read one at a time with proton-j's decoder, in the order the AMQP specification requires
 * (header?, delivery-annotations?, message-annotations?, properties?, application-properties?, body*, footer?);
 * anything else is an {@link AmqpDecodeException}. The properties the Service Bus model reasons about are
 * mapped onto the {@link Message} fields; everything after application-properties (all body sections and the
 * footer) is kept verbatim as the message body with {@link #BODY_AMQP_SECTIONS}, so multi-{@code data},
 * {@code amqp-value} and {@code amqp-sequence} bodies and footers round-trip byte for byte.
 *
 * <h2>Encoding (broker to client)</h2>
 * {@link #encode} writes header (always, with an explicit {@code delivery-count}), delivery-annotations (only the
 * {@code x-opt-lock-token} of a receive-by-sequence-number), message-annotations (the client's plus the broker's
 * with the exact types the SDKs cast to), properties, application-properties, then the body.
 *
 * <h2>Values</h2>
 * {@link #toEngine}/{@link #toProton} convert between proton-j values and the engine's neutral values. AMQP
 * arrays become {@link List}s on the way in (and go out as AMQP lists). AMQP decimals become engine
 * {@link Decimal}s holding their raw encoding, and go out with the same type and bits.
 */
public final class AmqpCodec {

    /** The {@code message-format} of a batch: each {@code data} section holds one complete encoded message. */
    public static final long BATCH_FORMAT = 0x80013700L;

    /**
     * Message.bodyFormat value: the body is the verbatim AMQP encoding of every section after
     * application-properties (body sections and footer).
     */
    public static final int BODY_AMQP_SECTIONS = Message.BODY_AMQP_SECTIONS;

    /** The deepest nesting of lists, maps and described values converted (as the engine's persistence allows). */
    public static final int MAX_NESTING_DEPTH = 256;

    public static final String SEQUENCE_NUMBER = "x-opt-sequence-number";
    public static final String ENQUEUE_SEQUENCE_NUMBER = "x-opt-enqueue-sequence-number";
    public static final String ENQUEUED_TIME = "x-opt-enqueued-time";
    public static final String LOCKED_UNTIL = "x-opt-locked-until";
    public static final String MESSAGE_STATE = "x-opt-message-state";
    public static final String DEADLETTER_SOURCE = "x-opt-deadletter-source";
    public static final String LOCK_TOKEN = "x-opt-lock-token";
    public static final String SCHEDULED_ENQUEUE_TIME = "x-opt-scheduled-enqueue-time";
    public static final String PARTITION_KEY = "x-opt-partition-key";
    public static final String VIA_PARTITION_KEY = "x-opt-via-partition-key";
    /** The engine's internal auto-forwarding hop count: never accepted from or shown to clients. */
    public static final String TRANSFER_HOP_COUNT = io.buslane.engine.partition.Transfer.HOP_COUNT;

    /** Annotations only the broker sets: dropped when a client sends them. */
    private static final Set<String> BROKER_OWNED = Set.of(SEQUENCE_NUMBER, ENQUEUE_SEQUENCE_NUMBER, ENQUEUED_TIME,
            LOCKED_UNTIL, MESSAGE_STATE, DEADLETTER_SOURCE, LOCK_TOKEN, TRANSFER_HOP_COUNT,
            Message.ENQUEUED_SEQUENCE_NUMBER, Message.WAS_SCHEDULED);

    /** Annotations written from broker values or message fields on output, never from Message.annotations. */
    private static final Set<String> WRITTEN_FROM_FIELDS = Set.of(SEQUENCE_NUMBER, ENQUEUE_SEQUENCE_NUMBER,
            ENQUEUED_TIME, LOCKED_UNTIL, MESSAGE_STATE, DEADLETTER_SOURCE, LOCK_TOKEN, SCHEDULED_ENQUEUE_TIME,
            PARTITION_KEY, VIA_PARTITION_KEY, TRANSFER_HOP_COUNT, Message.ENQUEUED_SEQUENCE_NUMBER,
            Message.WAS_SCHEDULED);

    private static final Symbol SYM_SEQUENCE_NUMBER = Symbol.valueOf(SEQUENCE_NUMBER);
    private static final Symbol SYM_ENQUEUED_TIME = Symbol.valueOf(ENQUEUED_TIME);
    private static final Symbol SYM_ENQUEUE_SEQUENCE_NUMBER = Symbol.valueOf(ENQUEUE_SEQUENCE_NUMBER);
    private static final Symbol SYM_LOCKED_UNTIL = Symbol.valueOf(LOCKED_UNTIL);
    private static final Symbol SYM_MESSAGE_STATE = Symbol.valueOf(MESSAGE_STATE);
    private static final Symbol SYM_DEADLETTER_SOURCE = Symbol.valueOf(DEADLETTER_SOURCE);
    private static final Symbol SYM_LOCK_TOKEN = Symbol.valueOf(LOCK_TOKEN);
    private static final Symbol SYM_SCHEDULED_ENQUEUE_TIME = Symbol.valueOf(SCHEDULED_ENQUEUE_TIME);
    private static final Symbol SYM_PARTITION_KEY = Symbol.valueOf(PARTITION_KEY);
    private static final Symbol SYM_VIA_PARTITION_KEY = Symbol.valueOf(VIA_PARTITION_KEY);

    private static final int DEFAULT_PRIORITY = 4;
    private static final long UINT_LIMIT = 1L << 32;

    private static final ThreadLocal<Codec> CODEC = ThreadLocal.withInitial(Codec::new);

    private AmqpCodec() {
    }

    /** What an encoded message is for; decides which broker annotations it carries. */
    public enum Purpose {
        /** A transfer on a receive link. */
        DELIVERY,
        /** An entry of a {@code com.microsoft:peek-message} response. */
        PEEK,
        /** An entry of a {@code com.microsoft:peek-message} response that asked for {@code omit-message-body}. */
        PEEK_WITHOUT_BODY,
        /** An entry of a {@code com.microsoft:receive-by-sequence-number} response. */
        RECEIVE_BY_SEQUENCE
    }

    // ------------------------------------------------------------------------------------------------------------
    // Decoding
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Decodes one complete transfer payload: format 0 gives one message; {@link #BATCH_FORMAT} gives every
     * {@code data} section of the envelope decoded as a full message, in order (the envelope's own sections are
     * not applied to the inner messages; an envelope without data sections gives an empty list). Each message's
     * encodedSize is the size of its own encoding.
     *
     * @throws AmqpDecodeException if the bytes are not a well-formed message (or batch), or the format is neither
     */
    public static List<Message> decodeTransfer(byte[] payload, int offset, int length, long messageFormat)
            throws AmqpDecodeException {
        Objects.requireNonNull(payload, "payload");
        Objects.checkFromIndexSize(offset, length, payload.length);
        if (messageFormat == 0L) {
            return List.of(decodeMessage(payload, offset, length));
        }
        if (messageFormat != BATCH_FORMAT) {
            throw new AmqpDecodeException("unsupported message-format 0x" + Long.toHexString(messageFormat)
                    + " (supported: 0 and the batch format 0x80013700)");
        }
        Sections envelope = parse(payload, offset, length, true, "batch envelope");
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

    /**
     * Decodes one full encoded AMQP message (sections: header?, delivery-annotations?, message-annotations?,
     * properties?, application-properties?, body sections*, footer?). encodedSize is {@code length}.
     *
     * @throws AmqpDecodeException if the bytes are not a well-formed message
     */
    public static Message decodeMessage(byte[] encoded, int offset, int length) throws AmqpDecodeException {
        Objects.requireNonNull(encoded, "encoded");
        Objects.checkFromIndexSize(offset, length, encoded.length);
        Sections s = parse(encoded, offset, length, false, "AMQP message");
        checkPropertyQuotas(s, offset, length);
        Message.Builder b = Message.builder();
        applyHeader(b, s.header);
        applyMessageAnnotations(b, s.messageAnnotations);
        applyProperties(b, s.properties);
        if (s.applicationProperties != null && s.applicationProperties.getValue() != null) {
            try {
                b.applicationProperties(toEngineStringMap(s.applicationProperties.getValue()));
            } catch (IllegalArgumentException e) {
                throw new AmqpDecodeException("malformed AMQP message: application-properties: " + e.getMessage(), e);
            }
        }
        int end = offset + length;
        byte[] body = verbatimBody(encoded, s, end);
        if (s.footer != null && hasStringKey(s.footer.getValue())) {
            body = withSymbolKeyedFooter(body, body.length - (s.footerEnd - s.footerStart), s.footer);
        }
        b.bodyFormat(BODY_AMQP_SECTIONS).body(body).encodedSize(length);
        return b.build();
    }

    /**
     * The body sections as sent, then the footer (wherever the sender put it: before the body, between body
     * sections or last), so that the message is handed back in the standard section order.
     */
    private static byte[] verbatimBody(byte[] encoded, Sections s, int end) {
        if (s.bodyStart < 0) {
            return new byte[0];
        }
        if (s.footer == null || s.footerEnd == end) {
            return Arrays.copyOfRange(encoded, s.bodyStart, end);
        }
        int footerLength = s.footerEnd - s.footerStart;
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(end - Math.min(s.bodyStart,
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
        Codec codec = codec();
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

    /** The sections of one message as read, plus where its body starts. */
    private static final class Sections {
        Header header;
        MessageAnnotations messageAnnotations;
        Properties properties;
        ApplicationProperties applicationProperties;
        /** Absolute offset of the first section after application-properties, or -1 when there is none. */
        int bodyStart = -1;
        int dataCount;
        int valueCount;
        int sequenceCount;
        /** The data sections' values (only when collecting, for batches). */
        List<Binary> data;
        /** The footer and its absolute offset, when the message has one. */
        Footer footer;
        int footerStart = -1;
        int footerEnd = -1;
        /** Encoded bytes of the application-properties section (0 when there is none). */
        int applicationPropertiesBytes;
    }

    /** Service Bus's quota on one property (key and value encoded), and on all of a message's properties. */
    static final int MAX_PROPERTY_BYTES = 32 * 1024;
    static final int MAX_HEADER_BYTES = 64 * 1024;

    /**
     * Refuses a message whose properties exceed the service's quotas: one application property over 32 KB, or all
     * sections before the body (header, annotations, properties, application-properties) over 64 KB.
     */
    private static void checkPropertyQuotas(Sections s, int offset, int length) throws AmqpDecodeException {
        int headerBytes = (s.bodyStart < 0 ? offset + length : s.bodyStart) - offset;
        if (s.footer != null && s.footerStart < s.bodyStart) {
            headerBytes -= s.footerEnd - s.footerStart; // a footer before the body is not a property
        }
        if (headerBytes > MAX_HEADER_BYTES) {
            throw AmqpDecodeException.overQuota("The message's properties take " + headerBytes + " bytes (system and "
                    + "application properties together); Service Bus allows at most " + MAX_HEADER_BYTES + ".");
        }
        if (s.applicationPropertiesBytes > MAX_PROPERTY_BYTES) { // else no single property can be over
            Codec codec = codec();
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

    // Section ranks: the order sections must appear in.
    private static final int RANK_HEADER = 1;
    private static final int RANK_DELIVERY_ANNOTATIONS = 2;
    private static final int RANK_MESSAGE_ANNOTATIONS = 3;
    private static final int RANK_PROPERTIES = 4;
    private static final int RANK_APPLICATION_PROPERTIES = 5;
    private static final int RANK_BODY = 6;
    private static final int RANK_FOOTER = 7;

    private static Sections parse(byte[] bytes, int offset, int length, boolean collectData, String what)
            throws AmqpDecodeException {
        if (length == 0) {
            throw new AmqpDecodeException("malformed " + what + ": no sections (empty payload)");
        }
        Codec codec = codec();
        DecoderImpl decoder = codec.decoder;
        Sections s = new Sections();
        if (collectData) {
            s.data = new ArrayList<>();
        }
        int end = offset + length;
        int start = offset;
        int rank = 0;
        try {
            decoder.setByteBuffer(ByteBuffer.wrap(bytes, offset, length));
            while (decoder.getBuffer().position() < end) {
                start = decoder.getBuffer().position();
                int dataEnd = collectData ? -1 : dataSectionEnd(bytes, start, end);
                Object section;
                if (dataEnd > 0) {
                    decoder.getBuffer().position(dataEnd); // a data section's bytes are opaque: not copied out
                    section = SKIPPED_DATA;
                } else {
                    section = decoder.readObject();
                }
                int sectionRank = rankOf(section);
                if (section instanceof Footer f) {
                    // a footer is taken wherever it comes (the JavaScript SDK's library writes it before the body,
                    // the service accepts that), once; it is kept after the body sections
                    if (s.footer != null) {
                        throw new AmqpDecodeException("malformed " + what + ": section footer at offset "
                                + (start - offset) + " is out of order or repeated");
                    }
                    s.footer = f;
                    s.footerStart = start;
                    s.footerEnd = decoder.getBuffer().position();
                    rank = Math.max(rank, RANK_APPLICATION_PROPERTIES); // only body sections may follow it
                    continue;
                }
                if (sectionRank == 0) {
                    throw new AmqpDecodeException("malformed " + what + ": expected a message section at offset "
                            + (start - offset) + " but found " + describe(section));
                }
                boolean repeatableBody = sectionRank == RANK_BODY && !(section instanceof AmqpValue);
                if (sectionRank < rank || (sectionRank == rank && !repeatableBody)) {
                    throw new AmqpDecodeException("malformed " + what + ": section " + sectionName(section)
                            + " at offset " + (start - offset) + " is out of order or repeated");
                }
                rank = sectionRank;
                if (sectionRank >= RANK_BODY && s.bodyStart < 0) {
                    s.bodyStart = start;
                }
                if (section instanceof Header h) {
                    s.header = h;
                } else if (section instanceof MessageAnnotations ma) {
                    s.messageAnnotations = ma;
                } else if (section instanceof Properties p) {
                    s.properties = p;
                } else if (section instanceof ApplicationProperties ap) {
                    s.applicationProperties = ap;
                    s.applicationPropertiesBytes = decoder.getBuffer().position() - start;
                } else if (section instanceof Data d) {
                    s.dataCount++;
                    if (collectData) {
                        s.data.add(d.getValue() == null ? new Binary(new byte[0]) : d.getValue());
                    }
                } else if (section instanceof AmqpValue) {
                    s.valueCount++;
                } else if (section instanceof AmqpSequence) {
                    s.sequenceCount++;
                }
                // delivery-annotations need no handling: dropped
                int kinds = (s.dataCount > 0 ? 1 : 0) + (s.valueCount > 0 ? 1 : 0) + (s.sequenceCount > 0 ? 1 : 0);
                if (kinds > 1) {
                    throw new AmqpDecodeException("malformed " + what + ": body section " + sectionName(section)
                            + " at offset " + (start - offset) + " mixes body kinds (the body is data sections, "
                            + "amqp-sequence sections or a single amqp-value)");
                }
            }
            if (decoder.getBuffer().position() != end) {
                throw new AmqpDecodeException("malformed " + what + ": the last section overruns the payload");
            }
            if (s.footer != null && s.bodyStart < 0) {
                s.bodyStart = s.footerStart; // no body section: the verbatim body is the footer alone
            }
            return s;
        } catch (AmqpDecodeException e) {
            throw e;
        } catch (RuntimeException | StackOverflowError e) {
            throw new AmqpDecodeException("malformed " + what + ": cannot decode the section at offset "
                    + (start - offset) + ": " + describe(e), e);
        } finally {
            decoder.setBuffer(null);
            codec.decodedBytes += length;
        }
    }

    /** Stands for a data section that {@link #parse} stepped over without decoding its binary. */
    private static final Data SKIPPED_DATA = new Data(null);

    /**
     * The end of the data section at {@code start} when it is in the form every client sends (descriptor
     * {@code 0x00 0x53 0x75}, then a {@code vbin8} or {@code vbin32} that fits before {@code end}), else -1 (the
     * decoder then reads the section, whatever its form, and reports what is malformed).
     */
    static int dataSectionEnd(byte[] b, int start, int end) {
        if (end - start < 5 || b[start] != 0x00 || b[start + 1] != 0x53 || b[start + 2] != 0x75) {
            return -1;
        }
        long sectionEnd;
        if (b[start + 3] == (byte) 0xa0) {
            sectionEnd = start + 5L + (b[start + 4] & 0xff);
        } else if (b[start + 3] == (byte) 0xb0 && end - start >= 8) {
            sectionEnd = start + 8L + (((b[start + 4] & 0xffL) << 24) | ((b[start + 5] & 0xff) << 16)
                    | ((b[start + 6] & 0xff) << 8) | (b[start + 7] & 0xff));
        } else {
            return -1;
        }
        return sectionEnd <= end ? (int) sectionEnd : -1;
    }

    private static int rankOf(Object section) {
        if (section instanceof Header) {
            return RANK_HEADER;
        } else if (section instanceof DeliveryAnnotations) {
            return RANK_DELIVERY_ANNOTATIONS;
        } else if (section instanceof MessageAnnotations) {
            return RANK_MESSAGE_ANNOTATIONS;
        } else if (section instanceof Properties) {
            return RANK_PROPERTIES;
        } else if (section instanceof ApplicationProperties) {
            return RANK_APPLICATION_PROPERTIES;
        } else if (section instanceof Data || section instanceof AmqpValue || section instanceof AmqpSequence) {
            return RANK_BODY;
        } else if (section instanceof Footer) {
            return RANK_FOOTER;
        }
        return 0;
    }

    private static String sectionName(Object section) {
        if (section instanceof Header) {
            return "header";
        } else if (section instanceof DeliveryAnnotations) {
            return "delivery-annotations";
        } else if (section instanceof MessageAnnotations) {
            return "message-annotations";
        } else if (section instanceof Properties) {
            return "properties";
        } else if (section instanceof ApplicationProperties) {
            return "application-properties";
        } else if (section instanceof Data) {
            return "data";
        } else if (section instanceof AmqpValue) {
            return "amqp-value";
        } else if (section instanceof AmqpSequence) {
            return "amqp-sequence";
        } else if (section instanceof Footer) {
            return "footer";
        }
        return describe(section);
    }

    private static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof DescribedType d) {
            return "a described value with descriptor " + d.getDescriptor();
        }
        return "a value of type " + value.getClass().getSimpleName();
    }

    private static String describe(Throwable e) {
        if (e instanceof StackOverflowError) {
            return "values nested too deeply";
        }
        if (e instanceof BufferUnderflowException || e instanceof IndexOutOfBoundsException) {
            return "truncated (an encoded value extends past the end of the message)";
        }
        String message = e.getMessage();
        String kind = e.getClass().getSimpleName();
        return message == null ? kind : kind + ": " + message;
    }

    private static void applyHeader(Message.Builder b, Header h) {
        if (h == null) {
            b.durable(false).priority(DEFAULT_PRIORITY);
            return;
        }
        b.durable(Boolean.TRUE.equals(h.getDurable()));
        b.priority(h.getPriority() == null ? DEFAULT_PRIORITY : (int) h.getPriority().longValue());
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
                case SCHEDULED_ENQUEUE_TIME -> b.scheduledEnqueueTimeMs(timestampMillis(key, value));
                case PARTITION_KEY -> b.partitionKey(annotationString(key, value));
                case VIA_PARTITION_KEY -> b.viaPartitionKey(annotationString(key, value));
                default -> {
                    if (!BROKER_OWNED.contains(key)) {
                        try {
                            kept.put(key, toEngine(value));
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
                + " must be a timestamp, found " + describe(value));
    }

    private static String annotationString(String key, Object value) throws AmqpDecodeException {
        if (value == null) {
            return null;
        }
        if (value instanceof String || value instanceof Symbol) {
            return value.toString();
        }
        throw new AmqpDecodeException("malformed AMQP message: message annotation " + key
                + " must be a string, found " + describe(value));
    }

    private static void applyProperties(Message.Builder b, Properties p) throws AmqpDecodeException {
        if (p == null) {
            return;
        }
        try {
            b.messageId(toEngine(p.getMessageId()));
            b.correlationId(toEngine(p.getCorrelationId()));
        } catch (IllegalArgumentException e) {
            throw new AmqpDecodeException("malformed AMQP message: properties: " + e.getMessage(), e);
        }
        if (p.getUserId() != null) {
            b.userId(p.getUserId().getArray() == null ? new byte[0] : (byte[]) toEngine(p.getUserId()));
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

    // ------------------------------------------------------------------------------------------------------------
    // Encoding
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Encodes a message as the broker hands it out: header (always, with an explicit delivery-count),
     * delivery-annotations (only for {@link Purpose#RECEIVE_BY_SEQUENCE} with a lock), message-annotations,
     * properties, application-properties, body.
     *
     * <p>The scheduled enqueue time written is the received message's, else the one the client asked for (so an
     * activated scheduled message keeps showing it). A body that is not {@link #BODY_AMQP_SECTIONS} is written as
     * one {@code data} section.
     *
     * @throws IllegalArgumentException if a property value is not one of the engine's neutral types
     */
    public static byte[] encode(ReceivedMessage r, Purpose purpose) {
        Objects.requireNonNull(r, "message");
        Objects.requireNonNull(purpose, "purpose");
        Message m = r.message();
        GrowableWritableBuffer out = new GrowableWritableBuffer(initialCapacity(m));
        encodeInto(r, purpose, codec(), out);
        return out.toByteArray();
    }

    /** Receives an encoded message: the bytes are valid only during the call (the sink copies what it keeps). */
    @FunctionalInterface
    public interface EncodedSink {
        void accept(byte[] bytes, int offset, int length);
    }

    /**
     * As {@link #encode(ReceivedMessage, Purpose)}, but encodes into this thread's reusable buffer and hands the
     * bytes to {@code sink}, which must copy what it keeps (proton-j's {@code Sender.send} does): a delivery then
     * allocates its encoding once, in proton-j, instead of three times (a growing buffer, its exact copy, proton-j's
     * copy). A call made from inside the sink gets a buffer of its own.
     */
    public static void encode(ReceivedMessage r, Purpose purpose, EncodedSink sink) {
        Objects.requireNonNull(r, "message");
        Objects.requireNonNull(purpose, "purpose");
        Objects.requireNonNull(sink, "sink");
        Codec codec = codec();
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

    private static void encodeInto(ReceivedMessage r, Purpose purpose, Codec codec, GrowableWritableBuffer out) {
        Message m = r.message();

        Header header = header(r, m);

        DeliveryAnnotations deliveryAnnotations = null;
        if (r.lockToken() != null && purpose == Purpose.RECEIVE_BY_SEQUENCE) {
            Map<Symbol, Object> da = new LinkedHashMap<>();
            da.put(SYM_LOCK_TOKEN, r.lockToken());
            deliveryAnnotations = new DeliveryAnnotations(da);
        }

        Map<Symbol, Object> ma = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : m.annotations().entrySet()) {
            if (e.getKey() != null && !WRITTEN_FROM_FIELDS.contains(e.getKey())) {
                ma.put(Symbol.valueOf(e.getKey()), toProton(e.getValue(), 0, codec));
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
        MessageState state = purpose == Purpose.DELIVERY || purpose == Purpose.RECEIVE_BY_SEQUENCE
                ? r.reportedState() : r.state() == null ? MessageState.ACTIVE : r.state();
        if (purpose != Purpose.DELIVERY || state != MessageState.ACTIVE) {
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
                ap.put(e.getKey(), toProton(e.getValue(), 0, codec));
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
            if (purpose == Purpose.PEEK_WITHOUT_BODY) {
                return; // no body section: the peeker asked for the rest only
            }
            if (m.bodyFormat() == BODY_AMQP_SECTIONS) {
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
        if (m.priority() != DEFAULT_PRIORITY) {
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

    private static Properties properties(ReceivedMessage r, Message m, Codec codec) {
        Properties p = new Properties();
        boolean any = false;
        if (m.messageId() != null) {
            p.setMessageId(toProton(m.messageId(), 0, codec));
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
            p.setCorrelationId(toProton(m.correlationId(), 0, codec));
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

    // ------------------------------------------------------------------------------------------------------------
    // Lock tokens
    // ------------------------------------------------------------------------------------------------------------

    /**
     * The lock token carried by a 16-byte delivery tag in .NET {@code Guid.ToByteArray()} order (Data1, Data2 and
     * Data3 little-endian, the last 8 bytes as they are), or null for a tag of any other length.
     */
    public static UUID lockTokenFromDeliveryTag(byte[] tag) {
        if (tag == null || tag.length != 16) {
            return null;
        }
        byte[] b = dotNetOrder(tag);
        ByteBuffer bb = ByteBuffer.wrap(b);
        return new UUID(bb.getLong(), bb.getLong());
    }

    /** The 16-byte delivery tag for a lock token, in .NET {@code Guid.ToByteArray()} order. */
    public static byte[] deliveryTag(UUID lockToken) {
        Objects.requireNonNull(lockToken, "lockToken");
        byte[] b = ByteBuffer.allocate(16)
                .putLong(lockToken.getMostSignificantBits())
                .putLong(lockToken.getLeastSignificantBits())
                .array();
        return dotNetOrder(b);
    }

    /** Swaps between RFC 4122 and .NET GUID byte order (the permutation is its own inverse). */
    private static byte[] dotNetOrder(byte[] b) {
        return new byte[] {
            b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6],
            b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
        };
    }

    // ------------------------------------------------------------------------------------------------------------
    // Values
    // ------------------------------------------------------------------------------------------------------------

    /**
     * A proton-j value as an engine value: proton {@link Symbol} to engine Symbol, UnsignedByte/Short/Integer/Long
     * to {@link Unsigned} of width 1/2/4/8, {@link DescribedType} to {@link Described} (descriptor and value
     * converted), {@link Date} to {@link Instant}, {@link Binary} to a {@code byte[]} copy, lists and maps
     * (keys too) converted element-wise, Java arrays (AMQP arrays, whether {@code Object[]} or primitive) to
     * {@link List}, {@code decimal32/64/128} to {@link Decimal} (the raw bits); null, booleans, numbers,
     * {@link Character}, {@link String} and {@link UUID} as they are. Values that are already engine values pass
     * through.
     *
     * @throws IllegalArgumentException for any other type, or nesting deeper than {@value #MAX_NESTING_DEPTH}
     */
    public static Object toEngine(Object protonValue) {
        return toEngine(protonValue, 0);
    }

    private static Object toEngine(Object v, int depth) {
        if (v == null || v instanceof String || v instanceof Long || v instanceof Integer || v instanceof Boolean
                || v instanceof Double || v instanceof Float || v instanceof Short || v instanceof Byte
                || v instanceof Character || v instanceof UUID) {
            return v;
        }
        if (v instanceof Symbol s) {
            return new io.buslane.engine.message.Symbol(s.toString());
        }
        if (v instanceof Binary b) {
            return b.getArray() == null ? new byte[0]
                    : Arrays.copyOfRange(b.getArray(), b.getArrayOffset(), b.getArrayOffset() + b.getLength());
        }
        if (v instanceof Date d) {
            return Instant.ofEpochMilli(d.getTime());
        }
        if (v instanceof UnsignedByte u) {
            return new Unsigned(u.longValue(), 1);
        }
        if (v instanceof UnsignedShort u) {
            return new Unsigned(u.longValue(), 2);
        }
        if (v instanceof UnsignedInteger u) {
            return new Unsigned(u.longValue(), 4);
        }
        if (v instanceof UnsignedLong u) {
            return new Unsigned(u.longValue(), 8);
        }
        if (v instanceof Decimal32 d) {
            return Decimal.decimal32(d.getBits());
        }
        if (v instanceof Decimal64 d) {
            return Decimal.decimal64(d.getBits());
        }
        if (v instanceof Decimal128 d) {
            return Decimal.decimal128(d.getMostSignificantBits(), d.getLeastSignificantBits());
        }
        if (v instanceof io.buslane.engine.message.Symbol || v instanceof Unsigned || v instanceof Instant
                || v instanceof Described || v instanceof Decimal) {
            return v;
        }
        if (v instanceof DescribedType d) {
            checkDepth(depth);
            return new Described(toEngine(d.getDescriptor(), depth + 1), toEngine(d.getDescribed(), depth + 1));
        }
        if (v instanceof List<?> list) {
            checkDepth(depth);
            List<Object> out = new ArrayList<>(list.size());
            for (Object o : list) {
                out.add(toEngine(o, depth + 1));
            }
            return out;
        }
        if (v instanceof Map<?, ?> map) {
            checkDepth(depth);
            Map<Object, Object> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                out.put(toEngine(e.getKey(), depth + 1), toEngine(e.getValue(), depth + 1));
            }
            return out;
        }
        if (v.getClass().isArray()) {
            checkDepth(depth);
            int n = Array.getLength(v);
            List<Object> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(toEngine(Array.get(v, i), depth + 1));
            }
            return out;
        }
        throw new IllegalArgumentException("unsupported AMQP value type " + v.getClass().getName());
    }

    /**
     * An engine value as a proton-j value (the inverse of {@link #toEngine}): engine Symbol to proton
     * {@link Symbol}, {@link Unsigned} to UnsignedByte/Short/Integer/Long by width, {@link Decimal} to
     * Decimal32/64/128 with the same bits, {@link Described} to a proton
     * {@link DescribedType} ({@link UnknownDescribedType}), {@link Instant} to {@link Date} (millisecond
     * timestamp), {@code byte[]} to {@link Binary}, lists and maps (keys too) converted element-wise; null,
     * booleans, numbers, {@link Character}, {@link String} and {@link UUID} as they are. proton-j values pass
     * through.
     *
     * @throws IllegalArgumentException for any other type, or nesting deeper than {@value #MAX_NESTING_DEPTH}
     */
    public static Object toProton(Object engineValue) {
        return toProton(engineValue, 0, null);
    }

    private static Object toProton(Object v, int depth, Codec codec) {
        if (v == null || v instanceof String || v instanceof Long || v instanceof Integer || v instanceof Boolean
                || v instanceof Double || v instanceof Float || v instanceof Short || v instanceof Byte
                || v instanceof Character || v instanceof UUID) {
            return v;
        }
        if (v instanceof io.buslane.engine.message.Symbol s) {
            return Symbol.valueOf(s.value());
        }
        if (v instanceof Unsigned u) {
            return switch (u.width()) {
                case 1 -> UnsignedByte.valueOf((byte) u.bits());
                case 2 -> UnsignedShort.valueOf((short) u.bits());
                case 4 -> UnsignedInteger.valueOf((int) u.bits());
                default -> UnsignedLong.valueOf(u.bits());
            };
        }
        if (v instanceof Instant t) {
            return new Date(t.toEpochMilli());
        }
        if (v instanceof byte[] bytes) {
            return new Binary(bytes);
        }
        if (v instanceof Decimal d) {
            return switch (d.width()) {
                case 4 -> new Decimal32(d.bits32());
                case 8 -> new Decimal64(d.low());
                default -> new Decimal128(d.high(), d.low());
            };
        }
        if (v instanceof Described d) {
            checkDepth(depth);
            if (codec != null) {
                codec.describedEncoded++;
            }
            return new UnknownDescribedType(toProton(d.descriptor(), depth + 1, codec),
                    toProton(d.value(), depth + 1, codec));
        }
        if (v instanceof List<?> list) {
            checkDepth(depth);
            List<Object> out = new ArrayList<>(list.size());
            for (Object o : list) {
                out.add(toProton(o, depth + 1, codec));
            }
            return out;
        }
        if (v instanceof Map<?, ?> map) {
            checkDepth(depth);
            Map<Object, Object> out = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                out.put(toProton(e.getKey(), depth + 1, codec), toProton(e.getValue(), depth + 1, codec));
            }
            return out;
        }
        if (v instanceof Symbol || v instanceof Binary || v instanceof Date || v instanceof UnsignedByte
                || v instanceof UnsignedShort || v instanceof UnsignedInteger || v instanceof UnsignedLong
                || v instanceof Decimal32 || v instanceof Decimal64 || v instanceof Decimal128
                || v instanceof DescribedType) {
            return v;
        }
        throw new IllegalArgumentException("unsupported engine value type " + v.getClass().getName());
    }

    /**
     * A string-keyed map of engine values (application properties): keys must be strings or symbols, values are
     * converted with {@link #toEngine}. A null map gives an empty map. Keeps the order.
     *
     * @throws IllegalArgumentException for a null or non-string key, or a value {@link #toEngine} rejects
     */
    public static Map<String, Object> toEngineStringMap(Map<?, ?> protonMap) {
        Map<String, Object> out = new LinkedHashMap<>();
        if (protonMap == null) {
            return out;
        }
        for (Map.Entry<?, ?> e : protonMap.entrySet()) {
            Object k = e.getKey();
            if (!(k instanceof String) && !(k instanceof Symbol)) {
                throw new IllegalArgumentException("keys must be strings, found " + describe(k));
            }
            String key = k.toString();
            try {
                out.put(key, toEngine(e.getValue()));
            } catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException(key + ": " + ex.getMessage(), ex);
            }
        }
        return out;
    }

    /**
     * A symbol-keyed map of proton-j values (for annotations) from a string-keyed map of engine values, in order.
     * A null map gives an empty map.
     *
     * @throws IllegalArgumentException for a value {@link #toProton} rejects
     */
    public static Map<Symbol, Object> toProtonSymbolMap(Map<String, Object> engineMap) {
        Map<Symbol, Object> out = new LinkedHashMap<>();
        if (engineMap == null) {
            return out;
        }
        for (Map.Entry<String, Object> e : engineMap.entrySet()) {
            out.put(Symbol.valueOf(Objects.requireNonNull(e.getKey(), "annotation key")), toProton(e.getValue()));
        }
        return out;
    }

    private static void checkDepth(int depth) {
        if (depth >= MAX_NESTING_DEPTH) {
            throw new IllegalArgumentException("values nested deeper than " + MAX_NESTING_DEPTH + " levels");
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // Per-thread proton-j codec
    // ------------------------------------------------------------------------------------------------------------

    private static Codec codec() {
        Codec c = CODEC.get();
        if (c.worn()) {
            c = new Codec();
            CODEC.set(c);
        }
        return c;
    }

    /**
     * One thread's proton-j decoder and encoder, registered with the message section types only (so values
     * carrying other AMQP-defined descriptors decode as plain described values).
     *
     * <p>proton-j's codec caches per instance every symbol it decodes and every unknown descriptor it meets (the
     * decoder and the encoder alike) and never forgets them; a client could grow those caches without bound. The
     * pair is therefore replaced after it has decoded {@value #MAX_DECODED_BYTES} bytes, met
     * {@value #MAX_UNKNOWN_DESCRIPTORS} unknown descriptors or encoded {@value #MAX_DESCRIBED_ENCODED} described
     * values (proton-j's process-wide {@link Symbol} intern table is beyond reach).
     */
    private static final class Codec {
        static final long MAX_DECODED_BYTES = 1L << 20; // a fresh pair costs ~10 µs
        static final int MAX_UNKNOWN_DESCRIPTORS = 1024;
        static final int MAX_DESCRIBED_ENCODED = 8192;

        /** A scratch buffer that grew beyond this is dropped after use rather than kept by the thread. */
        static final int MAX_KEPT_SCRATCH_BYTES = 256 * 1024;

        final CountingDecoder decoder = new CountingDecoder();
        final EncoderImpl encoder = new EncoderImpl(decoder);
        long decodedBytes;
        int describedEncoded;
        /** The thread's reusable encoding buffer; null while lent out (or before first use). */
        private GrowableWritableBuffer scratch;

        GrowableWritableBuffer scratch() {
            GrowableWritableBuffer b = scratch;
            scratch = null;
            if (b == null) {
                b = new GrowableWritableBuffer(4096);
            }
            b.reset();
            return b;
        }

        void releaseScratch(GrowableWritableBuffer b) {
            if (b.capacity() <= MAX_KEPT_SCRATCH_BYTES) {
                scratch = b;
            }
        }

        Codec() {
            HeaderType.register(decoder, encoder);
            PropertiesType.register(decoder, encoder);
            DeliveryAnnotationsType.register(decoder, encoder);
            MessageAnnotationsType.register(decoder, encoder);
            ApplicationPropertiesType.register(decoder, encoder);
            DataType.register(decoder, encoder);
            AmqpSequenceType.register(decoder, encoder);
            AmqpValueType.register(decoder, encoder);
            FooterType.register(decoder, encoder);
            FastPathHeaderType.register(decoder, encoder);
            FastPathPropertiesType.register(decoder, encoder);
            FastPathDeliveryAnnotationsType.register(decoder, encoder);
            FastPathMessageAnnotationsType.register(decoder, encoder);
            FastPathApplicationPropertiesType.register(decoder, encoder);
            FastPathDataType.register(decoder, encoder);
            FastPathAmqpSequenceType.register(decoder, encoder);
            FastPathAmqpValueType.register(decoder, encoder);
            FastPathFooterType.register(decoder, encoder);
            decoder.armed = true;
        }

        boolean worn() {
            return decodedBytes > MAX_DECODED_BYTES
                    || decoder.unknownDescriptors > MAX_UNKNOWN_DESCRIPTORS
                    || describedEncoded > MAX_DESCRIBED_ENCODED;
        }
    }

    /** A decoder that counts the descriptors it registers on the fly (unknown ones met while decoding). */
    private static final class CountingDecoder extends DecoderImpl {
        boolean armed;
        int unknownDescriptors;

        @Override
        @SuppressWarnings("rawtypes")
        public void register(Object descriptor, DescribedTypeConstructor dtc) {
            super.register(descriptor, dtc);
            if (armed) {
                unknownDescriptors++;
            }
        }
    }
}
