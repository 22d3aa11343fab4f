package io.buslane.junit;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A JUnit 5 extension that runs a test class against an embedded Buslane broker: started before all tests of the
 * class, reset after each test ({@link Reset#TOPOLOGY} unless told otherwise), closed after all. Nested test classes
 * share their outer class's broker.
 *
 * <p>Declarative: {@code @ExtendWith(BuslaneExtension.class)} or {@link EmbeddedBuslane @EmbeddedBuslane} on the
 * class, and a {@link BuslaneBroker} or {@link BuslaneConnectionString @BuslaneConnectionString String} parameter.
 * Programmatic, with entities and configuration in code:
 *
 * <pre>{@code
 * @RegisterExtension
 * static BuslaneExtension buslane = BuslaneExtension.inMemory()
 *         .queue("orders", q -> q.requiresSession(true))
 *         .withReset(Reset.MESSAGES);
 * }</pre>
 *
 * A non-static {@code @RegisterExtension} field gets a broker per test instead. docs/embedded.md.
 */
public final class BuslaneExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
        AfterEachCallback, ParameterResolver {

    private final Buslane builder;
    private final boolean declarative;
    private Reset reset = Reset.TOPOLOGY;
    private volatile BuslaneBroker broker;
    private String startedBy;
    private boolean perTest;

    /** The declarative form: an in-memory broker, configured by {@link EmbeddedBuslane} when the class has it. */
    public BuslaneExtension() {
        this(Buslane.inMemory(), true);
    }

    private BuslaneExtension(Buslane builder, boolean declarative) {
        this.builder = builder;
        this.declarative = declarative;
    }

    /** An extension whose broker keeps everything in memory. */
    public static BuslaneExtension inMemory() {
        return new BuslaneExtension(Buslane.inMemory(), false);
    }

    /** An extension whose broker keeps its journals in {@code dataDir}. */
    public static BuslaneExtension durable(Path dataDir) {
        return new BuslaneExtension(Buslane.durable(dataDir), false);
    }

    /** Starts with this Config.json text. */
    public BuslaneExtension withConfig(String json) {
        builder.withConfig(json);
        return this;
    }

    /** Starts with this Config.json file. */
    public BuslaneExtension withConfig(Path file) {
        builder.withConfig(file);
        return this;
    }

    /** Defines a queue with the cloud's default properties. */
    public BuslaneExtension queue(String name) {
        builder.queue(name);
        return this;
    }

    /** Defines a queue. */
    public BuslaneExtension queue(String name, Consumer<QueueSpec> spec) {
        builder.queue(name, spec);
        return this;
    }

    /** Defines a topic and its subscriptions. */
    public BuslaneExtension topic(String name, Consumer<TopicSpec> spec) {
        builder.topic(name, spec);
        return this;
    }

    /** What is reset after each test (default {@link Reset#TOPOLOGY}). */
    public BuslaneExtension withReset(Reset mode) {
        this.reset = Objects.requireNonNull(mode, "mode");
        return this;
    }

    /**
     * The running broker.
     *
     * @throws IllegalStateException outside the test class's lifecycle
     */
    public BuslaneBroker broker() {
        BuslaneBroker b = broker;
        if (b == null) {
            throw new IllegalStateException("The Buslane broker runs only while the test class runs (from beforeAll"
                    + " to afterAll); register the extension on a static field to use it in @BeforeAll.");
        }
        return b;
    }

    /** The running broker's connection string. */
    public String connectionString() {
        return broker().connectionString();
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (broker != null) {
            return; // a nested class: the outer class's broker
        }
        if (declarative) {
            configureFrom(context);
        }
        broker = builder.start();
        startedBy = context.getUniqueId();
    }

    private void configureFrom(ExtensionContext context) {
        Optional<EmbeddedBuslane> settings = AnnotationSupport.findAnnotation(context.getRequiredTestClass(),
                EmbeddedBuslane.class);
        if (settings.isEmpty()) {
            return;
        }
        reset = settings.get().reset();
        String resource = settings.get().config();
        if (!resource.isEmpty()) {
            Class<?> testClass = context.getRequiredTestClass();
            try (InputStream in = testClass.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalArgumentException("@EmbeddedBuslane(config = \"" + resource + "\"): no such "
                            + "resource on the class path of " + testClass.getName());
                }
                builder.withConfig(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (broker != null && context.getUniqueId().equals(startedBy)) {
            try {
                broker.close();
            } finally {
                broker = null;
                startedBy = null;
            }
        }
    }

    @Override
    public synchronized void beforeEach(ExtensionContext context) {
        if (broker == null) {
            // registered on an instance field: beforeAll was not called
            broker = builder.start();
            startedBy = context.getUniqueId();
            perTest = true;
        }
    }

    @Override
    public synchronized void afterEach(ExtensionContext context) {
        if (broker == null) {
            return;
        }
        if (perTest && context.getUniqueId().equals(startedBy)) {
            try {
                broker.close();
            } finally {
                broker = null;
                startedBy = null;
            }
            return;
        }
        broker.reset(reset);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext extension) {
        Class<?> type = parameter.getParameter().getType();
        return type == BuslaneBroker.class
                || type == String.class && parameter.isAnnotated(BuslaneConnectionString.class);
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext extension) {
        BuslaneBroker b = broker;
        if (b == null) {
            throw new ParameterResolutionException("No Buslane broker is running for "
                    + parameter.getDeclaringExecutable() + ": register BuslaneExtension on the test class (a static"
                    + " field) to inject it here.");
        }
        return parameter.getParameter().getType() == BuslaneBroker.class ? b : b.connectionString();
    }
}
