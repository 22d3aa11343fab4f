package io.buslane.common.auth;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Throttles failed authentication per remote address and key name ({@link #key}): after {@link #maxFailures()}
 * failures within {@link #windowMs()} of the first of them, wrong credentials for that pair are refused for
 * {@link #blockMs()} (HTTP answers 429 with {@code Retry-After}), then it starts afresh. Only failures count, and
 * callers check the credential first: a valid signature or key is never refused, so a blocked pair costs a
 * client with the right key nothing. Thread-safe.
 *
 * <p>Pure logic like the rest of this package: callers pass {@code nowMs} on one monotonic millisecond timeline
 * (for instance {@code clock.monotonicNanos() / 1_000_000} of the injected {@code io.buslane.common.time.Clock}).
 *
 * <p>Memory is bounded: at most {@link #maxTracked()} addresses are remembered; beyond that the address whose last
 * failure is oldest is forgotten. Entries whose window and block have passed are dropped as they are met.
 *
 * <p>Use: check the presented credential; when it is wrong, {@link #check} (429 while blocked), then
 * {@link #failed}. A missing credential is not an attempt and should not be counted. The AMQP layer can do
 * the same for SASL {@code PLAIN} failures.
 */
public final class AuthFailureThrottle {

    /** Failures within the window that block an address. */
    public static final int DEFAULT_MAX_FAILURES = 20;
    /** The window in which failures are counted. */
    public static final long DEFAULT_WINDOW_MS = 60_000;
    /** How long a blocked address is refused. */
    public static final long DEFAULT_BLOCK_MS = 60_000;
    /** The most addresses remembered at once. */
    public static final int DEFAULT_MAX_TRACKED = 10_000;

    private final int maxFailures;
    private final long windowMs;
    private final long blockMs;
    private final int maxTracked;
    /** Insertion order = order of the last failure: the eldest entry is the one to forget first. */
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>();

    private static final class Entry {
        long windowStartMs;
        int failures;
        /** Refused until this time; {@code Long.MIN_VALUE} when not blocked. */
        long blockedUntilMs = Long.MIN_VALUE;
    }

    /** A throttle with the defaults: 20 failures a minute block an address for a minute. */
    public AuthFailureThrottle() {
        this(DEFAULT_MAX_FAILURES, DEFAULT_WINDOW_MS, DEFAULT_BLOCK_MS, DEFAULT_MAX_TRACKED);
    }

    /**
     * A throttle with its own limits.
     *
     * @param maxFailures failures within {@code windowMs} that block an address (at least 1)
     * @param windowMs    the window in which failures are counted (positive)
     * @param blockMs     how long a blocked address is refused (positive)
     * @param maxTracked  the most addresses remembered at once (at least 1)
     */
    public AuthFailureThrottle(int maxFailures, long windowMs, long blockMs, int maxTracked) {
        if (maxFailures < 1 || windowMs <= 0 || blockMs <= 0 || maxTracked < 1) {
            throw new IllegalArgumentException("Invalid throttle limits: maxFailures=" + maxFailures + ", windowMs="
                    + windowMs + ", blockMs=" + blockMs + ", maxTracked=" + maxTracked);
        }
        this.maxFailures = maxFailures;
        this.windowMs = windowMs;
        this.blockMs = blockMs;
        this.maxTracked = maxTracked;
    }

    public int maxFailures() {
        return maxFailures;
    }

    public long windowMs() {
        return windowMs;
    }

    public long blockMs() {
        return blockMs;
    }

    public int maxTracked() {
        return maxTracked;
    }

    /**
     * The key failures are counted under: the remote address together with the key name presented (folded), so a
     * client that keeps presenting a wrong key for one rule blocks only that pair, not every client behind the same
     * address (a load balancer, a NAT) nor other rules. Null when the address is unknown (not throttled).
     */
    public static String key(String remoteAddress, String keyName) {
        if (remoteAddress == null) {
            return null;
        }
        return remoteAddress + "\n" + (keyName == null ? "" : keyName.toLowerCase(Locale.ROOT));
    }

    /** Whether {@code remoteKey} may present a credential now; a null key (address unknown) always may. */
    public boolean allowed(String remoteKey, long nowMs) {
        return retryAfterMs(remoteKey, nowMs) == 0;
    }

    /** How long {@code remoteKey} is still refused, in milliseconds; 0 when it may present a credential now. */
    public synchronized long retryAfterMs(String remoteKey, long nowMs) {
        if (remoteKey == null) {
            return 0;
        }
        Entry e = entries.get(remoteKey);
        if (e == null) {
            return 0;
        }
        if (e.blockedUntilMs > nowMs) {
            return e.blockedUntilMs - nowMs;
        }
        if (e.blockedUntilMs != Long.MIN_VALUE || nowMs - e.windowStartMs >= windowMs) {
            entries.remove(remoteKey); // the block or the window is over: start afresh
        }
        return 0;
    }

    /**
     * Refuses an address that is blocked.
     *
     * @throws AuthThrottledException while {@code remoteKey} is blocked
     */
    public void check(String remoteKey, long nowMs) {
        long retryAfter = retryAfterMs(remoteKey, nowMs);
        if (retryAfter > 0) {
            throw new AuthThrottledException(retryAfter);
        }
    }

    /** Records a failed authentication by {@code remoteKey} (ignored for a null key). */
    public synchronized void failed(String remoteKey, long nowMs) {
        if (remoteKey == null) {
            return;
        }
        Entry e = entries.remove(remoteKey);
        if (e == null || (e.blockedUntilMs != Long.MIN_VALUE && e.blockedUntilMs <= nowMs)
                || (e.blockedUntilMs == Long.MIN_VALUE && nowMs - e.windowStartMs >= windowMs)) {
            e = new Entry();
            e.windowStartMs = nowMs;
        }
        if (e.blockedUntilMs == Long.MIN_VALUE && ++e.failures >= maxFailures) {
            e.blockedUntilMs = nowMs + blockMs;
        }
        entries.put(remoteKey, e); // now the newest
        if (entries.size() > maxTracked) {
            Iterator<Map.Entry<String, Entry>> eldest = entries.entrySet().iterator();
            eldest.next();
            eldest.remove();
        }
    }

    /** The number of addresses remembered now. */
    public synchronized int tracked() {
        return entries.size();
    }
}
