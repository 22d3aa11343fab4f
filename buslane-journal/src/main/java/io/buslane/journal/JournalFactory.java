package io.buslane.journal;

import java.nio.file.Path;
import java.util.List;

/** Opens the journals of one broker by name ({@code meta}, {@code shard-0}, ...). Thread-safe. */
public interface JournalFactory extends AutoCloseable {

    /** Opens (creating if needed) the journal with this name. A name is opened at most once at a time. */
    Journal open(String name);

    /**
     * Opens a journal that several nodes may write, each write conditional on nobody else having written since the
     * writer last read it (cluster mode's namespace metadata).
     *
     * @throws UnsupportedOperationException when this storage cannot be shared between nodes
     */
    default SharedJournal openShared(String name) {
        throw new UnsupportedOperationException("this storage cannot share journal " + name + " between nodes");
    }

    /**
     * Bytes still free for the journals (the data directory's file system), or {@code Long.MAX_VALUE} when the
     * journals are not limited by a disk. Cheap enough to call often, but callers may cache it briefly.
     */
    default long usableSpaceBytes() {
        return Long.MAX_VALUE;
    }

    /**
     * Why the journals cannot take new writes now (an unreachable database, a journal another node took over), or
     * null when they can. Cheap: answers from state the factory already holds.
     */
    default String unavailableReason() {
        return null;
    }

    /** Problems for the broker's health report (empty when none). */
    default List<String> healthProblems() {
        return List.of();
    }

    /**
     * A local directory for caches that are rebuilt on every start (the dedup windows' spilled key runs), or null
     * to keep them in the heap.
     */
    default Path cacheDirectory() {
        return null;
    }

    /** Releases resources held for all journals (e.g. the data directory lock). */
    @Override
    void close();
}
