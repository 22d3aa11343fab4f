package io.buslane.engine.persist;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * Not thread-safe; one per writer thread. An append-only binary encoder over a growable byte array, like
 * {@link java.io.DataOutput} without the stream, the checked exceptions or the per-call allocation; reusable via
 * {@link #reset()}. {@link RecordReader} reads what it writes.
 *
 * <p>Encodings:
 * <ul>
 *   <li>byte, boolean (0 or 1): one byte;</li>
 *   <li>short, char, int, long, float, double: fixed width, big-endian (floating-point values by their raw bits,
 *       so every NaN payload survives);</li>
 *   <li>var-int / var-long: unsigned LEB128 (seven bits per byte, least significant group first, high bit set on
 *       every byte but the last); at most 5 / 10 bytes. A negative value is written as its unsigned bits
 *       and reads back unchanged, but takes the maximum width;</li>
 *   <li>signed var-int / var-long: zig-zag, then LEB128, so small negative values stay short;</li>
 *   <li>string: var-int (length in bytes + 1), then the bytes; length prefix 0 stands for {@code null}. The bytes
 *       are UTF-8, except that an unpaired surrogate is written as its own three-byte sequence (as WTF-8 does), so
 *       that every Java string round-trips exactly;</li>
 *   <li>bytes: var-int (length + 1), then the bytes; 0 stands for {@code null};</li>
 *   <li>nullable long: one byte (0 for {@code null}, 1 otherwise), then a signed var-long when present.</li>
 * </ul>
 */
public final class RecordWriter {

    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** The largest array size the VM reliably allocates. */
    private static final int MAX_CAPACITY = Integer.MAX_VALUE - 8;

    /** Buffers up to this size are kept by {@link #reset()}; larger ones are dropped so one huge record does not
     *  pin its buffer for the writer's lifetime. */
    private static final int RETAINED_CAPACITY = 1 << 20;

    private static final int DEFAULT_CAPACITY = 256;

    private final int initialCapacity;
    private byte[] buf;
    private int size;

    /** A writer with a small initial buffer. */
    public RecordWriter() {
        this(DEFAULT_CAPACITY);
    }

    /** A writer whose buffer starts at {@code initialCapacity} bytes (and grows as needed). */
    public RecordWriter(int initialCapacity) {
        if (initialCapacity < 0) {
            throw new IllegalArgumentException("initialCapacity must not be negative: " + initialCapacity);
        }
        this.initialCapacity = initialCapacity;
        this.buf = new byte[initialCapacity];
    }

    /**
     * Empties the writer for the next record. Keeps the buffer, unless it grew beyond both 1 MiB and the initial
     * capacity, in which case it goes back to the initial capacity.
     */
    public RecordWriter reset() {
        size = 0;
        if (buf.length > RETAINED_CAPACITY && buf.length > initialCapacity) {
            buf = new byte[initialCapacity];
        }
        return this;
    }

    /** The number of bytes written since construction or the last {@link #reset()}. */
    public int size() {
        return size;
    }

    /** A copy of the bytes written. */
    public byte[] toByteArray() {
        return Arrays.copyOf(buf, size);
    }

    /**
     * The internal buffer, whose first {@link #size()} bytes are the record; for callers that copy it elsewhere
     * themselves. Valid only until the next write or {@link #reset()}.
     */
    public byte[] buffer() {
        return buf;
    }

    public void writeByte(int v) {
        ensure(1);
        buf[size++] = (byte) v;
    }

    public void writeBoolean(boolean v) {
        ensure(1);
        buf[size++] = v ? (byte) 1 : (byte) 0;
    }

    public void writeShort(int v) {
        ensure(2);
        SHORT.set(buf, size, (short) v);
        size += 2;
    }

    public void writeChar(char v) {
        writeShort(v);
    }

    public void writeInt(int v) {
        ensure(4);
        INT.set(buf, size, v);
        size += 4;
    }

    public void writeLong(long v) {
        ensure(8);
        LONG.set(buf, size, v);
        size += 8;
    }

    public void writeFloat(float v) {
        writeInt(Float.floatToRawIntBits(v));
    }

    public void writeDouble(double v) {
        writeLong(Double.doubleToRawLongBits(v));
    }

    /** Unsigned LEB128 of the int's 32 bits (1 to 5 bytes). */
    public void writeVarInt(int v) {
        ensure(5);
        byte[] b = buf;
        int p = size;
        while ((v & ~0x7F) != 0) {
            b[p++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        b[p++] = (byte) v;
        size = p;
    }

    /** Unsigned LEB128 of the long's 64 bits (1 to 10 bytes). */
    public void writeVarLong(long v) {
        ensure(10);
        byte[] b = buf;
        int p = size;
        while ((v & ~0x7FL) != 0) {
            b[p++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        b[p++] = (byte) v;
        size = p;
    }

    /** Zig-zag, then unsigned LEB128 (1 to 5 bytes; small magnitudes of either sign are short). */
    public void writeSignedVarInt(int v) {
        writeVarInt((v << 1) ^ (v >> 31));
    }

    /** Zig-zag, then unsigned LEB128 (1 to 10 bytes; small magnitudes of either sign are short). */
    public void writeSignedVarLong(long v) {
        writeVarLong((v << 1) ^ (v >> 63));
    }

    /** A nullable long: a presence byte, then a signed var-long when present. */
    public void writeNullableLong(Long v) {
        if (v == null) {
            writeByte(0);
        } else {
            writeByte(1);
            writeSignedVarLong(v);
        }
    }

    /** Nullable bytes: var-int (length + 1), then the bytes; 0 for {@code null}. */
    public void writeBytes(byte[] v) {
        if (v == null) {
            writeVarInt(0);
            return;
        }
        writeBytes(v, 0, v.length);
    }

    /** A non-null byte range in the same encoding as {@link #writeBytes(byte[])}. */
    public void writeBytes(byte[] v, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, v.length);
        if (length == Integer.MAX_VALUE) {
            throw new IllegalArgumentException("byte array too large to encode");
        }
        writeVarInt(length + 1);
        writeRaw(v, offset, length);
    }

    /** Bytes without any length prefix; the reader must know the length. */
    public void writeRaw(byte[] v, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, v.length);
        ensure(length);
        System.arraycopy(v, offset, buf, size, length);
        size += length;
    }

    /**
     * A nullable string: var-int (encoded length + 1), then the string's UTF-8 bytes (unpaired surrogates as their
     * own three-byte sequences); 0 for {@code null}. Encodes straight into the buffer, without a temporary array.
     */
    public void writeString(String s) {
        if (s == null) {
            writeVarInt(0);
            return;
        }
        int chars = s.length();
        long encoded = encodedLength(s, chars);
        if (encoded >= MAX_CAPACITY) {
            throw new IllegalArgumentException("string too large to encode: " + encoded + " bytes");
        }
        int len = (int) encoded;
        writeVarInt(len + 1);
        ensure(len);
        byte[] b = buf;
        int p = size;
        if (len == chars) {
            for (int i = 0; i < chars; i++) {
                b[p++] = (byte) s.charAt(i);
            }
        } else {
            for (int i = 0; i < chars; i++) {
                char c = s.charAt(i);
                if (c < 0x80) {
                    b[p++] = (byte) c;
                } else if (c < 0x800) {
                    b[p++] = (byte) (0xC0 | (c >> 6));
                    b[p++] = (byte) (0x80 | (c & 0x3F));
                } else if (Character.isHighSurrogate(c) && i + 1 < chars
                        && Character.isLowSurrogate(s.charAt(i + 1))) {
                    int cp = Character.toCodePoint(c, s.charAt(++i));
                    b[p++] = (byte) (0xF0 | (cp >> 18));
                    b[p++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                    b[p++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                    b[p++] = (byte) (0x80 | (cp & 0x3F));
                } else {
                    b[p++] = (byte) (0xE0 | (c >> 12));
                    b[p++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                    b[p++] = (byte) (0x80 | (c & 0x3F));
                }
            }
        }
        size = p;
    }

    private static long encodedLength(String s, int chars) {
        long n = chars;
        for (int i = 0; i < chars; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                if (c < 0x800) {
                    n += 1;
                } else if (Character.isHighSurrogate(c) && i + 1 < chars
                        && Character.isLowSurrogate(s.charAt(i + 1))) {
                    n += 2; // two chars, four bytes
                    i++;
                } else {
                    n += 2;
                }
            }
        }
        return n;
    }

    private void ensure(int n) {
        if (buf.length - size < n) {
            grow(n);
        }
    }

    private void grow(int n) {
        long needed = (long) size + n;
        if (needed > MAX_CAPACITY) {
            throw new IllegalStateException("record too large: " + needed + " bytes");
        }
        long doubled = Math.max(16L, (long) buf.length * 2);
        int capacity = (int) Math.min(MAX_CAPACITY, Math.max(needed, doubled));
        buf = Arrays.copyOf(buf, capacity);
    }
}
