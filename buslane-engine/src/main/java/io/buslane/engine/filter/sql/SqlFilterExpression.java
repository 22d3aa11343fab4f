package io.buslane.engine.filter.sql;

import java.util.Map;

/**
 * A compiled SQL filter. Compile once ({@link #compile}) when the rule is created or loaded, then evaluate per
 * message. Immutable and thread-safe.
 */
public final class SqlFilterExpression {

    private final String text;
    private final Expr root;

    private SqlFilterExpression(String text, Expr root) {
        this.text = text;
        this.root = root;
    }

    /**
     * Compiles a filter.
     *
     * @throws SqlSyntaxException when the text is not a valid filter
     */
    public static SqlFilterExpression compile(String text) {
        return compile(text, Map.of());
    }

    /**
     * Compiles a filter whose {@code @name} parameters take the given values.
     *
     * @throws SqlSyntaxException when the text is not a valid filter or refers to a parameter without a value
     */
    public static SqlFilterExpression compile(String text, Map<String, Object> parameters) {
        return new SqlFilterExpression(text, SqlCompiler.compileFilter(text, parameters));
    }

    /**
     * Evaluates the filter: TRUE, FALSE or null for UNKNOWN.
     *
     * @throws SqlEvaluationException when the expression cannot be evaluated for this message
     */
    public Boolean evaluate(SqlMessage m) {
        return Expr.truth(root.eval(m), "WHERE");
    }

    /** Whether the filter is TRUE for the message (FALSE and UNKNOWN do not match). */
    public boolean matches(SqlMessage m) {
        return Boolean.TRUE.equals(evaluate(m));
    }

    public String text() {
        return text;
    }
}
