package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.file.FileJournalFactory;
import io.buslane.journal.file.FileJournalOptions;
import io.buslane.journal.file.SyncPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The broker's own messages fill its disk: sends are refused, consuming every message frees the space (the dead
 * segments are reclaimed although nothing else is written), and sends resume, also across a restart with a full disk.
 * The disk is a pretend one whose used space is what the data directory's files take, so no real disk is filled.
 */
class DiskFullReclaimTest {

    private static final long SEGMENT_BYTES = 64 * 1024;
    private static final long CAPACITY_BYTES = 2 * 1024 * 1024;
    private static final long MIN_FREE_BYTES = 512 * 1024;
    private static final long RESERVE_BYTES = 128 * 1024;
    private static final int BODY_BYTES = 1000;
    private static final int BATCH = 10;

    @TempDir
    Path temp;

    private final ManualClock clock = new ManualClock();
    private Storage storage;
    private Engine engine;

    /**
     * A disk of {@link #CAPACITY_BYTES} that holds only the data directory: its files' sizes are the used space.
     * Segments that compaction replaced ({@code *.obsolete}) are freed by the journal's background thread moments
     * later; they count as free so that the test need not wait for that thread.
     */
    private long usableBytes() {
        long[] used = {0};
        try {
            Files.walkFileTree(temp, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                    if (attributes.isRegularFile() && !file.getFileName().toString().endsWith(".obsolete")) {
                        used[0] += attributes.size();
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    return FileVisitResult.CONTINUE; // deleted meanwhile
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Math.max(0, CAPACITY_BYTES - used[0]);
    }

    private void start() {
        FileJournalOptions options = FileJournalOptions.defaults().withSegmentSizeBytes(SEGMENT_BYTES)
                .withSyncPolicy(SyncPolicy.NONE).withDiskSpace(directory -> usableBytes())
                .withReserveBytes(RESERVE_BYTES);
        storage = Storage.of(new FileJournalFactory(temp, options), MIN_FREE_BYTES);
        engine = Engine.start(new EngineConfig(clock, storage, 1, ThreadingMode.MANUAL));
        engine.runUntilIdle();
    }

    private void stop() {
        engine.close();
        storage.close();
        engine = null;
    }

    @AfterEach
    void closeEngine() {
        if (engine != null) {
            stop();
        }
    }

    private static List<Message> batch(int first) {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < BATCH; i++) {
            messages.add(EngineHarness.text(String.format("%06d", first + i) + "x".repeat(BODY_BYTES - 6)));
        }
        return messages;
    }

    /** Sends one batch after the free-space reading has gone stale; returns the refusal, or null if stored. */
    private BrokerException trySend(int first) {
        clock.advance(Duration.ofSeconds(1));
        CompletableFuture<Void> sent = engine.send("q", batch(first));
        engine.runUntilIdle();
        try {
            sent.join();
            return null;
        } catch (CompletionException e) {
            assertThat(e.getCause()).isInstanceOf(BrokerException.class);
            return (BrokerException) e.getCause();
        }
    }

    /** Sends batches until the disk is full; returns the number of messages stored. */
    private int fillTheDisk() {
        int sent = 0;
        BrokerException refused;
        while ((refused = trySend(sent)) == null) {
            sent += BATCH;
            assertThat(sent).as("messages sent before the disk filled").isLessThan(10_000);
        }
        assertThat(refused.kind()).isEqualTo(ErrorKind.QUOTA_EXCEEDED);
        assertThat(refused.description()).contains("disk is full");
        assertThat(sent).as("messages the disk took").isGreaterThan(500);
        return sent;
    }

    /** Receives (and so deletes) every message; returns how many there were. */
    private int drain() {
        EngineHarness.Sink sink = new EngineHarness.Sink();
        Receiver receiver = engine.createReceiver(EntityAddress.parse("q"), ReceiveMode.RECEIVE_AND_DELETE, sink);
        receiver.addCredit(100_000);
        engine.runUntilIdle();
        int received = sink.take().size();
        receiver.close();
        engine.runUntilIdle();
        return received;
    }

    @Test
    void drainingAFullDiskFreesItAndSendsResume() {
        start();
        engine.createQueue(QueueProperties.builder("q").build());
        engine.runUntilIdle();
        int stored = fillTheDisk();

        assertThat(drain()).isEqualTo(stored);

        assertThat(usableBytes()).as("free space once every message is consumed")
                .isGreaterThan(CAPACITY_BYTES - 10 * SEGMENT_BYTES);
        assertThat(trySend(stored)).as("a send after the drain").isNull();
        assertThat(fillTheDisk()).as("the freed space takes about as many messages again")
                .isGreaterThan(stored * 3 / 4);
    }

    @Test
    void aBrokerRestartedOnAFullDiskStartsAndFreesTheSpaceAsMessagesAreConsumed() {
        start();
        engine.createQueue(QueueProperties.builder("q").build());
        engine.runUntilIdle();
        int stored = fillTheDisk();
        stop();

        start();
        assertThat(trySend(stored)).as("a send to the still full disk").isNotNull();
        assertThat(drain()).isEqualTo(stored);

        assertThat(usableBytes()).isGreaterThan(CAPACITY_BYTES - 10 * SEGMENT_BYTES);
        assertThat(trySend(stored)).as("a send after the drain").isNull();
    }
}
