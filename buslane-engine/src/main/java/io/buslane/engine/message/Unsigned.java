package io.buslane.engine.message;

/**
 * An unsigned integer value of a given width (1, 2, 4 or 8 bytes), kept distinct from signed values so that
 * application properties and annotations round-trip with their original type.
 *
 * @param bits  the value's bits (for width 8 the full 64 bits, read as unsigned)
 * @param width the width in bytes: 1, 2, 4 or 8
 */
public record Unsigned(long bits, int width) {
    public Unsigned {
        if (width != 1 && width != 2 && width != 4 && width != 8) {
            throw new IllegalArgumentException("width must be 1, 2, 4 or 8: " + width);
        }
    }

    @Override
    public String toString() {
        return Long.toUnsignedString(bits);
    }
}
