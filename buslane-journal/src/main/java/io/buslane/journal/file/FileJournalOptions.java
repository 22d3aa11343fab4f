package io.buslane.journal.file;

/**
 * Settings of one {@link FileJournal}. Immutable.
 *
 * @param segmentSizeBytes        a segment rolls when the next record would take it past this size; a record larger
 *                                than this gets a segment of its own
 * @param syncPolicy              whether {@link FileJournal#sync()} forces the data to the device
 * @param writeBufferSizeBytes    size of the reusable direct buffer that appends collect in between writes
 * @param autoCompactLiveRatio    when above zero, sealed segments whose live fraction is below this ratio are
 *                                compacted in steps after syncs and in {@link FileJournal#maintain()}, by a pass
 *                                started at open, after a segment roll, and once deletes made sealed records dead;
 *                                zero leaves compaction to explicit {@link FileJournal#compact(double)} calls
 * @param diskSpace               reads the usable bytes of the journals' file system (compaction groups fit in it;
 *                                the reserve is released and re-created by it); tests inject a pretend disk
 * @param reserveBytes            size of the disk reserve a {@link FileJournalFactory} keeps in its data directory
 *                                for deletes and compaction when the disk fills up; zero keeps none
 */
public record FileJournalOptions(
        long segmentSizeBytes, SyncPolicy syncPolicy, int writeBufferSizeBytes, double autoCompactLiveRatio,
        DiskSpace diskSpace, long reserveBytes) {

    /**
     * 16 MiB: large enough to batch deletes (NATS blocks are a few MiB), small enough that compacting one segment
     * (whose swap updates the index of every record it held, at once) stays a short pause for the writer thread.
     */
    public static final long DEFAULT_SEGMENT_SIZE_BYTES = 16L * 1024 * 1024;
    public static final int DEFAULT_WRITE_BUFFER_SIZE_BYTES = 256 * 1024;
    public static final double DEFAULT_AUTO_COMPACT_LIVE_RATIO = 0.5;
    /**
     * 8 MiB (overridable with {@code buslane.diskReserveBytes}): hundreds of thousands of deletes, and the rewrite of
     * any group with up to 7 MiB of live records, once the disk is full.
     */
    public static final long DEFAULT_RESERVE_BYTES = Long.getLong("buslane.diskReserveBytes", 8L * 1024 * 1024);
    /** Smallest accepted segment and buffer size; tiny sizes exist for tests that roll often. */
    public static final int MIN_SIZE_BYTES = 64;

    public FileJournalOptions {
        if (segmentSizeBytes < MIN_SIZE_BYTES) {
            throw new IllegalArgumentException("segmentSizeBytes must be at least " + MIN_SIZE_BYTES + ": "
                    + segmentSizeBytes);
        }
        if (syncPolicy == null) {
            throw new IllegalArgumentException("syncPolicy must not be null");
        }
        if (writeBufferSizeBytes < MIN_SIZE_BYTES) {
            throw new IllegalArgumentException("writeBufferSizeBytes must be at least " + MIN_SIZE_BYTES + ": "
                    + writeBufferSizeBytes);
        }
        if (!(autoCompactLiveRatio >= 0.0 && autoCompactLiveRatio <= 1.0)) {
            throw new IllegalArgumentException("autoCompactLiveRatio must be within [0, 1]: " + autoCompactLiveRatio);
        }
        if (diskSpace == null) {
            throw new IllegalArgumentException("diskSpace must not be null");
        }
        if (reserveBytes < 0) {
            throw new IllegalArgumentException("reserveBytes must not be negative: " + reserveBytes);
        }
    }

    /**
     * 16 MiB segments, {@link SyncPolicy#ALWAYS}, a 256 KiB write buffer, automatic compaction below 50% live, the
     * real file system's free space and an 8 MiB disk reserve.
     */
    public static FileJournalOptions defaults() {
        return new FileJournalOptions(DEFAULT_SEGMENT_SIZE_BYTES, SyncPolicy.ALWAYS, DEFAULT_WRITE_BUFFER_SIZE_BYTES,
                DEFAULT_AUTO_COMPACT_LIVE_RATIO, DiskSpace.fileSystem(), DEFAULT_RESERVE_BYTES);
    }

    public FileJournalOptions withSegmentSizeBytes(long newSegmentSizeBytes) {
        return new FileJournalOptions(newSegmentSizeBytes, syncPolicy, writeBufferSizeBytes, autoCompactLiveRatio,
                diskSpace, reserveBytes);
    }

    public FileJournalOptions withSyncPolicy(SyncPolicy newSyncPolicy) {
        return new FileJournalOptions(segmentSizeBytes, newSyncPolicy, writeBufferSizeBytes, autoCompactLiveRatio,
                diskSpace, reserveBytes);
    }

    public FileJournalOptions withWriteBufferSizeBytes(int newWriteBufferSizeBytes) {
        return new FileJournalOptions(segmentSizeBytes, syncPolicy, newWriteBufferSizeBytes, autoCompactLiveRatio,
                diskSpace, reserveBytes);
    }

    /** Zero disables automatic compaction. */
    public FileJournalOptions withAutoCompactLiveRatio(double newAutoCompactLiveRatio) {
        return new FileJournalOptions(segmentSizeBytes, syncPolicy, writeBufferSizeBytes, newAutoCompactLiveRatio,
                diskSpace, reserveBytes);
    }

    public FileJournalOptions withDiskSpace(DiskSpace newDiskSpace) {
        return new FileJournalOptions(segmentSizeBytes, syncPolicy, writeBufferSizeBytes, autoCompactLiveRatio,
                newDiskSpace, reserveBytes);
    }

    /** Zero keeps no reserve. */
    public FileJournalOptions withReserveBytes(long newReserveBytes) {
        return new FileJournalOptions(segmentSizeBytes, syncPolicy, writeBufferSizeBytes, autoCompactLiveRatio,
                diskSpace, newReserveBytes);
    }
}
