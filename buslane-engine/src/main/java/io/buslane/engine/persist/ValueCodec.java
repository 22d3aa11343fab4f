package io.buslane.engine.persist;

import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Described;
import io.buslane.engine.message.Symbol;
import io.buslane.engine.message.Unsigned;

import java.time.DateTimeException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;
import java.util.UUID;
import java.util.function.BiConsumer;

/**
 * Stateless and thread-safe. Encodes the neutral property values of {@link io.buslane.engine.message.Message}
 * (application properties, annotations, message and correlation ids) as one tag byte followed by the value's
 * payload, so that each value reads back with its original type.
 *
 * <table>
 *   <caption>Value encodings (primitives as in {@link RecordWriter})</caption>
 *   <tr><th>Tag</th><th>Type</th><th>Payload</th></tr>
 *   <tr><td>0</td><td>{@code null}</td><td>none</td></tr>
 *   <tr><td>1 / 2</td><td>{@code Boolean} false / true</td><td>none</td></tr>
 *   <tr><td>3</td><td>{@code Byte}</td><td>1 byte</td></tr>
 *   <tr><td>4</td><td>{@code Short}</td><td>2 bytes</td></tr>
 *   <tr><td>5</td><td>{@code Integer}</td><td>signed var-int</td></tr>
 *   <tr><td>6</td><td>{@code Long}</td><td>signed var-long</td></tr>
 *   <tr><td>7</td><td>{@code Float}</td><td>4 bytes, raw bits</td></tr>
 *   <tr><td>8</td><td>{@code Double}</td><td>8 bytes, raw bits</td></tr>
 *   <tr><td>9</td><td>{@code Character}</td><td>2 bytes</td></tr>
 *   <tr><td>10</td><td>{@code String}</td><td>string</td></tr>
 *   <tr><td>11</td><td>{@code UUID}</td><td>most then least significant bits, 8 bytes each</td></tr>
 *   <tr><td>12</td><td>{@code byte[]}</td><td>bytes</td></tr>
 *   <tr><td>13</td><td>{@code Instant} on a whole millisecond</td><td>signed var-long epoch milliseconds</td></tr>
 *   <tr><td>14</td><td>any other {@code Instant}</td><td>signed var-long epoch seconds, var-int nanoseconds</td></tr>
 *   <tr><td>15</td><td>{@code Symbol}</td><td>string</td></tr>
 *   <tr><td>16</td><td>{@code Unsigned}</td><td>width byte (1, 2, 4, 8), var-long bits</td></tr>
 *   <tr><td>17</td><td>{@code Described}</td><td>descriptor value, then value</td></tr>
 *   <tr><td>18</td><td>{@code List}</td><td>var-int count, then the elements</td></tr>
 *   <tr><td>19</td><td>{@code Map}</td><td>var-int count, then each entry's key and value, in order</td></tr>
 *   <tr><td>20</td><td>{@code Decimal}</td><td>width byte (4, 8, 16), then the raw bits: 4 bytes, 8 bytes, or the
 *       high then low 8 bytes</td></tr>
 * </table>
 *
 * <p>Lists decode to {@link ArrayList}, maps to {@link LinkedHashMap} (preserving the encoded order). Nesting is
 * limited to {@value #MAX_DEPTH} levels, which also turns a self-containing list into an error rather than a
 * stack overflow. Any other type fails with an {@link IllegalArgumentException} naming its class.
 */
public final class ValueCodec {

    /** The deepest nesting of lists, maps and described values that is encoded or decoded. */
    public static final int MAX_DEPTH = 256;

    static final byte NULL = 0;
    static final byte FALSE = 1;
    static final byte TRUE = 2;
    static final byte BYTE = 3;
    static final byte SHORT = 4;
    static final byte INT = 5;
    static final byte LONG = 6;
    static final byte FLOAT = 7;
    static final byte DOUBLE = 8;
    static final byte CHAR = 9;
    static final byte STRING = 10;
    static final byte UUID_TAG = 11;
    static final byte BINARY = 12;
    static final byte TIMESTAMP_MILLIS = 13;
    static final byte TIMESTAMP = 14;
    static final byte SYMBOL = 15;
    static final byte UNSIGNED = 16;
    static final byte DESCRIBED = 17;
    static final byte LIST = 18;
    static final byte MAP = 19;
    static final byte DECIMAL = 20;

    /** Epoch seconds strictly inside ±this convert to epoch milliseconds without overflow. */
    private static final long MILLIS_SECONDS_BOUND = Long.MAX_VALUE / 1000;
    private static final int NANOS_PER_MILLI = 1_000_000;

    private ValueCodec() {
    }

    /** Writes one value (tag and payload). */
    public static void writeValue(RecordWriter w, Object value) {
        write(w, value, 0);
    }

    /** Reads one value written by {@link #writeValue}. */
    public static Object readValue(RecordReader r) {
        return read(r, 0);
    }

    /**
     * Writes a string-keyed map (application properties, annotations): var-int count, then for each entry in
     * iteration order the key as a string and the value as by {@link #writeValue}. Keys may be null.
     */
    public static void writeStringMap(RecordWriter w, Map<String, ?> map) {
        int size = map.size();
        w.writeVarInt(size);
        int written = 0;
        for (Map.Entry<String, ?> e : map.entrySet()) {
            w.writeString(e.getKey());
            write(w, e.getValue(), 1);
            written++;
        }
        checkCount(size, written);
    }

    /** Reads a map written by {@link #writeStringMap} into a new {@link LinkedHashMap}, in the encoded order. */
    public static Map<String, Object> readStringMap(RecordReader r) {
        int n = readCount(r, 2);
        LinkedHashMap<String, Object> map = new LinkedHashMap<>(capacityFor(n));
        for (int i = 0; i < n; i++) {
            String key = r.readString();
            map.put(key, read(r, 1));
        }
        return map;
    }

    /**
     * Reads a map written by {@link #writeStringMap}, handing each entry to {@code sink} in the encoded order
     * (saves building an intermediate map when the entries go into a builder).
     */
    public static void readStringMap(RecordReader r, BiConsumer<String, Object> sink) {
        int n = readCount(r, 2);
        for (int i = 0; i < n; i++) {
            String key = r.readString();
            sink.accept(key, read(r, 1));
        }
    }

    private static void write(RecordWriter w, Object v, int depth) {
        if (v == null) {
            w.writeByte(NULL);
        } else if (v instanceof String s) {
            w.writeByte(STRING);
            w.writeString(s);
        } else if (v instanceof Long l) {
            w.writeByte(LONG);
            w.writeSignedVarLong(l);
        } else if (v instanceof Integer i) {
            w.writeByte(INT);
            w.writeSignedVarInt(i);
        } else if (v instanceof Boolean b) {
            w.writeByte(b ? TRUE : FALSE);
        } else if (v instanceof Symbol s) {
            w.writeByte(SYMBOL);
            w.writeString(s.value());
        } else if (v instanceof UUID u) {
            w.writeByte(UUID_TAG);
            w.writeLong(u.getMostSignificantBits());
            w.writeLong(u.getLeastSignificantBits());
        } else if (v instanceof byte[] bytes) {
            w.writeByte(BINARY);
            w.writeBytes(bytes);
        } else if (v instanceof Instant t) {
            writeInstant(w, t);
        } else if (v instanceof Unsigned u) {
            w.writeByte(UNSIGNED);
            w.writeByte(u.width());
            w.writeVarLong(u.bits());
        } else if (v instanceof Decimal d) {
            writeDecimal(w, d);
        } else if (v instanceof Double d) {
            w.writeByte(DOUBLE);
            w.writeDouble(d);
        } else if (v instanceof Float f) {
            w.writeByte(FLOAT);
            w.writeFloat(f);
        } else if (v instanceof Short s) {
            w.writeByte(SHORT);
            w.writeShort(s);
        } else if (v instanceof Byte b) {
            w.writeByte(BYTE);
            w.writeByte(b);
        } else if (v instanceof Character c) {
            w.writeByte(CHAR);
            w.writeChar(c);
        } else if (v instanceof Described d) {
            checkDepth(depth);
            w.writeByte(DESCRIBED);
            write(w, d.descriptor(), depth + 1);
            write(w, d.value(), depth + 1);
        } else if (v instanceof List<?> list) {
            checkDepth(depth);
            writeList(w, list, depth + 1);
        } else if (v instanceof Map<?, ?> map) {
            checkDepth(depth);
            writeMap(w, map, depth + 1);
        } else {
            throw new IllegalArgumentException("unsupported property value type " + v.getClass().getName());
        }
    }

    private static void writeInstant(RecordWriter w, Instant t) {
        long seconds = t.getEpochSecond();
        int nanos = t.getNano();
        if (nanos % NANOS_PER_MILLI == 0 && seconds > -MILLIS_SECONDS_BOUND && seconds < MILLIS_SECONDS_BOUND) {
            w.writeByte(TIMESTAMP_MILLIS);
            w.writeSignedVarLong(seconds * 1000 + nanos / NANOS_PER_MILLI);
        } else {
            w.writeByte(TIMESTAMP);
            w.writeSignedVarLong(seconds);
            w.writeVarInt(nanos);
        }
    }

    private static void writeDecimal(RecordWriter w, Decimal d) {
        w.writeByte(DECIMAL);
        w.writeByte(d.width());
        switch (d.width()) {
            case 4 -> w.writeInt(d.bits32());
            case 8 -> w.writeLong(d.low());
            default -> {
                w.writeLong(d.high());
                w.writeLong(d.low());
            }
        }
    }

    private static void writeList(RecordWriter w, List<?> list, int depth) {
        int size = list.size();
        w.writeByte(LIST);
        w.writeVarInt(size);
        int written = 0;
        if (list instanceof RandomAccess) {
            for (; written < size; written++) {
                write(w, list.get(written), depth);
            }
        } else {
            for (Iterator<?> it = list.iterator(); it.hasNext(); written++) {
                write(w, it.next(), depth);
            }
        }
        checkCount(size, written);
    }

    private static void writeMap(RecordWriter w, Map<?, ?> map, int depth) {
        int size = map.size();
        w.writeByte(MAP);
        w.writeVarInt(size);
        int written = 0;
        for (Map.Entry<?, ?> e : map.entrySet()) {
            write(w, e.getKey(), depth);
            write(w, e.getValue(), depth);
            written++;
        }
        checkCount(size, written);
    }

    private static Object read(RecordReader r, int depth) {
        byte tag = r.readByte();
        switch (tag) {
            case NULL:
                return null;
            case FALSE:
                return Boolean.FALSE;
            case TRUE:
                return Boolean.TRUE;
            case BYTE:
                return r.readByte();
            case SHORT:
                return r.readShort();
            case INT:
                return r.readSignedVarInt();
            case LONG:
                return r.readSignedVarLong();
            case FLOAT:
                return r.readFloat();
            case DOUBLE:
                return r.readDouble();
            case CHAR:
                return r.readChar();
            case STRING:
                return requireNonNull(r.readString(), "string");
            case UUID_TAG:
                return new UUID(r.readLong(), r.readLong());
            case BINARY:
                return requireNonNull(r.readBytes(), "binary");
            case TIMESTAMP_MILLIS:
                return Instant.ofEpochMilli(r.readSignedVarLong());
            case TIMESTAMP:
                return readInstant(r);
            case SYMBOL:
                return new Symbol(requireNonNull(r.readString(), "symbol"));
            case UNSIGNED:
                return readUnsigned(r);
            case DESCRIBED: {
                checkDepth(depth);
                Object descriptor = read(r, depth + 1);
                return new Described(descriptor, read(r, depth + 1));
            }
            case LIST:
                checkDepth(depth);
                return readList(r, depth + 1);
            case MAP:
                checkDepth(depth);
                return readMap(r, depth + 1);
            case DECIMAL:
                return readDecimal(r);
            default:
                throw new IllegalArgumentException("malformed record: unknown value tag " + tag);
        }
    }

    private static Instant readInstant(RecordReader r) {
        long seconds = r.readSignedVarLong();
        int nanos = r.readVarInt();
        if (nanos < 0 || nanos > 999_999_999) {
            throw new IllegalArgumentException("malformed record: timestamp nanoseconds " + nanos);
        }
        try {
            return Instant.ofEpochSecond(seconds, nanos);
        } catch (DateTimeException e) {
            throw new IllegalArgumentException("malformed record: timestamp out of range: " + seconds + " s", e);
        }
    }

    private static Unsigned readUnsigned(RecordReader r) {
        byte width = r.readByte();
        if (width != 1 && width != 2 && width != 4 && width != 8) {
            throw new IllegalArgumentException("malformed record: unsigned width " + width);
        }
        return new Unsigned(r.readVarLong(), width);
    }

    private static Decimal readDecimal(RecordReader r) {
        byte width = r.readByte();
        return switch (width) {
            case 4 -> Decimal.decimal32(r.readInt());
            case 8 -> Decimal.decimal64(r.readLong());
            case 16 -> Decimal.decimal128(r.readLong(), r.readLong());
            default -> throw new IllegalArgumentException("malformed record: decimal width " + width);
        };
    }

    private static List<Object> readList(RecordReader r, int depth) {
        int n = readCount(r, 1);
        ArrayList<Object> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(read(r, depth));
        }
        return list;
    }

    private static Map<Object, Object> readMap(RecordReader r, int depth) {
        int n = readCount(r, 2);
        LinkedHashMap<Object, Object> map = new LinkedHashMap<>(capacityFor(n));
        for (int i = 0; i < n; i++) {
            Object key = read(r, depth);
            map.put(key, read(r, depth));
        }
        return map;
    }

    /** Reads an element count, rejecting one that the remaining bytes cannot hold (no huge allocations). */
    private static int readCount(RecordReader r, int minBytesPerElement) {
        int n = r.readVarInt();
        if (n < 0 || n > r.remaining() / minBytesPerElement) {
            throw new IllegalArgumentException("malformed record: element count " + Integer.toUnsignedString(n)
                    + " exceeds the " + r.remaining() + " bytes left");
        }
        return n;
    }

    private static int capacityFor(int entries) {
        return entries < 3 ? entries + 1 : (int) (entries / 0.75f) + 1;
    }

    private static void checkDepth(int depth) {
        if (depth >= MAX_DEPTH) {
            throw new IllegalArgumentException("property value nested deeper than " + MAX_DEPTH + " levels");
        }
    }

    private static void checkCount(int size, int written) {
        if (size != written) {
            throw new IllegalArgumentException("collection size " + size + " differs from its " + written
                    + " elements (modified while encoding?)");
        }
    }

    private static <T> T requireNonNull(T value, String what) {
        if (value == null) {
            throw new IllegalArgumentException("malformed record: null " + what + " payload");
        }
        return value;
    }
}
