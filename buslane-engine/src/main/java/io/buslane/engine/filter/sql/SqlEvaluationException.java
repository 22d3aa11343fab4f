package io.buslane.engine.filter.sql;

/**
 * A filter or action that failed while evaluating a message (a type mismatch, integer division by zero, an
 * overflow). {@link #exceptionName()} is the name the service reports as the dead-letter reason (the .NET exception
 * type name, service-bus-behaviour.md §2.7); {@link #getMessage()} is the description.
 */
public final class SqlEvaluationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Operands of the wrong type. */
    public static final String INVALID_OPERATION = "InvalidOperationException";
    /** Integer division or remainder by zero. */
    public static final String DIVIDE_BY_ZERO = "DivideByZeroException";
    /** Integer arithmetic that does not fit in 64 bits. */
    public static final String OVERFLOW = "OverflowException";

    private final String exceptionName;

    public SqlEvaluationException(String exceptionName, String message) {
        super(message, null, false, false);
        this.exceptionName = exceptionName;
    }

    public String exceptionName() {
        return exceptionName;
    }
}
