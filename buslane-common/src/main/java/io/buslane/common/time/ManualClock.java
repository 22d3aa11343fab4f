package io.buslane.common.time;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when told to, for deterministic tests. Thread-safe.
 *
 * <p>Wall-clock and monotonic readings are separate counters (as in Kafka's {@code MockTime}): advancing moves
 * both, but {@link #setEpochMillis(long)} moves only the wall clock, as a real clock adjustment would.
 */
public final class ManualClock implements Clock {

    private final AtomicLong epochMs;
    private final AtomicLong monotonicNs;

    public ManualClock(long startEpochMs) {
        this.epochMs = new AtomicLong(startEpochMs);
        this.monotonicNs = new AtomicLong(0);
    }

    /** A manual clock starting at 2026-01-01T00:00:00Z. */
    public ManualClock() {
        this(1_767_225_600_000L);
    }

    @Override
    public long epochMillis() {
        return epochMs.get();
    }

    @Override
    public long monotonicNanos() {
        return monotonicNs.get();
    }

    /** Advances both readings. */
    public void advance(Duration duration) {
        advanceMs(duration.toMillis());
    }

    /** Advances both readings by {@code deltaMs} milliseconds. */
    public void advanceMs(long deltaMs) {
        if (deltaMs < 0) {
            throw new IllegalArgumentException("time does not go backwards: " + deltaMs);
        }
        epochMs.addAndGet(deltaMs);
        monotonicNs.addAndGet(deltaMs * 1_000_000L);
    }

    /** Sets the wall clock only. */
    public void setEpochMillis(long newEpochMs) {
        epochMs.set(newEpochMs);
    }
}
