package io.buslane.engine;

import io.buslane.common.time.Clock;
import io.buslane.engine.persist.Storage;

import java.util.Objects;

/**
 * How to build an {@link Engine}. Immutable.
 *
 * @param clock          the only source of time
 * @param storage        where the namespace and the shards keep their records
 * @param shardCount     number of single-writer shards; fixed when a data directory is created (the stored value
 *                       wins on restart)
 * @param threadingMode  dedicated shard threads, or manual driving for tests
 */
public record EngineConfig(Clock clock, Storage storage, int shardCount, ThreadingMode threadingMode) {

    public EngineConfig {
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(storage, "storage");
        Objects.requireNonNull(threadingMode, "threadingMode");
        if (shardCount < 1 || shardCount > 256) {
            throw new IllegalArgumentException("shardCount must be between 1 and 256, was " + shardCount);
        }
    }
}
