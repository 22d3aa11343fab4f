package io.buslane.server;

import java.nio.file.Path;

/**
 * Everything a broker is started with, validated once. Immutable.
 *
 * @param host        the address the listeners bind to
 * @param amqpPort    AMQP port (0 picks a free one)
 * @param httpPort    HTTP port for health, admin and console (0 picks a free one)
 * @param dataDir     the data directory (journals); ignored when {@code inMemory}
 * @param configFile  a Config.json in the emulator's schema, or null for the starter topology
 * @param shards      number of shards for a new data directory
 * @param syncEnabled whether journal writes are forced to disk before acknowledgement (default true)
 * @param inMemory    keep nothing across restarts (tests and throw-away runs)
 * @param sasKeys     SAS rules as {@code name=key} (all rights); empty for the emulator's well-known key
 * @param insecure    accept any token (no SAS validation)
 * @param maxConnections AMQP connections accepted at once
 */
public record BrokerOptions(String host, int amqpPort, int httpPort, Path dataDir, Path configFile, int shards,
                            boolean syncEnabled, boolean inMemory, java.util.List<String> sasKeys,
                            boolean insecure, int maxConnections) {

    public BrokerOptions {
        sasKeys = sasKeys == null ? java.util.List.of() : java.util.List.copyOf(sasKeys);
        if (maxConnections < 1) {
            throw new IllegalArgumentException("--max-connections must be at least 1, was " + maxConnections);
        }
    }

    public static BrokerOptions defaults() {
        return new BrokerOptions("0.0.0.0", 5672, 5300, Path.of("data"), null, 2, true, false, null, false, 10_000);
    }
}
