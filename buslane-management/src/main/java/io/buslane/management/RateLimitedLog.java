package io.buslane.management;

import io.buslane.common.time.Clock;
import org.slf4j.Logger;

import java.util.HashMap;
import java.util.Map;

/**
 * Logs at most one line per kind and interval and counts the lines it held back, reported on the next line of that
 * kind; so a client that repeats a mistake (or an attacker who sends garbage) cannot flood the log. Kinds should be
 * few (a status code, an error name): one small entry is kept per kind. Thread-safe.
 */
public final class RateLimitedLog {

    /** The default interval: one line per kind per second. */
    public static final long DEFAULT_INTERVAL_MS = 1000;

    private final Logger logger;
    private final Clock clock;
    private final long intervalMs;
    private final Map<String, long[]> kinds = new HashMap<>();

    /**
     * @param logger     where the lines go
     * @param clock      the time source (monotonic readings are used)
     * @param intervalMs the least time between two lines of one kind
     */
    public RateLimitedLog(Logger logger, Clock clock, long intervalMs) {
        this.logger = logger;
        this.clock = clock;
        this.intervalMs = intervalMs;
    }

    /** Logs {@code message} at WARN, one line without a stack trace, unless a line of this kind was just logged. */
    public boolean warn(String kind, String message) {
        long suppressed = admit(kind);
        if (suppressed < 0) {
            return false;
        }
        logger.warn("{}{}", message, suffix(suppressed));
        return true;
    }

    /** Logs {@code message} at ERROR with the stack trace of {@code t}, unless a line of this kind was just logged. */
    public boolean error(String kind, String message, Throwable t) {
        long suppressed = admit(kind);
        if (suppressed < 0) {
            return false;
        }
        logger.error("{}{}", message, suffix(suppressed), t);
        return true;
    }

    /** -1 when the line is held back; otherwise how many lines of this kind were held back since the last one. */
    private synchronized long admit(String kind) {
        long now = clock.monotonicNanos() / 1_000_000;
        long[] state = kinds.get(kind); // {time of the last line, lines held back since}
        if (state == null) {
            kinds.put(kind, new long[] {now, 0});
            return 0;
        }
        if (now - state[0] < intervalMs) {
            state[1]++;
            return -1;
        }
        long suppressed = state[1];
        state[0] = now;
        state[1] = 0;
        return suppressed;
    }

    private static String suffix(long suppressed) {
        return suppressed == 0 ? "" : " (" + suppressed + " similar line" + (suppressed == 1 ? "" : "s")
                + " suppressed)";
    }
}
