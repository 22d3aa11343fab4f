package io.buslane.amqp.codec;

import java.nio.ByteBuffer;
import java.util.Arrays;

import org.apache.qpid.proton.codec.ReadableBuffer;
import org.apache.qpid.proton.codec.WritableBuffer;

/** A proton-j {@link WritableBuffer} over a byte array that grows as needed. Not thread-safe. */
final class GrowableWritableBuffer implements WritableBuffer {

    private static final int MAX_CAPACITY = Integer.MAX_VALUE - 16;

    private byte[] bytes;
    private int position;
    private int size;

    GrowableWritableBuffer(int initialCapacity) {
        this.bytes = new byte[Math.max(64, initialCapacity)];
    }

    /** A copy of the bytes written (up to the highest position written). */
    byte[] toByteArray() {
        return Arrays.copyOf(bytes, size);
    }

    /** The backing array (valid up to {@link #size()}) until the next write or {@link #reset()}. */
    byte[] array() {
        return bytes;
    }

    /** Bytes written (the highest position written). */
    int size() {
        return size;
    }

    int capacity() {
        return bytes.length;
    }

    /** Empties the buffer for reuse, keeping its array. */
    void reset() {
        position = 0;
        size = 0;
    }

    private void ensure(int more) {
        long needed = (long) position + more;
        if (needed > bytes.length) {
            if (needed > MAX_CAPACITY) {
                throw new IllegalStateException("encoded message too large: " + needed + " bytes");
            }
            long grown = Math.max(needed, Math.min((long) bytes.length * 2, MAX_CAPACITY));
            bytes = Arrays.copyOf(bytes, (int) grown);
        }
    }

    private void advance(int n) {
        position += n;
        if (position > size) {
            size = position;
        }
    }

    @Override
    public void put(byte b) {
        ensure(1);
        bytes[position] = b;
        advance(1);
    }

    @Override
    public void putFloat(float f) {
        putInt(Float.floatToRawIntBits(f));
    }

    @Override
    public void putDouble(double d) {
        putLong(Double.doubleToRawLongBits(d));
    }

    @Override
    public void put(byte[] src, int offset, int length) {
        ensure(length);
        System.arraycopy(src, offset, bytes, position, length);
        advance(length);
    }

    @Override
    public void putShort(short s) {
        ensure(2);
        bytes[position] = (byte) (s >>> 8);
        bytes[position + 1] = (byte) s;
        advance(2);
    }

    @Override
    public void putInt(int i) {
        ensure(4);
        bytes[position] = (byte) (i >>> 24);
        bytes[position + 1] = (byte) (i >>> 16);
        bytes[position + 2] = (byte) (i >>> 8);
        bytes[position + 3] = (byte) i;
        advance(4);
    }

    @Override
    public void putLong(long l) {
        putInt((int) (l >>> 32));
        putInt((int) l);
    }

    @Override
    public boolean hasRemaining() {
        return position < MAX_CAPACITY;
    }

    @Override
    public void ensureRemaining(int requiredRemaining) {
        if (requiredRemaining < 0) {
            throw new IllegalArgumentException("required remaining must be >= 0: " + requiredRemaining);
        }
        ensure(requiredRemaining);
    }

    @Override
    public int remaining() {
        return MAX_CAPACITY - position;
    }

    @Override
    public int position() {
        return position;
    }

    @Override
    public void position(int newPosition) {
        if (newPosition < 0 || newPosition > MAX_CAPACITY) {
            throw new IllegalArgumentException("position out of range: " + newPosition);
        }
        if (newPosition > bytes.length) {
            int saved = position;
            position = 0;
            ensure(newPosition);
            position = saved;
        }
        position = newPosition;
        if (position > size) {
            size = position;
        }
    }

    @Override
    public void put(ByteBuffer payload) {
        int n = payload.remaining();
        ensure(n);
        payload.get(bytes, position, n);
        advance(n);
    }

    @Override
    public void put(ReadableBuffer payload) {
        ensure(payload.remaining());
        payload.get(this);
    }

    @Override
    public int limit() {
        return MAX_CAPACITY;
    }
}
