package io.buslane.journal.file;

import io.buslane.journal.JournalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.buslane.journal.file.JournalFiles.bytes;
import static io.buslane.journal.file.JournalFiles.replay;
import static org.assertj.core.api.Assertions.assertThat;

/** The metrics hook: one call per sync that wrote records, with the batch size and a non-negative duration. */
class FileJournalSyncListenerTest {

    @TempDir
    Path dataDirectory;

    @Test
    void everyNonEmptySyncIsReportedWithItsRecordCount() {
        List<long[]> calls = new ArrayList<>();
        try (FileJournalFactory factory = new FileJournalFactory(dataDirectory, FileJournalOptions.defaults())) {
            factory.syncListener((records, nanos) -> calls.add(new long[] {records, nanos}));
            FileJournal journal = factory.open("shard-0");
            replay(journal);
            journal.append(JournalRecord.add(1, (byte) 1, bytes("a")));
            journal.append(JournalRecord.add(2, (byte) 1, bytes("b")));
            journal.sync();
            journal.sync(); // nothing pending: not a sync
            journal.append(JournalRecord.delete(1));
            journal.sync();
            journal.close();
        }
        assertThat(calls).hasSize(2);
        assertThat(calls.get(0)[0]).isEqualTo(2);
        assertThat(calls.get(1)[0]).isEqualTo(1);
        assertThat(calls).allSatisfy(c -> assertThat(c[1]).isNotNegative());
    }

    @Test
    void withoutAListenerSyncWorksAsBefore() {
        try (FileJournalFactory factory = new FileJournalFactory(dataDirectory, FileJournalOptions.defaults())) {
            factory.syncListener(null);
            FileJournal journal = factory.open("meta");
            replay(journal);
            journal.append(JournalRecord.add(1, (byte) 1, bytes("a")));
            journal.sync();
            assertThat(journal.appendedCount()).isEqualTo(1);
            journal.close();
        }
    }
}
