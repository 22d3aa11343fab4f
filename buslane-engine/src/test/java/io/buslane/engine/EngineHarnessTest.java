package io.buslane.engine;

import io.buslane.engine.api.ReceiveMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link EngineHarness}: both journal variants keep what was sent across a restart; the manual clock drives time. */
class EngineHarnessTest {

    @Test
    void inMemoryKeepsSyncedMessagesAcrossACrashAndACleanRestart() {
        try (EngineHarness h = EngineHarness.inMemory(1)) {
            h.queue("q");
            h.send("q", EngineHarness.text("a"), EngineHarness.text("b"));
            h.crashAndRestart();
            h.send("q", EngineHarness.text("c"));
            h.restart();
            EngineHarness.Sink sink = h.receive("q", ReceiveMode.RECEIVE_AND_DELETE, 10);
            assertThat(sink.take()).extracting(EngineHarness::text).containsExactly("a", "b", "c");
            assertThat(sink.receiver).isNotNull();
        }
    }

    @Test
    void onFilesKeepsMessagesAcrossARestartAndTheClockOnlyMovesWhenAdvanced(@TempDir Path dir) {
        try (EngineHarness h = EngineHarness.onFiles(dir, 2, 0, 1 << 20)) {
            h.queue("q");
            h.send("q", EngineHarness.text("x"));
            long before = h.clock.monotonicNanos();
            h.advance(Duration.ofSeconds(5));
            assertThat(h.clock.monotonicNanos() - before).isEqualTo(Duration.ofSeconds(5).toNanos());
            h.restart();
            assertThat(h.receive("q", ReceiveMode.PEEK_LOCK, 1).take()).extracting(EngineHarness::text)
                    .containsExactly("x");
            assertThatThrownBy(h::crashAndRestart).isInstanceOf(UnsupportedOperationException.class);
        }
        assertThat(dir).exists();
    }

    @Test
    void aTemporaryDirectoryIsDeletedOnClose() {
        Path dir;
        try (EngineHarness h = EngineHarness.onTempFiles(1)) {
            dir = h.directory();
            h.queue("q");
            assertThat(dir).isDirectory();
        }
        assertThat(Files.exists(dir)).isFalse();
    }
}
