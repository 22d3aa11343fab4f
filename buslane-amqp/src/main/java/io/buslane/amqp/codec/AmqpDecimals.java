package io.buslane.amqp.codec;

import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * Reads AMQP {@code decimal32}/{@code decimal64}/{@code decimal128} values (IEEE 754-2008 decimals in the binary
 * integer decimal layout, as Microsoft.Azure.Amqp writes them for .NET {@code decimal}) as {@code double}.
 *
 * <p>proton-j cannot do this itself: its {@code Decimal32/64/128.doubleValue()} always answer 0.
 */
final class AmqpDecimals {

    private static final int DECIMAL32_BIAS = 101;
    private static final int DECIMAL64_BIAS = 398;
    private static final int DECIMAL128_BIAS = 6176;
    private static final long DECIMAL32_MAX_COEFFICIENT = 9_999_999L;
    private static final long DECIMAL64_MAX_COEFFICIENT = 9_999_999_999_999_999L;
    private static final BigInteger DECIMAL128_MAX_COEFFICIENT = BigInteger.TEN.pow(34).subtract(BigInteger.ONE);

    private AmqpDecimals() {
    }

    /** The value of a decimal32 given its 32 bits. */
    static double decimal32(int bits) {
        boolean negative = bits < 0;
        int special = (bits >>> 26) & 0x1F;
        if (special == 0x1E) {
            return negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
        }
        if (special == 0x1F) {
            return Double.NaN;
        }
        int exponent;
        long coefficient;
        if (((bits >>> 29) & 3) == 3) {
            exponent = (bits >>> 21) & 0xFF;
            coefficient = 0x80_0000L | (bits & 0x1F_FFFF);
        } else {
            exponent = (bits >>> 23) & 0xFF;
            coefficient = bits & 0x7F_FFFF;
        }
        if (coefficient > DECIMAL32_MAX_COEFFICIENT) {
            coefficient = 0; // non-canonical coefficients mean zero
        }
        return value(negative, BigInteger.valueOf(coefficient), exponent - DECIMAL32_BIAS);
    }

    /** The value of a decimal64 given its 64 bits. */
    static double decimal64(long bits) {
        boolean negative = bits < 0;
        int special = (int) ((bits >>> 58) & 0x1F);
        if (special == 0x1E) {
            return negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
        }
        if (special == 0x1F) {
            return Double.NaN;
        }
        int exponent;
        long coefficient;
        if (((bits >>> 61) & 3) == 3) {
            exponent = (int) ((bits >>> 51) & 0x3FF);
            coefficient = (1L << 53) | (bits & ((1L << 51) - 1));
        } else {
            exponent = (int) ((bits >>> 53) & 0x3FF);
            coefficient = bits & ((1L << 53) - 1);
        }
        if (coefficient > DECIMAL64_MAX_COEFFICIENT) {
            coefficient = 0;
        }
        return value(negative, BigInteger.valueOf(coefficient), exponent - DECIMAL64_BIAS);
    }

    /** The value of a decimal128 given its most and least significant 64 bits (network order). */
    static double decimal128(long msb, long lsb) {
        boolean negative = msb < 0;
        int special = (int) ((msb >>> 58) & 0x1F);
        if (special == 0x1E) {
            return negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
        }
        if (special == 0x1F) {
            return Double.NaN;
        }
        if (((msb >>> 61) & 3) == 3) {
            // The implicit 0b100 prefix makes the coefficient exceed 10^34 - 1: non-canonical, i.e. zero.
            int exponent = (int) ((msb >>> 47) & 0x3FFF);
            return value(negative, BigInteger.ZERO, exponent - DECIMAL128_BIAS);
        }
        int exponent = (int) ((msb >>> 49) & 0x3FFF);
        long high = msb & ((1L << 49) - 1);
        BigInteger coefficient = BigInteger.valueOf(high).shiftLeft(64)
                .or(new BigInteger(Long.toUnsignedString(lsb)));
        if (coefficient.compareTo(DECIMAL128_MAX_COEFFICIENT) > 0) {
            coefficient = BigInteger.ZERO;
        }
        return value(negative, coefficient, exponent - DECIMAL128_BIAS);
    }

    private static double value(boolean negative, BigInteger coefficient, int exponent) {
        if (coefficient.signum() == 0) {
            return negative ? -0.0d : 0.0d;
        }
        double magnitude = new BigDecimal(coefficient, -exponent).doubleValue();
        return negative ? -magnitude : magnitude;
    }
}
