package io.buslane.journal.file;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalContractTest;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * The journal contract against {@link FileJournal} with 4 KiB segments (so long runs roll many times), a small write
 * buffer (so appends spill to the file between syncs), {@link SyncPolicy#ALWAYS} and automatic compaction on.
 */
class FileJournalContractTest extends JournalContractTest {

    @TempDir
    Path directory;

    @Override
    protected Journal openJournal() {
        return new FileJournal(directory.resolve("journal"), FileJournalOptions.defaults()
                .withSegmentSizeBytes(4096)
                .withWriteBufferSizeBytes(1024));
    }
}
