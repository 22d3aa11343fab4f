package io.buslane.journal.file;

/**
 * What one {@link FileJournal#compact(double)} call did. Immutable.
 *
 * @param segmentsCompacted sealed segments that were rewritten or removed
 * @param segmentsWritten   new segments that replaced them (fewer when small ones were merged or all dead)
 * @param bytesBefore       total size of the compacted segments
 * @param bytesAfter        total size of the segments that replaced them
 */
public record CompactionResult(int segmentsCompacted, int segmentsWritten, long bytesBefore, long bytesAfter) {

    public static final CompactionResult NONE = new CompactionResult(0, 0, 0, 0);

    /** Bytes returned to the file system. */
    public long bytesReclaimed() {
        return bytesBefore - bytesAfter;
    }

    CompactionResult plus(CompactionResult other) {
        return new CompactionResult(segmentsCompacted + other.segmentsCompacted,
                segmentsWritten + other.segmentsWritten, bytesBefore + other.bytesBefore,
                bytesAfter + other.bytesAfter);
    }
}
