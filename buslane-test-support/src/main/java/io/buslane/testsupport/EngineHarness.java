package io.buslane.testsupport;

import io.buslane.common.error.BrokerException;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.persist.Storage;
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
 * A real engine driven by hand for the tests of the modules above the engine (AMQP, management, server): manual
 * threading (nothing runs until {@link #runUntilIdle()} or {@link #await}), a {@link ManualClock}, and either
 * in-memory journals ({@link #inMemory}) or real file journals in a directory ({@link #onFiles}, {@link
 * #onTempFiles}). No threads, no sleeps.
 *
 * <p>The engine module's own tests keep their own harness ({@code io.buslane.engine.EngineHarness}): this module
 * depends on the engine, so the engine cannot use it.
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
    private final Path directory;
    private final boolean deleteDirectory;
    private Storage storage;

    private EngineHarness(InMemoryJournalFactory journals, Supplier<JournalFactory> journalFactory, int shardCount,
                          long residentBytesPerShard, Path directory, boolean deleteDirectory) {
        this.journals = journals;
        this.journalFactory = journalFactory;
        this.shardCount = shardCount;
        this.residentBytesPerShard = residentBytesPerShard;
        this.directory = directory;
        this.deleteDirectory = deleteDirectory;
        start();
    }

    /** An engine with two shards on in-memory journals. */
    public static EngineHarness inMemory() {
        return inMemory(2);
    }

    /** An engine with {@code shardCount} shards on in-memory journals. */
    public static EngineHarness inMemory(int shardCount) {
        InMemoryJournalFactory journals = new InMemoryJournalFactory();
        return new EngineHarness(journals, () -> journals, shardCount,
                EngineConfig.DEFAULT_RESIDENT_BYTES_PER_SHARD, null, false);
    }

    /**
     * An engine on file journals in {@code directory} (never synced: {@link SyncPolicy#NONE}); the directory is
     * left in place on {@link #close()}.
     *
     * @param residentBytesPerShard encoded message bytes each shard keeps in the heap
     * @param segmentBytes          segment size of the journals (small ones make records move through compaction)
     */
    public static EngineHarness onFiles(Path directory, int shardCount, long residentBytesPerShard,
                                        long segmentBytes) {
        return onFiles(directory, shardCount, residentBytesPerShard, segmentBytes, false);
    }

    /** An engine on file journals in a fresh temporary directory, deleted on {@link #close()}. */
    public static EngineHarness onTempFiles(int shardCount) {
        try {
            return onFiles(Files.createTempDirectory("buslane-engine-"), shardCount,
                    EngineConfig.DEFAULT_RESIDENT_BYTES_PER_SHARD, DEFAULT_SEGMENT_BYTES, true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static EngineHarness onFiles(Path directory, int shardCount, long residentBytesPerShard,
                                         long segmentBytes, boolean deleteDirectory) {
        FileJournalOptions options = FileJournalOptions.defaults().withSegmentSizeBytes(segmentBytes)
                .withSyncPolicy(SyncPolicy.NONE);
        return new EngineHarness(null, () -> new FileJournalFactory(directory, options), shardCount,
                residentBytesPerShard, directory, deleteDirectory);
    }

    private void start() {
        storage = Storage.of(journalFactory.get());
        engine = Engine.start(new EngineConfig(clock, storage, shardCount, ThreadingMode.MANUAL,
                residentBytesPerShard));
        engine.runUntilIdle();
    }

    /** A clean stop and a start on the same journals, as a broker restarting on the same data directory. */
    public Engine restart() {
        engine.close();
        storage.close();
        start();
        return engine;
    }

    /**
     * A crash (every un-synced record lost) and a start on the same journals; the old engine is abandoned, not
     * closed. In memory only.
     */
    public Engine crashAndRestart() {
        if (journals == null) {
            throw new UnsupportedOperationException("a crash is simulated on in-memory journals only");
        }
        journals.crashAll();
        start();
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
        await(engine.send(entity, List.of(messages)));
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

    /** Records deliveries and closures; {@link #receiver} is the receiver it was attached with by the harness. */
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
