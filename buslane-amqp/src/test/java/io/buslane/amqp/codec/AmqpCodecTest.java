package io.buslane.amqp.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.buslane.amqp.codec.AmqpCodec.Purpose;
import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Described;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.message.Unsigned;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.qpid.proton.Proton;
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
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.EncoderImpl;
import org.apache.qpid.proton.codec.WritableBuffer;
import org.junit.jupiter.api.Test;

class AmqpCodecTest {

    private static final long ENQUEUED = 1_700_000_000_000L;
    private static final Symbol DATETIME_OFFSET = Symbol.valueOf("com.microsoft:datetime-offset");

    // ---------------------------------------------------------------------------------------------------------
    // helpers
    // ---------------------------------------------------------------------------------------------------------

    private static byte[] encodeProton(org.apache.qpid.proton.message.Message m) {
        byte[] buf = new byte[1 << 20];
        int n = m.encode(buf, 0, buf.length);
        return Arrays.copyOf(buf, n);
    }

    private static org.apache.qpid.proton.message.Message decodeProton(byte[] bytes) {
        org.apache.qpid.proton.message.Message m = Proton.message();
        m.decode(bytes, 0, bytes.length);
        return m;
    }

    /** Encodes proton sections back to back (what MessageImpl cannot do for several body sections). */
    private static byte[] encodeSections(Object... sections) {
        DecoderImpl decoder = new DecoderImpl();
        EncoderImpl encoder = new EncoderImpl(decoder);
        AMQPDefinedTypes.registerAllTypes(decoder, encoder);
        ByteBuffer buf = ByteBuffer.allocate(1 << 20);
        encoder.setByteBuffer(buf);
        for (Object s : sections) {
            encoder.writeObject(s);
        }
        encoder.setByteBuffer((WritableBuffer) null);
        return Arrays.copyOf(buf.array(), buf.position());
    }

    private static Message decode(byte[] bytes) throws AmqpDecodeException {
        return AmqpCodec.decodeMessage(bytes, 0, bytes.length);
    }

    private static ReceivedMessage received(Message m, int deliveryCount, UUID lockToken, MessageState state,
                                            long expiresAt) {
        return new ReceivedMessage(m, 42L, ENQUEUED, deliveryCount, lockToken,
                lockToken == null ? 0 : ENQUEUED + 30_000, state, expiresAt, null, null, 0);
    }

    private static Map<Symbol, Object> annotations(org.apache.qpid.proton.message.Message m) {
        return m.getMessageAnnotations().getValue();
    }

    private static org.apache.qpid.proton.message.Message simpleProtonMessage(String id, String body) {
        org.apache.qpid.proton.message.Message m = Proton.message();
        m.setMessageId(id);
        m.setBody(new Data(new Binary(body.getBytes())));
        return m;
    }

    // ---------------------------------------------------------------------------------------------------------
    // properties and header
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void everyPropertyRoundTripsWithItsAmqpType() throws Exception {
        org.apache.qpid.proton.message.Message pm = messageWithEveryProperty();
        byte[] in = encodeProton(pm);
        Message m = decode(in);

        assertThat(m.durable()).isTrue();
        assertThat(m.priority()).isEqualTo(7);
        assertThat(m.timeToLiveMs()).isEqualTo(60_000L);
        assertThat(m.messageId()).isEqualTo("msg-1");
        assertThat(m.userId()).containsExactly(1, 2, 3);
        assertThat(m.to()).isEqualTo("queue-a");
        assertThat(m.subject()).isEqualTo("subject-a");
        assertThat(m.replyTo()).isEqualTo("reply-queue");
        assertThat(m.correlationId()).isEqualTo("corr-1");
        assertThat(m.contentType()).isEqualTo("application/json");
        assertThat(m.contentEncoding()).isEqualTo("gzip");
        assertThat(m.absoluteExpiryTimeMs()).isEqualTo(ENQUEUED + 99);
        assertThat(m.creationTimeMs()).isEqualTo(ENQUEUED - 1000);
        assertThat(m.sessionId()).isEqualTo("session-1");
        assertThat(m.groupSequence()).isEqualTo(4_000_000_000L);
        assertThat(m.replyToSessionId()).isEqualTo("reply-session");
        assertThat(m.scheduledEnqueueTimeMs()).isEqualTo(ENQUEUED + 5000);
        assertThat(m.partitionKey()).isEqualTo("pk");
        assertThat(m.viaPartitionKey()).isEqualTo("vpk");
        assertThat(m.annotations()).containsOnlyKeys("x-custom");
        assertThat(m.annotations().get("x-custom")).isEqualTo(new io.buslane.engine.message.Symbol("kept"));
        assertThat(m.encodedSize()).isEqualTo(in.length);
        assertThat(m.bodyFormat()).isEqualTo(AmqpCodec.BODY_AMQP_SECTIONS);

        Map<String, Object> props = m.applicationProperties();
        assertThat(props.get("string")).isEqualTo("s");
        assertThat(props.get("bool")).isEqualTo(true);
        assertThat(props.get("byte")).isEqualTo((byte) -3);
        assertThat(props.get("short")).isEqualTo((short) -300);
        assertThat(props.get("int")).isEqualTo(-70000);
        assertThat(props.get("long")).isEqualTo(Long.MIN_VALUE);
        assertThat(props.get("float")).isEqualTo(1.5f);
        assertThat(props.get("double")).isEqualTo(2.25d);
        assertThat(props.get("char")).isEqualTo('x');
        assertThat(props.get("uuid")).isEqualTo(new UUID(1, 2));
        assertThat((byte[]) props.get("binary")).containsExactly(9, 8);
        assertThat(props.get("timestamp")).isEqualTo(Instant.ofEpochMilli(ENQUEUED));
        assertThat(props.get("symbol")).isEqualTo(new io.buslane.engine.message.Symbol("sym"));
        assertThat(props.get("ubyte")).isEqualTo(new Unsigned(0xFF, 1));
        assertThat(props.get("ushort")).isEqualTo(new Unsigned(0xFFFF, 2));
        assertThat(props.get("uint")).isEqualTo(new Unsigned(0xFFFFFFFFL, 4));
        assertThat(props.get("ulong")).isEqualTo(new Unsigned(-1L, 8));
        assertThat(props).containsEntry("null", null);
        assertThat(props.get("list")).isEqualTo(List.of(1, "two"));
        assertThat(props.get("map")).isEqualTo(Map.of("k", 3L));
        assertThat(props.get("offset")).isEqualTo(new Described(
                new io.buslane.engine.message.Symbol("com.microsoft:datetime-offset"), 638_000_000_000_000_000L));

        long expiresAt = ENQUEUED + 60_000;
        byte[] out = AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, expiresAt), Purpose.DELIVERY);
        org.apache.qpid.proton.message.Message back = decodeProton(out);

        assertThat(back.getHeader().getDurable()).isTrue();
        assertThat(back.getHeader().getPriority()).isEqualTo(UnsignedByte.valueOf((byte) 7));
        assertThat(back.getHeader().getTtl()).isEqualTo(UnsignedInteger.valueOf(60_000));
        assertThat(back.getHeader().getDeliveryCount()).isEqualTo(UnsignedInteger.ZERO);
        assertThat(back.getHeader().getFirstAcquirer()).as("the sender's, handed back (#32 cause 15)").isTrue();
        Properties bp = back.getProperties();
        assertThat(bp.getMessageId()).isEqualTo("msg-1");
        assertThat(bp.getUserId()).isEqualTo(new Binary(new byte[] {1, 2, 3}));
        assertThat(bp.getTo()).isEqualTo("queue-a");
        assertThat(bp.getSubject()).isEqualTo("subject-a");
        assertThat(bp.getReplyTo()).isEqualTo("reply-queue");
        assertThat(bp.getCorrelationId()).isEqualTo("corr-1");
        assertThat((Object) bp.getContentType()).isEqualTo(Symbol.valueOf("application/json"));
        assertThat((Object) bp.getContentEncoding()).isEqualTo(Symbol.valueOf("gzip"));
        // the bare message as sent: the sender's absolute-expiry-time, not the broker's expiry (#32 cause 7)
        assertThat(bp.getAbsoluteExpiryTime()).isEqualTo(new Date(ENQUEUED + 99));
        assertThat(bp.getCreationTime()).isEqualTo(new Date(ENQUEUED - 1000));
        assertThat(bp.getGroupId()).isEqualTo("session-1");
        assertThat(bp.getGroupSequence()).isEqualTo(UnsignedInteger.valueOf(4_000_000_000L));
        assertThat(bp.getReplyToGroupId()).isEqualTo("reply-session");
        assertThat(back.getDeliveryAnnotations()).isNull();

        Map<Symbol, Object> bma = annotations(back);
        assertThat(bma.get(Symbol.valueOf("x-custom"))).isEqualTo(Symbol.valueOf("kept"));
        assertThat(bma.get(Symbol.valueOf("x-opt-partition-key"))).isEqualTo("pk");
        assertThat(bma.get(Symbol.valueOf("x-opt-via-partition-key"))).isEqualTo("vpk");
        assertThat(bma.get(Symbol.valueOf("x-opt-scheduled-enqueue-time"))).isEqualTo(new Date(ENQUEUED + 5000));
        assertThat(bma.get(Symbol.valueOf("x-opt-sequence-number"))).isEqualTo(42L);
        assertThat(bma).doesNotContainKeys(Symbol.valueOf("x-opt-deadletter-source"),
                Symbol.valueOf("x-opt-lock-token"), Symbol.valueOf("x-opt-enqueue-sequence-number"),
                Symbol.valueOf("x-opt-message-state"), Symbol.valueOf("x-opt-locked-until"));

        Map<?, ?> bap = back.getApplicationProperties().getValue();
        for (Map.Entry<String, Object> e : pm.getApplicationProperties().getValue().entrySet()) {
            Object expected = e.getValue();
            Object actual = bap.get(e.getKey());
            if (expected instanceof DescribedType d) {
                assertThat(actual).isInstanceOf(DescribedType.class);
                assertThat(((DescribedType) actual).getDescriptor()).isEqualTo(d.getDescriptor());
                assertThat(((DescribedType) actual).getDescribed()).isEqualTo(d.getDescribed());
            } else {
                assertThat(actual).as(e.getKey()).isEqualTo(expected);
                if (expected != null && !(expected instanceof List) && !(expected instanceof Map)) {
                    assertThat(actual).as(e.getKey()).isInstanceOf(expected.getClass());
                }
            }
        }
        assertThat(dataValue(back)).isEqualTo(new Binary("hello".getBytes()));
    }


    /** A proton-j message with every header, property, annotation and application property type set. */
    private static org.apache.qpid.proton.message.Message messageWithEveryProperty() {
        org.apache.qpid.proton.message.Message pm = Proton.message();
        Header h = new Header();
        h.setDurable(true);
        h.setPriority(UnsignedByte.valueOf((byte) 7));
        h.setTtl(UnsignedInteger.valueOf(60_000));
        h.setDeliveryCount(UnsignedInteger.valueOf(9)); // ignored on input
        h.setFirstAcquirer(true);
        pm.setHeader(h);
        Properties p = new Properties();
        p.setMessageId("msg-1");
        p.setUserId(new Binary(new byte[] {1, 2, 3}));
        p.setTo("queue-a");
        p.setSubject("subject-a");
        p.setReplyTo("reply-queue");
        p.setCorrelationId("corr-1");
        p.setContentType(Symbol.valueOf("application/json"));
        p.setContentEncoding(Symbol.valueOf("gzip"));
        p.setAbsoluteExpiryTime(new Date(ENQUEUED + 99));
        p.setCreationTime(new Date(ENQUEUED - 1000));
        p.setGroupId("session-1");
        p.setGroupSequence(UnsignedInteger.valueOf(4_000_000_000L));
        p.setReplyToGroupId("reply-session");
        pm.setProperties(p);
        Map<Symbol, Object> ma = new LinkedHashMap<>();
        ma.put(Symbol.valueOf("x-opt-scheduled-enqueue-time"), new Date(ENQUEUED + 5000));
        ma.put(Symbol.valueOf("x-opt-partition-key"), "pk");
        ma.put(Symbol.valueOf("x-opt-via-partition-key"), "vpk");
        ma.put(Symbol.valueOf("x-opt-sequence-number"), 777L);
        ma.put(Symbol.valueOf("x-opt-enqueued-time"), 123L);
        ma.put(Symbol.valueOf("x-opt-locked-until"), 456L);
        ma.put(Symbol.valueOf("x-opt-lock-token"), UUID.randomUUID());
        ma.put(Symbol.valueOf("x-opt-message-state"), 1);
        ma.put(Symbol.valueOf("x-opt-deadletter-source"), "elsewhere");
        ma.put(Symbol.valueOf("x-opt-enqueue-sequence-number"), 5L);
        ma.put(Symbol.valueOf("x-custom"), Symbol.valueOf("kept"));
        pm.setMessageAnnotations(new MessageAnnotations(ma));
        Map<Symbol, Object> da = new HashMap<>();
        da.put(Symbol.valueOf("x-opt-whatever"), "dropped");
        pm.setDeliveryAnnotations(new DeliveryAnnotations(da));
        Map<String, Object> ap = new LinkedHashMap<>();
        ap.put("string", "s");
        ap.put("bool", true);
        ap.put("byte", (byte) -3);
        ap.put("short", (short) -300);
        ap.put("int", -70000);
        ap.put("long", Long.MIN_VALUE);
        ap.put("float", 1.5f);
        ap.put("double", 2.25d);
        ap.put("char", 'x');
        ap.put("uuid", new UUID(1, 2));
        ap.put("binary", new Binary(new byte[] {9, 8}));
        ap.put("timestamp", new Date(ENQUEUED));
        ap.put("symbol", Symbol.valueOf("sym"));
        ap.put("ubyte", UnsignedByte.valueOf((byte) 0xFF));
        ap.put("ushort", UnsignedShort.valueOf((short) 0xFFFF));
        ap.put("uint", UnsignedInteger.valueOf(0xFFFFFFFF));
        ap.put("ulong", UnsignedLong.valueOf(-1L));
        ap.put("null", null);
        ap.put("list", List.of(1, "two"));
        ap.put("map", Map.of("k", 3L));
        ap.put("offset", new UnknownDescribedType(DATETIME_OFFSET, 638_000_000_000_000_000L));
        pm.setApplicationProperties(new ApplicationProperties(ap));
        pm.setBody(new Data(new Binary("hello".getBytes())));

        return pm;
    }

    @Test
    void typedMessageAndCorrelationIdsKeepTheirTypes() throws Exception {
        Object[][] cases = {
            {UUID.fromString("01020304-0506-0708-090a-0b0c0d0e0f10"),
                UUID.fromString("01020304-0506-0708-090a-0b0c0d0e0f10")},
            {UnsignedLong.valueOf(-2L), new Unsigned(-2L, 8)},
            {new Binary(new byte[] {5, 6}), new byte[] {5, 6}},
            {"plain", "plain"},
        };
        for (Object[] c : cases) {
            org.apache.qpid.proton.message.Message pm = Proton.message();
            pm.setMessageId(c[0]);
            pm.setCorrelationId(c[0]);
            pm.setBody(new AmqpValue("x"));
            Message m = decode(encodeProton(pm));
            assertThat(m.messageId()).isEqualTo(c[1]);
            assertThat(m.correlationId()).isEqualTo(c[1]);
            org.apache.qpid.proton.message.Message back = decodeProton(
                    AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.PEEK));
            assertThat(back.getMessageId()).isEqualTo(c[0]);
            assertThat(back.getCorrelationId()).isEqualTo(c[0]);
        }
    }

    @Test
    void headerDefaultsAndTtl() throws Exception {
        org.apache.qpid.proton.message.Message pm = simpleProtonMessage("a", "b");
        Message m = decode(encodeProton(pm));
        assertThat(m.durable()).isFalse();
        assertThat(m.priority()).isEqualTo(4);
        assertThat(m.timeToLiveMs()).isNull();
        assertThat(m.scheduledEnqueueTimeMs()).isNull();

        Header zeroTtl = new Header();
        zeroTtl.setTtl(UnsignedInteger.ZERO);
        pm.setHeader(zeroTtl);
        assertThat(decode(encodeProton(pm)).timeToLiveMs()).isNull();

        // never expires: no ttl, no absolute-expiry-time; priority 4 not written; delivery-count written
        org.apache.qpid.proton.message.Message back = decodeProton(
                AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY));
        assertThat(back.getHeader().getTtl()).isNull();
        assertThat(back.getHeader().getPriority()).isNull();
        assertThat(back.getHeader().getDurable()).isNull();
        assertThat(back.getHeader().getDeliveryCount()).isEqualTo(UnsignedInteger.ZERO);
        assertThat(back.getProperties().getAbsoluteExpiryTime()).isNull();

        // effective ttl too large for a uint: omitted, absolute-expiry-time still written
        long far = ENQUEUED + (1L << 33);
        back = decodeProton(AmqpCodec.encode(received(m, 3, null, MessageState.ACTIVE, far), Purpose.DELIVERY));
        assertThat(back.getHeader().getTtl()).isNull();
        assertThat(back.getHeader().getDeliveryCount()).isEqualTo(UnsignedInteger.valueOf(3));
        assertThat(back.getProperties().getAbsoluteExpiryTime()).isEqualTo(new Date(far));
    }

    @Test
    void deliveryCountZeroIsOnTheWire() {
        Message m = Message.builder().body("x".getBytes()).build();
        byte[] out = AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY);
        // header: 0x00 0x53 0x70, list8 ... with 5 elements, the last one uint 0 (smalluint or uint0)
        assertThat(out[0]).isEqualTo((byte) 0x00);
        assertThat(out[1]).isEqualTo((byte) 0x53);
        assertThat(out[2]).isEqualTo((byte) 0x70);
        assertThat(out[3]).isEqualTo((byte) 0xC0); // list8
        assertThat(out[5]).isEqualTo((byte) 5);   // element count: delivery-count is present
        assertThat(decodeProton(out).getHeader().getDeliveryCount()).isEqualTo(UnsignedInteger.ZERO);
    }

    /**
     * The delivery path encodes into the thread's reusable buffer and hands the bytes to a sink: the same bytes as
     * the array form, the same buffer from one delivery to the next, and a buffer grown by a large message is not
     * kept.
     */
    @Test
    void sinkEncodingMatchesTheArrayFormAndReusesTheThreadsBuffer() {
        Message small = Message.builder().messageId("m1").applicationProperty("k", "v").body(new byte[1024]).build();
        Message large = Message.builder().messageId("m2").body(new byte[400 * 1024]).build();
        List<byte[]> arrays = new ArrayList<>();
        List<byte[]> copies = new ArrayList<>();
        AmqpCodec.EncodedSink sink = (bytes, offset, length) -> {
            arrays.add(bytes);
            copies.add(Arrays.copyOfRange(bytes, offset, offset + length));
        };
        for (Message m : List.of(small, small, large, small)) {
            AmqpCodec.encode(received(m, 1, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY, sink);
        }

        byte[] expectedSmall = AmqpCodec.encode(received(small, 1, null, MessageState.ACTIVE, Long.MAX_VALUE),
                Purpose.DELIVERY);
        byte[] expectedLarge = AmqpCodec.encode(received(large, 1, null, MessageState.ACTIVE, Long.MAX_VALUE),
                Purpose.DELIVERY);
        assertThat(copies.get(0)).isEqualTo(expectedSmall);
        assertThat(copies.get(1)).isEqualTo(expectedSmall);
        assertThat(copies.get(2)).isEqualTo(expectedLarge);
        assertThat(copies.get(3)).isEqualTo(expectedSmall);
        assertThat(arrays.get(1)).isSameAs(arrays.get(0));
        assertThat(arrays.get(3)).isNotSameAs(arrays.get(2));
        assertThat(arrays.get(3).length).isLessThan(256 * 1024);
    }

    /**
     * Data sections in the form clients send (vbin8, vbin32) are stepped over without decoding their binary: the
     * body comes out verbatim, other descriptor forms go through the decoder, and a section running past the end
     * is still malformed.
     */
    @Test
    void dataSectionsAreSteppedOverVerbatimAndStillValidated() throws Exception {
        Properties p = new Properties();
        p.setMessageId("m");
        for (int size : new int[] {0, 10, 255, 300, 70_000}) {
            byte[] body = new byte[size];
            new Random(size).nextBytes(body);
            byte[] sections = encodeSections(new Data(new Binary(body)), new Data(new Binary(new byte[] {7})));
            byte[] message = encodeSections(p, new Data(new Binary(body)), new Data(new Binary(new byte[] {7})));
            Message m = decode(message);
            assertThat(m.body()).as("body of %d bytes", size).isEqualTo(sections);
            assertThat(m.messageId()).isEqualTo("m");
            int firstEnd = AmqpCodec.dataSectionEnd(sections, 0, sections.length);
            assertThat(firstEnd).isEqualTo(sections.length - 6); // the second section: 00 53 75 a0 01 07
        }
        // the descriptor as a ulong in its long form is not the fast path, and still decodes
        byte[] longForm = {0x00, (byte) 0x80, 0, 0, 0, 0, 0, 0, 0, 0x75, (byte) 0xa0, 0x02, 1, 2};
        assertThat(AmqpCodec.dataSectionEnd(longForm, 0, longForm.length)).isEqualTo(-1);
        assertThat(decode(longForm).body()).isEqualTo(longForm);
        // a vbin8 that claims more bytes than the message has
        byte[] truncated = {0x00, 0x53, 0x75, (byte) 0xa0, 0x09, 1, 2};
        assertThat(AmqpCodec.dataSectionEnd(truncated, 0, truncated.length)).isEqualTo(-1);
        assertThatThrownBy(() -> decode(truncated)).isInstanceOf(AmqpDecodeException.class);
    }

    @Test
    void scheduledEnqueueTimeAcceptsALongFromPython() throws Exception {
        org.apache.qpid.proton.message.Message pm = simpleProtonMessage("a", "b");
        pm.setMessageAnnotations(new MessageAnnotations(
                Map.of(Symbol.valueOf("x-opt-scheduled-enqueue-time"), ENQUEUED + 1)));
        assertThat(decode(encodeProton(pm)).scheduledEnqueueTimeMs()).isEqualTo(ENQUEUED + 1);

        pm.setMessageAnnotations(new MessageAnnotations(
                Map.of(Symbol.valueOf("x-opt-scheduled-enqueue-time"), "tomorrow")));
        byte[] bad = encodeProton(pm);
        assertThatThrownBy(() -> decode(bad)).isInstanceOf(AmqpDecodeException.class)
                .hasMessageContaining("x-opt-scheduled-enqueue-time");
    }

    // ---------------------------------------------------------------------------------------------------------
    // broker annotations
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void brokerAnnotationsHaveTheExactTypesTheSdksCastTo() {
        UUID lock = UUID.randomUUID();
        Message m = Message.builder().messageId("m").partitionKey("pk").body(new byte[] {1}).build();

        // delivery with a lock
        org.apache.qpid.proton.message.Message d = decodeProton(AmqpCodec.encode(
                received(m, 0, lock, MessageState.ACTIVE, ENQUEUED + 1000), Purpose.DELIVERY));
        Map<Symbol, Object> ma = annotations(d);
        assertThat(ma.get(Symbol.valueOf("x-opt-sequence-number"))).isInstanceOf(Long.class).isEqualTo(42L);
        assertThat(ma.get(Symbol.valueOf("x-opt-enqueued-time"))).isInstanceOf(Date.class)
                .isEqualTo(new Date(ENQUEUED));
        assertThat(ma.get(Symbol.valueOf("x-opt-locked-until"))).isInstanceOf(Date.class)
                .isEqualTo(new Date(ENQUEUED + 30_000));
        assertThat(ma).doesNotContainKey(Symbol.valueOf("x-opt-message-state"));
        assertThat(ma.get(Symbol.valueOf("x-opt-partition-key"))).isEqualTo("pk");
        assertThat(d.getHeader().getDeliveryCount()).isInstanceOf(UnsignedInteger.class)
                .isEqualTo(UnsignedInteger.ZERO);
        assertThat(d.getHeader().getTtl()).isEqualTo(UnsignedInteger.valueOf(1000));
        assertThat(d.getDeliveryAnnotations()).isNull();

        // peek of a scheduled message
        ReceivedMessage scheduled = new ReceivedMessage(m, 7L, ENQUEUED, 2, null, 0, MessageState.SCHEDULED,
                Long.MAX_VALUE, ENQUEUED + 99_000, "source-queue", 0);
        org.apache.qpid.proton.message.Message p = decodeProton(AmqpCodec.encode(scheduled, Purpose.PEEK));
        ma = annotations(p);
        assertThat(ma.get(Symbol.valueOf("x-opt-message-state"))).isInstanceOf(Integer.class).isEqualTo(2);
        assertThat(ma.get(Symbol.valueOf("x-opt-scheduled-enqueue-time"))).isInstanceOf(Date.class)
                .isEqualTo(new Date(ENQUEUED + 99_000));
        assertThat(ma.get(Symbol.valueOf("x-opt-deadletter-source"))).isInstanceOf(String.class)
                .isEqualTo("source-queue");
        assertThat(ma).doesNotContainKey(Symbol.valueOf("x-opt-locked-until"));
        assertThat(p.getHeader().getDeliveryCount()).isEqualTo(UnsignedInteger.valueOf(2));

        // peek of an active message still says Active
        ma = annotations(decodeProton(AmqpCodec.encode(
                received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.PEEK)));
        assertThat(ma.get(Symbol.valueOf("x-opt-message-state"))).isEqualTo(0);

        // receive-by-sequence-number of a deferred message: state, locked-until and the lock token
        org.apache.qpid.proton.message.Message r = decodeProton(AmqpCodec.encode(
                received(m, 1, lock, MessageState.DEFERRED, Long.MAX_VALUE), Purpose.RECEIVE_BY_SEQUENCE));
        ma = annotations(r);
        assertThat(ma.get(Symbol.valueOf("x-opt-message-state"))).isInstanceOf(Integer.class).isEqualTo(1);
        assertThat(ma.get(Symbol.valueOf("x-opt-locked-until"))).isInstanceOf(Date.class);
        assertThat(r.getDeliveryAnnotations().getValue().get(Symbol.valueOf("x-opt-lock-token")))
                .isInstanceOf(UUID.class).isEqualTo(lock);

        // a deferred message delivered on a link carries its state too
        ma = annotations(decodeProton(AmqpCodec.encode(
                received(m, 0, lock, MessageState.DEFERRED, Long.MAX_VALUE), Purpose.DELIVERY)));
        assertThat(ma.get(Symbol.valueOf("x-opt-message-state"))).isEqualTo(1);

        // a message enqueued from the scheduled state reports Scheduled when delivered, as on the service (#32)
        ma = annotations(decodeProton(AmqpCodec.encode(
                received(m.activated(), 0, lock, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY)));
        assertThat(ma.get(Symbol.valueOf("x-opt-message-state"))).isInstanceOf(Integer.class).isEqualTo(2);
        assertThat(ma).doesNotContainKey(Symbol.valueOf(Message.WAS_SCHEDULED));
        // a peek shows where it stands: enqueued, so active
        ma = annotations(decodeProton(AmqpCodec.encode(
                received(m.activated(), 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.PEEK)));
        assertThat(ma.get(Symbol.valueOf("x-opt-message-state"))).isEqualTo(0);
    }

    @Test
    void clientAnnotationsCannotSpoofBrokerOnes() {
        Message m = Message.builder()
                .annotation("x-opt-sequence-number", "spoofed")
                .annotation("x-opt-locked-until", 5L)
                .annotation("x-app", 1)
                .body(new byte[0]).build();
        Map<Symbol, Object> ma = annotations(decodeProton(AmqpCodec.encode(
                received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY)));
        assertThat(ma.get(Symbol.valueOf("x-opt-sequence-number"))).isEqualTo(42L);
        assertThat(ma).doesNotContainKey(Symbol.valueOf("x-opt-locked-until"));
        assertThat(ma.get(Symbol.valueOf("x-app"))).isEqualTo(1);
    }

    @Test
    void aClientCannotMarkItsMessageAsScheduledBefore() throws Exception {
        Map<Symbol, Object> ma = new LinkedHashMap<>();
        ma.put(Symbol.valueOf(Message.WAS_SCHEDULED), true);
        ma.put(Symbol.valueOf("x-opt-message-state"), 2);
        Message m = decode(encodeSections(new MessageAnnotations(ma), new Data(new Binary(new byte[] {1}))));
        assertThat(m.wasScheduled()).isFalse();
        assertThat(m.annotations()).isEmpty();
    }

    // ---------------------------------------------------------------------------------------------------------
    // bodies
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void twoDataSectionsAndAFooterSurviveByteExactly() throws Exception {
        Properties p = new Properties();
        p.setMessageId("multi");
        Map<String, Object> ap = Map.of("k", "v");
        Map<Symbol, Object> footer = new LinkedHashMap<>();
        footer.put(Symbol.valueOf("x-hash"), new Binary(new byte[] {7, 7, 7}));
        byte[] head = encodeSections(p, new ApplicationProperties(ap));
        byte[] tail = encodeSections(new Data(new Binary("first".getBytes())),
                new Data(new Binary(new byte[300])), new Footer(footer));
        byte[] in = concat(head, tail);

        Message m = decode(in);
        assertThat(m.messageId()).isEqualTo("multi");
        assertThat(m.applicationProperties()).containsEntry("k", "v");
        assertThat(m.body()).isEqualTo(tail);

        byte[] out = AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY);
        assertThat(Arrays.copyOfRange(out, out.length - tail.length, out.length)).isEqualTo(tail);
        Message again = decode(out);
        assertThat(again.body()).isEqualTo(tail);
        assertThat(again.messageId()).isEqualTo("multi");
        // proton (first body section only) still reads the output
        assertThat(dataValue(decodeProton(out))).isEqualTo(new Binary("first".getBytes()));
    }

    @Test
    void propertiesOverTheServiceQuotasAreRefusedWithMessageSizeExceeded() throws Exception {
        Map<String, Object> justUnder = new LinkedHashMap<>();
        justUnder.put("p", "x".repeat(31 * 1024));
        assertThat(decode(encodeSections(new Properties(), new ApplicationProperties(justUnder),
                new Data(new Binary(new byte[1])))).applicationProperties()).containsKey("p");

        Map<String, Object> oneTooLarge = new LinkedHashMap<>();
        oneTooLarge.put("small", 1);
        oneTooLarge.put("large", "x".repeat(33 * 1024));
        byte[] one = encodeSections(new Properties(), new ApplicationProperties(oneTooLarge),
                new Data(new Binary(new byte[1])));
        assertThatThrownBy(() -> decode(one)).isInstanceOfSatisfying(AmqpDecodeException.class, e -> {
            assertThat(e.condition()).isEqualTo("amqp:link:message-size-exceeded");
            assertThat(e.getMessage()).contains("'large'").contains("32768");
        });

        Map<String, Object> allTooLarge = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            allTooLarge.put("p" + i, "x".repeat(25 * 1024));
        }
        byte[] all = encodeSections(new Properties(), new ApplicationProperties(allTooLarge),
                new Data(new Binary(new byte[1])));
        assertThatThrownBy(() -> decode(all)).isInstanceOfSatisfying(AmqpDecodeException.class, e -> {
            assertThat(e.condition()).isEqualTo("amqp:link:message-size-exceeded");
            assertThat(e.getMessage()).contains("65536");
        });
    }

    /** The Java SDK sends footer keys as strings; the service hands them back as symbols, which its reader casts. */
    @Test
    void aFooterWithStringKeysComesBackWithSymbolKeys() throws Exception {
        Map<Object, Object> footer = new LinkedHashMap<>();
        footer.put("footer-key", "footer-value");
        footer.put(Symbol.valueOf("already-symbol"), 7L);
        byte[] in = encodeSections(new Properties(), new Data(new Binary("body".getBytes())), new Footer(footer));

        byte[] out = AmqpCodec.encode(received(decode(in), 0, null, MessageState.ACTIVE, Long.MAX_VALUE),
                Purpose.DELIVERY);
        org.apache.qpid.proton.message.Message back = decodeProton(out);
        assertThat(back.getFooter().getValue()).containsOnlyKeys(Symbol.valueOf("footer-key"),
                Symbol.valueOf("already-symbol"));
        assertThat(back.getFooter().getValue().get(Symbol.valueOf("footer-key"))).isEqualTo("footer-value");
        assertThat(dataValue(back)).isEqualTo(new Binary("body".getBytes()));
    }

    /**
     * A footer before the body (the JavaScript SDK's AMQP library writes header, annotations, properties,
     * application-properties, footer, data; the service accepts it) or between body sections is taken, and handed
     * back after the body, in the standard order (#32 cause 6).
     */
    @Test
    void aFooterBeforeOrBetweenTheBodySectionsIsTakenAndHandedBackLast() throws Exception {
        Map<Symbol, Object> footer = Map.of(Symbol.valueOf("x-sig"), "s");
        Properties props = new Properties();
        props.setMessageId("f-1");
        ApplicationProperties app = new ApplicationProperties(Map.of("k", "v"));
        for (byte[] in : List.of(
                encodeSections(props, app, new Footer(footer), new Data(new Binary("one".getBytes())),
                        new Data(new Binary("two".getBytes()))),
                encodeSections(props, app, new Data(new Binary("one".getBytes())), new Footer(footer),
                        new Data(new Binary("two".getBytes()))))) {
            Message m = decode(in);
            assertThat(m.messageId()).isEqualTo("f-1");
            assertThat(m.applicationProperties()).containsEntry("k", "v");
            byte[] out = AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE),
                    Purpose.DELIVERY);
            List<Object> sections = sectionsOf(out);
            assertThat(sections.get(sections.size() - 1)).isInstanceOf(Footer.class);
            assertThat(((Footer) sections.get(sections.size() - 1)).getValue()).isEqualTo(footer);
            assertThat(sections.stream().filter(x -> x instanceof Data).map(x -> ((Data) x).getValue()).toList())
                    .containsExactly(new Binary("one".getBytes()), new Binary("two".getBytes()));
        }
    }

    /** Every section of an encoded message, in order. */
    private static List<Object> sectionsOf(byte[] encoded) {
        org.apache.qpid.proton.codec.DecoderImpl decoder = new org.apache.qpid.proton.codec.DecoderImpl();
        org.apache.qpid.proton.codec.AMQPDefinedTypes.registerAllTypes(decoder,
                new org.apache.qpid.proton.codec.EncoderImpl(decoder));
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(encoded);
        decoder.setByteBuffer(buffer);
        List<Object> out = new ArrayList<>();
        while (buffer.hasRemaining()) {
            out.add(decoder.readObject());
        }
        return out;
    }

    @Test
    void amqpValueAndAmqpSequenceBodiesRoundTrip() throws Exception {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("a", 1L);
        value.put("b", List.of("x", "y"));
        org.apache.qpid.proton.message.Message pm = Proton.message();
        pm.setMessageId("v");
        pm.setBody(new AmqpValue(value));
        Message m = decode(encodeProton(pm));
        org.apache.qpid.proton.message.Message back = decodeProton(
                AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY));
        assertThat(back.getBody()).isInstanceOf(AmqpValue.class);
        assertThat(((AmqpValue) back.getBody()).getValue()).isEqualTo(value);

        byte[] seqTail = encodeSections(new AmqpSequence(List.of(1, 2)), new AmqpSequence(List.of("three")));
        byte[] seq = concat(encodeSections(new Properties()), seqTail);
        Message sm = decode(seq);
        assertThat(sm.body()).isEqualTo(seqTail);
        byte[] out = AmqpCodec.encode(received(sm, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY);
        assertThat(Arrays.copyOfRange(out, out.length - seqTail.length, out.length)).isEqualTo(seqTail);
        assertThat((Object) ((AmqpSequence) decodeProton(out).getBody()).getValue()).isEqualTo(List.of(1, 2));
    }

    @Test
    void messageWithoutBodyIsAccepted() throws Exception {
        org.apache.qpid.proton.message.Message pm = Proton.message();
        pm.setMessageId("nobody");
        Message m = decode(encodeProton(pm));
        assertThat(m.body()).isEmpty();
        assertThat(decodeProton(AmqpCodec.encode(
                received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY)).getBody()).isNull();
    }

    @Test
    void foreignBodyFormatIsWrappedInOneDataSection() {
        Message m = Message.builder().messageId("http").bodyFormat(0).body("raw".getBytes()).build();
        org.apache.qpid.proton.message.Message back = decodeProton(
                AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY));
        assertThat(dataValue(back)).isEqualTo(new Binary("raw".getBytes()));
    }

    // ---------------------------------------------------------------------------------------------------------
    // batches
    // ---------------------------------------------------------------------------------------------------------

    /** Builds a batch the way the Java SDK's ReactorSender does. */
    private static byte[] javaSdkBatch(List<org.apache.qpid.proton.message.Message> messages) {
        org.apache.qpid.proton.message.Message envelope = Proton.message();
        org.apache.qpid.proton.message.Message first = messages.get(0);
        envelope.setMessageAnnotations(first.getMessageAnnotations());
        if (first.getMessageId() instanceof String) {
            envelope.setMessageId(first.getMessageId());
        }
        if (first.getGroupId() != null) {
            envelope.setGroupId(first.getGroupId());
        }
        byte[] bytes = new byte[1 << 20];
        int offset = envelope.encode(bytes, 0, bytes.length);
        for (org.apache.qpid.proton.message.Message m : messages) {
            byte[] encoded = encodeProton(m);
            org.apache.qpid.proton.message.Message wrapped = Proton.message();
            wrapped.setBody(new Data(new Binary(encoded, 0, encoded.length)));
            offset += wrapped.encode(bytes, offset, bytes.length - offset);
        }
        return Arrays.copyOf(bytes, offset);
    }

    @Test
    void batchOfThreeDecodesEveryInnerMessage() throws Exception {
        List<org.apache.qpid.proton.message.Message> in = new ArrayList<>();
        List<byte[]> encodedSizes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            org.apache.qpid.proton.message.Message m = simpleProtonMessage("id-" + i, "body-" + i);
            m.setGroupId("s");
            m.setApplicationProperties(new ApplicationProperties(Map.of("n", i)));
            in.add(m);
            encodedSizes.add(encodeProton(m));
        }
        in.get(0).setMessageAnnotations(new MessageAnnotations(
                Map.of(Symbol.valueOf("x-opt-partition-key"), "envelope-pk")));
        encodedSizes.set(0, encodeProton(in.get(0)));
        byte[] payload = javaSdkBatch(in);
        byte[] padded = concat(new byte[] {9, 9, 9}, payload);

        List<Message> out = AmqpCodec.decodeTransfer(padded, 3, payload.length, AmqpCodec.BATCH_FORMAT);
        assertThat(out).hasSize(3);
        for (int i = 0; i < 3; i++) {
            Message m = out.get(i);
            assertThat(m.messageId()).isEqualTo("id-" + i);
            assertThat(m.sessionId()).isEqualTo("s");
            assertThat(m.applicationProperties()).containsEntry("n", i);
            assertThat(m.encodedSize()).isEqualTo(encodedSizes.get(i).length);
            assertThat(m.body()).isEqualTo(encodeSections(new Data(new Binary(("body-" + i).getBytes()))));
        }
        assertThat(out.get(0).partitionKey()).isEqualTo("envelope-pk"); // its own annotation
        assertThat(out.get(1).partitionKey()).isNull();                  // envelope's not applied

        // format 0: the envelope itself is one message
        List<Message> single = AmqpCodec.decodeTransfer(payload, 0, payload.length, 0L);
        assertThat(single).hasSize(1);
        assertThat(single.get(0).encodedSize()).isEqualTo(payload.length);
    }

    @Test
    void batchErrors() {
        byte[] valueEnvelope = encodeProton(simpleProtonMessageWithValue());
        assertThatThrownBy(() -> AmqpCodec.decodeTransfer(valueEnvelope, 0, valueEnvelope.length,
                AmqpCodec.BATCH_FORMAT)).isInstanceOf(AmqpDecodeException.class).hasMessageContaining("data");

        byte[] garbageInner = concat(encodeSections(new Properties()),
                encodeSections(new Data(new Binary(new byte[] {(byte) 0xFF, 1, 2}))));
        assertThatThrownBy(() -> AmqpCodec.decodeTransfer(garbageInner, 0, garbageInner.length,
                AmqpCodec.BATCH_FORMAT)).isInstanceOf(AmqpDecodeException.class)
                .hasMessageContaining("batch message 0");

        byte[] ok = encodeProton(simpleProtonMessage("a", "b"));
        assertThatThrownBy(() -> AmqpCodec.decodeTransfer(ok, 0, ok.length, 0x12345678L))
                .isInstanceOf(AmqpDecodeException.class).hasMessageContaining("message-format");
    }

    private static org.apache.qpid.proton.message.Message simpleProtonMessageWithValue() {
        org.apache.qpid.proton.message.Message m = Proton.message();
        m.setBody(new AmqpValue("v"));
        return m;
    }

    // ---------------------------------------------------------------------------------------------------------
    // lock tokens
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void lockTokenUsesDotNetGuidByteOrder() {
        UUID guid = UUID.fromString("01020304-0506-0708-090a-0b0c0d0e0f10");
        byte[] tag = {0x04, 0x03, 0x02, 0x01, 0x06, 0x05, 0x08, 0x07,
            0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10};
        assertThat(AmqpCodec.deliveryTag(guid)).isEqualTo(tag);
        assertThat(AmqpCodec.lockTokenFromDeliveryTag(tag)).isEqualTo(guid);
        UUID random = UUID.randomUUID();
        assertThat(AmqpCodec.lockTokenFromDeliveryTag(AmqpCodec.deliveryTag(random))).isEqualTo(random);
        assertThat(AmqpCodec.lockTokenFromDeliveryTag(new byte[8])).isNull();
        assertThat(AmqpCodec.lockTokenFromDeliveryTag(new byte[17])).isNull();
        assertThat(AmqpCodec.lockTokenFromDeliveryTag(null)).isNull();
    }

    // ---------------------------------------------------------------------------------------------------------
    // malformed input
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void malformedInputGivesAmqpDecodeException() {
        byte[] valid = encodeProton(simpleProtonMessage("abc", "hello world"));
        List<byte[]> bad = new ArrayList<>();
        bad.add(new byte[0]);
        bad.add(new byte[] {(byte) 0xFF});
        bad.add(new byte[] {0x00});
        bad.add(new byte[] {0x00, 0x53});
        bad.add(new byte[] {(byte) 0xA1, 3, 'a', 'b', 'c'});                 // a bare string, not a section
        bad.add(Arrays.copyOf(valid, valid.length - 1));                      // truncated
        bad.add(concat(valid, new byte[] {0x40}));                            // trailing null
        bad.add(concat(encodeSections(new Properties()), encodeSections(new Header()))); // out of order
        bad.add(encodeSections(new Properties(), new Properties()));          // repeated
        bad.add(encodeSections(new Data(new Binary(new byte[1])), new AmqpValue(1))); // mixed body kinds
        bad.add(encodeSections(new AmqpValue(1), new AmqpValue(2)));          // two amqp-values
        bad.add(encodeSections(new Footer(Map.of()), new Footer(Map.of()))); // two footers
        bad.add(encodeSections(new Footer(Map.of()), new Properties()));       // properties after a footer
        bad.add(new byte[] {0x00, 0x53, 0x74, (byte) 0xC1, 6, 2, 0x54, 1, (byte) 0xA1, 1, 'x'}); // int key
        // list8 claiming 255 elements with nothing behind
        bad.add(new byte[] {0x00, 0x53, 0x77, (byte) 0xC0, (byte) 0xFF, (byte) 0xFF});
        // list32 claiming 2^31-1 elements
        bad.add(new byte[] {0x00, 0x53, 0x77, (byte) 0xD0, 0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF,
            0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF});
        // array32 of 2^31-1 nulls
        bad.add(new byte[] {0x00, 0x53, 0x77, (byte) 0xF0, 0x00, 0x00, 0x00, 0x05,
            0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x40});
        // properties with a wrongly typed "to" (int)
        bad.add(new byte[] {0x00, 0x53, 0x73, (byte) 0xC0, 0x05, 0x03, 0x40, 0x40, 0x54, 0x01});
        // invalid UTF-8 string in amqp-value
        bad.add(new byte[] {0x00, 0x53, 0x77, (byte) 0xA1, 0x02, (byte) 0xC3, (byte) 0x28});
        bad.add(deeplyNested(200_000));

        for (byte[] b : bad) {
            assertThatThrownBy(() -> decode(b)).as(Arrays.toString(Arrays.copyOf(b, Math.min(16, b.length))))
                    .isInstanceOf(AmqpDecodeException.class).hasMessageContaining("malformed");
            assertThatThrownBy(() -> AmqpCodec.decodeTransfer(b, 0, b.length, 0L))
                    .isInstanceOf(AmqpDecodeException.class);
        }
        // the codec still works afterwards
        assertThatNoExceptionIsThrownDecoding(valid);
    }

    @Test
    void fuzzedInputNeverThrowsAnythingButAmqpDecodeException() throws Exception {
        org.apache.qpid.proton.message.Message pm = simpleProtonMessage("fuzz", "payload payload");
        pm.setApplicationProperties(new ApplicationProperties(Map.of("a", 1, "b", List.of("x", 2L),
                "c", new UnknownDescribedType(DATETIME_OFFSET, 5L))));
        pm.setMessageAnnotations(new MessageAnnotations(Map.of(Symbol.valueOf("x-opt-partition-key"), "p")));
        byte[] valid = encodeProton(pm);
        for (int cut = 0; cut < valid.length; cut++) {
            tryDecode(Arrays.copyOf(valid, cut));
        }
        Random random = new Random(42);
        for (int i = 0; i < 20_000; i++) {
            byte[] b = valid.clone();
            int flips = 1 + random.nextInt(4);
            for (int f = 0; f < flips; f++) {
                b[random.nextInt(b.length)] = (byte) random.nextInt(256);
            }
            tryDecode(b);
            byte[] batch = b.clone();
            try {
                AmqpCodec.decodeTransfer(batch, 0, batch.length, AmqpCodec.BATCH_FORMAT);
            } catch (AmqpDecodeException expected) {
                // fine
            }
        }
        assertThatNoExceptionIsThrownDecoding(valid);
    }

    private static void tryDecode(byte[] b) {
        try {
            Message m = decode(b);
            // whatever decoded must also encode
            AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY);
        } catch (AmqpDecodeException expected) {
            assertThat(expected.getMessage()).isNotBlank();
        } catch (RuntimeException | Error e) {
            fail("unexpected " + e + " for " + Arrays.toString(b), e);
        }
    }

    private static void assertThatNoExceptionIsThrownDecoding(byte[] valid) {
        try {
            assertThat(decode(valid).messageId()).isNotNull();
        } catch (AmqpDecodeException e) {
            fail("valid message rejected", e);
        }
    }

    /** An amqp-value holding lists nested {@code depth} deep: 0x00 0x53 0x77 then (list32 header) * depth. */
    private static byte[] deeplyNested(int depth) {
        ByteBuffer buf = ByteBuffer.allocate(3 + depth * 9 + 1);
        buf.put((byte) 0x00).put((byte) 0x53).put((byte) 0x77);
        for (int i = 0; i < depth; i++) {
            int size = (depth - i - 1) * 9 + 1 + 4;
            buf.put((byte) 0xD0).putInt(size).putInt(1);
        }
        buf.put((byte) 0x45); // list0
        return buf.array();
    }

    // ---------------------------------------------------------------------------------------------------------
    // values
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void describedApplicationPropertiesSurvive() throws Exception {
        org.apache.qpid.proton.message.Message pm = simpleProtonMessage("d", "x");
        Map<String, Object> ap = new LinkedHashMap<>();
        ap.put("offset", new UnknownDescribedType(DATETIME_OFFSET, 638_400_000_000_000_000L));
        ap.put("uri", new UnknownDescribedType(Symbol.valueOf("com.microsoft:uri"), "https://example.com/"));
        ap.put("timespan", new UnknownDescribedType(Symbol.valueOf("com.microsoft:timespan"), 10_000_000L));
        ap.put("numeric", new UnknownDescribedType(UnsignedLong.valueOf(0x137_0000_0004L), List.of("a")));
        pm.setApplicationProperties(new ApplicationProperties(ap));
        byte[] in = encodeProton(pm);
        Message m = decode(in);
        assertThat(m.applicationProperties().get("offset")).isEqualTo(new Described(
                new io.buslane.engine.message.Symbol("com.microsoft:datetime-offset"), 638_400_000_000_000_000L));
        assertThat(m.applicationProperties().get("numeric")).isEqualTo(
                new Described(new Unsigned(0x137_0000_0004L, 8), List.of("a")));

        byte[] out = AmqpCodec.encode(received(m, 0, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY);
        Map<?, ?> back = decodeProton(out).getApplicationProperties().getValue();
        for (Map.Entry<String, Object> e : ap.entrySet()) {
            DescribedType expected = (DescribedType) e.getValue();
            DescribedType actual = (DescribedType) back.get(e.getKey());
            assertThat(actual.getDescriptor()).isEqualTo(expected.getDescriptor());
            assertThat(actual.getDescribed()).isEqualTo(expected.getDescribed());
        }
        // and the application-properties section is byte-identical to the client's
        assertThat(indexOf(out, sectionBytes(new ApplicationProperties(ap)))).isNotNegative();
    }

    /** .NET's 1.5m as Microsoft.Azure.Amqp writes it: sign | (6175 >> 9), (6175 & 0x7F) << 1, then 15. */
    private static final Decimal128 DOTNET_ONE_POINT_FIVE = new Decimal128(0x0C3E_0000_0000_0000L, 15);

    @Test
    void decimalPropertiesRoundTripByteExact() throws Exception {
        Map<String, Object> ap = new LinkedHashMap<>();
        ap.put("d32", new Decimal32((100 << 23) | 15));
        ap.put("d32-inf", new Decimal32(0xF800_0000));
        ap.put("d64", new Decimal64(Long.MIN_VALUE | (396L << 53) | 123_456_789_012_345_678L));
        ap.put("d64-nan", new Decimal64(0x7C00_0000_0000_0000L));
        ap.put("d128", new Decimal128(0x3040_0000_0000_0000L, 0x7777_0000_0000_0001L));
        ap.put("dotnet", DOTNET_ONE_POINT_FIVE);
        ap.put("nested", List.of(new Decimal128(-1L, -1L)));
        org.apache.qpid.proton.message.Message pm = simpleProtonMessage("dec", "x");
        pm.setApplicationProperties(new ApplicationProperties(ap));

        Message m = decode(encodeProton(pm));
        Map<String, Object> props = m.applicationProperties();
        assertThat(props.get("d32")).isEqualTo(Decimal.decimal32((100 << 23) | 15));
        assertThat(props.get("d64")).isEqualTo(Decimal.decimal64(Long.MIN_VALUE | (396L << 53)
                | 123_456_789_012_345_678L));
        assertThat(((Decimal) props.get("dotnet")).toBigDecimal()).isEqualTo(new java.math.BigDecimal("1.5"));
        assertThat(props.get("nested")).isEqualTo(List.of(Decimal.decimal128(-1L, -1L)));

        // the same message rebuilt from its engine values (as after a restart): every decimal goes out unchanged
        Message.Builder rebuilt = m.toBuilder();
        props.forEach(rebuilt::applicationProperty);
        for (Message e : List.of(m, rebuilt.build())) {
            for (Purpose purpose : List.of(Purpose.DELIVERY, Purpose.PEEK)) {
                byte[] out = AmqpCodec.encode(received(e, 0, null, MessageState.ACTIVE, 0), purpose);
                Map<String, Object> back = decodeProton(out).getApplicationProperties().getValue();
                assertThat(back).isEqualTo(ap);
                assertThat(indexOf(out, sectionBytes(new ApplicationProperties(ap)))).isNotNegative();
            }
        }
    }

    @Test
    void valueConversions() {
        assertThat(AmqpCodec.toEngine(new long[] {1, 2})).isEqualTo(List.of(1L, 2L));
        assertThat(AmqpCodec.toEngine(new Symbol[] {Symbol.valueOf("a")}))
                .isEqualTo(List.of(new io.buslane.engine.message.Symbol("a")));
        assertThat(AmqpCodec.toEngine(Map.of(Symbol.valueOf("k"), new Binary(new byte[] {1}))))
                .satisfies(v -> {
                    Map<?, ?> map = (Map<?, ?>) v;
                    assertThat((byte[]) map.get(new io.buslane.engine.message.Symbol("k"))).containsExactly(1);
                });
        // decimal64 1.5 = 15 * 10^-1 (BID: exponent 397 = 398 - 1): the bits kept, the value exact
        assertThat(AmqpCodec.toEngine(new Decimal64((397L << 53) | 15)))
                .isEqualTo(Decimal.decimal64((397L << 53) | 15));
        assertThat(((Decimal) AmqpCodec.toEngine(new Decimal64(Long.MIN_VALUE | (398L << 53) | 7))).toBigDecimal())
                .isEqualByComparingTo("-7");
        assertThat(AmqpCodec.toEngine(new Decimal32((101 << 23) | 42))).isEqualTo(Decimal.decimal32((101 << 23) | 42));
        assertThat(AmqpCodec.toEngine(new Decimal128(6174L << 49, 12345)))
                .isEqualTo(Decimal.decimal128(6174L << 49, 12345));
        assertThat(AmqpCodec.toProton(Decimal.decimal32(0xF800_0000))).isEqualTo(new Decimal32(0xF800_0000));
        assertThat(AmqpCodec.toProton(Decimal.decimal64(-1L))).isEqualTo(new Decimal64(-1L));
        assertThat(AmqpCodec.toProton(Decimal.decimal128(1, -2))).isEqualTo(new Decimal128(1, -2));

        assertThat(AmqpCodec.toProton(new Unsigned(200, 1))).isEqualTo(UnsignedByte.valueOf((byte) 200));
        assertThat(AmqpCodec.toProton(new Unsigned(60000, 2))).isEqualTo(UnsignedShort.valueOf((short) 60000));
        assertThat(AmqpCodec.toProton(new Unsigned(0xFFFFFFFFL, 4))).isEqualTo(UnsignedInteger.MAX_VALUE);
        assertThat(AmqpCodec.toProton(new Unsigned(-1L, 8))).isEqualTo(UnsignedLong.valueOf(-1L));
        assertThat(AmqpCodec.toProton(Instant.ofEpochMilli(5))).isEqualTo(new Date(5));
        assertThat(AmqpCodec.toProton(new byte[] {3})).isEqualTo(new Binary(new byte[] {3}));
        Object described = AmqpCodec.toProton(new Described(new io.buslane.engine.message.Symbol("d"), 1L));
        assertThat(described).isInstanceOf(DescribedType.class);
        assertThat(((DescribedType) described).getDescriptor()).isEqualTo(Symbol.valueOf("d"));

        Map<String, Object> engine = new LinkedHashMap<>();
        engine.put("x-a", new io.buslane.engine.message.Symbol("s"));
        assertThat(AmqpCodec.toProtonSymbolMap(engine)).containsEntry(Symbol.valueOf("x-a"), Symbol.valueOf("s"));
        Map<Object, Object> proton = new LinkedHashMap<>();
        proton.put(Symbol.valueOf("sym-key"), 1);
        proton.put("str-key", 2);
        assertThat(AmqpCodec.toEngineStringMap(proton)).containsExactly(Map.entry("sym-key", 1),
                Map.entry("str-key", 2));
        assertThatThrownBy(() -> AmqpCodec.toEngineStringMap(Map.of(1, 2)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AmqpCodec.toEngine(new Object())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AmqpCodec.toProton(new Object())).isInstanceOf(IllegalArgumentException.class);
        List<Object> selfContaining = new ArrayList<>();
        selfContaining.add(selfContaining);
        assertThatThrownBy(() -> AmqpCodec.toProton(selfContaining)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void codecIsThreadSafe() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < 2000; i++) {
                        String id = thread + "-" + i;
                        org.apache.qpid.proton.message.Message pm = simpleProtonMessage(id, "body" + id);
                        pm.setApplicationProperties(new ApplicationProperties(Map.of("d",
                                new UnknownDescribedType(Symbol.valueOf("desc-" + id), id))));
                        Message m = decode(encodeProton(pm));
                        assertThat(m.messageId()).isEqualTo(id);
                        byte[] out = AmqpCodec.encode(
                                received(m, i, null, MessageState.ACTIVE, Long.MAX_VALUE), Purpose.DELIVERY);
                        assertThat(decodeProton(out).getMessageId()).isEqualTo(id);
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    // ---------------------------------------------------------------------------------------------------------

    private static Binary dataValue(org.apache.qpid.proton.message.Message m) {
        assertThat(m.getBody()).isInstanceOf(Data.class);
        return ((Data) m.getBody()).getValue();
    }

    private static byte[] sectionBytes(Object section) {
        return encodeSections(section);
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
