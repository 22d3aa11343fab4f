package io.buslane.engine.filter.sql;

import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Message;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

/**
 * A compiled SQL rule action: {@code SET <property> = <expression>} and {@code REMOVE <property>} statements,
 * separated by {@code ;}, applied in order (each statement sees the previous ones' changes). Immutable and
 * thread-safe.
 */
public final class SqlAction {

    /** One statement; {@code value} is null for REMOVE. */
    record Statement(Expr.Property target, Expr value) {
    }

    private final String text;
    private final List<Statement> statements;

    private SqlAction(String text, List<Statement> statements) {
        this.text = text;
        this.statements = List.copyOf(statements);
    }

    /**
     * Compiles an action.
     *
     * @throws SqlSyntaxException when the text is not a valid action
     */
    public static SqlAction compile(String text) {
        return compile(text, Map.of());
    }

    /**
     * Compiles an action whose {@code @name} parameters take the given values.
     *
     * @throws SqlSyntaxException when the text is not a valid action or refers to a parameter without a value
     */
    public static SqlAction compile(String text, Map<String, Object> parameters) {
        return new SqlAction(text, SqlCompiler.compileAction(text, parameters));
    }

    /**
     * Applies the action to the message in {@code m}, returning the modified message (also left in {@code m}).
     *
     * @throws SqlEvaluationException when a statement cannot be evaluated for this message
     */
    public Message apply(SqlMessage m) {
        for (Statement s : statements) {
            Object value = s.value() == null ? null : s.value().eval(m);
            Message.Builder b = m.message().toBuilder().encodedSize(0);
            if (s.target() instanceof Expr.SysProperty sys) {
                sys.property.set(b, value);
            } else {
                String name = ((Expr.UserProperty) s.target()).name;
                String key = m.userKey(name);
                if (s.value() == null) {
                    if (key != null) {
                        b.removeApplicationProperty(key);
                    }
                } else {
                    // a computed decimal is kept as an AMQP decimal128, the type .NET sends a decimal as
                    b.applicationProperty(key != null ? key : name,
                            value instanceof BigDecimal d ? Decimal.of(d) : value);
                }
            }
            m.message(b.build());
        }
        return m.message();
    }

    public String text() {
        return text;
    }
}
