package io.buslane.journal.file;

import java.nio.file.Path;

/**
 * Confined to its journal's writer thread. What the journal knows about one segment file: its size, how many of its
 * bytes are live records, and whether recovery found it corrupt.
 */
final class Segment {

    final long number;
    final Path path;
    /** Bytes in the file (for the active segment: written to the file, excluding the write buffer). */
    long sizeBytes;
    /** Bytes of the records in it that {@link LiveIndex} counts as live. */
    long liveBytes;
    /**
     * Records in this segment whose ids {@link LiveIndex} no longer holds: every record of such an id was in this
     * segment and dead (typically an ADD and its DELETE written close together), so the index dropped the id at its
     * DELETE. Compaction drops their frames and checks that it met exactly this many of them.
     */
    long forgottenRecords;
    /** A record in the middle failed verification; never compacted while the journal is open. */
    boolean corrupt;

    Segment(long number, Path path, long sizeBytes) {
        this.number = number;
        this.path = path;
        this.sizeBytes = sizeBytes;
    }

    @Override
    public String toString() {
        return path.getFileName() + "(" + sizeBytes + " bytes, " + liveBytes + " live" + (corrupt ? ", corrupt" : "")
                + ")";
    }
}
