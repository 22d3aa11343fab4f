package io.buslane.engine.filter.sql;

/**
 * A SQL filter or action expression that cannot be compiled: a syntax error (with line and position), an unknown
 * system property or function, a malformed constant, or a quota (length, number of statements) exceeded. Raised when
 * a rule is created or loaded; the front ends report it as a bad request ({@code com.microsoft:argument-error},
 * HTTP 400), Config.json as a configuration error at the expression's path.
 */
public final class SqlSyntaxException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    public SqlSyntaxException(String message) {
        super(message);
    }
}
