package io.buslane.management.console;

import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.AuthFailureThrottle;
import io.buslane.common.auth.AuthMode;
import io.buslane.common.auth.AuthThrottledException;
import io.buslane.common.auth.Grant;
import io.buslane.common.auth.Right;
import io.buslane.common.auth.SasToken;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Console log-ins. A log-in presents a SAS rule's key name and key, checked by the broker's {@link SasValidator};
 * a rule with the Manage right gets a random session id (sent back as an HttpOnly, SameSite=Strict cookie) valid
 * for {@link #SESSION_MILLIS}. A request is authorised by that cookie or, like the admin API, by a SAS
 * {@code Authorization} header whose rule grants Manage over the whole namespace. With
 * {@link SasValidator#acceptAll()} (the broker's {@code --insecure}) every request is authorised.
 *
 * <p>Wrong key pairs and invalid {@code Authorization} headers count against the remote address in an
 * {@link AuthFailureThrottle}; while it is throttled, its log-ins and headers are refused unchecked
 * ({@link AuthThrottledException}). Session cookies are not throttled: they are not guessable credentials.
 */
final class ConsoleSessions {

    static final String COOKIE = "buslane_console";
    static final long SESSION_MILLIS = 8 * 3600_000L;
    /** Bounds the session table: beyond this the oldest log-ins are forgotten. */
    static final int MAX_SESSIONS = 10_000;

    private final SasValidator validator;
    private final Clock clock;
    private final AuthFailureThrottle throttle;
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    record Session(String keyName, long expiresAtMs) {
    }

    ConsoleSessions(SasValidator validator, Clock clock) {
        this(validator, clock, new AuthFailureThrottle());
    }

    /** @param throttle counts failed log-ins and headers per remote address (on the clock's monotonic millis) */
    ConsoleSessions(SasValidator validator, Clock clock, AuthFailureThrottle throttle) {
        this.validator = validator;
        this.clock = clock;
        this.throttle = throttle;
    }

    boolean open() {
        return validator.mode() == AuthMode.ACCEPT_ALL;
    }

    /** {@link #login(String, String, String)} from an unknown address (not throttled). */
    String login(String keyName, String key) {
        return login(keyName, key, null);
    }

    /**
     * Logs in; returns the new session id.
     *
     * @param remote the remote address the throttle counts a wrong pair under (null: unknown, not throttled)
     * @throws AuthThrottledException 429 while {@code remote} is throttled
     * @throws AuthException          401 when the pair is wrong or the rule lacks Manage
     */
    String login(String keyName, String key, String remote) {
        long throttleNow = clock.monotonicNanos() / 1_000_000;
        Optional<Grant> grant = validator.authenticate(keyName, key); // the right pair is never refused
        if (grant.isEmpty()) {
            String throttleKey = AuthFailureThrottle.key(remote, keyName);
            throttle.check(throttleKey, throttleNow);
            throttle.failed(throttleKey, throttleNow);
            throw new AuthException("Unauthorized: the key name or key is wrong.");
        }
        if (!grant.get().has(Right.MANAGE)) {
            throw new AuthException("Unauthorized: the rule '" + grant.get().keyName()
                    + "' does not grant the Manage right, which the console requires.");
        }
        long now = clock.epochMillis();
        evict(now);
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        String id = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        sessions.put(id, new Session(grant.get().keyName(), now + SESSION_MILLIS));
        return id;
    }

    void logout(String sessionId) {
        if (sessionId != null) {
            sessions.remove(sessionId);
        }
    }

    /** {@link #authorize(String, String, String)} from an unknown address (not throttled). */
    String authorize(String sessionId, String authorization) {
        return authorize(sessionId, authorization, null);
    }

    /**
     * The key name a request acts as.
     *
     * @param remote the remote address the throttle counts an invalid header under (null: unknown, not throttled)
     * @throws AuthThrottledException 429 for a header while {@code remote} is throttled
     * @throws AuthException          401 without a valid session or Authorization header
     */
    String authorize(String sessionId, String authorization, String remote) {
        if (open()) {
            return "(insecure)";
        }
        long now = clock.epochMillis();
        if (sessionId != null) {
            Session s = sessions.get(sessionId);
            if (s != null && s.expiresAtMs() > now) {
                return s.keyName();
            }
            if (s != null) {
                sessions.remove(sessionId);
            }
        }
        if (authorization != null) {
            long throttleNow = clock.monotonicNanos() / 1_000_000;
            Grant grant;
            try {
                grant = validator.validate(authorization, now); // a valid signature is never refused
            } catch (AuthException e) {
                String throttleKey = AuthFailureThrottle.key(remote, SasToken.keyNameOf(authorization));
                throttle.check(throttleKey, throttleNow);
                throttle.failed(throttleKey, throttleNow);
                throw e;
            }
            if (!grant.has(Right.MANAGE)) {
                throw new AuthException("Unauthorized: the rule '" + grant.keyName()
                        + "' does not grant the Manage right, which the console requires.");
            }
            if (!grant.covers("")) {
                throw new AuthException("InvalidAudience: the console needs a token for the whole namespace.");
            }
            return grant.keyName();
        }
        throw new AuthException("Unauthorized: log in to the console first.");
    }

    private void evict(long now) {
        sessions.values().removeIf(s -> s.expiresAtMs() <= now);
        int excess = sessions.size() - MAX_SESSIONS + 1;
        if (excess > 0) {
            sessions.entrySet().stream().sorted(Map.Entry.comparingByValue(
                            Comparator.comparingLong(Session::expiresAtMs)))
                    .limit(excess).map(Map.Entry::getKey).toList().forEach(sessions::remove);
        }
    }

    int size() {
        return sessions.size();
    }
}
