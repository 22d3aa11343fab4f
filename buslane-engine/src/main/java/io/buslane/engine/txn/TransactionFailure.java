package io.buslane.engine.txn;

/**
 * A transaction error with its AMQP condition: {@code amqp:transaction:unknown-id}, {@code :rollback},
 * {@code :timeout}, or (for work refused under a transaction) one of the broker's conditions.
 */
public final class TransactionFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public static final String UNKNOWN_ID = "amqp:transaction:unknown-id";
    public static final String ROLLBACK = "amqp:transaction:rollback";
    public static final String TIMEOUT = "amqp:transaction:timeout";

    private final String condition;

    public TransactionFailure(String condition, String description) {
        super(description, null, false, false);
        this.condition = condition;
    }

    public String condition() {
        return condition;
    }

    public String description() {
        return getMessage();
    }
}
