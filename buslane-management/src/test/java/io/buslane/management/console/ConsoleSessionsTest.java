package io.buslane.management.console;

import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.AuthFailureThrottle;
import io.buslane.common.auth.AuthThrottledException;
import io.buslane.common.auth.Right;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.ManualClock;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConsoleSessionsTest {

    private final ManualClock clock = new ManualClock();
    private final ConsoleSessions sessions = new ConsoleSessions(new SasValidator(List.of(
            SasRule.emulatorDefault(), new SasRule("listener", "listen-key", Set.of(Right.LISTEN)))), clock);

    @Test
    void aSessionLastsEightHoursThenNeedsANewLogIn() {
        String id = sessions.login(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        assertThat(sessions.authorize(id, null)).isEqualTo(SasRule.EMULATOR_KEY_NAME);
        clock.advanceMs(ConsoleSessions.SESSION_MILLIS - 1);
        assertThat(sessions.authorize(id, null)).isEqualTo(SasRule.EMULATOR_KEY_NAME);
        clock.advanceMs(1);
        assertThatThrownBy(() -> sessions.authorize(id, null)).isInstanceOf(AuthException.class)
                .hasMessageContaining("log in");
    }

    @Test
    void logOutEndsTheSessionAndIdsAreUnguessablyDistinct() {
        String a = sessions.login(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        String b = sessions.login(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        assertThat(a).isNotEqualTo(b).hasSizeGreaterThanOrEqualTo(43);
        sessions.logout(a);
        assertThatThrownBy(() -> sessions.authorize(a, null)).isInstanceOf(AuthException.class);
        assertThat(sessions.authorize(b, null)).isEqualTo(SasRule.EMULATOR_KEY_NAME);
    }

    @Test
    void aRuleWithoutManageOrAWrongKeyCannotLogIn() {
        assertThatThrownBy(() -> sessions.login("listener", "listen-key")).isInstanceOf(AuthException.class)
                .hasMessageContaining("Manage");
        assertThatThrownBy(() -> sessions.login(SasRule.EMULATOR_KEY_NAME, "nope")).isInstanceOf(AuthException.class);
        assertThatThrownBy(() -> sessions.login(null, null)).isInstanceOf(AuthException.class);
        assertThatThrownBy(() -> sessions.authorize("made-up", null)).isInstanceOf(AuthException.class);
    }

    @Test
    void wrongKeysAreThrottledPerAddressAndKeyNameUntilTheBackOffEndsButTheRightKeyNeverIs() {
        ConsoleSessions throttled = new ConsoleSessions(SasValidator.emulatorDefault(), clock,
                new AuthFailureThrottle(3, 60_000, 30_000, 100));
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> throttled.login(SasRule.EMULATOR_KEY_NAME, "nope", "10.0.0.1"))
                    .isInstanceOf(AuthException.class);
        }
        assertThatThrownBy(() -> throttled.login(SasRule.EMULATOR_KEY_NAME, "nope-again", "10.0.0.1"))
                .isInstanceOf(AuthThrottledException.class);
        assertThatThrownBy(() -> throttled.authorize(null, "SharedAccessSignature sr=a&sig=b&se=1&skn="
                + SasRule.EMULATOR_KEY_NAME, "10.0.0.1")).isInstanceOf(AuthThrottledException.class);
        // counted per (address, key name), and the right key is never refused
        assertThatThrownBy(() -> throttled.login("OtherRule", "nope", "10.0.0.1"))
                .isNotInstanceOf(AuthThrottledException.class).isInstanceOf(AuthException.class);
        assertThat(throttled.login(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY, "10.0.0.1")).isNotEmpty();
        String other = throttled.login(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY, "10.0.0.2");
        assertThat(throttled.authorize(other, null, "10.0.0.1")).as("a session cookie is not a guess")
                .isEqualTo(SasRule.EMULATOR_KEY_NAME);
        clock.advanceMs(30_000);
        assertThatThrownBy(() -> throttled.login(SasRule.EMULATOR_KEY_NAME, "nope", "10.0.0.1"))
                .as("after the back-off: 401 again").isNotInstanceOf(AuthThrottledException.class);
    }

    @Test
    void theSessionTableIsBoundedByDroppingTheOldestLogIns() {
        String oldest = sessions.login(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        clock.advanceMs(1);
        for (int i = 1; i < ConsoleSessions.MAX_SESSIONS; i++) {
            sessions.login(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        }
        assertThat(sessions.size()).isEqualTo(ConsoleSessions.MAX_SESSIONS);
        String newest = sessions.login(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        assertThat(sessions.size()).isEqualTo(ConsoleSessions.MAX_SESSIONS);
        assertThat(sessions.authorize(newest, null)).isEqualTo(SasRule.EMULATOR_KEY_NAME);
        assertThatThrownBy(() -> sessions.authorize(oldest, null)).isInstanceOf(AuthException.class);
    }
}
