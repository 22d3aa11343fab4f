package io.buslane.common.auth;

import io.buslane.common.time.ManualClock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AuthFailureThrottleTest {

    private final ManualClock clock = new ManualClock();
    private final AuthFailureThrottle throttle = new AuthFailureThrottle(3, 10_000, 60_000, 100);

    private long now() {
        return clock.monotonicNanos() / 1_000_000;
    }

    private void fail(String remote, int times) {
        for (int i = 0; i < times; i++) {
            throttle.failed(remote, now());
        }
    }

    @Test
    void anAddressIsRefusedAfterTooManyFailuresWithinTheWindowUntilTheBackOffEnds() {
        fail("10.0.0.1", 2);
        assertThat(throttle.allowed("10.0.0.1", now())).isTrue();
        clock.advanceMs(9_999);
        fail("10.0.0.1", 1);
        assertThat(throttle.allowed("10.0.0.1", now())).isFalse();
        assertThat(throttle.retryAfterMs("10.0.0.1", now())).isEqualTo(60_000);
        assertThatThrownBy(() -> throttle.check("10.0.0.1", now())).isInstanceOf(AuthThrottledException.class)
                .satisfies(e -> assertThat(((AuthThrottledException) e).retryAfterSeconds()).isEqualTo(60));
        assertThat(throttle.allowed("10.0.0.2", now())).as("other addresses are not affected").isTrue();

        clock.advanceMs(59_999);
        assertThat(throttle.retryAfterMs("10.0.0.1", now())).isEqualTo(1);
        clock.advanceMs(1);
        assertThat(throttle.allowed("10.0.0.1", now())).isTrue();
        fail("10.0.0.1", 2);
        assertThat(throttle.allowed("10.0.0.1", now())).as("after the back-off the count starts afresh").isTrue();
        fail("10.0.0.1", 1);
        assertThat(throttle.allowed("10.0.0.1", now())).isFalse();
    }

    @Test
    void failuresSpreadOverMoreThanTheWindowDoNotBlock() {
        for (int i = 0; i < 10; i++) {
            fail("10.0.0.1", 2);
            clock.advanceMs(10_000);
        }
        assertThat(throttle.allowed("10.0.0.1", now())).isTrue();
        assertThatCode(() -> throttle.check("10.0.0.1", now())).doesNotThrowAnyException();
    }

    @Test
    void failuresWhileBlockedDoNotExtendTheBackOff() {
        fail("10.0.0.1", 3);
        clock.advanceMs(30_000);
        fail("10.0.0.1", 5);
        assertThat(throttle.retryAfterMs("10.0.0.1", now())).isEqualTo(30_000);
    }

    @Test
    void anUnknownAddressIsNeverThrottled() {
        fail(null, 10);
        assertThat(throttle.allowed(null, now())).isTrue();
        assertThat(throttle.tracked()).isZero();
    }

    @Test
    void theNumberOfAddressesRememberedIsBoundedByForgettingTheOldest() {
        AuthFailureThrottle small = new AuthFailureThrottle(2, 10_000, 60_000, 3);
        small.failed("a", now());
        small.failed("a", now());
        assertThat(small.allowed("a", now())).isFalse();
        small.failed("b", now());
        small.failed("c", now());
        assertThat(small.tracked()).isEqualTo(3);
        small.failed("d", now());
        assertThat(small.tracked()).isEqualTo(3);
        assertThat(small.allowed("a", now())).as("the oldest was forgotten").isTrue();
        small.failed("b", now());
        assertThat(small.allowed("b", now())).as("b was kept").isFalse();

        for (int i = 0; i < 100_000; i++) {
            throttle.failed("10.1." + (i >> 8) + "." + (i & 255), now());
        }
        assertThat(throttle.tracked()).isEqualTo(throttle.maxTracked());
    }

    @Test
    void expiredEntriesAreDroppedWhenMet() {
        fail("10.0.0.1", 1);
        assertThat(throttle.tracked()).isEqualTo(1);
        clock.advanceMs(10_000);
        assertThat(throttle.allowed("10.0.0.1", now())).isTrue();
        assertThat(throttle.tracked()).isZero();
    }

    @Test
    void theDefaultsAllowAFewMistakesButNotBruteForce() {
        AuthFailureThrottle defaults = new AuthFailureThrottle();
        for (int i = 1; i < AuthFailureThrottle.DEFAULT_MAX_FAILURES; i++) {
            defaults.failed("10.0.0.1", now());
        }
        assertThat(defaults.allowed("10.0.0.1", now())).isTrue();
        defaults.failed("10.0.0.1", now());
        assertThat(defaults.allowed("10.0.0.1", now())).isFalse();
        assertThatThrownBy(() -> new AuthFailureThrottle(0, 1, 1, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
