package io.buslane.amqp.codec;

import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Described;
import io.buslane.engine.message.Unsigned;

import java.lang.reflect.Array;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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

/**
 * Conversion between proton-j values and the engine's neutral values (see {@link AmqpCodec#toEngine} and
 * {@link AmqpCodec#toProton}), and the short descriptions of values that error messages use.
 */
final class AmqpValues {

    private AmqpValues() {
    }

    /** Implements {@link AmqpCodec#toEngine}. */
    static Object toEngine(Object protonValue) {
        return toEngine(protonValue, 0);
    }

    private static Object toEngine(Object v, int depth) {
        if (v == null || v instanceof String || v instanceof Long || v instanceof Integer || v instanceof Boolean
                || v instanceof Double || v instanceof Float || v instanceof Short || v instanceof Byte
                || v instanceof Character || v instanceof UUID) {
            return v;
        }
        if (v instanceof Symbol s) {
            return new io.buslane.engine.message.Symbol(s.toString()); // CHECKSTYLE:FQN proton's Symbol is imported
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
        // CHECKSTYLE:FQN proton's Symbol is imported
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

    /** Implements {@link AmqpCodec#toProton}. */
    static Object toProton(Object engineValue) {
        return toProton(engineValue, 0, null);
    }

    /** As {@link #toProton(Object)}; counts the described values converted on {@code codec} when given. */
    static Object toProton(Object v, int depth, ProtonCodecs.Codec codec) {
        if (v == null || v instanceof String || v instanceof Long || v instanceof Integer || v instanceof Boolean
                || v instanceof Double || v instanceof Float || v instanceof Short || v instanceof Byte
                || v instanceof Character || v instanceof UUID) {
            return v;
        }
        if (v instanceof io.buslane.engine.message.Symbol s) { // CHECKSTYLE:FQN proton's Symbol is imported
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

    /** Implements {@link AmqpCodec#toEngineStringMap}. */
    static Map<String, Object> toEngineStringMap(Map<?, ?> protonMap) {
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

    /** Implements {@link AmqpCodec#toProtonSymbolMap}. */
    static Map<Symbol, Object> toProtonSymbolMap(Map<String, Object> engineMap) {
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
        if (depth >= AmqpCodec.MAX_NESTING_DEPTH) {
            throw new IllegalArgumentException("values nested deeper than " + AmqpCodec.MAX_NESTING_DEPTH + " levels");
        }
    }

    /** A value as error messages name it: its type, or its descriptor for a described value. */
    static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof DescribedType d) {
            return "a described value with descriptor " + d.getDescriptor();
        }
        return "a value of type " + value.getClass().getSimpleName();
    }
}
