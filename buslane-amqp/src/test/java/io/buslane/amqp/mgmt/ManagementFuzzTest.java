package io.buslane.amqp.mgmt;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.buslane.amqp.fuzz.LoggedFailures;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.ReceivedMessage;
import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.codec.DroppingWritableBuffer;
import org.apache.qpid.proton.message.Message;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Coverage-guided fuzzing of {@code $management} request processing: the request message is decoded with proton-j
 * as {@code RequestLink} decodes it, and {@link ManagementProcessor#process} runs it against a real engine (manual
 * threading, see {@link MgmtHarness}) holding active, deferred, scheduled and session messages, a topic and a
 * subscription.
 *
 * <p>Input: one byte choosing the entity whose {@code $management} node is addressed (a queue, a session queue, a
 * subscription, a dead-letter queue, a missing entity), then the encoded request message. Invariants: the response is
 * ready once the engine is idle and never exceptional; it is a documented answer (a success, or an error status with
 * its condition), never a 500 {@code amqp:internal-error} (an unexpected exception inside); the processor logs no
 * unexpected failure; the response encodes as the reply link would send it; and the engine still works afterwards
 * (checked each time it is replaced).
 *
 * <p>Seeds: the {@code $management} requests of the recorded SDK conversations plus one request per operation of
 * {@code amqp-wire-protocol.md} §6.2, in {@code ManagementFuzzTestInputs/request/}.
 */
class ManagementFuzzTest {

    static final List<String> ENTITIES = List.of("q", "sq", "t/Subscriptions/s", "q/$deadletterqueue", "missing",
            "t");
    private static final int INPUTS_PER_ENGINE = 300;

    private static MgmtHarness harness;
    private static int inputs;

    private static synchronized MgmtHarness harness() {
        if (harness == null || inputs >= INPUTS_PER_ENGINE) {
            if (harness != null) {
                // the engine still serves a request after what the inputs did
                ManagementResponse peek = harness.call("q", ManagementProcessor.PEEK_MESSAGE,
                        MgmtHarness.args("from-sequence-number", 1L, "message-count", 1));
                if (peek.statusCode() != 200 && peek.statusCode() != 204) {
                    throw new AssertionError("The engine no longer serves a peek after " + inputs + " inputs: "
                            + peek);
                }
                harness.close();
            }
            harness = populated();
            inputs = 0;
            LoggedFailures.install();
        }
        inputs++;
        return harness;
    }

    /** Active, deferred, scheduled and session messages; a topic with a subscription. */
    private static MgmtHarness populated() {
        MgmtHarness h = new MgmtHarness();
        h.await(h.engine.createQueue(QueueProperties.builder("q").lockDuration(Duration.ofSeconds(30)).build()));
        h.await(h.engine.createQueue(QueueProperties.builder("sq").requiresSession(true).build()));
        h.await(h.engine.createTopic(TopicProperties.builder("t").build()));
        h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "s").build(), null));
        for (int i = 0; i < 4; i++) {
            h.send("q", MgmtHarness.text("m" + i));
            h.send("sq", MgmtHarness.text("s" + i, "s1"));
            h.send("t", MgmtHarness.text("t" + i));
        }
        MgmtHarness.Sink sink = h.receive("q", ReceiveMode.PEEK_LOCK, 2);
        for (ReceivedMessage m : sink.messages) {
            h.call("q", ManagementProcessor.UPDATE_DISPOSITION, MgmtHarness.args("lock-tokens",
                    new UUID[] {m.lockToken()}, "disposition-status", "defered"));
        }
        sink.receiver.close();
        h.engine.runUntilIdle();
        return h;
    }

    @FuzzTest(maxDuration = "30s")
    void request(byte[] input) {
        if (input.length == 0) {
            return;
        }
        MgmtHarness h = harness();
        EntityAddress entity = EntityAddress.parse(ENTITIES.get((input[0] & 0xff) % ENTITIES.size()));
        Message request = Proton.message();
        try {
            request.decode(input, 1, input.length - 1);
        } catch (RuntimeException | StackOverflowError undecodable) {
            return; // RequestLink drops a request it cannot decode
        }
        Map<String, Object> properties = new HashMap<>();
        ApplicationProperties ap = request.getApplicationProperties();
        if (ap != null && ap.getValue() != null) {
            for (Map.Entry<?, ?> e : ap.getValue().entrySet()) {
                properties.put(String.valueOf(e.getKey()), e.getValue());
            }
        }
        Object body = request.getBody() instanceof AmqpValue v ? v.getValue() : null;

        LoggedFailures.clear();
        CompletableFuture<ManagementResponse> future = h.processor.process(entity, properties, body);
        h.engine.runUntilIdle();
        if (!future.isDone()) {
            throw new AssertionError("The response is not ready with the engine idle");
        }
        ManagementResponse response = future.join();
        if (response.statusCode() == 500 || "amqp:internal-error".equals(response.errorCondition())) {
            throw new AssertionError("An unexpected failure inside $management: " + response);
        }
        LoggedFailures.assertNone();

        Message reply = Proton.message();
        reply.setApplicationProperties(new ApplicationProperties(response.applicationProperties()));
        if (response.body() != null) {
            reply.setBody(new AmqpValue(response.body()));
        }
        reply.encode(new DroppingWritableBuffer());
    }
}
