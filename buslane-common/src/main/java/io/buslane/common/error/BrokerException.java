package io.buslane.common.error;

/** A failure the broker reports to a client: a kind from the error table and a human-readable description. */
public final class BrokerException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final ErrorKind kind;
    /** The entity an {@link #entityNotFound} names (its path), or null. */
    private final String missingEntity;

    public BrokerException(ErrorKind kind, String description) {
        this(kind, description, null, null);
    }

    public BrokerException(ErrorKind kind, String description, Throwable cause) {
        this(kind, description, cause, null);
    }

    private BrokerException(ErrorKind kind, String description, Throwable cause, String missingEntity) {
        super(description, cause, false, false);
        this.kind = kind;
        this.missingEntity = missingEntity;
    }

    public ErrorKind kind() {
        return kind;
    }

    /** The description sent to clients. */
    public String description() {
        return getMessage();
    }

    /**
     * The description as a client that addressed the namespace as {@code host} reads it: the service names a
     * missing entity by its full address ({@code The messaging entity 'sb://host/queue' could not be found.});
     * every other description as it is. {@code host} null or empty: {@link #description()}.
     */
    public String descriptionFor(String host) {
        if (missingEntity == null || host == null || host.isEmpty()) {
            return description();
        }
        return notFoundText("sb://" + host + "/" + missingEntity);
    }

    /** The wording the SDKs match to tell "entity not found" from a transient problem. */
    public static BrokerException entityNotFound(String entityPath) {
        return new BrokerException(ErrorKind.ENTITY_NOT_FOUND, notFoundText(entityPath), null, entityPath);
    }

    private static String notFoundText(String address) {
        return "The messaging entity '" + address + "' could not be found.";
    }
}
