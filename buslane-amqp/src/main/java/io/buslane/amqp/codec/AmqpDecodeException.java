package io.buslane.amqp.codec;

/**
 * The bytes of a transfer payload or an encoded AMQP message are not a well-formed message (bad encoding, sections
 * out of order, a value of the wrong type in a field the broker interprets, an unsupported message format). The
 * message is meant for the client: it says what was wrong and, where known, at which offset of the message.
 */
public final class AmqpDecodeException extends Exception {

    public AmqpDecodeException(String message) {
        super(message);
    }

    public AmqpDecodeException(String message, Throwable cause) {
        super(message, cause);
    }
}
