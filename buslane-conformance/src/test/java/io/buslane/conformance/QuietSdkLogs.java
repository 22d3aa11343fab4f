package io.buslane.conformance;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the official SDK's logging off for a test class ({@code @ExtendWith(QuietSdkLogs.class)}) and back on after
 * it: the SDK logs every dropped connection at WARN or ERROR, and the tests that kill brokers or databases drop many.
 */
final class QuietSdkLogs implements BeforeAllCallback, AfterAllCallback {

    private static final List<String> NOISY_LOGGERS = List.of("com.azure", "reactor", "io.netty");
    private final Map<String, Level> saved = new HashMap<>();

    @Override
    public void beforeAll(ExtensionContext context) {
        for (String name : NOISY_LOGGERS) {
            Logger l = (Logger) LoggerFactory.getLogger(name);
            saved.put(name, l.getLevel());
            l.setLevel(Level.OFF);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        saved.forEach((name, level) -> ((Logger) LoggerFactory.getLogger(name)).setLevel(level));
    }
}
