package io.buslane.amqp.mgmt;

import io.buslane.common.error.BrokerException;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A real engine in manual threading mode (manual clock, in-memory journals) plus a {@link ManagementProcessor} on
 * it: no threads, no sleeps. The equivalent of the engine module's test harness, which this module cannot see.
 */
final class MgmtHarness implements AutoCloseable {

    final ManualClock clock = new ManualClock();
    final Engine engine;
    final ManagementProcessor processor;

    MgmtHarness() {
        engine = Engine.start(new EngineConfig(clock, Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.MANUAL));
        engine.runUntilIdle();
        processor = new ManagementProcessor(engine);
    }

    /** Runs the engine until idle and returns the future's value (rethrowing a BrokerException). */
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

    /** Sends a $management request and returns its response (the future must never fail). */
    ManagementResponse call(String entity, String operation, Object body) {
        Map<String, Object> props = new LinkedHashMap<>();
        if (operation != null) {
            props.put("operation", operation);
        }
        props.put("com.microsoft:server-timeout", 59_000L);
        CompletableFuture<ManagementResponse> f = processor.process(EntityAddress.parse(entity), props, body);
        engine.runUntilIdle();
        if (!f.isDone()) {
            throw new AssertionError("management operation did not complete");
        }
        return f.join();
    }

    static Map<String, Object> args(Object... keyValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    static Message text(String body) {
        return Message.builder().messageId("id-" + body).body(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    static Message text(String body, String sessionId) {
        return Message.builder().messageId("id-" + body).body(body.getBytes(StandardCharsets.UTF_8))
                .sessionId(sessionId).build();
    }

    void send(String entity, Message... messages) {
        await(engine.send(entity, List.of(messages)));
    }

    /** Attaches a receiver, grants credit and returns what arrived. */
    Sink receive(String address, ReceiveMode mode, int credit) {
        Sink sink = new Sink();
        sink.receiver = engine.createReceiver(EntityAddress.parse(address), mode, sink);
        sink.receiver.addCredit(credit);
        engine.runUntilIdle();
        return sink;
    }

    /** Accepts a named session with a peek-lock receiver and grants credit. */
    Sink acceptSession(String address, String sessionId, int credit) {
        Sink sink = new Sink();
        sink.receiver = await(engine.acceptSession(EntityAddress.parse(address), sessionId, ReceiveMode.PEEK_LOCK,
                0, sink));
        sink.receiver.addCredit(credit);
        engine.runUntilIdle();
        return sink;
    }

    /** Records deliveries and closures. */
    static final class Sink implements DeliverySink {
        final List<ReceivedMessage> messages = new ArrayList<>();
        Receiver receiver;
        BrokerException closedWith;

        @Override
        public synchronized void onMessage(Receiver r, ReceivedMessage message) {
            messages.add(message);
        }

        @Override
        public synchronized void onClosed(Receiver r, BrokerException error) {
            closedWith = error;
        }
    }

    @Override
    public void close() {
        engine.close();
    }
}
