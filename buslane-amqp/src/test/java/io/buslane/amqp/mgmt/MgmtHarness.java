package io.buslane.amqp.mgmt;

import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineHarness;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.Message;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link ManagementProcessor} on a real engine in manual threading mode (manual clock, in-memory journals, one
 * shard): the shared {@link EngineHarness} of buslane-engine's test jar. No threads, no sleeps.
 */
final class MgmtHarness implements AutoCloseable {

    final EngineHarness harness = EngineHarness.inMemory(1);
    final ManualClock clock = harness.clock;
    final Engine engine = harness.engine;
    final ManagementProcessor processor;

    MgmtHarness() {
        processor = new ManagementProcessor(engine);
    }

    /** Runs the engine until idle and returns the future's value (rethrowing a BrokerException). */
    <T> T await(CompletableFuture<T> future) {
        return harness.await(future);
    }

    void advance(Duration d) {
        harness.advance(d);
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

    /** A message with this UTF-8 body and the MessageId {@code id-<body>}. */
    static Message text(String body) {
        return Message.builder().messageId("id-" + body).body(body.getBytes(StandardCharsets.UTF_8)).build();
    }

    /** A message with this UTF-8 body and SessionId, and the MessageId {@code id-<body>}. */
    static Message text(String body, String sessionId) {
        return Message.builder().messageId("id-" + body).body(body.getBytes(StandardCharsets.UTF_8))
                .sessionId(sessionId).build();
    }

    void send(String entity, Message... messages) {
        harness.send(entity, messages);
    }

    /** Attaches a receiver, grants credit and returns what arrived. */
    Sink receive(String address, ReceiveMode mode, int credit) {
        Sink sink = new Sink();
        harness.receiver(address, mode, sink, credit);
        return sink;
    }

    /** Accepts a named session with a peek-lock receiver and grants credit. */
    Sink acceptSession(String address, String sessionId, int credit) {
        Sink sink = new Sink();
        harness.acceptSession(address, sessionId, sink, credit);
        return sink;
    }

    /** Records deliveries and closures (and the receiver it was attached with). */
    static final class Sink extends EngineHarness.Sink {
    }

    @Override
    public void close() {
        harness.close();
    }
}
