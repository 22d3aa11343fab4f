package io.buslane.management.atom;

import io.buslane.engine.entity.Limits;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class XmlDurationsTest {

    @Test
    void formatsLikeDotNetXmlConvert() {
        assertThat(XmlDurations.format(Duration.ofMinutes(1))).isEqualTo("PT1M");
        assertThat(XmlDurations.format(Duration.ofSeconds(45))).isEqualTo("PT45S");
        assertThat(XmlDurations.format(Duration.ofDays(14))).isEqualTo("P14D");
        assertThat(XmlDurations.format(Duration.ZERO)).isEqualTo("PT0S");
        assertThat(XmlDurations.format(Duration.ofMillis(1500))).isEqualTo("PT1.5S");
        assertThat(XmlDurations.format(Duration.ofDays(1).plusHours(2).plusSeconds(3))).isEqualTo("P1DT2H3S");
        assertThat(XmlDurations.format(Limits.MAX_DURATION)).isEqualTo("P10675199DT2H48M5.4775807S");
    }

    @Test
    void parsesWhatTheSdksWrite() {
        assertThat(XmlDurations.parse("P10675199DT2H48M5.4775807S", "x")).isEqualTo(Limits.MAX_DURATION);
        assertThat(XmlDurations.parse("PT256204778H48M5.4775807S", "x")).isEqualTo(Limits.MAX_DURATION);
        assertThat(XmlDurations.parse("P10675199DT2H48M5.477S", "x")).as("the Java SDK's never")
                .isEqualTo(Limits.MAX_DURATION);
        assertThat(XmlDurations.parse("P10675199D", "x")).isEqualTo(Duration.ofDays(10675199));
        assertThat(XmlDurations.parse(" PT1M ", "x")).isEqualTo(Duration.ofMinutes(1));
        assertThat(XmlDurations.parse("P1Y", "x")).isEqualTo(Duration.ofDays(365));
        assertThat(XmlDurations.parse("P12M", "x")).as("as Config.json reads it").isEqualTo(Duration.ofDays(365));
        assertThatThrownBy(() -> XmlDurations.parse("P1M2W", "AutoDeleteOnIdle")).as("weeks, refused by XmlConvert")
                .hasMessageContaining("AutoDeleteOnIdle").hasMessageContaining("P1M2W");
        assertThat(XmlDurations.parse("P50539024859478574Y", "x")).as("never, not a wrapped 127,894 days")
                .isEqualTo(Limits.MAX_DURATION);
        assertThat(XmlDurations.parse("P99999999D", "x")).isEqualTo(Limits.MAX_DURATION);
        assertThatThrownBy(() -> XmlDurations.parse("soon", "LockDuration"))
                .hasMessageContaining("LockDuration").hasMessageContaining("soon");
        assertThatThrownBy(() -> XmlDurations.parse("PT", "x")).isInstanceOf(IllegalArgumentException.class);
    }
}
