package io.buslane.journal;

/** Receives records during {@link Journal#replay(ReplayHandler)}, in append order. */
@FunctionalInterface
public interface ReplayHandler {

    /**
     * Called once per stored record, in the order the records were appended. Records that compaction found dead
     * may already be gone; records that are still stored are delivered even if a later record supersedes them, so
     * the handler applies {@link RecordKind} semantics itself.
     */
    void onRecord(JournalRecord record);
}
