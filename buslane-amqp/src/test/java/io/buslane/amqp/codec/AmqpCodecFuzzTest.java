package io.buslane.amqp.codec;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;

import java.util.Arrays;
import java.util.List;

/**
 * Coverage-guided fuzzing of message decoding: {@link AmqpCodec#decodeTransfer} on a transfer's payload, as
 * {@code ProducerLink} calls it for every message a client sends.
 *
 * <p>Input: one byte choosing the message-format (0: a single message, 1: the batch format {@code 0x80013700}, any
 * other value: that value as an unsupported format), then the payload. Invariants: only {@link AmqpDecodeException}
 * escapes; and what the broker accepts it can deliver: every decoded message encodes for delivery and that encoding
 * decodes again with the same body.
 *
 * <p>Seeds: the transfer payloads of the recorded SDK conversations (single messages and batches), in
 * {@code AmqpCodecFuzzTestInputs/transferPayload/}.
 */
class AmqpCodecFuzzTest {

    @FuzzTest(maxDuration = "30s")
    void transferPayload(byte[] input) {
        if (input.length == 0) {
            return;
        }
        int selector = input[0] & 0xff;
        long format = selector == 0 ? 0L : selector == 1 ? AmqpCodec.BATCH_FORMAT : selector;
        List<Message> messages;
        try {
            messages = AmqpCodec.decodeTransfer(input, 1, input.length - 1, format);
        } catch (AmqpDecodeException refused) {
            return; // the broker rejects the transfer with the exception's message
        }
        for (Message m : messages) {
            ReceivedMessage delivered = new ReceivedMessage(m, 42L, 1_767_225_600_000L, 0, null, 0, null,
                    Long.MAX_VALUE, null, null, 0);
            byte[] encoded = AmqpCodec.encode(delivered, AmqpCodec.Purpose.DELIVERY);
            Message again;
            try {
                again = AmqpCodec.decodeMessage(encoded, 0, encoded.length);
            } catch (AmqpDecodeException e) {
                throw new AssertionError("A message the broker accepted does not decode after encoding it for "
                        + "delivery: " + e.getMessage(), e);
            }
            if (!Arrays.equals(m.body(), again.body())) {
                throw new AssertionError("A message's body changed between accepting and delivering it");
            }
        }
    }
}
