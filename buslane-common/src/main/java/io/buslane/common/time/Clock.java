package io.buslane.common.time;

/**
 * The only source of time in Buslane. Thread-safe.
 *
 * <p>Two independent readings: wall-clock epoch milliseconds for everything a client can see (enqueued time,
 * scheduled enqueue time, locked-until, expiry) and monotonic nanoseconds for timeouts and latency. Code outside
 * this package never reads the system clock; it is handed a {@code Clock} or, in pure state machines, a
 * {@code nowMs} argument.
 */
public interface Clock {

    /** Wall-clock time in milliseconds since the Unix epoch (UTC). */
    long epochMillis();

    /** Monotonic time in nanoseconds from an arbitrary origin; only differences are meaningful. */
    long monotonicNanos();

    /** The system clock. */
    static Clock system() {
        return SystemClock.INSTANCE;
    }
}
