package io.buslane.common.auth;

/**
 * A credential refused unchecked because its remote address failed to authenticate too often
 * ({@link AuthFailureThrottle}). HTTP answers it with {@value #STATUS} and {@code Retry-After}.
 */
public final class AuthThrottledException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The HTTP status: Too Many Requests. */
    public static final int STATUS = 429;

    private final long retryAfterMs;

    public AuthThrottledException(long retryAfterMs) {
        super("Too many failed authentication attempts from this address; retry after "
                + retryAfterSeconds(retryAfterMs) + " seconds.", null, false, false);
        this.retryAfterMs = retryAfterMs;
    }

    /** How long the address is still refused, in milliseconds. */
    public long retryAfterMs() {
        return retryAfterMs;
    }

    /** The {@code Retry-After} value: whole seconds, rounded up, at least 1. */
    public long retryAfterSeconds() {
        return retryAfterSeconds(retryAfterMs);
    }

    /** The description sent to clients. */
    public String description() {
        return getMessage();
    }

    private static long retryAfterSeconds(long ms) {
        return Math.max(1, (ms + 999) / 1000);
    }
}
