package io.buslane.amqp.codec;

/**
 * The bytes of a transfer payload or an encoded AMQP message are not a well-formed message (bad encoding, sections
 * out of order, a value of the wrong type in a field the broker interprets, an unsupported message format). The
 * message is meant for the client: it says what was wrong and, where known, at which offset of the message.
 */
public final class AmqpDecodeException extends Exception {

    private static final long serialVersionUID = 1L;
    private static final String DECODE_ERROR = "amqp:decode-error";

    private final String condition;

    public AmqpDecodeException(String message) {
        this(message, null, DECODE_ERROR);
    }

    public AmqpDecodeException(String message, Throwable cause) {
        this(message, cause, DECODE_ERROR);
    }

    private AmqpDecodeException(String message, Throwable cause, String condition) {
        super(message, cause);
        this.condition = condition;
    }

    /** A well-formed message over a Service Bus quota (its properties): {@code amqp:link:message-size-exceeded}. */
    public static AmqpDecodeException overQuota(String message) {
        return new AmqpDecodeException(message, null, "amqp:link:message-size-exceeded");
    }

    /** The AMQP error condition to answer with. */
    public String condition() {
        return condition;
    }
}
