package io.buslane.common.time;

/** The real clock: {@link System#currentTimeMillis()} and {@link System#nanoTime()}. Thread-safe. */
public final class SystemClock implements Clock {

    static final SystemClock INSTANCE = new SystemClock();

    private SystemClock() {
    }

    @Override
    public long epochMillis() {
        return System.currentTimeMillis();
    }

    @Override
    public long monotonicNanos() {
        return System.nanoTime();
    }
}
