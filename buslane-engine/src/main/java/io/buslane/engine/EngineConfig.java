package io.buslane.engine;

import io.buslane.common.time.Clock;
import io.buslane.engine.dedup.DedupWindow;
import io.buslane.engine.partition.MessageBodies;
import io.buslane.engine.partition.ResidentSessionStates;
import io.buslane.engine.persist.Storage;

import java.util.Objects;

/**
 * How to build an {@link Engine}. Immutable.
 *
 * @param clock                  the only source of time
 * @param storage                where the namespace and the shards keep their records
 * @param shardCount             number of single-writer shards; fixed when a data directory is created (the stored
 *                               value wins on restart)
 * @param threadingMode          dedicated shard threads, or manual driving for tests
 * @param residentBytesPerShard  encoded message bytes each shard keeps in the heap; beyond it the newest messages
 *                               are evicted and read back from the journal when needed (see {@link MessageBodies})
 * @param dedupHeapBytesPerWindow heap bytes of each duplicate-detection window (one per partition with duplicate
 *                               detection, and per partition that received forwarded messages); older keys spill
 *                               to run files (see {@link DedupWindow})
 * @param sessionStateBytesPerShard heap bytes of session state each shard keeps; beyond it the least recently used
 *                               durable states are evicted and read back from the journal (see
 *                               {@link ResidentSessionStates})
 */
public record EngineConfig(Clock clock, Storage storage, int shardCount, ThreadingMode threadingMode,
                           long residentBytesPerShard, long dedupHeapBytesPerWindow,
                           long sessionStateBytesPerShard) {

    /** The system property that overrides the default of {@link #residentBytesPerShard} (bytes). */
    public static final String RESIDENT_BYTES_PROPERTY = "buslane.residentBytesPerShard";
    /**
     * Default of {@link #residentBytesPerShard}: 64 MiB, unless the system property
     * {@value #RESIDENT_BYTES_PROPERTY} says otherwise (e.g. {@code -Dbuslane.residentBytesPerShard=0}, which evicts
     * every message as soon as it is durable).
     */
    public static final long DEFAULT_RESIDENT_BYTES_PER_SHARD = Long.getLong(RESIDENT_BYTES_PROPERTY,
            MessageBodies.DEFAULT_BUDGET_BYTES);

    /** The system property that overrides the default of {@link #dedupHeapBytesPerWindow} (bytes). */
    public static final String DEDUP_HEAP_BYTES_PROPERTY = "buslane.dedupHeapBytes";
    /**
     * Default of {@link #dedupHeapBytesPerWindow}: 16 MiB, unless the system property
     * {@value #DEDUP_HEAP_BYTES_PROPERTY} says otherwise (read once, here).
     */
    public static final long DEFAULT_DEDUP_HEAP_BYTES = Long.getLong(DEDUP_HEAP_BYTES_PROPERTY,
            DedupWindow.DEFAULT_HEAP_BUDGET_BYTES);

    /** The system property that overrides the default of {@link #sessionStateBytesPerShard} (bytes). */
    public static final String SESSION_STATE_BYTES_PROPERTY = "buslane.sessionStateBytes";
    /**
     * Default of {@link #sessionStateBytesPerShard}: 64 MiB, unless the system property
     * {@value #SESSION_STATE_BYTES_PROPERTY} says otherwise (read once, here).
     */
    public static final long DEFAULT_SESSION_STATE_BYTES = Long.getLong(SESSION_STATE_BYTES_PROPERTY,
            ResidentSessionStates.DEFAULT_BUDGET_BYTES);

    public EngineConfig {
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(storage, "storage");
        Objects.requireNonNull(threadingMode, "threadingMode");
        if (shardCount < 1 || shardCount > 256) {
            throw new IllegalArgumentException("shardCount must be between 1 and 256, was " + shardCount);
        }
        if (residentBytesPerShard < 0) {
            throw new IllegalArgumentException("residentBytesPerShard must not be negative, was "
                    + residentBytesPerShard);
        }
        if (sessionStateBytesPerShard < 0) {
            throw new IllegalArgumentException("sessionStateBytesPerShard must not be negative, was "
                    + sessionStateBytesPerShard);
        }
    }

    /** A configuration with the default session-state heap budget. */
    public EngineConfig(Clock clock, Storage storage, int shardCount, ThreadingMode threadingMode,
                        long residentBytesPerShard, long dedupHeapBytesPerWindow) {
        this(clock, storage, shardCount, threadingMode, residentBytesPerShard, dedupHeapBytesPerWindow,
                DEFAULT_SESSION_STATE_BYTES);
    }

    /** A configuration with the default duplicate-detection heap budget. */
    public EngineConfig(Clock clock, Storage storage, int shardCount, ThreadingMode threadingMode,
                        long residentBytesPerShard) {
        this(clock, storage, shardCount, threadingMode, residentBytesPerShard, DEFAULT_DEDUP_HEAP_BYTES);
    }

    /** A configuration with the default resident budget per shard. */
    public EngineConfig(Clock clock, Storage storage, int shardCount, ThreadingMode threadingMode) {
        this(clock, storage, shardCount, threadingMode, DEFAULT_RESIDENT_BYTES_PER_SHARD);
    }

    public EngineConfig withResidentBytesPerShard(long newResidentBytesPerShard) {
        return new EngineConfig(clock, storage, shardCount, threadingMode, newResidentBytesPerShard,
                dedupHeapBytesPerWindow, sessionStateBytesPerShard);
    }

    public EngineConfig withDedupHeapBytesPerWindow(long newDedupHeapBytesPerWindow) {
        return new EngineConfig(clock, storage, shardCount, threadingMode, residentBytesPerShard,
                newDedupHeapBytesPerWindow, sessionStateBytesPerShard);
    }

    public EngineConfig withSessionStateBytesPerShard(long newSessionStateBytesPerShard) {
        return new EngineConfig(clock, storage, shardCount, threadingMode, residentBytesPerShard,
                dedupHeapBytesPerWindow, newSessionStateBytesPerShard);
    }
}
