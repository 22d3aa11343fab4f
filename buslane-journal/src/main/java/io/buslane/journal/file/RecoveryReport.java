package io.buslane.journal.file;

import java.util.List;

/**
 * What {@link FileJournal#replay} found on disk: how much was replayed, what was cut or skipped, and whether an
 * interrupted compaction was finished or undone. Loss is reported here, never silent. Immutable.
 *
 * @param recordsReplayed       records delivered to the handler
 * @param segmentsScanned       segment files read
 * @param bytesReplayed         bytes of the records delivered
 * @param bytesTruncated        bytes cut from the end of the journal by a crash mid-write: a torn tail, and the
 *                              unfinished last batch, whose records were not replayed (in the last segment, or from
 *                              an earlier one when a roll split that batch)
 * @param corruptions           records in non-last segments that failed verification; each segment's remainder was
 *                              skipped and left on disk untouched
 * @param interruptedCompaction what was done about a compaction that a crash interrupted
 */
public record RecoveryReport(long recordsReplayed, int segmentsScanned, long bytesReplayed, long bytesTruncated,
                             List<Corruption> corruptions, InterruptedCompaction interruptedCompaction) {

    public RecoveryReport {
        corruptions = List.copyOf(corruptions);
    }

    /** True when nothing was truncated or skipped. A finished or undone compaction loses nothing. */
    public boolean isClean() {
        return bytesTruncated == 0 && corruptions.isEmpty();
    }

    /**
     * A record in the middle of the journal that failed verification (bit rot, a damaged disk, outside writes).
     *
     * @param segmentFile  the segment's file name
     * @param offsetBytes  position of the bad record in the file; everything before it was replayed
     * @param skippedBytes bytes from the bad record to the end of the segment, none of them replayed
     * @param reason       what failed: magic, length, CRC or kind
     */
    public record Corruption(String segmentFile, long offsetBytes, long skippedBytes, String reason) {
    }

    /** The state a crash left a compaction in, and what opening the journal did about it. */
    public enum InterruptedCompaction {
        /** No compaction was in progress. */
        NONE,
        /** Crashed before its manifest was durable: the partial output was deleted, the sources kept. */
        ROLLED_BACK,
        /** Crashed after its manifest was durable: the swap was completed from the manifest. */
        ROLLED_FORWARD
    }
}
