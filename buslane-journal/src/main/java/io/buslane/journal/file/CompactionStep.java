package io.buslane.journal.file;

/**
 * The durable steps of compacting one group of segments, in the order they happen. After a crash at any point the
 * next open rolls back (before {@link #MANIFEST_WRITTEN}) or forward (from it on); see {@link SegmentCompactor}.
 */
enum CompactionStep {

    /** {@code <target>.seg.compacted} holds the group's live records and is forced. Crash: rolled back. */
    OUTPUT_WRITTEN,
    /** {@code compaction.manifest} is forced and the directory fsynced. Crash: rolled forward. */
    MANIFEST_WRITTEN,
    /** One source segment is deleted (reported once per deleted source). Crash: rolled forward. */
    SOURCE_DELETED,
    /** The output is renamed over the target segment and the directory fsynced. Crash: rolled forward. */
    OUTPUT_RENAMED,
    /** The manifest is deleted and the directory fsynced: the step is complete on disk. */
    MANIFEST_DELETED;

    /** Package-private test seam: called after each step; a test throws from it to simulate a crash there. */
    @FunctionalInterface
    interface Hook {
        Hook NONE = (step, targetSegment) -> { };

        void afterStep(CompactionStep step, long targetSegment);
    }
}
