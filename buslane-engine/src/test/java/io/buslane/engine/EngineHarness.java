package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.receive.Receiver;
import io.buslane.common.error.BrokerException;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.journal.memory.InMemoryJournalFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Drives an engine in manual threading mode with a manual clock and in-memory journals: no threads, no sleeps.
 * Restarting builds a new engine on the same journals, as a broker restarting on the same data directory.
 */
public final class EngineHarness implements AutoCloseable {

    public final ManualClock clock = new ManualClock();
    public final InMemoryJournalFactory journals = new InMemoryJournalFactory();
    private final int shardCount;
    private final long dedupHeapBytesPerWindow;
    public Engine engine;

    public EngineHarness() {
        this(2);
    }

    public EngineHarness(int shardCount) {
        this(shardCount, EngineConfig.DEFAULT_DEDUP_HEAP_BYTES);
    }

    /** An engine whose duplicate-detection windows each get {@code dedupHeapBytesPerWindow} of heap. */
    public EngineHarness(int shardCount, long dedupHeapBytesPerWindow) {
        this.shardCount = shardCount;
        this.dedupHeapBytesPerWindow = dedupHeapBytesPerWindow;
        this.engine = Engine.start(config());
    }

    private EngineConfig config() {
        return new EngineConfig(clock, io.buslane.engine.persist.Storage.of(journals), shardCount,
                ThreadingMode.MANUAL, EngineConfig.DEFAULT_RESIDENT_BYTES_PER_SHARD, dedupHeapBytesPerWindow);
    }

    /** Simulates a crash (un-synced records lost) and a restart on the same journals. */
    public Engine restart() {
        journals.crashAll();
        engine = Engine.start(config());
        engine.runUntilIdle();
        return engine;
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

    public static Message text(String body) {
        return Message.builder().body(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    public static Message text(String body, String sessionId) {
        return Message.builder().body(body.getBytes(StandardCharsets.UTF_8)).sessionId(sessionId).build();
    }

    public static String text(ReceivedMessage m) {
        return new String(m.message().body(), StandardCharsets.UTF_8);
    }

    public void send(String entity, Message... messages) {
        await(engine.send(entity, List.of(messages)));
    }

    public Sink sink() {
        return new Sink();
    }

    /** Records deliveries and closures. */
    public static final class Sink implements DeliverySink {
        public final List<ReceivedMessage> messages = new ArrayList<>();
        public BrokerException closedWith;

        @Override
        public synchronized void onMessage(Receiver receiver, ReceivedMessage message) {
            messages.add(message);
        }

        @Override
        public synchronized void onClosed(Receiver receiver, BrokerException error) {
            closedWith = error;
        }

        public synchronized List<ReceivedMessage> take() {
            List<ReceivedMessage> out = new ArrayList<>(messages);
            messages.clear();
            return out;
        }
    }

    /** Attaches a receiver, grants credit and returns what arrived. */
    public Receiver receiver(String address, ReceiveMode mode, Sink sink, int credit) {
        Receiver r = engine.createReceiver(EntityAddress.parse(address), mode, sink);
        r.addCredit(credit);
        engine.runUntilIdle();
        return r;
    }

    @Override
    public void close() {
        engine.close();
    }
}
