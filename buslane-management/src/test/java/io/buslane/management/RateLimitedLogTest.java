package io.buslane.management;

import ch.qos.logback.classic.Level;
import io.buslane.common.time.ManualClock;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitedLogTest {

    private final ManualClock clock = new ManualClock();
    private final RateLimitedLog log = new RateLimitedLog(LoggerFactory.getLogger(RateLimitedLogTest.class), clock,
            1000);

    @Test
    void oneLinePerKindAndIntervalWithACountOfTheLinesHeldBack() {
        try (LogCapture logs = new LogCapture()) {
            assertThat(log.warn("400", "first")).isTrue();
            assertThat(log.warn("400", "second")).isFalse();
            assertThat(log.warn("400", "third")).isFalse();
            assertThat(log.warn("413", "other kind")).isTrue();
            clock.advanceMs(999);
            assertThat(log.warn("400", "still held back")).isFalse();
            clock.advanceMs(1);
            assertThat(log.warn("400", "fifth")).isTrue();
            clock.advanceMs(1000);
            assertThat(log.error("500", "bug", new IllegalStateException("x"))).isTrue();
            assertThat(log.warn("400", "sixth")).isTrue();

            assertThat(logs.messages(Level.WARN, RateLimitedLogTest.class)).containsExactly("first", "other kind",
                    "fifth (3 similar lines suppressed)", "sixth");
            assertThat(logs.events(Level.ERROR)).singleElement().satisfies(e -> {
                assertThat(e.getFormattedMessage()).isEqualTo("bug");
                assertThat(e.getThrowableProxy().getMessage()).isEqualTo("x");
            });
        }
    }
}
