package io.buslane.management;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

import java.util.List;

/** Test helper: collects every WARN and ERROR event logged (by any logger) while open. */
public final class LogCapture implements AutoCloseable {

    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    public LogCapture() {
        appender.start();
        root.addAppender(appender);
    }

    /** The events logged at exactly this level, in order. */
    public List<ILoggingEvent> events(Level level) {
        List<ILoggingEvent> all;
        synchronized (appender) { // the appender appends under its own lock
            all = List.copyOf(appender.list);
        }
        return all.stream().filter(e -> e.getLevel() == level).toList();
    }

    /** The formatted messages logged at exactly this level by {@code logger}, in order. */
    public List<String> messages(Level level, Class<?> logger) {
        return events(level).stream().filter(e -> e.getLoggerName().equals(logger.getName()))
                .map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Override
    public void close() {
        root.detachAppender(appender);
        appender.stop();
    }
}
