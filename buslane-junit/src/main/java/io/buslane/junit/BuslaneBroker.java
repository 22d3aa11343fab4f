package io.buslane.junit;

import io.buslane.server.EmbeddedBroker;

import java.nio.file.Path;

/**
 * A running embedded broker, from {@link Buslane#start()} or handed out by {@link BuslaneExtension}: its connection
 * string and ports, {@link #reset()} between tests, {@link #close()} at the end. Thread-safe.
 */
public final class BuslaneBroker implements AutoCloseable {

    private final EmbeddedBroker broker;
    private final Path dataDir;
    private final long startMillis;

    private BuslaneBroker(EmbeddedBroker broker, Path dataDir, long startMillis) {
        this.broker = broker;
        this.dataDir = dataDir;
        this.startMillis = startMillis;
    }

    static BuslaneBroker start(Path dataDir, String configJson) {
        long t0 = System.nanoTime();
        NettyCheck.requireNetty42();
        try {
            EmbeddedBroker b = dataDir == null ? EmbeddedBroker.startInMemory(configJson)
                    : EmbeddedBroker.start(dataDir, configJson);
            return new BuslaneBroker(b, dataDir, (System.nanoTime() - t0) / 1_000_000);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("The embedded Buslane broker did not start: " + e.getMessage(), e);
        }
    }

    /**
     * The connection string the Service Bus SDKs take, the emulator's well-known one with this broker's AMQP port:
     * {@code Endpoint=sb://localhost:<amqpPort>;SharedAccessKeyName=RootManageSharedAccessKey;
     * SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;}
     */
    public String connectionString() {
        return broker.connectionString();
    }

    /** The AMQP port (plain AMQP, as the emulator). */
    public int amqpPort() {
        return broker.amqpPort();
    }

    /** The HTTP port: health, metrics, the administration (ATOM) API, REST and the console. */
    public int httpPort() {
        return broker.httpPort();
    }

    /**
     * Where the administration clients send their requests, {@code http://127.0.0.1:<httpPort>}: the ATOM API the
     * SDKs' {@code ServiceBusAdministrationClient} speaks (docs/embedded.md shows the Java client's policy that
     * points it here).
     */
    public String adminEndpoint() {
        return broker.httpUrl();
    }

    /** The data directory of a durable broker, or null in memory. */
    public Path dataDirectory() {
        return dataDir;
    }

    /** How long the broker took to start, in milliseconds. */
    public long startMillis() {
        return startMillis;
    }

    /**
     * Deletes every message and every entity, then re-creates the configured topology (the Config.json and the
     * entities defined in code), empty. Blocking.
     */
    public void reset() {
        broker.reset();
    }

    /**
     * Removes every message of every queue and subscription (active, dead-lettered, scheduled) and keeps the
     * entities as they are.
     *
     * @return how many messages were removed
     */
    public long purgeMessages() {
        return broker.purgeMessages();
    }

    /** Resets as {@code mode} says ({@link Reset#NONE} does nothing). */
    public void reset(Reset mode) {
        switch (mode) {
            case TOPOLOGY -> reset();
            case MESSAGES -> purgeMessages();
            case NONE -> { }
            default -> throw new IllegalArgumentException(String.valueOf(mode));
        }
    }

    /** Stops the broker; a durable one keeps its data directory. */
    @Override
    public void close() {
        broker.close();
    }
}
