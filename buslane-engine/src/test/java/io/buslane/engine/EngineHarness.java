package io.buslane.engine;

import io.buslane.common.error.BrokerException;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.persist.Storage;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.receive.Receiver;
import io.buslane.journal.JournalFactory;
import io.buslane.journal.file.FileJournalFactory;
import io.buslane.journal.file.FileJournalOptions;
import io.buslane.journal.file.SyncPolicy;
import io.buslane.journal.memory.InMemoryJournalFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
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
import java.util.function.Supplier;

/**
 * A real engine driven by hand, for the engine's own tests and (through the engine's test jar) the tests of the
 * modules above it: manual threading (nothing runs until {@link #runUntilIdle()} or {@link #await}), a {@link
 * ManualClock}, and either in-memory journals or real file journals in a directory. No threads, no sleeps.
 *
 * <ul>
 *   <li>{@link #inMemory}, {@link #onFiles}, {@link #onTempFiles}: the engine has run until idle once started.</li>
 *   <li>The constructors ({@link #EngineHarness()}, {@link #EngineHarness(int)}, {@link #EngineHarness(int, long)}):
 *       in-memory journals, the engine started but not yet run (the first {@link #await} or {@link #runUntilIdle()}
 *       runs it).</li>
 * </ul>
 *
 * <p>{@link #restart()} is a clean stop and a start on the same journals (in memory or on files), {@link
 * #crashAndRestart()} a crash (un-synced records lost) and a start on the same in-memory journals.
 */
public final class EngineHarness implements AutoCloseable {

    /** The journal segment size of {@link #onTempFiles(int)}. */
    public static final long DEFAULT_SEGMENT_BYTES = 4L * 1024 * 1024;

    public final ManualClock clock = new ManualClock();
    /** The in-memory journals (null on files): they survive {@link #restart()} and {@link #crashAndRestart()}. */
    public final InMemoryJournalFactory journals;
    /** The engine; replaced by {@link #restart()} and {@link #crashAndRestart()}. */
    public Engine engine;
    private final Supplier<JournalFactory> journalFactory;
    private final int shardCount;
    private final long residentBytesPerShard;
    private final long dedupHeapBytesPerWindow;
    private long sessionStateBytesPerShard = EngineConfig.DEFAULT_SESSION_STATE_BYTES;
    private final Path directory;
    private final boolean deleteDirectory;
    private Storage storage;

    /** An engine with two shards on in-memory journals (not yet run). */
    public EngineHarness() {
        this(2);
    }

    /** An engine with {@code shardCount} shards on in-memory journals (not yet run). */
    public EngineHarness(int shardCount) {
        this(shardCount, EngineConfig.DEFAULT_DEDUP_HEAP_BYTES);
    }

    /** As above, with duplicate-detection windows that each get {@code dedupHeapBytesPerWindow} of heap. */
    public EngineHarness(int shardCount, long dedupHeapBytesPerWindow) {
        this(new InMemoryJournalFactory(), null, shardCount, EngineConfig.DEFAULT_RESIDENT_BYTES_PER_SHARD,
                dedupHeapBytesPerWindow, null, false);
    }

    /** On {@code journals} when not null, else on the journals {@code fileJournals} opens at each start. */
    private EngineHarness(InMemoryJournalFactory journals, Supplier<JournalFactory> fileJournals, int shardCount,
                          long residentBytesPerShard, long dedupHeapBytesPerWindow, Path directory,
                          boolean deleteDirectory) {
        this.journals = journals;
        this.journalFactory = journals != null ? () -> journals : fileJournals;
        this.shardCount = shardCount;
        this.residentBytesPerShard = residentBytesPerShard;
        this.dedupHeapBytesPerWindow = dedupHeapBytesPerWindow;
        this.directory = directory;
        this.deleteDirectory = deleteDirectory;
        start();
    }

    /** An engine with two shards on in-memory journals, run until idle. */
    public static EngineHarness inMemory() {
        return inMemory(2);
    }

    /** An engine with {@code shardCount} shards on in-memory journals, run until idle. */
    public static EngineHarness inMemory(int shardCount) {
        EngineHarness h = new EngineHarness(shardCount);
        h.runUntilIdle();
        return h;
    }

    /**
     * An engine on file journals in {@code directory} (never synced: {@link SyncPolicy#NONE}), run until idle; the
     * directory is left in place on {@link #close()}.
     *
     * @param residentBytesPerShard encoded message bytes each shard keeps in the heap
     * @param segmentBytes          segment size of the journals (small ones make records move through compaction)
     */
    public static EngineHarness onFiles(Path directory, int shardCount, long residentBytesPerShard,
                                        long segmentBytes) {
        return onFiles(directory, shardCount, residentBytesPerShard, segmentBytes,
                EngineConfig.DEFAULT_DEDUP_HEAP_BYTES);
    }

    /** As above, with the given heap budget of each duplicate-detection window. */
    public static EngineHarness onFiles(Path directory, int shardCount, long residentBytesPerShard,
                                        long segmentBytes, long dedupHeapBytesPerWindow) {
        return files(directory, shardCount, residentBytesPerShard, segmentBytes, dedupHeapBytesPerWindow, false);
    }

    /** An engine on file journals in a fresh temporary directory (deleted on {@link #close()}), run until idle. */
    public static EngineHarness onTempFiles(int shardCount) {
        try {
            return files(Files.createTempDirectory("buslane-engine-"), shardCount,
                    EngineConfig.DEFAULT_RESIDENT_BYTES_PER_SHARD, DEFAULT_SEGMENT_BYTES,
                    EngineConfig.DEFAULT_DEDUP_HEAP_BYTES, true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static EngineHarness files(Path directory, int shardCount, long residentBytesPerShard, long segmentBytes,
                                       long dedupHeapBytesPerWindow, boolean deleteDirectory) {
        FileJournalOptions options = FileJournalOptions.defaults().withSegmentSizeBytes(segmentBytes)
                .withSyncPolicy(SyncPolicy.NONE);
        EngineHarness h = new EngineHarness(null, () -> new FileJournalFactory(directory, options), shardCount,
                residentBytesPerShard, dedupHeapBytesPerWindow, directory, deleteDirectory);
        h.runUntilIdle();
        return h;
    }

    /** Opens the storage and starts an engine on it (without running it). */
    private void start() {
        storage = Storage.of(journalFactory.get());
        engine = Engine.start(new EngineConfig(clock, storage, shardCount, ThreadingMode.MANUAL,
                residentBytesPerShard, dedupHeapBytesPerWindow, sessionStateBytesPerShard));
    }

    /**
     * Restarts the engine (a clean stop and start, as {@link #restart()}) with shards that keep at most
     * {@code bytes} of durable session state in the heap.
     */
    public EngineHarness withSessionStateBytesPerShard(long bytes) {
        sessionStateBytesPerShard = bytes;
        restart();
        return this;
    }

    /**
     * A clean stop (engine and journals closed) and a start on the same journals, as a broker restarting on the same
     * data directory; runs until idle.
     */
    public Engine restart() {
        engine.close();
        storage.close();
        start();
        engine.runUntilIdle();
        return engine;
    }

    /**
     * A crash (every un-synced record lost) and a start on the same journals, run until idle; the old engine is
     * abandoned, not closed. In memory only.
     */
    public Engine crashAndRestart() {
        if (journals == null) {
            throw new UnsupportedOperationException("a crash is simulated on in-memory journals only");
        }
        journals.crashAll();
        start();
        engine.runUntilIdle();
        return engine;
    }

    /** The directory of the file journals (null in memory). */
    public Path directory() {
        return directory;
    }

    /** Runs the engine until it has nothing left to do. */
    public void runUntilIdle() {
        engine.runUntilIdle();
    }

    /** Runs the engine until idle and returns the future's value (rethrowing a BrokerException). */
    public <T> T await(CompletableFuture<T> future) {
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

    /** Advances the clock and runs the engine until idle. */
    public void advance(Duration d) {
        clock.advance(d);
        engine.runUntilIdle();
    }

    public QueueEntity queue(QueueProperties p) {
        return await(engine.createQueue(p));
    }

    public QueueEntity queue(String name) {
        return queue(QueueProperties.builder(name).build());
    }

    public TopicEntity topic(TopicProperties p, String... subscriptions) {
        TopicEntity t = await(engine.createTopic(p));
        for (String s : subscriptions) {
            await(engine.createSubscription(SubscriptionProperties.builder(p.name(), s).build(), null));
        }
        return t;
    }

    /** A message with this UTF-8 body (no MessageId: the engine assigns one). */
    public static Message text(String body) {
        return Message.builder().body(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    /** A message with this UTF-8 body and SessionId (no MessageId: the engine assigns one). */
    public static Message text(String body, String sessionId) {
        return Message.builder().body(body.getBytes(StandardCharsets.UTF_8)).sessionId(sessionId).build();
    }

    /** The body of a received message as UTF-8 text. */
    public static String text(ReceivedMessage m) {
        return new String(m.message().body(), StandardCharsets.UTF_8);
    }

    /** Sends and runs until the send completes (rethrowing a BrokerException). */
    public void send(String entity, Message... messages) {
        send(entity, List.of(messages));
    }

    /** Sends a batch and runs until the send completes (rethrowing a BrokerException). */
    public void send(String entity, List<Message> messages) {
        await(engine.send(entity, messages));
    }

    public Sink sink() {
        return new Sink();
    }

    /** Attaches a receiver delivering to {@code sink}, grants credit and runs until idle. */
    public Receiver receiver(String address, ReceiveMode mode, Sink sink, int credit) {
        Receiver r = engine.createReceiver(EntityAddress.parse(address), mode, sink);
        sink.receiver = r;
        r.addCredit(credit);
        engine.runUntilIdle();
        return r;
    }

    /** Attaches a receiver, grants credit and returns the sink holding what arrived. */
    public Sink receive(String address, ReceiveMode mode, int credit) {
        Sink sink = new Sink();
        receiver(address, mode, sink, credit);
        return sink;
    }

    /** Accepts a named session with a peek-lock receiver delivering to {@code sink}, grants credit, runs until idle. */
    public Receiver acceptSession(String address, String sessionId, Sink sink, int credit) {
        Receiver r = await(engine.acceptSession(EntityAddress.parse(address), sessionId, ReceiveMode.PEEK_LOCK, 0,
                sink));
        sink.receiver = r;
        r.addCredit(credit);
        engine.runUntilIdle();
        return r;
    }

    /** Accepts a named session with a peek-lock receiver, grants credit and returns the sink. */
    public Sink acceptSession(String address, String sessionId, int credit) {
        Sink sink = new Sink();
        acceptSession(address, sessionId, sink, credit);
        return sink;
    }

    /**
     * Records deliveries and closures; {@link #receiver} is the receiver it was last attached with by the harness.
     * Not final: other modules' harnesses extend it.
     */
    public static class Sink implements DeliverySink {
        public final List<ReceivedMessage> messages = new ArrayList<>();
        public Receiver receiver;
        public BrokerException closedWith;

        @Override
        public synchronized void onMessage(Receiver r, ReceivedMessage message) {
            messages.add(message);
        }

        @Override
        public synchronized void onClosed(Receiver r, BrokerException error) {
            closedWith = error;
        }

        /** What arrived since the last call, oldest first. */
        public synchronized List<ReceivedMessage> take() {
            List<ReceivedMessage> out = new ArrayList<>(messages);
            messages.clear();
            return out;
        }
    }

    /** Closes the engine and its journals (and deletes a temporary directory). */
    @Override
    public void close() {
        engine.close();
        storage.close();
        if (deleteDirectory) {
            deleteTree(directory);
        }
    }

    private static void deleteTree(Path root) {
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                    Files.delete(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
