package io.buslane.engine;

/** How shards get CPU time. */
public enum ThreadingMode {
    /** One thread per shard (production). */
    DEDICATED,
    /** No engine threads: the caller drives the shards with {@code Engine.doWork()} (tests, deterministic runs). */
    MANUAL
}
