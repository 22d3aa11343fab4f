package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.file.FileJournalFactory;
import io.buslane.journal.file.FileJournalOptions;
import io.buslane.journal.file.SyncPolicy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Drives an engine in manual threading mode over real file journals in a directory, with a manual clock and a
 * chosen resident budget per shard. Restarting closes the engine and the journals and starts again on the same
 * directory, as a broker restarting.
 */
final class FileEngineHarness implements AutoCloseable {

    final ManualClock clock = new ManualClock();
    private final Path directory;
    private final FileJournalOptions options;
    private final int shardCount;
    private final long residentBytesPerShard;
    private final long dedupHeapBytesPerWindow;
    private Storage storage;
    Engine engine;

    /**
     * @param segmentBytes segment size of the journals (small ones make records move through compaction)
     */
    FileEngineHarness(Path directory, int shardCount, long residentBytesPerShard, long segmentBytes) {
        this(directory, shardCount, residentBytesPerShard, segmentBytes, EngineConfig.DEFAULT_DEDUP_HEAP_BYTES);
    }

    /** As above, with the given heap budget of each duplicate-detection window. */
    FileEngineHarness(Path directory, int shardCount, long residentBytesPerShard, long segmentBytes,
                      long dedupHeapBytesPerWindow) {
        this.dedupHeapBytesPerWindow = dedupHeapBytesPerWindow;
        this.directory = directory;
        this.shardCount = shardCount;
        this.residentBytesPerShard = residentBytesPerShard;
        this.options = FileJournalOptions.defaults().withSegmentSizeBytes(segmentBytes)
                .withSyncPolicy(SyncPolicy.NONE);
        start();
    }

    private void start() {
        storage = Storage.of(new FileJournalFactory(directory, options));
        engine = Engine.start(new EngineConfig(clock, storage, shardCount, ThreadingMode.MANUAL,
                residentBytesPerShard, dedupHeapBytesPerWindow));
        engine.runUntilIdle();
    }

    /** A clean stop and a start on the same directory. */
    Engine restart() {
        close();
        start();
        return engine;
    }

    <T> T await(CompletableFuture<T> future) {
        engine.runUntilIdle();
        if (!future.isDone()) {
            throw new AssertionError("operation did not complete");
        }
        try {
            return future.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof BrokerException be) {
                throw be;
            }
            throw e;
        }
    }

    void advance(Duration d) {
        clock.advance(d);
        engine.runUntilIdle();
    }

    void send(String entity, List<io.buslane.engine.message.Message> messages) {
        await(engine.send(entity, messages));
    }

    Receiver receiver(String address, ReceiveMode mode, EngineHarness.Sink sink, int credit) {
        Receiver r = engine.createReceiver(EntityAddress.parse(address), mode, sink);
        r.addCredit(credit);
        engine.runUntilIdle();
        return r;
    }

    @Override
    public void close() {
        engine.close();
        storage.close();
    }
}
