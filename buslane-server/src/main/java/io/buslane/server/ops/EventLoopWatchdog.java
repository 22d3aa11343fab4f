package io.buslane.server.ops;

import io.buslane.common.time.Clock;
import io.vertx.core.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Notices an event loop that stopped answering: every {@link #check()} posts a probe task to each watched loop and
 * counts a loop as blocked once a probe has waited longer than the threshold. A blocked loop is logged once per
 * episode (with the stack of its thread, which names the connection or request holding it), reported by
 * {@link #blockedLoops()} for {@code /health} and counted for {@code /metrics}. The checks run on a thread of their
 * own, never on a watched loop. Thread-safe.
 */
public final class EventLoopWatchdog {

    private static final Logger LOG = LoggerFactory.getLogger(EventLoopWatchdog.class);

    /** One watched loop: the probe in flight, if any. */
    private static final class Loop {
        final String name;
        final Context context;
        /** When the probe in flight was posted (monotonic ns), or -1 when none is in flight. */
        final AtomicLong probeSentNs = new AtomicLong(-1);
        volatile Thread thread;
        volatile boolean reported;

        Loop(String name, Context context) {
            this.name = name;
            this.context = context;
        }
    }

    private final Clock clock;
    private final long thresholdNs;
    private final List<Loop> loops = new ArrayList<>();
    private final AtomicLong episodes = new AtomicLong();

    public EventLoopWatchdog(Clock clock, long thresholdMs) {
        this.clock = clock;
        this.thresholdNs = thresholdMs * 1_000_000L;
    }

    /** Watches the loop behind {@code context} under {@code name} (e.g. "http", "amqp-1"). */
    public synchronized void watch(String name, Context context) {
        loops.add(new Loop(name, context));
    }

    /** Posts a probe to every loop without one in flight and reports the loops whose probe is overdue. */
    public void check() {
        long now = clock.monotonicNanos();
        for (Loop loop : snapshot()) {
            long sent = loop.probeSentNs.get();
            if (sent < 0) {
                if (loop.probeSentNs.compareAndSet(-1, now)) {
                    loop.context.runOnContext(v -> {
                        loop.thread = Thread.currentThread();
                        loop.probeSentNs.set(-1);
                        if (loop.reported) {
                            loop.reported = false;
                            LOG.warn("Event loop {} answers again.", loop.name);
                        }
                    });
                }
            } else if (now - sent > thresholdNs && !loop.reported) {
                loop.reported = true;
                episodes.incrementAndGet();
                Thread t = loop.thread;
                StringBuilder stack = new StringBuilder();
                if (t != null) {
                    for (StackTraceElement e : t.getStackTrace()) {
                        stack.append("\n\tat ").append(e);
                    }
                }
                LOG.error("Event loop {} ({}) has not answered for {} ms; its connections and requests wait. "
                                + "It is running:{}", loop.name, t == null ? "thread unknown" : t.getName(),
                        (now - sent) / 1_000_000L, stack);
            }
        }
    }

    /** The names of the loops now blocked (a probe overdue). */
    public List<String> blockedLoops() {
        long now = clock.monotonicNanos();
        List<String> out = new ArrayList<>();
        for (Loop loop : snapshot()) {
            long sent = loop.probeSentNs.get();
            if (sent >= 0 && now - sent > thresholdNs) {
                out.add(loop.name);
            }
        }
        return out;
    }

    /** How many times a loop has been found blocked since start. */
    public long blockedEpisodes() {
        return episodes.get();
    }

    private synchronized List<Loop> snapshot() {
        return new ArrayList<>(loops);
    }
}
