package io.buslane.engine.persist;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.dedup.DedupRunStore;
import io.buslane.engine.partition.MessageBodies;
import io.buslane.journal.DataDirectoryLayout;
import io.buslane.journal.Journal;
import io.buslane.journal.JournalFactory;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * The engine's storage: the namespace journal and one journal per shard, opened from a {@link JournalFactory}.
 * This package is the only one in the engine that knows the journal API. Thread-safe.
 */
public final class Storage implements AutoCloseable {

    /** Free space below which new messages are refused (overridable with {@code buslane.minFreeDiskBytes}). */
    public static final long DEFAULT_MIN_FREE_BYTES = Long.getLong("buslane.minFreeDiskBytes", 32L * 1024 * 1024);
    private static final long SPACE_CHECK_INTERVAL_NS = 100_000_000L;

    private final JournalFactory journals;
    private final long minFreeBytes;
    private volatile long spaceCheckedAtNs = Long.MIN_VALUE;
    private volatile long usableBytes = Long.MAX_VALUE;

    private Storage(JournalFactory journals, long minFreeBytes) {
        this.journals = Objects.requireNonNull(journals, "journals");
        this.minFreeBytes = minFreeBytes;
    }

    public static Storage of(JournalFactory journals) {
        return new Storage(journals, DEFAULT_MIN_FREE_BYTES);
    }

    /** Storage that refuses new messages once fewer than {@code minFreeBytes} remain on the journals' disk. */
    public static Storage of(JournalFactory journals, long minFreeBytes) {
        return new Storage(journals, minFreeBytes);
    }

    /**
     * Fails with {@code QUOTA_EXCEEDED} (AMQP {@code amqp:resource-limit-exceeded}) when the journals' disk is
     * nearly full, so that a send is refused before anything is applied: nothing is half-written, and sends work
     * again as soon as space returns. The free space is read at most every 100 ms, and again at once after a shard
     * journal ran out of space. The file journals leave their disk reserve out of the free space they report, so
     * that the space kept for deletes and compaction never takes new messages.
     *
     * @param nowNs the caller's monotonic time
     */
    public void requireFreeSpace(long nowNs) {
        String unavailable = journals.unavailableReason();
        if (unavailable != null) {
            throw new BrokerException(ErrorKind.SERVER_BUSY,
                    unavailable + " The message was not stored; retry later.");
        }
        if (nowNs - spaceCheckedAtNs > SPACE_CHECK_INTERVAL_NS || spaceCheckedAtNs == Long.MIN_VALUE) {
            usableBytes = journals.usableSpaceBytes();
            spaceCheckedAtNs = nowNs;
        }
        long free = usableBytes;
        if (free < minFreeBytes) {
            throw new BrokerException(ErrorKind.QUOTA_EXCEEDED,
                    "The broker's disk is full: " + (free / (1024 * 1024)) + " MB free, at least "
                            + (minFreeBytes / (1024 * 1024)) + " MB must stay free. The message was not stored; "
                            + "free disk space and retry.");
        }
    }

    /** A journal ran out of space: the next {@link #requireFreeSpace} reads the free space again. */
    void spaceRanOut() {
        spaceCheckedAtNs = Long.MIN_VALUE;
    }

    public MetaJournal openMeta() {
        return new MetaJournal(journals.open(DataDirectoryLayout.META_JOURNAL));
    }

    /** The namespace journal as one of several nodes that all write it (cluster mode). */
    public MetaJournal openSharedMeta() {
        return new MetaJournal(journals.openShared(DataDirectoryLayout.META_JOURNAL));
    }

    /** Opens shard {@code index}'s journal with the default resident budget. */
    public ShardJournal openShard(int index) {
        return openShard(index, MessageBodies.DEFAULT_BUDGET_BYTES);
    }

    /**
     * Opens shard {@code index}'s journal.
     *
     * @param residentBudgetBytes message bytes the shard keeps in the heap before evicting the newest
     */
    public ShardJournal openShard(int index, long residentBudgetBytes) {
        String name = DataDirectoryLayout.shardJournal(index);
        Path caches = journals.cacheDirectory();
        DedupRunStore dedupRuns = caches != null
                ? new FileDedupRunStore(caches.resolve(FileDedupRunStore.DIRECTORY).resolve(name))
                : DedupRunStore.inHeap();
        Journal journal = journals.open(name);
        try {
            return new ShardJournal(name, journal, residentBudgetBytes, dedupRuns, this::spaceRanOut);
        } catch (RuntimeException e) {
            journal.close(); // not left open (in cluster mode: its lease renewed) with nothing using it
            throw e;
        }
    }

    /** Problems of the storage for the broker's health report (empty when none). */
    public List<String> healthProblems() {
        return journals.healthProblems();
    }

    @Override
    public void close() {
        journals.close();
    }
}
