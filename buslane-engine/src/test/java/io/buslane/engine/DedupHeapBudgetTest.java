package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.dedup.DedupWindow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Duplicate detection with a tiny heap budget: old ids live in spilled runs, across restarts (issue #6). */
class DedupHeapBudgetTest {

    /** 128 ids in the ring. */
    private static final long TINY_BUDGET = 4 * 1024;

    private static QueueProperties dedupQueue(Duration window) {
        return QueueProperties.builder("q").requiresDuplicateDetection(true)
                .duplicateDetectionHistoryTimeWindow(window).build();
    }

    private static List<Message> batch(int from, int count) {
        List<Message> batch = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            batch.add(Message.builder().messageId("id-" + i).body(new byte[] {1}).build());
        }
        return batch;
    }

    private static long runFiles(Path dir) throws IOException {
        Path runs = dir.resolve("dedup-runs").resolve("shard-0");
        if (!Files.isDirectory(runs)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(runs)) {
            return files.count();
        }
    }

    @Test
    void idsSpilledToRunFilesAreStillDuplicatesAfterARestart(@TempDir Path dir) throws IOException {
        try (EngineHarness h = EngineHarness.onFiles(dir, 1, 1 << 20, 64 * 1024, TINY_BUDGET)) {
            h.await(h.engine.createQueue(dedupQueue(Duration.ofMinutes(10))));
            for (int i = 0; i < 3_000; i += 20) {
                h.send("q", batch(i, 20));
                h.advance(Duration.ofMillis(100));
            }
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(3_000);
            long files = runFiles(dir);
            assertThat(files).isBetween(1L, (long) DedupWindow.MAX_RUNS);
            for (int i = 0; i < 3_000; i += 500) {
                h.send("q", batch(i, 20)); // the oldest ids are only in runs
            }
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(3_000);
            h.await(h.engine.purge(EntityAddress.parse("q")));

            h.restart(); // the runs are rebuilt from the journal's key blocks
            assertThat(runFiles(dir)).isBetween(1L, (long) DedupWindow.MAX_RUNS);
            for (int i = 0; i < 3_000; i += 20) {
                h.send("q", batch(i, 20));
            }
            h.send("q", batch(3_000, 1));
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(1);

            // ids sent 10 minutes ago or earlier are forgotten, and their runs deleted
            h.advance(Duration.ofMinutes(10));
            h.send("q", batch(0, 20));
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(21);
            assertThat(runFiles(dir)).isZero();
        }
    }

    @Test
    void theSpilledWindowSurvivesACrash() {
        try (EngineHarness h = new EngineHarness(2, TINY_BUDGET)) {
            h.queue(dedupQueue(Duration.ofMinutes(5)));
            for (int i = 0; i < 2_000; i += 25) {
                h.await(h.engine.send("q", batch(i, 25)));
                h.advance(Duration.ofMillis(50));
            }
            h.await(h.engine.purge(EntityAddress.parse("q")));
            h.crashAndRestart();
            for (int i = 0; i < 2_000; i += 25) {
                h.await(h.engine.send("q", batch(i, 25)));
            }
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isZero();
            h.advance(Duration.ofMinutes(5));
            h.await(h.engine.send("q", batch(0, 25)));
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(25);
        }
    }
}
