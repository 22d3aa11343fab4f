package io.buslane.journal.file;

import io.buslane.journal.JournalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Measures the heap the file journal's index costs per stored record id (what {@link FileJournal#read} and
 * compaction need), by filling a journal and dividing the growth of the heap after full collections by the count.
 * Printed for {@code docs/ARCHITECTURE.md} ("Memory") and checked against generous bounds.
 */
class FileJournalIndexFootprintTest {

    private static final int COUNT = 200_000;

    @TempDir
    Path temp;

    @Test
    void perLiveRecordAndPerDeletedRecordNotYetCompacted() {
        try (FileJournal journal = new FileJournal(temp.resolve("journal"), FileJournalOptions.defaults()
                .withSyncPolicy(SyncPolicy.NONE).withAutoCompactLiveRatio(0))) {
            journal.replay(r -> { });
            byte[] payload = new byte[100];
            long before = usedHeapAfterGc();
            for (int i = 0; i < COUNT; i++) {
                journal.append(JournalRecord.add(16 + i, (byte) 3, payload));
                if (i % 1000 == 999) {
                    journal.sync();
                }
            }
            journal.sync();
            long afterAdds = usedHeapAfterGc();
            for (int i = 0; i < COUNT; i++) {
                journal.append(JournalRecord.delete(16 + i));
                if (i % 1000 == 999) {
                    journal.sync();
                }
            }
            journal.sync();
            long afterDeletes = usedHeapAfterGc();
            // the ids whose ADD shares the last segment with their DELETE are dropped from the index at once (see
            // FileJournalForgottenIdsTest); the others stay until compaction
            int awaiting = journal.indexedIdCount();
            assertThat(awaiting).isBetween(COUNT / 2, COUNT - 1);
            double perLive = (afterAdds - before) / (double) COUNT;
            double perDeleted = (afterDeletes - before) / (double) awaiting;
            System.out.printf("journal index: %.0f bytes per live ADD, %.0f bytes per deleted id awaiting "
                    + "compaction (%d of %d)%n", perLive, perDeleted, awaiting, COUNT);
            assertThat(perLive).isLessThan(150);
            assertThat(perDeleted).isLessThan(180); // the id map keeps the capacity the forgotten ids needed
            assertThat(journal.read(16 + COUNT - 1)).isNull();
        }
    }

    private static long usedHeapAfterGc() {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
