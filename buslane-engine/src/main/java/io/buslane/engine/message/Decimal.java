package io.buslane.engine.message;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * An AMQP {@code decimal32}, {@code decimal64} or {@code decimal128} value (AMQP 1.0 §1.6.15-17: IEEE 754-2008
 * decimals), kept as its raw encoding so that it is stored and sent back bit for bit; {@link #toBigDecimal} reads
 * its value (for SQL filters and display).
 *
 * <p>The encoding read is the binary integer decimal (BID) layout, the one Microsoft.Azure.Amqp (the library of the
 * .NET SDK and of Service Bus itself) uses for a .NET {@code decimal}: sign bit, biased exponent, binary
 * coefficient. Microsoft.Azure.Amqp writes the 14-bit exponent of a decimal128 shifted by 9 bits instead of 7, so
 * the field it writes for a .NET decimal of scale {@code s} (0 to 28) is {@code 6176 - s - 4608}; its own reader
 * truncates the scale to a byte, which undoes the error (4608 is a multiple of 256). A decimal128 whose exponent
 * lies in that band ({@code -4608 - 28} to {@code -4608}) is therefore read as .NET means it; every other value is
 * read as IEEE 754-2008 BID.
 *
 * @param width the AMQP type by its size in bytes: 4 ({@code decimal32}), 8 ({@code decimal64}) or 16
 *              ({@code decimal128})
 * @param high  the most significant 64 bits of a decimal128; 0 for the other widths
 * @param low   the least significant 64 bits of a decimal128, the 64 bits of a decimal64, or the 32 bits of a
 *              decimal32 (as an unsigned int)
 */
public record Decimal(int width, long high, long low) {

    private static final int DECIMAL32_BIAS = 101;
    private static final int DECIMAL64_BIAS = 398;
    private static final int DECIMAL128_BIAS = 6176;
    private static final int DECIMAL128_MAX_EXPONENT = 6111;
    /** The error in the decimal128 exponent Microsoft.Azure.Amqp writes ({@code 6176 >> 7 - 6176 >> 9} times 128). */
    private static final int DOTNET_EXPONENT_ERROR = 4608;
    private static final int DOTNET_MAX_SCALE = 28;
    private static final long DECIMAL32_MAX_COEFFICIENT = 9_999_999L;
    private static final long DECIMAL64_MAX_COEFFICIENT = 9_999_999_999_999_999L;
    private static final BigInteger DECIMAL128_MAX_COEFFICIENT = BigInteger.TEN.pow(34).subtract(BigInteger.ONE);
    private static final BigInteger LOW_64_MASK = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    public Decimal {
        if (width != 4 && width != 8 && width != 16) {
            throw new IllegalArgumentException("width must be 4, 8 or 16: " + width);
        }
        if (width != 16 && high != 0) {
            throw new IllegalArgumentException("a decimal" + width * 8 + " has no high bits");
        }
        if (width == 4 && (low >>> 32) != 0) {
            throw new IllegalArgumentException("a decimal32 has 32 bits: " + Long.toHexString(low));
        }
    }

    /** A decimal32 from its 32 bits. */
    public static Decimal decimal32(int bits) {
        return new Decimal(4, 0, bits & 0xFFFF_FFFFL);
    }

    /** A decimal64 from its 64 bits. */
    public static Decimal decimal64(long bits) {
        return new Decimal(8, 0, bits);
    }

    /** A decimal128 from its most and least significant 64 bits (network order). */
    public static Decimal decimal128(long high, long low) {
        return new Decimal(16, high, low);
    }

    /**
     * The value as a decimal128 in the standard BID layout, rounded to 34 digits (half even); a scale beyond the
     * smallest exponent rounds further.
     *
     * @throws ArithmeticException when the value is too large for a decimal128
     */
    public static Decimal of(BigDecimal value) {
        BigDecimal v = value.round(MathContext.DECIMAL128);
        if (-v.scale() < -DECIMAL128_BIAS) {
            v = v.setScale(DECIMAL128_BIAS, RoundingMode.HALF_EVEN);
        } else if (-v.scale() > DECIMAL128_MAX_EXPONENT) {
            v = v.setScale(-DECIMAL128_MAX_EXPONENT);
            if (v.precision() > MathContext.DECIMAL128.getPrecision()) {
                throw new ArithmeticException("decimal out of the decimal128 range: " + value);
            }
        }
        BigInteger coefficient = v.unscaledValue().abs();
        long exponent = DECIMAL128_BIAS - v.scale();
        long high = (exponent << 49) | coefficient.shiftRight(64).longValue();
        if (v.signum() < 0) {
            high |= Long.MIN_VALUE;
        }
        return decimal128(high, coefficient.and(LOW_64_MASK).longValue());
    }

    /** The 32 bits of a decimal32. */
    public int bits32() {
        return (int) low;
    }

    /** Whether the value is a number (neither infinite nor NaN). */
    public boolean isFinite() {
        return special() == 0;
    }

    /**
     * The value as a {@link BigDecimal} (a negative zero reads as zero, a non-canonical coefficient as zero, as
     * IEEE 754-2008 says).
     *
     * @throws ArithmeticException for an infinity or NaN
     */
    public BigDecimal toBigDecimal() {
        if (!isFinite()) {
            throw new ArithmeticException("not a finite decimal: " + this);
        }
        boolean negative = signBits() < 0;
        BigInteger coefficient;
        int exponent;
        switch (width) {
            case 4 -> {
                int bits = bits32();
                boolean large = ((bits >>> 29) & 3) == 3;
                exponent = (large ? (bits >>> 21) : (bits >>> 23)) & 0xFF;
                long c = large ? 0x80_0000L | (bits & 0x1F_FFFF) : bits & 0x7F_FFFF;
                coefficient = BigInteger.valueOf(c > DECIMAL32_MAX_COEFFICIENT ? 0 : c);
                exponent -= DECIMAL32_BIAS;
            }
            case 8 -> {
                boolean large = ((low >>> 61) & 3) == 3;
                exponent = (int) ((large ? (low >>> 51) : (low >>> 53)) & 0x3FF);
                long c = large ? (1L << 53) | (low & ((1L << 51) - 1)) : low & ((1L << 53) - 1);
                coefficient = BigInteger.valueOf(c > DECIMAL64_MAX_COEFFICIENT ? 0 : c);
                exponent -= DECIMAL64_BIAS;
            }
            default -> {
                if (((high >>> 61) & 3) == 3) {
                    // the implicit 0b100 prefix puts the coefficient above 10^34 - 1: non-canonical, i.e. zero
                    exponent = (int) ((high >>> 47) & 0x3FFF) - DECIMAL128_BIAS;
                    coefficient = BigInteger.ZERO;
                } else {
                    exponent = (int) ((high >>> 49) & 0x3FFF) - DECIMAL128_BIAS;
                    coefficient = BigInteger.valueOf(high & ((1L << 49) - 1)).shiftLeft(64)
                            .or(BigInteger.valueOf(low).and(LOW_64_MASK));
                    if (coefficient.compareTo(DECIMAL128_MAX_COEFFICIENT) > 0) {
                        coefficient = BigInteger.ZERO;
                    }
                    int dotnetScale = -(exponent + DOTNET_EXPONENT_ERROR);
                    if (dotnetScale >= 0 && dotnetScale <= DOTNET_MAX_SCALE) {
                        exponent = -dotnetScale;
                    }
                }
            }
        }
        BigDecimal value = new BigDecimal(coefficient, -exponent);
        return negative ? value.negate() : value;
    }

    /**
     * The value as a number: {@link #toBigDecimal} when finite, otherwise {@link Double} NaN or an infinity with
     * the value's sign.
     */
    public Number toNumber() {
        return switch (special()) {
            case 0 -> toBigDecimal();
            case 1 -> signBits() < 0 ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
            default -> Double.NaN;
        };
    }

    /** The value's decimal text ({@link BigDecimal#toString}), or {@code NaN}, {@code Infinity}, {@code -Infinity}. */
    @Override
    public String toString() {
        return toNumber().toString();
    }

    /** The top 32 bits as a signed int (sign bit first). */
    private int signBits() {
        return switch (width) {
            case 4 -> bits32();
            case 8 -> (int) (low >>> 32);
            default -> (int) (high >>> 32);
        };
    }

    /** 0 for a number, 1 for an infinity, 2 for NaN (the five bits after the sign: 11110 and 11111). */
    private int special() {
        int combination = (signBits() >>> 26) & 0x1F;
        return combination == 0x1E ? 1 : combination == 0x1F ? 2 : 0;
    }
}
