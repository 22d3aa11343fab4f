package io.buslane.amqp.codec;

import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Described;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.message.Unsigned;
import io.buslane.engine.partition.Transfer;

import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.DescribedType;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnknownDescribedType;

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
 *
 * <p>This class is the entry point; the work is done by package-private classes of this package:
 * {@code MessageDecoder} (with {@code SectionParser}), {@code MessageEncoder}, {@code LockTokens},
 * {@code AmqpValues} and {@code ProtonCodecs} (the per-thread proton-j codec).
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
    public static final String TRANSFER_HOP_COUNT = Transfer.HOP_COUNT;

    /** The priority of a message that states none (AMQP's default). */
    static final int DEFAULT_PRIORITY = 4;

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
        return MessageDecoder.decodeTransfer(payload, offset, length, messageFormat);
    }

    /**
     * Decodes one full encoded AMQP message (sections: header?, delivery-annotations?, message-annotations?,
     * properties?, application-properties?, body sections*, footer?). encodedSize is {@code length}.
     *
     * @throws AmqpDecodeException if the bytes are not a well-formed message
     */
    public static Message decodeMessage(byte[] encoded, int offset, int length) throws AmqpDecodeException {
        return MessageDecoder.decodeMessage(encoded, offset, length);
    }

    /**
     * The end of the data section at {@code start} when it is in the form every client sends (descriptor
     * {@code 0x00 0x53 0x75}, then a {@code vbin8} or {@code vbin32} that fits before {@code end}), else -1 (the
     * decoder then reads the section, whatever its form, and reports what is malformed).
     */
    static int dataSectionEnd(byte[] b, int start, int end) {
        return SectionParser.dataSectionEnd(b, start, end);
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
        return MessageEncoder.encode(r, purpose);
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
        MessageEncoder.encode(r, purpose, sink);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Lock tokens
    // ------------------------------------------------------------------------------------------------------------

    /**
     * The lock token carried by a 16-byte delivery tag in .NET {@code Guid.ToByteArray()} order (Data1, Data2 and
     * Data3 little-endian, the last 8 bytes as they are), or null for a tag of any other length.
     */
    public static UUID lockTokenFromDeliveryTag(byte[] tag) {
        return LockTokens.lockTokenFromDeliveryTag(tag);
    }

    /** The 16-byte delivery tag for a lock token, in .NET {@code Guid.ToByteArray()} order. */
    public static byte[] deliveryTag(UUID lockToken) {
        return LockTokens.deliveryTag(lockToken);
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
        return AmqpValues.toEngine(protonValue);
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
        return AmqpValues.toProton(engineValue);
    }

    /**
     * A string-keyed map of engine values (application properties): keys must be strings or symbols, values are
     * converted with {@link #toEngine}. A null map gives an empty map. Keeps the order.
     *
     * @throws IllegalArgumentException for a null or non-string key, or a value {@link #toEngine} rejects
     */
    public static Map<String, Object> toEngineStringMap(Map<?, ?> protonMap) {
        return AmqpValues.toEngineStringMap(protonMap);
    }

    /**
     * A symbol-keyed map of proton-j values (for annotations) from a string-keyed map of engine values, in order.
     * A null map gives an empty map.
     *
     * @throws IllegalArgumentException for a value {@link #toProton} rejects
     */
    public static Map<Symbol, Object> toProtonSymbolMap(Map<String, Object> engineMap) {
        return AmqpValues.toProtonSymbolMap(engineMap);
    }
}
