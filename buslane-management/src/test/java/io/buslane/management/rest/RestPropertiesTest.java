package io.buslane.management.rest;

import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class RestPropertiesTest {

    @Test
    void headerValuesParseByTheServiceConvention() {
        assertThat(RestProperties.parseHeaderValue("\"Red\"")).isEqualTo("Red");
        assertThat(RestProperties.parseHeaderValue("\"12345,ABC\"")).isEqualTo("12345,ABC");
        assertThat(RestProperties.parseHeaderValue("\"42\"")).as("quoted numbers stay strings").isEqualTo("42");
        assertThat(RestProperties.parseHeaderValue("42")).isEqualTo(42);
        assertThat(RestProperties.parseHeaderValue("-7")).isEqualTo(-7);
        assertThat(RestProperties.parseHeaderValue("12345678901")).isEqualTo(12345678901L);
        assertThat(RestProperties.parseHeaderValue("1.5")).isEqualTo(1.5);
        assertThat(RestProperties.parseHeaderValue("1e3")).isEqualTo(1000.0);
        assertThat(RestProperties.parseHeaderValue("true")).isEqualTo(true);
        assertThat(RestProperties.parseHeaderValue("False")).isEqualTo(false);
        assertThat(RestProperties.parseHeaderValue("High")).as("bare text is a string").isEqualTo("High");
        assertThat(RestProperties.parseHeaderValue("\"Sun, 06 Nov 1994 08:49:37 GMT\""))
                .isEqualTo(Instant.parse("1994-11-06T08:49:37Z"));
    }

    @Test
    void headerValuesFormatByTheServiceConvention() {
        assertThat(RestProperties.formatHeaderValue("Red")).isEqualTo("\"Red\"");
        assertThat(RestProperties.formatHeaderValue(42)).isEqualTo("42");
        assertThat(RestProperties.formatHeaderValue(io.buslane.engine.message.Decimal.decimal128(
                0x0C3E_0000_0000_0000L, 15))).isEqualTo("1.5"); // .NET's 1.5m
        assertThat(RestProperties.formatHeaderValue(io.buslane.engine.message.Decimal.decimal32(0xF800_0000)))
                .isEqualTo("\"-Infinity\"");
        assertThat(RestProperties.formatHeaderValue(12345678901L)).isEqualTo("12345678901");
        assertThat(RestProperties.formatHeaderValue(true)).isEqualTo("true");
        assertThat(RestProperties.formatHeaderValue(2.5)).isEqualTo("2.5");
        assertThat(RestProperties.formatHeaderValue(Instant.parse("2014-07-02T01:32:27Z")))
                .isEqualTo("\"Wed, 02 Jul 2014 01:32:27 GMT\"");
        assertThat(RestProperties.formatHeaderValue("a\r\nb")).isEqualTo("\"a  b\"");
    }

    @Test
    void datesAreRfc1123WithTwoDigitDays() {
        long ms = Instant.parse("2014-07-02T01:32:27Z").toEpochMilli();
        assertThat(RestProperties.formatDate(ms)).isEqualTo("Wed, 02 Jul 2014 01:32:27 GMT");
        assertThat(RestProperties.parseDate("Wed, 2 Jul 2014 01:32:27 GMT")).isEqualTo(ms);
        assertThat(RestProperties.parseDate("Wed, 02 Jul 2014 01:32:27 GMT")).isEqualTo(ms);
    }

    @Test
    void userPropertyHeadersExcludeHttpAndApiHeaders() {
        assertThat(RestProperties.isUserPropertyHeader("Color")).isTrue();
        assertThat(RestProperties.isUserPropertyHeader("authorization")).isFalse();
        assertThat(RestProperties.isUserPropertyHeader("BrokerProperties")).isFalse();
        assertThat(RestProperties.isUserPropertyHeader("Content-Type")).isFalse();
        assertThat(RestProperties.isUserPropertyHeader("x-ms-retrypolicy")).isFalse();
        assertThat(RestProperties.isUserPropertyHeader("User-Agent")).isFalse();
    }
}
