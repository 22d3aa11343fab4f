package io.buslane.common.time;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TimeSpansTest {

    @Test
    void maxValueIsTimeSpanMaxValue() {
        assertThat(TimeSpans.MAX_VALUE.getSeconds() * 10_000_000L + TimeSpans.MAX_VALUE.getNano() / 100)
                .isEqualTo(Long.MAX_VALUE);
        assertThat(TimeSpans.format(TimeSpans.MAX_VALUE)).isEqualTo("P10675199DT2H48M5.4775807S");
        assertThat(TimeSpans.parse("P10675199DT2H48M5.4775807S")).isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("PT256204778H48M5.4775807S")).isEqualTo(TimeSpans.MAX_VALUE);
    }

    @Test
    void formatsAsXmlConvertDoes() {
        assertThat(TimeSpans.format(Duration.ofMinutes(1))).isEqualTo("PT1M");
        assertThat(TimeSpans.format(Duration.ofDays(14))).isEqualTo("P14D");
        assertThat(TimeSpans.format(Duration.ZERO)).isEqualTo("PT0S");
        assertThat(TimeSpans.format(Duration.ofMillis(1500))).isEqualTo("PT1.5S");
        assertThat(TimeSpans.format(Duration.ofDays(1).plusHours(2).plusSeconds(3))).isEqualTo("P1DT2H3S");
        assertThat(TimeSpans.format(Duration.ofMinutes(-90))).isEqualTo("-PT1H30M");
    }

    @Test
    void yearsAre365DaysMonths30AndTwelveMonthsAYear() {
        assertThat(TimeSpans.parse("P1Y")).isEqualTo(Duration.ofDays(365));
        assertThat(TimeSpans.parse("P1M")).isEqualTo(Duration.ofDays(30));
        assertThat(TimeSpans.parse("P12M")).isEqualTo(Duration.ofDays(365));
        assertThat(TimeSpans.parse("P13M")).isEqualTo(Duration.ofDays(395));
        assertThat(TimeSpans.parse("P25M")).isEqualTo(Duration.ofDays(760));
        assertThat(TimeSpans.parse("P1Y2M3DT4H5M6S"))
                .isEqualTo(Duration.ofDays(365 + 60 + 3).plusHours(4).plusMinutes(5).plusSeconds(6));
    }

    @Test
    void readsTheFormsXmlConvertReads() {
        assertThat(TimeSpans.parse(" PT1M\n")).isEqualTo(Duration.ofMinutes(1));
        assertThat(TimeSpans.parse("PT0.5S")).isEqualTo(Duration.ofMillis(500));
        assertThat(TimeSpans.parse("PT.5S")).isEqualTo(Duration.ofMillis(500));
        assertThat(TimeSpans.parse("PT5.S")).isEqualTo(Duration.ofSeconds(5));
        assertThat(TimeSpans.parse("PT1H.25S")).isEqualTo(Duration.ofHours(1).plusMillis(250));
        assertThat(TimeSpans.parse("PT1.0000001S")).isEqualTo(Duration.ofSeconds(1, 100));
        assertThat(TimeSpans.parse("PT0.123456789123S")).as("truncated to ticks")
                .isEqualTo(Duration.ofNanos(123_456_700));
        assertThat(TimeSpans.parse("-PT1M")).isEqualTo(Duration.ofMinutes(-1));
        assertThat(TimeSpans.parse("P0D")).isEqualTo(Duration.ZERO);
        assertThat(TimeSpans.parse("PT36H")).isEqualTo(Duration.ofHours(36));
        assertThat(TimeSpans.parse("pt45s")).as("lower case, Buslane's leniency").isEqualTo(Duration.ofSeconds(45));
        assertThat(TimeSpans.parse("P10675199D")).isEqualTo(Duration.ofDays(10_675_199));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "P", "PT", "-P", "1H", "PT1H30", "P1W", "P2W3D", "P1M2W", "PT1.5M", "00:05:00",
        "P1DT", "PTS", "P5", "P1YT", "P1T1H", "+PT1M", "PT1,5S", "P1D1Y", "PT1S1M", "P-1D", "PT1.5", "P1H", "P5S",
        "PT1HM", "P 1D", "PT1M ago"})
    void refusesWhatXmlConvertRefuses(String text) {
        assertThatThrownBy(() -> TimeSpans.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be an ISO-8601 duration");
    }

    @Test
    void fromOneSecondBelowTheMaximumUpMeansNever() {
        assertThat(TimeSpans.parse("P10675199DT2H48M5.477S")).as("the Java SDK's never")
                .isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("P10675199DT2H48M4.4775807S")).isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("P10675199DT2H48M4.4775806S"))
                .isEqualTo(TimeSpans.MAX_VALUE.minusSeconds(1).minusNanos(100));
    }

    @Test
    void valuesBeyondTheMaximumAreNeverWithoutOverflowing() {
        assertThat(TimeSpans.parse("P50539024859478574Y")).as("wrapped to 127,894 days before")
                .isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("P10675200D")).isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("P99999999999999999999D")).isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("P9223372036854775807Y")).isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("PT9223372036854775808S")).isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("P2147483648Y2147483648M2147483648DT2147483648H2147483648M2147483648S"))
                .isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("PT" + "9".repeat(1_000_000) + "S")).as("a million digits, at once")
                .isEqualTo(TimeSpans.MAX_VALUE);
        assertThat(TimeSpans.parse("PT" + "0".repeat(100) + "42S")).isEqualTo(Duration.ofSeconds(42));
        assertThatThrownBy(() -> TimeSpans.parse("-PT" + "1".repeat(10_000) + "S"))
                .hasMessageContaining("out of range");
        assertThat(TimeSpans.parse("P29247Y")).as("just under the maximum")
                .isEqualTo(Duration.ofDays(29_247L * 365));
    }

    @Test
    void negativeValuesStopAtTimeSpanMinValue() {
        assertThat(TimeSpans.parse("-P10675199DT2H48M5.4775808S"))
                .isEqualTo(Duration.ofSeconds(-922_337_203_685L, -477_580_800));
        assertThatThrownBy(() -> TimeSpans.parse("-P10675199DT2H48M5.4775809S"))
                .hasMessageContaining("out of range");
        assertThatThrownBy(() -> TimeSpans.parse("-P50539024859478574Y")).hasMessageContaining("out of range");
    }
}
