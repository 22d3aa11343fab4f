package io.buslane.journal.file;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalReadContractTest;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * The read contract against {@link FileJournal} with 4 KiB segments (records move between segments through
 * compaction), a small write buffer and automatic compaction on.
 */
class FileJournalReadContractTest extends JournalReadContractTest {

    @TempDir
    Path directory;

    @Override
    protected Journal openJournal() {
        return new FileJournal(directory.resolve("journal"), FileJournalOptions.defaults()
                .withSegmentSizeBytes(4096)
                .withWriteBufferSizeBytes(1024)
                .withSyncPolicy(SyncPolicy.NONE));
    }

    @Override
    protected void compactFully(Journal journal) {
        FileJournal file = (FileJournal) journal;
        file.sealActiveSegment();
        file.compact(1.0);
    }
}
