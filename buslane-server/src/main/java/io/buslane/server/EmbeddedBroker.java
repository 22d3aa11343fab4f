package io.buslane.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A whole broker inside this JVM on {@code 127.0.0.1}, AMQP and HTTP on ports the system picks (port 0), with the
 * emulator's well-known SAS key: for tests that talk to a real broker without starting a process. Built on {@link
 * Broker#start(BrokerOptions)} with the default connection limits and event loops.
 *
 * <pre>{@code
 * try (EmbeddedBroker broker = EmbeddedBroker.startInMemory(null)) {
 *     String cs = broker.connectionString(); // Endpoint=sb://localhost:<amqpPort>;...;UseDevelopmentEmulator=true;
 * }
 * }</pre>
 */
public final class EmbeddedBroker implements AutoCloseable {

    /** The address the listeners bind to. */
    public static final String HOST = "127.0.0.1";
    private static final int SHARDS = 2;

    private final Broker broker;
    private final Path configFile;

    private EmbeddedBroker(Broker broker, Path configFile) {
        this.broker = broker;
        this.configFile = configFile;
    }

    /** Starts a broker that keeps nothing across restarts, with the starter topology. */
    public static EmbeddedBroker startInMemory() throws Exception {
        return startInMemory(null);
    }

    /**
     * Starts a broker that keeps nothing across restarts.
     *
     * @param configJson a Config.json in the emulator's schema, or null for the starter topology
     */
    public static EmbeddedBroker startInMemory(String configJson) throws Exception {
        return start(true, null, configJson);
    }

    /**
     * Starts a broker on a data directory (created if missing; journal writes synced as by default).
     *
     * @param configJson a Config.json in the emulator's schema, or null for the starter topology
     */
    public static EmbeddedBroker start(Path dataDir, String configJson) throws Exception {
        return start(false, dataDir, configJson);
    }

    private static EmbeddedBroker start(boolean inMemory, Path dataDir, String configJson) throws Exception {
        Path config = null;
        if (configJson != null) {
            config = Files.createTempFile("buslane-embedded-config-", ".json");
            Files.writeString(config, configJson);
        }
        try {
            BrokerOptions options = new BrokerOptions(HOST, 0, 0, inMemory ? null : dataDir, config, SHARDS, true,
                    inMemory, null, false, BrokerOptions.defaultMaxConnections());
            return new EmbeddedBroker(Broker.start(options), config);
        } catch (Exception | Error e) {
            deleteConfig(config);
            throw e;
        }
    }

    /** The AMQP port the broker listens on. */
    public int amqpPort() {
        return broker.amqpPort();
    }

    /** The HTTP port (health, metrics, admin, REST, console). */
    public int httpPort() {
        return broker.httpPort();
    }

    /** {@code http://127.0.0.1:<httpPort>}. */
    public String httpUrl() {
        return "http://" + HOST + ":" + httpPort();
    }

    /**
     * The emulator's well-known connection string with this broker's AMQP port: the SDKs speak plain AMQP to it
     * ({@code UseDevelopmentEmulator=true}).
     */
    public String connectionString() {
        return "Endpoint=sb://localhost:" + amqpPort() + ";SharedAccessKeyName=RootManageSharedAccessKey;"
                + "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
    }

    /** Stops the broker (listeners, engine, journals) and deletes the temporary Config.json. */
    @Override
    public void close() {
        try {
            broker.close();
        } finally {
            deleteConfig(configFile);
        }
    }

    private static void deleteConfig(Path config) {
        if (config == null) {
            return;
        }
        try {
            Files.deleteIfExists(config);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
