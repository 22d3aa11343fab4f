package io.buslane.engine.persist;

import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.Limits;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Described;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.Symbol;
import io.buslane.engine.message.Unsigned;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CodecRoundTripTest {

    // ------------------------------------------------------------------ primitives

    @Test
    void varIntsUseLeb128Widths() {
        RecordWriter w = new RecordWriter();
        int[] ints = {0, 1, 127, 128, 16_383, 16_384, Integer.MAX_VALUE, -1, Integer.MIN_VALUE};
        int[] widths = {1, 1, 1, 2, 2, 3, 5, 5, 5};
        for (int i = 0; i < ints.length; i++) {
            w.reset();
            w.writeVarInt(ints[i]);
            assertThat(w.size()).as("width of %s", ints[i]).isEqualTo(widths[i]);
            RecordReader r = new RecordReader(w.toByteArray());
            assertThat(r.readVarInt()).isEqualTo(ints[i]);
            assertThat(r.hasRemaining()).isFalse();
        }
        w.reset();
        w.writeVarInt(300);
        assertThat(w.toByteArray()).containsExactly(0xAC, 0x02);

        long[] longs = {0, 127, 128, Long.MAX_VALUE, -1, Long.MIN_VALUE, 1L << 62};
        int[] longWidths = {1, 1, 2, 9, 10, 10, 9};
        for (int i = 0; i < longs.length; i++) {
            w.reset();
            w.writeVarLong(longs[i]);
            assertThat(w.size()).as("width of %s", longs[i]).isEqualTo(longWidths[i]);
            assertThat(new RecordReader(w.toByteArray()).readVarLong()).isEqualTo(longs[i]);
        }
    }

    @Test
    void signedVarIntsKeepSmallNegativesShort() {
        RecordWriter w = new RecordWriter();
        w.writeSignedVarInt(-1);
        w.writeSignedVarLong(-64);
        assertThat(w.size()).isEqualTo(2);
        long[] values = {0, 1, -1, 63, -64, 64, -65, Long.MAX_VALUE, Long.MIN_VALUE};
        w.reset();
        for (long v : values) {
            w.writeSignedVarLong(v);
            w.writeSignedVarInt((int) v);
        }
        RecordReader r = new RecordReader(w.toByteArray());
        for (long v : values) {
            assertThat(r.readSignedVarLong()).isEqualTo(v);
            assertThat(r.readSignedVarInt()).isEqualTo((int) v);
        }
        assertThat(r.hasRemaining()).isFalse();
    }

    @Test
    void fixedWidthPrimitivesNullablesAndStrings() {
        RecordWriter w = new RecordWriter(0);
        w.writeByte(-7);
        w.writeBoolean(true);
        w.writeBoolean(false);
        w.writeShort(-12_345);
        w.writeChar('\uFFFE');
        w.writeInt(0xCAFEBABE);
        w.writeLong(0x0123456789ABCDEFL);
        w.writeFloat(Float.intBitsToFloat(0x7FC0_1234));
        w.writeDouble(Double.longBitsToDouble(0x7FF8_0000_0000_4321L));
        w.writeNullableLong(null);
        w.writeNullableLong(Long.MIN_VALUE);
        w.writeNullableLong(1_700_000_000_000L);
        w.writeBytes(null);
        w.writeBytes(new byte[0]);
        w.writeBytes(new byte[] {1, 2, 3});
        w.writeBytes(new byte[] {9, 8, 7, 6}, 1, 2);
        w.writeString(null);
        w.writeString("");
        w.writeString("x".repeat(1000));

        RecordReader r = new RecordReader(w.toByteArray());
        assertThat(r.readByte()).isEqualTo((byte) -7);
        assertThat(r.readBoolean()).isTrue();
        assertThat(r.readBoolean()).isFalse();
        assertThat(r.readShort()).isEqualTo((short) -12_345);
        assertThat(r.readChar()).isEqualTo('\uFFFE');
        assertThat(r.readInt()).isEqualTo(0xCAFEBABE);
        assertThat(r.readLong()).isEqualTo(0x0123456789ABCDEFL);
        assertThat(Float.floatToRawIntBits(r.readFloat())).isEqualTo(0x7FC0_1234);
        assertThat(Double.doubleToRawLongBits(r.readDouble())).isEqualTo(0x7FF8_0000_0000_4321L);
        assertThat(r.readNullableLong()).isNull();
        assertThat(r.readNullableLong()).isEqualTo(Long.MIN_VALUE);
        assertThat(r.readNullableLong()).isEqualTo(1_700_000_000_000L);
        assertThat(r.readBytes()).isNull();
        assertThat(r.readBytes()).isEmpty();
        assertThat(r.readBytes()).containsExactly(1, 2, 3);
        assertThat(r.readBytes()).containsExactly(8, 7);
        assertThat(r.readString()).isNull();
        assertThat(r.readString()).isEmpty();
        assertThat(r.readString()).isEqualTo("x".repeat(1000));
        assertThat(r.hasRemaining()).isFalse();
    }

    @Test
    void fixedWidthPrimitivesAreBigEndian() {
        RecordWriter w = new RecordWriter();
        w.writeInt(0x01020304);
        w.writeShort(0x0506);
        assertThat(w.toByteArray()).containsExactly(1, 2, 3, 4, 5, 6);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "plain ascii", "héllo wörld", "日本語テキスト", "emoji 😀 and 𝄞", "\u0000nul",
            "\u07FF\u0800\uFFFF"})
    void validStringsAreEncodedAsStandardUtf8(String s) {
        RecordWriter w = new RecordWriter();
        w.writeString(s);
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        RecordReader r = new RecordReader(w.toByteArray());
        assertThat(r.readVarInt()).isEqualTo(utf8.length + 1);
        byte[] payload = new byte[r.remaining()];
        r.readRaw(payload, 0, payload.length);
        assertThat(payload).isEqualTo(utf8);
        assertThat(new RecordReader(w.toByteArray()).readString()).isEqualTo(s);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\uD800", "\uDC00", "a\uD83D", "\uDE00b", "\uDC00\uD800", "x\uD83D\uDE00\uD83Dy"})
    void unpairedSurrogatesRoundTripExactly(String s) {
        RecordWriter w = new RecordWriter();
        w.writeString(s);
        assertThat(new RecordReader(w.toByteArray()).readString()).isEqualTo(s);
    }

    @Test
    void writerGrowsAndIsReusableAfterReset() {
        RecordWriter w = new RecordWriter(1);
        byte[] big = new byte[100_000];
        new SplittableRandom(7).nextBytes(big);
        w.writeBytes(big);
        assertThat(new RecordReader(w.toByteArray()).readBytes()).isEqualTo(big);
        w.reset();
        assertThat(w.size()).isZero();
        w.writeString("again");
        assertThat(w.toByteArray()).hasSize(6);
        assertThat(new RecordReader(w.toByteArray()).readString()).isEqualTo("again");

        RecordWriter huge = new RecordWriter(16);
        huge.writeRaw(new byte[(1 << 20) + 1], 0, (1 << 20) + 1);
        huge.reset();
        assertThat(huge.buffer()).hasSize(16);
    }

    @Test
    void readerHonoursItsRangeAndCanBeReset() {
        RecordWriter w = new RecordWriter();
        w.writeString("first");
        int firstEnd = w.size();
        w.writeString("second");
        byte[] bytes = w.toByteArray();
        RecordReader r = new RecordReader(bytes, firstEnd, bytes.length - firstEnd);
        assertThat(r.readString()).isEqualTo("second");
        assertThat(r.position()).isEqualTo(bytes.length);
        r.reset(bytes, 0, firstEnd);
        assertThat(r.readString()).isEqualTo("first");
        assertThatThrownBy(r::readByte).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("truncated");
    }

    @Test
    void malformedInputIsRejected() {
        assertThatThrownBy(() -> new RecordReader(new byte[] {(byte) 0x80, (byte) 0x80}).readVarInt())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("truncated");
        assertThatThrownBy(() -> new RecordReader(new byte[] {-1, -1, -1, -1, -1, 1}).readVarInt())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RecordReader(new byte[] {-1, -1, -1, -1, 0x10}).readVarInt())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overflows");
        assertThatThrownBy(() -> new RecordReader(new byte[] {2}).readBoolean())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RecordReader(new byte[] {11, 'a', 'b'}).readString())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("truncated");
        assertThatThrownBy(() -> new RecordReader(new byte[] {2, (byte) 0xC3}).readString())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RecordReader(new byte[] {3, (byte) 0xC3, 'a'}).readString())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RecordReader(new byte[] {0, 0, 0}).readLong())
                .isInstanceOf(IllegalArgumentException.class);
        // a list claiming more elements than bytes left must not allocate them
        assertThatThrownBy(() -> ValueCodec.readValue(new RecordReader(new byte[] {ValueCodec.LIST, -1, -1, -1, 7})))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ValueCodec.readValue(new RecordReader(new byte[] {99})))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tag 99");
    }

    // ------------------------------------------------------------------ values

    static Stream<Object> everyValueType() {
        return Stream.of(
                null,
                Boolean.TRUE, Boolean.FALSE,
                (byte) 0, Byte.MIN_VALUE, Byte.MAX_VALUE,
                (short) 0, Short.MIN_VALUE, Short.MAX_VALUE,
                0, -1, 42, Integer.MIN_VALUE, Integer.MAX_VALUE,
                0L, -1L, 1_700_000_000_000L, Long.MIN_VALUE, Long.MAX_VALUE,
                0.0f, -0.0f, 1.5f, Float.NaN, Float.intBitsToFloat(0x7FA0_0001), Float.NEGATIVE_INFINITY,
                Float.MIN_VALUE,
                0.0d, -0.0d, Math.PI, Double.NaN, Double.POSITIVE_INFINITY, Double.MAX_VALUE,
                'a', '\u00E9', '\uD800', '\uFFFF', '\u0000',
                "", "text", "ünïcødé 日本 😀", "lone \uDC00 surrogate",
                new UUID(0, 0), UUID.fromString("123e4567-e89b-12d3-a456-426614174000"), new UUID(-1, -1),
                new byte[0], new byte[] {0, 1, -1, 127, -128},
                Instant.EPOCH, Instant.ofEpochMilli(1_700_000_000_123L), Instant.ofEpochMilli(-1),
                Instant.ofEpochSecond(1_700_000_000L, 123_456_789), Instant.ofEpochSecond(-5, 1),
                Instant.MIN, Instant.MAX, Instant.ofEpochSecond(Long.MAX_VALUE / 1000 - 1, 999_000_000),
                Instant.ofEpochSecond(Long.MAX_VALUE / 1000, 0), Instant.ofEpochSecond(-(Long.MAX_VALUE / 1000), 0),
                new Symbol(""), new Symbol("com.microsoft:datetime-offset"),
                new Unsigned(0, 1), new Unsigned(255, 1), new Unsigned(65_535, 2), new Unsigned(0xFFFF_FFFFL, 4),
                new Unsigned(-1L, 8), new Unsigned(Long.MIN_VALUE, 8), new Unsigned(7, 8),
                new Described(new Symbol("com.microsoft:datetime-offset"), 638_000_000_000_000_000L),
                new Described(new Unsigned(0x0000_0137_0000_0001L, 8), "value"),
                new Described(null, null),
                Decimal.decimal32(0x3280_0001), Decimal.decimal32(-1), Decimal.decimal64(0xB180_0000_0000_02EEL),
                Decimal.decimal64(0x7C00_0000_0000_0000L), Decimal.decimal128(0x0C3E_0000_0000_0000L, 15),
                Decimal.decimal128(-1L, -1L), Decimal.decimal128(0, 0),
                List.of(), new ArrayList<>(), Map.of(), new LinkedHashMap<>());
    }

    @ParameterizedTest
    @MethodSource("everyValueType")
    void everyValueTypeRoundTrips(Object value) {
        Object decoded = roundTripValue(value);
        assertDeepEquals(decoded, value, "value");
    }

    @Test
    void nestedListsMapsAndDescribedValuesRoundTrip() {
        Map<Object, Object> inner = new LinkedHashMap<>();
        inner.put("z", 1);
        inner.put(null, "null key");
        inner.put(new Symbol("sym"), Arrays.asList(1, null, 3L));
        inner.put(7L, new byte[] {4, 5});
        inner.put(new Unsigned(3, 1), new Described(new Symbol("d"), List.of(Map.of("k", 'c'))));
        inner.put(List.of(1, 2), Map.of());
        List<Object> linked = new LinkedList<>(List.of("a", new Unsigned(1, 2), Instant.ofEpochSecond(1, 2)));
        List<Object> value = new ArrayList<>();
        value.add(inner);
        value.add(linked);
        value.add(new Described(new Described(1, 2), new Described(List.of(), inner)));
        value.add(null);
        value.add(List.of(List.of(List.of(List.of((short) 9)))));

        Object decoded = roundTripValue(value);
        assertDeepEquals(decoded, value, "value");
        assertThat(decoded).isInstanceOf(ArrayList.class);
        assertThat(((List<?>) decoded).get(0)).isInstanceOf(LinkedHashMap.class);
    }

    @Test
    void mapsDecodeInTheirEncodedOrder() {
        Map<Object, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < 50; i++) {
            map.put("key-" + ((i * 37) % 50), i);
        }
        Map<Object, Object> sorted = new TreeMap<>(Map.of("b", 2, "a", 1, "c", 3));
        Object decoded = roundTripValue(List.of(map, sorted));
        List<?> list = (List<?>) decoded;
        List<Object> firstKeys = new ArrayList<>(((Map<?, ?>) list.get(0)).keySet());
        List<Object> secondKeys = new ArrayList<>(((Map<?, ?>) list.get(1)).keySet());
        assertThat(firstKeys).containsExactlyElementsOf(map.keySet());
        assertThat(secondKeys).containsExactly("a", "b", "c");
        assertThat(list.get(1)).isInstanceOf(LinkedHashMap.class);
    }

    @Test
    void stringMapsRoundTripInOrderWithTypes() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("int", 1);
        map.put("long", 1L);
        map.put("uint", new Unsigned(1, 4));
        map.put("null", null);
        map.put(null, "null key");
        map.put("bytes", new byte[] {1});
        map.put("ts", Instant.ofEpochMilli(5));
        RecordWriter w = new RecordWriter();
        ValueCodec.writeStringMap(w, map);
        ValueCodec.writeStringMap(w, Map.of());
        RecordReader r = new RecordReader(w.toByteArray());
        Map<String, Object> decoded = ValueCodec.readStringMap(r);
        assertThat(decoded).isInstanceOf(LinkedHashMap.class);
        assertDeepEquals(decoded, map, "map");
        assertThat(ValueCodec.readStringMap(r)).isEmpty();
        assertThat(r.hasRemaining()).isFalse();

        List<String> keys = new ArrayList<>();
        ValueCodec.readStringMap(new RecordReader(w.toByteArray()), (k, v) -> keys.add(k));
        assertThat(keys).containsExactlyElementsOf(map.keySet());
    }

    @Test
    void unknownTypesAreRejectedByName() {
        RecordWriter w = new RecordWriter();
        assertThatThrownBy(() -> ValueCodec.writeValue(w, new StringBuilder("x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("java.lang.StringBuilder");
        assertThatThrownBy(() -> ValueCodec.writeValue(w, List.of(1, new int[] {1})))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("[I");
        assertThatThrownBy(() -> ValueCodec.writeValue(w, Map.of("k", new java.util.Date(0))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("java.util.Date");
        assertThatThrownBy(() -> ValueCodec.writeValue(w, java.util.Set.of(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Set");
    }

    @Test
    void nestingIsBounded() {
        List<Object> cyclic = new ArrayList<>();
        cyclic.add(cyclic);
        assertThatThrownBy(() -> ValueCodec.writeValue(new RecordWriter(), cyclic))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nested");

        Object deep = "leaf";
        for (int i = 0; i < ValueCodec.MAX_DEPTH; i++) {
            deep = List.of(deep);
        }
        assertDeepEquals(roundTripValue(deep), deep, "deep");

        byte[] tooDeep = new byte[ValueCodec.MAX_DEPTH * 2 + 2];
        for (int i = 0; i < tooDeep.length; i += 2) {
            tooDeep[i] = ValueCodec.LIST;
            tooDeep[i + 1] = 1;
        }
        assertThatThrownBy(() -> ValueCodec.readValue(new RecordReader(tooDeep)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nested");
    }

    @Test
    void millisecondInstantsAreCompact() {
        RecordWriter w = new RecordWriter();
        ValueCodec.writeValue(w, Instant.ofEpochMilli(1_700_000_000_123L));
        assertThat(w.size()).isLessThanOrEqualTo(8);
    }

    // ------------------------------------------------------------------ messages

    static Message fullMessage() {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("zeta", "last-first");
        props.put("int", 42);
        props.put("long", 42L);
        props.put("short", (short) 42);
        props.put("byte", (byte) 42);
        props.put("uint", new Unsigned(42, 4));
        props.put("ulong", new Unsigned(-1, 8));
        props.put("bool", true);
        props.put("double", 4.2d);
        props.put("float", 4.2f);
        props.put("char", 'x');
        props.put("uuid", UUID.fromString("00000000-0000-0000-0000-00000000002a"));
        props.put("bytes", new byte[] {4, 2});
        props.put("ts", Instant.ofEpochMilli(1_700_000_000_000L));
        props.put("sym", new Symbol("sym"));
        props.put("offset", new Described(new Symbol("com.microsoft:datetime-offset"), 638_000_000_000_000_000L));
        props.put("list", List.of(1, "two", 3L));
        props.put("map", Map.of("nested", List.of()));
        props.put("null", null);
        props.put("alpha", "after-zeta");
        Map<String, Object> annotations = new LinkedHashMap<>();
        annotations.put("x-opt-custom", "kept");
        annotations.put("x-opt-number", new Unsigned(7, 1));
        annotations.put("x-opt-described", new Described(new Unsigned(0x137_0000_0001L, 8), new byte[] {1}));
        return Message.builder()
                .messageId(new Unsigned(123, 8))
                .userId(new byte[] {'u', 's', 'e', 'r'})
                .to("queue-a")
                .subject("subject ✓")
                .replyTo("reply-queue")
                .correlationId(UUID.fromString("123e4567-e89b-12d3-a456-426614174000"))
                .contentType("application/json")
                .contentEncoding("gzip")
                .absoluteExpiryTimeMs(1_700_000_100_000L)
                .creationTimeMs(1_700_000_000_000L)
                .sessionId("session-1")
                .groupSequence(-5L)
                .replyToSessionId("reply-session")
                .timeToLiveMs(100_000L)
                .durable(false)
                .priority(9)
                .scheduledEnqueueTimeMs(1_700_000_050_000L)
                .partitionKey("session-1")
                .viaPartitionKey("via")
                .applicationProperties(props)
                .annotations(annotations)
                .bodyFormat(3)
                .body("{\"hello\":\"world\"}".getBytes(StandardCharsets.UTF_8))
                .encodedSize(777)
                .build();
    }

    @Test
    void messageWithEveryFieldSetRoundTrips() {
        Message m = fullMessage();
        Message decoded = roundTripMessage(m);
        assertMessageEquals(decoded, m);
        assertThat(decoded.applicationProperties().get("int")).isInstanceOf(Integer.class);
        assertThat(decoded.applicationProperties().get("uint")).isEqualTo(new Unsigned(42, 4));
        assertThat(decoded.applicationProperties().keySet()).startsWith("zeta", "int").endsWith("alpha");
        assertThat(decoded.encodedSize()).isEqualTo(777);
        assertThat(decoded.durable()).isFalse();
    }

    @Test
    void messageWithOnlyDefaultsRoundTrips() {
        Message m = Message.builder().build();
        Message decoded = roundTripMessage(m);
        assertMessageEquals(decoded, m);
        assertThat(decoded.durable()).isTrue();
        assertThat(decoded.priority()).isEqualTo(4);
        assertThat(decoded.body()).isEmpty();
        assertThat(decoded.messageId()).isNull();
        assertThat(decoded.userId()).isNull();
        assertThat(decoded.timeToLiveMs()).isNull();

        RecordWriter w = new RecordWriter();
        MessageCodec.write(w, m);
        assertThat(w.size()).as("a default message is a handful of bytes").isEqualTo(6);
    }

    @Test
    void emptyStringsStayDistinctFromNulls() {
        Message m = Message.builder().to("").subject("").messageId("").sessionId("").userId(new byte[0]).build();
        Message decoded = roundTripMessage(m);
        assertMessageEquals(decoded, m);
        assertThat(decoded.to()).isEmpty();
        assertThat(decoded.userId()).isEmpty();
        assertThat(decoded.replyTo()).isNull();
    }

    @Test
    void oneWriterEncodesManyMessagesBackToBack() {
        RecordWriter w = new RecordWriter(8);
        Message a = fullMessage();
        Message b = Message.builder().messageId("b").body(new byte[] {1}).build();
        MessageCodec.write(w, a);
        MessageCodec.write(w, b);
        RecordReader r = new RecordReader(w.toByteArray());
        assertMessageEquals(MessageCodec.read(r), a);
        assertMessageEquals(MessageCodec.read(r), b);
        assertThat(r.hasRemaining()).isFalse();

        w.reset();
        MessageCodec.write(w, b);
        assertMessageEquals(MessageCodec.read(new RecordReader(w.toByteArray())), b);
    }

    @Test
    void messageRecordsWithAnotherVersionOrUnknownFlagsOrTruncationAreRejected() {
        RecordWriter w = new RecordWriter();
        MessageCodec.write(w, fullMessage());
        byte[] bytes = w.toByteArray();
        assertThat(bytes[0] & 0xFF).isEqualTo(MessageCodec.VERSION);

        byte[] otherVersion = bytes.clone();
        otherVersion[0] = 2;
        assertThatThrownBy(() -> MessageCodec.read(new RecordReader(otherVersion)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("version 2");

        RecordWriter unknownFlags = new RecordWriter();
        unknownFlags.writeByte(MessageCodec.VERSION);
        unknownFlags.writeVarInt(1 << 25);
        assertThatThrownBy(() -> MessageCodec.read(new RecordReader(unknownFlags.toByteArray())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flags");

        for (int cut = 0; cut < bytes.length; cut++) {
            int length = cut;
            assertThatThrownBy(() -> MessageCodec.read(new RecordReader(bytes, 0, length)))
                    .as("cut at %d", cut).isInstanceOf(IllegalArgumentException.class);
        }
    }

    // ------------------------------------------------------------------ entities

    @Test
    void queueWithEveryPropertyChangedRoundTrips() {
        QueueProperties q = QueueProperties.builder("orders/eu")
                .lockDuration(Duration.ofSeconds(45, 500_000_000))
                .maxDeliveryCount(3)
                .requiresSession(true)
                .defaultMessageTimeToLive(Duration.ofDays(2).plusNanos(1))
                .deadLetteringOnMessageExpiration(true)
                .requiresDuplicateDetection(true)
                .duplicateDetectionHistoryTimeWindow(Duration.ofHours(1))
                .enablePartitioning(true)
                .forwardTo("elsewhere")
                .forwardDeadLetteredMessagesTo("dlq-sink")
                .maxSizeInMegabytes(5120)
                .status(EntityStatus.SEND_DISABLED)
                .autoDeleteOnIdle(Duration.ofMinutes(30))
                .enableBatchedOperations(false)
                .userMetadata("metadata ✓")
                .maxMessageSizeInKilobytes(102_400)
                .authorizationRules(java.util.List.of(
                        new io.buslane.engine.entity.AuthorizationRule("sender", "primary=", "secondary=",
                                java.util.Set.of(io.buslane.common.auth.Right.SEND), null, null, 1_000, 2_000),
                        new io.buslane.engine.entity.AuthorizationRule("admin", "p2", null,
                                java.util.Set.of(io.buslane.common.auth.Right.MANAGE,
                                        io.buslane.common.auth.Right.LISTEN), "SharedAccessKey", "None", 3, 4)))
                .build();
        assertThat(roundTripQueue(q)).isEqualTo(q);
    }

    @Test
    void descriptionsWrittenBeforeAuthorizationRulesReadWithNone() {
        QueueProperties q = QueueProperties.builder("old").build();
        RecordWriter w = new RecordWriter();
        EntityCodec.writeQueue(w, q);
        byte[] bytes = w.toByteArray();
        // the first format ended after MaxMessageSizeInKilobytes: drop the appended rule count (one byte: 0) and
        // the forwarding addresses appended after it (two absent strings: one byte each)
        byte[] firstFormat = java.util.Arrays.copyOf(bytes, bytes.length - 3);
        assertThat(EntityCodec.readQueue(new RecordReader(firstFormat))).isEqualTo(q);
        TopicProperties t = TopicProperties.builder("old-topic").build();
        w.reset();
        EntityCodec.writeTopic(w, t);
        byte[] topicBytes = w.toByteArray();
        assertThat(EntityCodec.readTopic(new RecordReader(java.util.Arrays.copyOf(topicBytes,
                topicBytes.length - 1)))).isEqualTo(t);
    }

    @Test
    void aQueuesForwardingAddressesAsSentRoundTripAndDescriptionsWrittenBeforeThemReadWithout() {
        QueueProperties q = QueueProperties.builder("src").forwardTo("Target")
                .forwardToAddress("sb://localhost:5300/Target").forwardDeadLetteredMessagesTo("dl")
                .forwardDeadLetteredMessagesToAddress("https://localhost/dl").build();
        assertThat(roundTripQueue(q)).isEqualTo(q);
        assertThat(roundTripQueue(q).forwardToAddress()).isEqualTo("sb://localhost:5300/Target");
        // a subscription's addresses follow its rules in the meta record (MetaJournalTest), not its description

        RecordWriter w = new RecordWriter();
        QueueProperties plain = QueueProperties.builder("src").forwardTo("target").build();
        EntityCodec.writeQueue(w, plain);
        byte[] bytes = w.toByteArray();
        assertThat(EntityCodec.readQueue(new RecordReader(java.util.Arrays.copyOf(bytes, bytes.length - 2))))
                .isEqualTo(plain);
    }

    @Test
    void anAddressNamingAnotherEntityThanTheTargetIsNotKept() {
        QueueProperties q = QueueProperties.builder("src").forwardTo("a").forwardToAddress("sb://localhost/a")
                .build();
        // the target changed by a path that gives no address ($management, Config.json): the old one would lie
        assertThat(q.toBuilder().forwardTo("b").build().forwardToAddress()).isNull();
        assertThat(q.toBuilder().forwardTo(null).build().forwardToAddress()).isNull();
        assertThat(q.toBuilder().forwardTo("A").build().forwardToAddress()).isEqualTo("sb://localhost/a");
    }

    @Test
    void defaultQueueKeepsMaxDurationExactly() {
        QueueProperties q = QueueProperties.builder("q").build();
        QueueProperties decoded = roundTripQueue(q);
        assertThat(decoded).isEqualTo(q);
        assertThat(decoded.defaultMessageTimeToLive()).isEqualTo(Limits.MAX_DURATION);
        assertThat(decoded.autoDeleteOnIdle()).isEqualTo(Limits.MAX_DURATION);
        assertThat(decoded.autoDeleteOnIdle().getNano()).isEqualTo(477_580_700);
        assertThat(decoded.userMetadata()).isNull();
    }

    @ParameterizedTest
    @EnumSource(EntityStatus.class)
    void everyStatusRoundTrips(EntityStatus status) {
        QueueProperties q = QueueProperties.builder("q").status(status).build();
        assertThat(roundTripQueue(q).status()).isEqualTo(status);
        TopicProperties t = TopicProperties.builder("t").status(status).build();
        assertThat(roundTripTopic(t).status()).isEqualTo(status);
    }

    @Test
    void topicWithEveryPropertyChangedRoundTrips() {
        TopicProperties t = TopicProperties.builder("events/2024")
                .defaultMessageTimeToLive(Duration.ofHours(5))
                .requiresDuplicateDetection(true)
                .duplicateDetectionHistoryTimeWindow(Duration.ofSeconds(20, 5))
                .enablePartitioning(true)
                .maxSizeInMegabytes(2048)
                .status(EntityStatus.DISABLED)
                .autoDeleteOnIdle(Duration.ofDays(3))
                .supportOrdering(false)
                .enableBatchedOperations(false)
                .userMetadata("topic metadata")
                .maxMessageSizeInKilobytes(1024)
                .build();
        assertThat(roundTripTopic(t)).isEqualTo(t);
        TopicProperties defaults = TopicProperties.builder("t").build();
        assertThat(roundTripTopic(defaults)).isEqualTo(defaults);
    }

    @Test
    void subscriptionWithEveryPropertyChangedRoundTrips() {
        SubscriptionProperties s = SubscriptionProperties.builder("events/2024", "audit")
                .lockDuration(Duration.ofMinutes(5))
                .maxDeliveryCount(1)
                .requiresSession(true)
                .defaultMessageTimeToLive(Duration.ofSeconds(1))
                .deadLetteringOnMessageExpiration(true)
                .deadLetteringOnFilterEvaluationExceptions(false)
                .forwardTo("other-queue")
                .forwardDeadLetteredMessagesTo("dead-sink")
                .status(EntityStatus.RECEIVE_DISABLED)
                .autoDeleteOnIdle(Duration.ofMinutes(5))
                .enableBatchedOperations(false)
                .userMetadata("sub metadata")
                .build();
        assertThat(roundTripSubscription(s)).isEqualTo(s);
        SubscriptionProperties defaults = SubscriptionProperties.builder("t", "s").build();
        assertThat(roundTripSubscription(defaults)).isEqualTo(defaults);
    }

    static Stream<RuleProperties> rules() {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("region", "eu");
        props.put("count", 3);
        props.put("big", 3L);
        props.put("flag", false);
        props.put("uint", new Unsigned(3, 2));
        props.put("when", Instant.ofEpochMilli(12));
        props.put("a-last", "order matters");
        return Stream.of(
                RuleProperties.defaultRule(),
                new RuleProperties("true-with-action", RuleProperties.TrueFilter.INSTANCE, "SET sys.Label = 'x'"),
                new RuleProperties("never", RuleProperties.FalseFilter.INSTANCE, null),
                new RuleProperties("sql", new RuleProperties.SqlFilter("color = 'red' AND quantity > 10"),
                        "SET priority = 'high'; REMOVE color"),
                new RuleProperties("sql-empty", new RuleProperties.SqlFilter(""), null),
                new RuleProperties("sql-parameters", new RuleProperties.SqlFilter("region = @region AND n > @n",
                        props), "SET level = @level", Map.of("@level", 2.5d)),
                new RuleProperties("action-parameters", RuleProperties.TrueFilter.INSTANCE, "SET a = @a",
                        Map.of("a", "x")),
                new RuleProperties("corr-full", new RuleProperties.CorrelationFilter("corr", "mid", "to", "reply",
                        "label", "session", "reply-session", "text/plain", props), "SET x = 1"),
                new RuleProperties("corr-sparse", new RuleProperties.CorrelationFilter(null, null, null, null,
                        "only-subject", null, null, null, null), null));
    }

    @ParameterizedTest
    @MethodSource("rules")
    void everyFilterKindRoundTrips(RuleProperties rule) {
        RuleProperties decoded = roundTripRule(rule);
        assertThat(decoded).isEqualTo(rule);
        if (rule.filter() instanceof Enum<?>) {
            assertThat(decoded.filter()).isSameAs(rule.filter());
        }
        if (rule.filter() instanceof RuleProperties.CorrelationFilter c) {
            Map<String, Object> decodedProps = ((RuleProperties.CorrelationFilter) decoded.filter()).properties();
            assertThat(decodedProps.keySet()).containsExactlyElementsOf(c.properties().keySet());
            assertDeepEquals(decodedProps, c.properties(), "properties");
        }
    }

    @Test
    void entityRecordsOfAnotherKindOrVersionAreRejected() {
        RecordWriter w = new RecordWriter();
        EntityCodec.writeTopic(w, TopicProperties.builder("t").build());
        byte[] topic = w.toByteArray();
        assertThat(topic[0] & 0xFF).isEqualTo(EntityCodec.VERSION);
        assertThatThrownBy(() -> EntityCodec.readQueue(new RecordReader(topic)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("kind");
        byte[] otherVersion = topic.clone();
        otherVersion[0] = 9;
        assertThatThrownBy(() -> EntityCodec.readTopic(new RecordReader(otherVersion)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("version 9");
    }

    // ------------------------------------------------------------------ randomized

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3})
    void randomMessagesAndValuesRoundTrip(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        RecordWriter w = new RecordWriter(16);
        RecordReader r = new RecordReader(new byte[0]);
        for (int i = 0; i < 300; i++) {
            Message m = randomMessage(rnd);
            w.reset();
            MessageCodec.write(w, m);
            Object value = randomValue(rnd, 0);
            ValueCodec.writeValue(w, value);
            byte[] bytes = w.toByteArray();
            r.reset(bytes, 0, bytes.length);
            assertMessageEquals(MessageCodec.read(r), m);
            assertDeepEquals(ValueCodec.readValue(r), value, "value #" + i);
            assertThat(r.hasRemaining()).isFalse();
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3})
    void randomEntitiesRoundTrip(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        RecordWriter w = new RecordWriter();
        for (int i = 0; i < 100; i++) {
            QueueProperties q = QueueProperties.builder("q" + i)
                    .lockDuration(randomDuration(rnd, Limits.MIN_LOCK_DURATION, Limits.MAX_LOCK_DURATION))
                    .maxDeliveryCount(rnd.nextInt(1, Integer.MAX_VALUE))
                    .requiresSession(rnd.nextBoolean())
                    .defaultMessageTimeToLive(randomDuration(rnd, Limits.MIN_TTL, Limits.MAX_DURATION))
                    .deadLetteringOnMessageExpiration(rnd.nextBoolean())
                    .requiresDuplicateDetection(rnd.nextBoolean())
                    .duplicateDetectionHistoryTimeWindow(randomDuration(rnd,
                            Limits.MIN_DUPLICATE_DETECTION_WINDOW, Limits.MAX_DUPLICATE_DETECTION_WINDOW))
                    .enablePartitioning(rnd.nextBoolean())
                    .forwardTo(rnd.nextBoolean() ? null : randomString(rnd))
                    .forwardDeadLetteredMessagesTo(rnd.nextBoolean() ? null : randomString(rnd))
                    .maxSizeInMegabytes(rnd.nextLong(1, Limits.MAX_SIZE_MB + 1))
                    .status(EntityStatus.values()[rnd.nextInt(EntityStatus.values().length)])
                    .autoDeleteOnIdle(randomDuration(rnd, Limits.MIN_AUTO_DELETE_ON_IDLE, Limits.MAX_DURATION))
                    .enableBatchedOperations(rnd.nextBoolean())
                    .userMetadata(rnd.nextBoolean() ? null : randomString(rnd))
                    .maxMessageSizeInKilobytes(rnd.nextInt(1, Limits.MAX_MESSAGE_SIZE_KB + 1))
                    .build();
            w.reset();
            EntityCodec.writeQueue(w, q);
            assertThat(EntityCodec.readQueue(new RecordReader(w.toByteArray()))).isEqualTo(q);
        }
    }

    // ------------------------------------------------------------------ helpers

    private static Object roundTripValue(Object value) {
        RecordWriter w = new RecordWriter();
        ValueCodec.writeValue(w, value);
        RecordReader r = new RecordReader(w.toByteArray());
        Object decoded = ValueCodec.readValue(r);
        assertThat(r.hasRemaining()).as("reader consumed the whole value").isFalse();
        return decoded;
    }

    private static Message roundTripMessage(Message m) {
        RecordWriter w = new RecordWriter();
        MessageCodec.write(w, m);
        RecordReader r = new RecordReader(w.toByteArray());
        Message decoded = MessageCodec.read(r);
        assertThat(r.hasRemaining()).as("reader consumed the whole message").isFalse();
        return decoded;
    }

    private static QueueProperties roundTripQueue(QueueProperties q) {
        RecordWriter w = new RecordWriter();
        EntityCodec.writeQueue(w, q);
        RecordReader r = new RecordReader(w.toByteArray());
        QueueProperties decoded = EntityCodec.readQueue(r);
        assertThat(r.hasRemaining()).isFalse();
        return decoded;
    }

    private static TopicProperties roundTripTopic(TopicProperties t) {
        RecordWriter w = new RecordWriter();
        EntityCodec.writeTopic(w, t);
        RecordReader r = new RecordReader(w.toByteArray());
        TopicProperties decoded = EntityCodec.readTopic(r);
        assertThat(r.hasRemaining()).isFalse();
        return decoded;
    }

    private static SubscriptionProperties roundTripSubscription(SubscriptionProperties s) {
        RecordWriter w = new RecordWriter();
        EntityCodec.writeSubscription(w, s);
        RecordReader r = new RecordReader(w.toByteArray());
        SubscriptionProperties decoded = EntityCodec.readSubscription(r);
        assertThat(r.hasRemaining()).isFalse();
        return decoded;
    }

    private static RuleProperties roundTripRule(RuleProperties rule) {
        RecordWriter w = new RecordWriter();
        EntityCodec.writeRule(w, rule);
        RecordReader r = new RecordReader(w.toByteArray());
        RuleProperties decoded = EntityCodec.readRule(r);
        assertThat(r.hasRemaining()).isFalse();
        return decoded;
    }

    /** Compares every field of two messages; byte arrays by content, maps in order, values with their types. */
    static void assertMessageEquals(Message actual, Message expected) {
        assertDeepEquals(actual.messageId(), expected.messageId(), "messageId");
        assertThat(actual.userId()).as("userId").isEqualTo(expected.userId());
        assertThat(actual.to()).as("to").isEqualTo(expected.to());
        assertThat(actual.subject()).as("subject").isEqualTo(expected.subject());
        assertThat(actual.replyTo()).as("replyTo").isEqualTo(expected.replyTo());
        assertDeepEquals(actual.correlationId(), expected.correlationId(), "correlationId");
        assertThat(actual.contentType()).as("contentType").isEqualTo(expected.contentType());
        assertThat(actual.contentEncoding()).as("contentEncoding").isEqualTo(expected.contentEncoding());
        assertThat(actual.absoluteExpiryTimeMs()).as("absoluteExpiryTimeMs")
                .isEqualTo(expected.absoluteExpiryTimeMs());
        assertThat(actual.creationTimeMs()).as("creationTimeMs").isEqualTo(expected.creationTimeMs());
        assertThat(actual.sessionId()).as("sessionId").isEqualTo(expected.sessionId());
        assertThat(actual.groupSequence()).as("groupSequence").isEqualTo(expected.groupSequence());
        assertThat(actual.replyToSessionId()).as("replyToSessionId").isEqualTo(expected.replyToSessionId());
        assertThat(actual.timeToLiveMs()).as("timeToLiveMs").isEqualTo(expected.timeToLiveMs());
        assertThat(actual.durable()).as("durable").isEqualTo(expected.durable());
        assertThat(actual.priority()).as("priority").isEqualTo(expected.priority());
        assertThat(actual.scheduledEnqueueTimeMs()).as("scheduledEnqueueTimeMs")
                .isEqualTo(expected.scheduledEnqueueTimeMs());
        assertThat(actual.partitionKey()).as("partitionKey").isEqualTo(expected.partitionKey());
        assertThat(actual.viaPartitionKey()).as("viaPartitionKey").isEqualTo(expected.viaPartitionKey());
        assertDeepEquals(actual.applicationProperties(), expected.applicationProperties(), "applicationProperties");
        assertDeepEquals(actual.annotations(), expected.annotations(), "annotations");
        assertThat(actual.bodyFormat()).as("bodyFormat").isEqualTo(expected.bodyFormat());
        assertThat(actual.body()).as("body").isEqualTo(expected.body());
        assertThat(actual.encodedSize()).as("encodedSize").isEqualTo(expected.encodedSize());
    }

    /**
     * Deep equality that also checks types (an Integer must not come back as a Long), compares arrays by content,
     * floating-point values by raw bits, and maps entry by entry in iteration order.
     */
    static void assertDeepEquals(Object actual, Object expected, String path) {
        if (expected == null) {
            assertThat(actual).as(path).isNull();
            return;
        }
        assertThat(actual).as(path).isNotNull();
        if (expected instanceof List<?> e) {
            assertThat(actual).as(path).isInstanceOf(List.class);
            List<?> a = (List<?>) actual;
            assertThat(a).as(path + " size").hasSameSizeAs(e);
            Iterator<?> ai = a.iterator();
            int i = 0;
            for (Object element : e) {
                assertDeepEquals(ai.next(), element, path + "[" + i++ + "]");
            }
        } else if (expected instanceof Map<?, ?> e) {
            assertThat(actual).as(path).isInstanceOf(Map.class);
            Map<?, ?> a = (Map<?, ?>) actual;
            assertThat(a.size()).as(path + " size").isEqualTo(e.size());
            Iterator<? extends Map.Entry<?, ?>> ai = a.entrySet().iterator();
            for (Map.Entry<?, ?> entry : e.entrySet()) {
                Map.Entry<?, ?> actualEntry = ai.next();
                assertDeepEquals(actualEntry.getKey(), entry.getKey(), path + " key");
                assertDeepEquals(actualEntry.getValue(), entry.getValue(), path + "{" + entry.getKey() + "}");
            }
        } else if (expected instanceof byte[] e) {
            assertThat(actual).as(path).isInstanceOf(byte[].class);
            assertThat((byte[]) actual).as(path).isEqualTo(e);
        } else if (expected instanceof Described e) {
            assertThat(actual).as(path).isInstanceOf(Described.class);
            assertDeepEquals(((Described) actual).descriptor(), e.descriptor(), path + ".descriptor");
            assertDeepEquals(((Described) actual).value(), e.value(), path + ".value");
        } else if (expected instanceof Float e) {
            assertThat(actual).as(path).isInstanceOf(Float.class);
            assertThat(Float.floatToRawIntBits((Float) actual)).as(path).isEqualTo(Float.floatToRawIntBits(e));
        } else if (expected instanceof Double e) {
            assertThat(actual).as(path).isInstanceOf(Double.class);
            assertThat(Double.doubleToRawLongBits((Double) actual)).as(path)
                    .isEqualTo(Double.doubleToRawLongBits(e));
        } else {
            assertThat(actual.getClass()).as(path + " type").isEqualTo(expected.getClass());
            assertThat(actual).as(path).isEqualTo(expected);
        }
    }

    private static Message randomMessage(SplittableRandom rnd) {
        Message.Builder b = Message.builder();
        if (rnd.nextBoolean()) {
            b.messageId(rnd.nextBoolean() ? randomString(rnd) : randomScalar(rnd));
        }
        if (rnd.nextBoolean()) {
            b.userId(randomBytes(rnd));
        }
        if (rnd.nextBoolean()) {
            b.to(randomString(rnd));
        }
        if (rnd.nextBoolean()) {
            b.subject(randomString(rnd));
        }
        if (rnd.nextBoolean()) {
            b.replyTo(randomString(rnd));
        }
        if (rnd.nextBoolean()) {
            b.correlationId(randomScalar(rnd));
        }
        if (rnd.nextBoolean()) {
            b.contentType(randomString(rnd));
        }
        if (rnd.nextBoolean()) {
            b.contentEncoding(randomString(rnd));
        }
        if (rnd.nextBoolean()) {
            b.absoluteExpiryTimeMs(rnd.nextLong());
        }
        if (rnd.nextBoolean()) {
            b.creationTimeMs(rnd.nextLong(0, 4_000_000_000_000L));
        }
        if (rnd.nextBoolean()) {
            b.sessionId(randomString(rnd));
        }
        if (rnd.nextBoolean()) {
            b.groupSequence(rnd.nextLong());
        }
        if (rnd.nextBoolean()) {
            b.replyToSessionId(randomString(rnd));
        }
        if (rnd.nextBoolean()) {
            b.timeToLiveMs(rnd.nextLong());
        }
        b.durable(rnd.nextBoolean());
        b.priority(rnd.nextBoolean() ? rnd.nextInt(10) : rnd.nextInt());
        if (rnd.nextBoolean()) {
            b.scheduledEnqueueTimeMs(rnd.nextLong());
        }
        if (rnd.nextBoolean()) {
            b.partitionKey(randomString(rnd));
        }
        if (rnd.nextBoolean()) {
            b.viaPartitionKey(randomString(rnd));
        }
        int props = rnd.nextInt(6);
        for (int i = 0; i < props; i++) {
            b.applicationProperty(randomString(rnd), randomValue(rnd, 1));
        }
        int annotations = rnd.nextInt(3);
        for (int i = 0; i < annotations; i++) {
            b.annotation("x-opt-" + randomString(rnd), randomValue(rnd, 1));
        }
        b.bodyFormat(rnd.nextInt());
        if (rnd.nextBoolean()) {
            b.body(randomBytes(rnd));
        }
        if (rnd.nextBoolean()) {
            b.encodedSize(rnd.nextInt(1, Integer.MAX_VALUE));
        }
        return b.build();
    }

    private static Object randomValue(SplittableRandom rnd, int depth) {
        int kind = rnd.nextInt(depth < 4 ? 10 : 8);
        switch (kind) {
            case 8: {
                int n = rnd.nextInt(5);
                List<Object> list = rnd.nextBoolean() ? new ArrayList<>() : new LinkedList<>();
                for (int i = 0; i < n; i++) {
                    list.add(randomValue(rnd, depth + 1));
                }
                return list;
            }
            case 9: {
                int n = rnd.nextInt(5);
                if (rnd.nextInt(4) == 0) {
                    return new Described(randomValue(rnd, depth + 1), randomValue(rnd, depth + 1));
                }
                Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    map.put(rnd.nextBoolean() ? randomString(rnd) : randomValue(rnd, depth + 1),
                            randomValue(rnd, depth + 1));
                }
                return map;
            }
            default:
                return randomScalar(rnd);
        }
    }

    private static Object randomScalar(SplittableRandom rnd) {
        switch (rnd.nextInt(18)) {
            case 0: return null;
            case 1: return rnd.nextBoolean();
            case 2: return (byte) rnd.nextInt();
            case 3: return (short) rnd.nextInt();
            case 4: return rnd.nextBoolean() ? rnd.nextInt() : rnd.nextInt(-100, 100);
            case 5: return rnd.nextBoolean() ? rnd.nextLong() : rnd.nextLong(-100, 100);
            case 6: return Float.intBitsToFloat(rnd.nextInt());
            case 7: return Double.longBitsToDouble(rnd.nextLong());
            case 8: return (char) rnd.nextInt(0x10000);
            case 9: return randomString(rnd);
            case 10: return new UUID(rnd.nextLong(), rnd.nextLong());
            case 11: return randomBytes(rnd);
            case 12: return randomInstant(rnd);
            case 13: return new Symbol(randomString(rnd));
            case 14: return new Unsigned(rnd.nextLong(), new int[] {1, 2, 4, 8}[rnd.nextInt(4)]);
            case 15: return Instant.ofEpochMilli(rnd.nextLong(0, 4_000_000_000_000L));
            case 16: return Decimal.decimal128(rnd.nextLong(), rnd.nextLong());
            default: return rnd.nextInt(1000);
        }
    }

    private static Instant randomInstant(SplittableRandom rnd) {
        long seconds = rnd.nextBoolean()
                ? rnd.nextLong(Instant.MIN.getEpochSecond(), Instant.MAX.getEpochSecond() + 1)
                : rnd.nextLong(-10_000_000_000L, 10_000_000_000L);
        int nanos = rnd.nextBoolean() ? rnd.nextInt(1000) * 1_000_000 : rnd.nextInt(1_000_000_000);
        return Instant.ofEpochSecond(seconds, nanos);
    }

    private static String randomString(SplittableRandom rnd) {
        int n = rnd.nextInt(rnd.nextInt(8) == 0 ? 200 : 20);
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            switch (rnd.nextInt(6)) {
                case 0: sb.append((char) rnd.nextInt(0x10000)); break; // anything, lone surrogates included
                case 1: sb.appendCodePoint(rnd.nextInt(0x10000, 0x110000)); break;
                case 2: sb.append((char) rnd.nextInt(0x80, 0x800)); break;
                default: sb.append((char) rnd.nextInt(0x20, 0x7F)); break;
            }
        }
        return sb.toString();
    }

    private static byte[] randomBytes(SplittableRandom rnd) {
        byte[] bytes = new byte[rnd.nextInt(rnd.nextInt(8) == 0 ? 1000 : 16)];
        rnd.nextBytes(bytes);
        return bytes;
    }

    private static Duration randomDuration(SplittableRandom rnd, Duration min, Duration max) {
        if (rnd.nextInt(4) == 0) {
            return rnd.nextBoolean() ? min : max;
        }
        long seconds = rnd.nextLong(min.getSeconds(), max.getSeconds());
        return Duration.ofSeconds(seconds, rnd.nextInt(1_000_000_000));
    }
}
