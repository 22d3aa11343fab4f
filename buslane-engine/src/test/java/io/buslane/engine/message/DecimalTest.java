package io.buslane.engine.message;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;

import org.junit.jupiter.api.Test;

class DecimalTest {

    private static void assertValue(Decimal d, String expected) {
        assertThat(d.toBigDecimal()).isEqualTo(new BigDecimal(expected)); // same value and scale
    }

    @Test
    void ieeeBidVectors() {
        assertValue(Decimal.decimal32(0x3280_0001), "1");
        assertValue(Decimal.decimal32(0xB280_0007), "-7");
        assertValue(Decimal.decimal32(0x77F8_967F), "9999999E+90"); // the largest decimal32, large-coefficient form
        assertValue(Decimal.decimal64(0x31C0_0000_0000_0001L), "1");
        assertValue(Decimal.decimal64(0xB180_0000_0000_02EEL), "-7.50");
        assertValue(Decimal.decimal64(0x77FB_86F2_6FC0_FFFFL), "9999999999999999E+369"); // the largest decimal64
        assertValue(Decimal.decimal128(0x3040_0000_0000_0000L, 1), "1");
        assertValue(Decimal.decimal128(0x303C_0000_0000_0000L, 12_345), "123.45");
        // the largest decimal128: 10^34 - 1 with the largest exponent 6111
        assertValue(Decimal.decimal128(0x5FFF_ED09_BEAD_87C0L, 0x378D_8E63_FFFF_FFFFL),
                "9999999999999999999999999999999999E+6111");
        // non-canonical coefficients (above the precision) are zero
        assertValue(Decimal.decimal64(0x6000_0000_0000_0000L | (398L << 51) | ((1L << 51) - 1)), "0");
        assertValue(Decimal.decimal128(0x6000_0000_0000_0000L | (6176L << 47), 0), "0");
    }

    @Test
    void dotnetDecimalsAsMicrosoftAzureAmqpWritesThem() {
        // Microsoft.Azure.Amqp DecimalEncoding.EncodeValue: byte 0 = sign | (6176 - scale) >> 9,
        // byte 1 = ((6176 - scale) & 0x7F) << 1, bytes 4-15 = the 96-bit coefficient
        assertValue(Decimal.decimal128(0x0C3E_0000_0000_0000L, 15), "1.5");
        assertValue(Decimal.decimal128(0x8C38_0000_0000_0000L, 1), "-0.0001");
        assertValue(Decimal.decimal128(0x0C40_0000_0000_0000L, 42), "42");
        assertValue(Decimal.decimal128(0x0C40_0000_FFFF_FFFFL, -1L), "79228162514264337593543950335");
        assertValue(Decimal.decimal128(0x0C08_0000_0000_0000L, 1), "1E-28");
        assertValue(Decimal.decimal128(0x8C08_0000_0000_0000L, 0x0000_0001_0000_0000L), "-4.294967296E-19");
    }

    @Test
    void specialValues() {
        assertThat(Decimal.decimal32(0x7800_0000).toNumber()).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(Decimal.decimal64(0xF800_0000_0000_0000L).toNumber()).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(Decimal.decimal128(0x7C00_0000_0000_0000L, 0).toNumber()).isEqualTo(Double.NaN);
        assertThat(Decimal.decimal128(0xFE00_0000_0000_0000L, 0).toString()).isEqualTo("NaN"); // signalling NaN
        assertThat(Decimal.decimal128(0x7C00_0000_0000_0000L, 0).isFinite()).isFalse();
        assertThatThrownBy(() -> Decimal.decimal32(0x7C00_0000).toBigDecimal())
                .isInstanceOf(ArithmeticException.class);
        assertThat(Decimal.decimal32(0xB280_0000).toBigDecimal()).isEqualByComparingTo("0"); // negative zero
    }

    @Test
    void ofBigDecimalWritesStandardDecimal128() {
        assertThat(Decimal.of(new BigDecimal("1"))).isEqualTo(Decimal.decimal128(0x3040_0000_0000_0000L, 1));
        assertThat(Decimal.of(new BigDecimal("-123.45")))
                .isEqualTo(Decimal.decimal128(0xB03C_0000_0000_0000L, 12_345));
        for (String s : new String[] {"0", "-0.00", "1.5", "79228162514264337593543950335", "1E-6176", "-1E+6111",
                "9999999999999999999999999999999999E+6111", "0.0000000000000000000000000001"}) {
            assertValue(Decimal.of(new BigDecimal(s)), s);
        }
        // 35 digits round half even to 34; a scale below the smallest exponent rounds to it
        assertValue(Decimal.of(new BigDecimal("12345678901234567890123456789012345")),
                "1234567890123456789012345678901234E+1");
        assertValue(Decimal.of(new BigDecimal("1.5E-6176")), "2E-6176");
        assertValue(Decimal.of(new BigDecimal("1E+6112")), "10E+6111");
        assertThatThrownBy(() -> Decimal.of(new BigDecimal("1E+6145"))).isInstanceOf(ArithmeticException.class);
    }

    @Test
    void widthsAreChecked() {
        assertThatThrownBy(() -> new Decimal(2, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Decimal(8, 1, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Decimal(4, 0, 1L << 32)).isInstanceOf(IllegalArgumentException.class);
        assertThat(Decimal.decimal32(-1).bits32()).isEqualTo(-1);
        assertThat(Decimal.decimal32(-1).low()).isEqualTo(0xFFFF_FFFFL);
    }
}
