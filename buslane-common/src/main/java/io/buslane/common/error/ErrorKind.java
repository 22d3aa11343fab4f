package io.buslane.common.error;

/**
 * The one table of broker errors: each kind carries the AMQP error condition and the HTTP status the front ends
 * answer with, so that every surface reports the same failure the same way.
 *
 * <p>Conditions and statuses follow the Service Bus service (see {@code amqp-wire-protocol.md} §7). Transient
 * conditions make the SDKs retry; permanent failures therefore use non-transient conditions.
 */
public enum ErrorKind {
    ENTITY_NOT_FOUND("amqp:not-found", 404),
    ENTITY_ALREADY_EXISTS("com.microsoft:entity-already-exists", 409),
    ENTITY_DISABLED("com.microsoft:entity-disabled", 400),
    MESSAGE_LOCK_LOST("com.microsoft:message-lock-lost", 410),
    SESSION_LOCK_LOST("com.microsoft:session-lock-lost", 410),
    SESSION_CANNOT_BE_LOCKED("com.microsoft:session-cannot-be-locked", 410),
    MESSAGE_NOT_FOUND("com.microsoft:message-not-found", 404),
    SESSION_NOT_FOUND("com.microsoft:session-not-found", 404),
    TIMEOUT("com.microsoft:timeout", 408),
    INVALID_OPERATION("amqp:not-allowed", 400),
    NOT_IMPLEMENTED("amqp:not-implemented", 501),
    ARGUMENT("com.microsoft:argument-error", 400),
    ARGUMENT_OUT_OF_RANGE("com.microsoft:argument-out-of-range", 400),
    QUOTA_EXCEEDED("amqp:resource-limit-exceeded", 403),
    MESSAGE_SIZE_EXCEEDED("amqp:link:message-size-exceeded", 403),
    UNAUTHORIZED("amqp:unauthorized-access", 401),
    SERVER_BUSY("com.microsoft:server-busy", 503),
    INTERNAL("amqp:internal-error", 500);

    private final String amqpCondition;
    private final int httpStatus;

    ErrorKind(String amqpCondition, int httpStatus) {
        this.amqpCondition = amqpCondition;
        this.httpStatus = httpStatus;
    }

    /** The AMQP error condition symbol. */
    public String amqpCondition() {
        return amqpCondition;
    }

    /** The HTTP-like status code used in management replies and the REST surfaces. */
    public int httpStatus() {
        return httpStatus;
    }
}
