package io.buslane.engine.persist;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Not thread-safe; one per reader thread. Reads, from a byte array range, what a {@link RecordWriter} wrote (see
 * there for the encodings); reusable via {@link #reset(byte[], int, int)}. The array is not copied.
 *
 * <p>Malformed input (truncation, an over-long var-int, a boolean other than 0 or 1, an invalid string byte
 * sequence) fails with an {@link IllegalArgumentException}; reading never goes past the range.
 */
public final class RecordReader {

    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private static final byte[] EMPTY = new byte[0];

    private byte[] buf;
    private int pos;
    private int limit;

    /** A reader over the whole array. */
    public RecordReader(byte[] buf) {
        this(buf, 0, buf.length);
    }

    /** A reader over {@code length} bytes of {@code buf} from {@code offset}. */
    public RecordReader(byte[] buf, int offset, int length) {
        reset(buf, offset, length);
    }

    /** Points this reader at another range. */
    public RecordReader reset(byte[] buf, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, buf.length);
        this.buf = buf;
        this.pos = offset;
        this.limit = offset + length;
        return this;
    }

    /** The index in the array of the next byte to read. */
    public int position() {
        return pos;
    }

    /** The number of bytes left in the range. */
    public int remaining() {
        return limit - pos;
    }

    public boolean hasRemaining() {
        return pos < limit;
    }

    /** Skips {@code n} bytes. */
    public void skip(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("cannot skip a negative count: " + n);
        }
        require(n);
        pos += n;
    }

    public byte readByte() {
        require(1);
        return buf[pos++];
    }

    public int readUnsignedByte() {
        return readByte() & 0xFF;
    }

    public boolean readBoolean() {
        byte b = readByte();
        if (b == 0) {
            return false;
        }
        if (b == 1) {
            return true;
        }
        throw malformed("boolean byte " + b);
    }

    public short readShort() {
        require(2);
        short v = (short) SHORT.get(buf, pos);
        pos += 2;
        return v;
    }

    public char readChar() {
        return (char) readShort();
    }

    public int readInt() {
        require(4);
        int v = (int) INT.get(buf, pos);
        pos += 4;
        return v;
    }

    public long readLong() {
        require(8);
        long v = (long) LONG.get(buf, pos);
        pos += 8;
        return v;
    }

    public float readFloat() {
        return Float.intBitsToFloat(readInt());
    }

    public double readDouble() {
        return Double.longBitsToDouble(readLong());
    }

    /** Unsigned LEB128, at most 5 bytes. */
    public int readVarInt() {
        byte[] b = buf;
        int p = pos;
        int result = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            if (p >= limit) {
                throw truncated(1);
            }
            byte x = b[p++];
            result |= (x & 0x7F) << shift;
            if (x >= 0) {
                if (shift == 28 && (x & 0x70) != 0) {
                    throw malformed("var-int overflows 32 bits");
                }
                pos = p;
                return result;
            }
        }
        throw malformed("var-int longer than 5 bytes");
    }

    /** Unsigned LEB128, at most 10 bytes. */
    public long readVarLong() {
        byte[] b = buf;
        int p = pos;
        long result = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (p >= limit) {
                throw truncated(1);
            }
            byte x = b[p++];
            result |= (long) (x & 0x7F) << shift;
            if (x >= 0) {
                if (shift == 63 && (x & 0x7E) != 0) {
                    throw malformed("var-long overflows 64 bits");
                }
                pos = p;
                return result;
            }
        }
        throw malformed("var-long longer than 10 bytes");
    }

    public int readSignedVarInt() {
        int v = readVarInt();
        return (v >>> 1) ^ -(v & 1);
    }

    public long readSignedVarLong() {
        long v = readVarLong();
        return (v >>> 1) ^ -(v & 1);
    }

    public Long readNullableLong() {
        return readBoolean() ? readSignedVarLong() : null;
    }

    /** Nullable bytes, as a new array (a shared empty array for length 0, which nobody can mutate). */
    public byte[] readBytes() {
        int len = readLengthPlusOne();
        if (len < 0) {
            return null;
        }
        if (len == 0) {
            return EMPTY;
        }
        require(len);
        byte[] out = new byte[len];
        System.arraycopy(buf, pos, out, 0, len);
        pos += len;
        return out;
    }

    /** Copies the next {@code length} bytes into {@code dst}. */
    public void readRaw(byte[] dst, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, dst.length);
        require(length);
        System.arraycopy(buf, pos, dst, offset, length);
        pos += length;
    }

    /** A nullable string. */
    public String readString() {
        int len = readLengthPlusOne();
        if (len < 0) {
            return null;
        }
        if (len == 0) {
            return "";
        }
        require(len);
        byte[] b = buf;
        int start = pos;
        int end = start + len;
        int i = start;
        while (i < end && b[i] >= 0) {
            i++;
        }
        String s = i == end
                ? new String(b, start, len, StandardCharsets.ISO_8859_1) // all ASCII: one copy, compact string
                : decode(b, start, i, end);
        pos = end;
        return s;
    }

    /** Decodes UTF-8 (plus lone surrogates as three-byte sequences); {@code [start, ascii)} is known ASCII. */
    private static String decode(byte[] b, int start, int ascii, int end) {
        char[] out = new char[end - start];
        int n = 0;
        for (int i = start; i < ascii; i++) {
            out[n++] = (char) b[i];
        }
        int i = ascii;
        while (i < end) {
            int x = b[i++];
            if (x >= 0) {
                out[n++] = (char) x;
            } else if ((x & 0xE0) == 0xC0) {
                requireContinuation(b, i, 1, end);
                out[n++] = (char) (((x & 0x1F) << 6) | (b[i] & 0x3F));
                i += 1;
            } else if ((x & 0xF0) == 0xE0) {
                requireContinuation(b, i, 2, end);
                out[n++] = (char) (((x & 0x0F) << 12) | ((b[i] & 0x3F) << 6) | (b[i + 1] & 0x3F));
                i += 2;
            } else if ((x & 0xF8) == 0xF0) {
                requireContinuation(b, i, 3, end);
                int cp = ((x & 0x07) << 18) | ((b[i] & 0x3F) << 12) | ((b[i + 1] & 0x3F) << 6) | (b[i + 2] & 0x3F);
                if (cp < Character.MIN_SUPPLEMENTARY_CODE_POINT || cp > Character.MAX_CODE_POINT) {
                    throw malformed("invalid four-byte string sequence");
                }
                out[n++] = Character.highSurrogate(cp);
                out[n++] = Character.lowSurrogate(cp);
                i += 3;
            } else {
                throw malformed("invalid string byte 0x" + Integer.toHexString(x & 0xFF));
            }
        }
        return new String(out, 0, n);
    }

    private static void requireContinuation(byte[] b, int i, int count, int end) {
        if (end - i < count) {
            throw malformed("string ends inside a multi-byte sequence");
        }
        for (int k = i; k < i + count; k++) {
            if ((b[k] & 0xC0) != 0x80) {
                throw malformed("invalid string continuation byte");
            }
        }
    }

    /** Reads a "length + 1" prefix: -1 for null, else the length (checked against the bytes left). */
    private int readLengthPlusOne() {
        int v = readVarInt();
        if (v == 0) {
            return -1;
        }
        int len = v - 1;
        if (len < 0 || len > limit - pos) {
            throw truncated(Integer.toUnsignedLong(v) - 1);
        }
        return len;
    }

    private void require(int n) {
        if (limit - pos < n) {
            throw truncated(n);
        }
    }

    private IllegalArgumentException truncated(long needed) {
        return new IllegalArgumentException("malformed record: truncated (needed " + needed + " bytes at offset "
                + pos + ", " + (limit - pos) + " left)");
    }

    private static IllegalArgumentException malformed(String what) {
        return new IllegalArgumentException("malformed record: " + what);
    }
}
