package io.buslane.common.error;

/** A failure the broker reports to a client: a kind from the error table and a human-readable description. */
public final class BrokerException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final ErrorKind kind;

    public BrokerException(ErrorKind kind, String description) {
        super(description, null, false, false);
        this.kind = kind;
    }

    public BrokerException(ErrorKind kind, String description, Throwable cause) {
        super(description, cause, false, false);
        this.kind = kind;
    }

    public ErrorKind kind() {
        return kind;
    }

    /** The description sent to clients. */
    public String description() {
        return getMessage();
    }

    /** The wording the SDKs match to tell "entity not found" from a transient problem. */
    public static BrokerException entityNotFound(String entityPath) {
        return new BrokerException(ErrorKind.ENTITY_NOT_FOUND,
                "The messaging entity '" + entityPath + "' could not be found.");
    }
}
