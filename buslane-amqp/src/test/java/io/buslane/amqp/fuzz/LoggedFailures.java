package io.buslane.amqp.fuzz;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * What the broker logs while a fuzz input runs, as findings. The AMQP layer contains a handler that throws (the
 * connection or link is closed with {@code amqp:internal-error} and a WARN or ERROR is logged), so nothing escapes to
 * the fuzz target: this appender turns those log lines back into failures. Counted: WARN and above from
 * {@code io.buslane.amqp}, ERROR from the rest of {@code io.buslane} (the engine logs legitimate warnings, e.g. a
 * rule whose SQL does not compile).
 */
public final class LoggedFailures {

    private static final List<ILoggingEvent> EVENTS = new ArrayList<>();
    private static boolean installed;

    private LoggedFailures() {
    }

    /** Attaches the appender to the root logger (once per JVM). */
    public static synchronized void install() {
        if (installed) {
            return;
        }
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                if (counts(event)) {
                    synchronized (EVENTS) {
                        EVENTS.add(event);
                    }
                }
            }
        };
        appender.setContext(context);
        appender.setName("fuzz-findings");
        appender.start();
        context.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(appender);
        installed = true;
    }

    private static boolean counts(ILoggingEvent e) {
        String logger = e.getLoggerName();
        if (logger.startsWith("io.buslane.amqp.")) {
            return e.getLevel().isGreaterOrEqual(Level.WARN);
        }
        return logger.startsWith("io.buslane.") && e.getLevel().isGreaterOrEqual(Level.ERROR);
    }

    /** Forgets what was logged so far (call before each input). */
    public static void clear() {
        synchronized (EVENTS) {
            EVENTS.clear();
        }
    }

    /** Fails with the first counted log line (and the exception it carried, if any) since {@link #clear()}. */
    public static void assertNone() {
        assertNoneBut(message -> false);
    }

    /**
     * As {@link #assertNone()}, but log lines whose message {@code tolerated} accepts (a known issue) do not fail;
     * returns whether there was one.
     */
    public static boolean assertNoneBut(Predicate<String> tolerated) {
        ILoggingEvent first = null;
        int count = 0;
        boolean sawTolerated = false;
        synchronized (EVENTS) {
            for (ILoggingEvent e : EVENTS) {
                if (tolerated.test(e.getFormattedMessage())) {
                    sawTolerated = true;
                } else {
                    first = first == null ? e : first;
                    count++;
                }
            }
        }
        if (first == null) {
            return sawTolerated;
        }
        IThrowableProxy proxy = first.getThrowableProxy();
        Throwable cause = proxy instanceof ThrowableProxy tp ? tp.getThrowable() : null;
        throw new AssertionError("The broker logged " + count + " failure(s); the first, from " + first.getLoggerName()
                + " at " + first.getLevel() + ": " + first.getFormattedMessage(), cause);
    }
}
