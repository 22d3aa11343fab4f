package io.buslane.server;

import io.buslane.engine.Engine;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.server.config.ConfigLoader;
import io.buslane.server.config.Topology;
import io.buslane.server.ops.NamespaceOps;

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
    private final Topology topology;
    private final NamespaceOps ops;

    private EmbeddedBroker(Broker broker, Path configFile, Topology topology) {
        this.broker = broker;
        this.configFile = configFile;
        this.topology = topology;
        Engine engine = broker.engine();
        this.ops = new NamespaceOps(engine, () -> TopologyApplier.apply(engine, topology));
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
            Topology topology = config != null ? ConfigLoader.load(config) : ConfigLoader.starterTopology();
            return new EmbeddedBroker(Broker.start(options), config, topology);
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

    /** The topology the broker was started with (its Config.json, or the starter topology) and resets restore. */
    public Topology topology() {
        return topology;
    }

    /**
     * Deletes every queue and topic (with their messages, sessions and subscriptions) and re-creates the configured
     * {@linkplain #topology() topology}, as {@code POST /$admin/reset} does. Blocking; clients attached to an entity
     * see their links closed with {@code amqp:not-found}.
     */
    public NamespaceOps.ResetResult reset() {
        return ops.reset();
    }

    /**
     * Removes every message of every queue and subscription (main, dead-letter and transfer dead-letter queues) and
     * cancels every scheduled message, as {@code POST /$admin/purge/<entity>} does for each; entities, their
     * properties and the links attached to them stay. Blocking.
     *
     * @return how many messages were removed
     */
    public long purgeMessages() {
        Engine engine = broker.engine();
        long purged = 0;
        for (QueueEntity q : engine.queues()) {
            purged += ops.purge(q.properties().name()).purged();
        }
        for (TopicEntity t : engine.topics()) {
            purged += ops.purge(t.properties().name()).purged();
        }
        return purged;
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
