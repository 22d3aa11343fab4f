package io.buslane.amqp.transport;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Coverage-guided fuzzing of the whole AMQP input path, in-process (see {@link InProcessBroker}): the input is what a
 * client sends on one connection, byte for byte (protocol headers, SASL, performatives, {@code $cbs} put-token and
 * {@code $management} requests, transfers with single messages and batches, transactions).
 *
 * <p>Seeds: conversations of the official Java (7.17.20) and JavaScript (7.9.5) SDKs recorded on the wire against the
 * broker, in {@code AmqpConnectionFuzzTestInputs/clientBytes/} (how they were recorded: {@code docs/fuzzing.md}).
 * Every file there, findings included, is replayed by every build; {@code JAZZER_FUZZ=1} fuzzes instead.
 *
 * <p>Invariant: the broker answers whatever arrives without a handler failing (no WARN/ERROR from the AMQP layer, no
 * {@code amqp:internal-error} on the wire), without an exception or error escaping, without looping, in bounded time
 * and memory.
 */
class AmqpConnectionFuzzTest {

    private static InProcessBroker broker;

    private static synchronized InProcessBroker broker() {
        if (broker == null) {
            broker = new InProcessBroker();
        }
        return broker;
    }

    @FuzzTest(maxDuration = "20s")
    void clientBytes(byte[] input) {
        broker().run(input);
    }
}
