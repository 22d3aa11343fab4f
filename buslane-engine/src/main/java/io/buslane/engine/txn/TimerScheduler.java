package io.buslane.engine.txn;

/** Arms a one-shot timer on the connection's event loop (Vert.x in production, a recorder in tests). */
@FunctionalInterface
public interface TimerScheduler {

    /** Runs {@code task} on the connection's loop after {@code delayMs}; returns a handle for {@link #cancel}. */
    long schedule(long delayMs, Runnable task);

    /** Cancels a timer; the default does nothing (the task then checks whether it still applies). */
    default void cancel(long handle) {
    }
}
