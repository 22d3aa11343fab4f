package io.buslane.engine.filter.sql;

import io.buslane.engine.message.Message;
import io.buslane.engine.message.Unsigned;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The SQL filter language, table-driven: each row is an expression and TRUE, FALSE, UNKNOWN or the error name. */
class SqlFilterExpressionTest {

    static final long SEQ = 42;
    static final long ENQUEUED_MS = 1_700_000_000_000L;

    static Message message() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("color", "red");
        p.put("size", 10);
        p.put("count", 5L);
        p.put("price", 2.5d);
        p.put("ratio", 0.5f);
        p.put("small", (short) 3);
        p.put("flag", true);
        p.put("nothing", null);
        p.put("my prop", "spaced");
        p.put("pct", "50%off");
        p.put("quote", "it's");
        p.put("unsigned", new Unsigned(7, 4));
        p.put("id", UUID.fromString("00000000-0000-0000-0000-000000000001"));
        p.put("MixedCase", "mc");
        p.put("städte", 3);
        return Message.builder().messageId("m1").correlationId("c1").to("dest").replyTo("back").subject("lbl")
                .contentType("application/json").replyToSessionId("rs").applicationProperties(p).build();
    }

    static String eval(String expression) {
        try {
            Boolean b = SqlFilterExpression.compile(expression).evaluate(new SqlMessage(message(), SEQ, ENQUEUED_MS));
            return b == null ? "UNKNOWN" : b ? "TRUE" : "FALSE";
        } catch (SqlEvaluationException e) {
            return e.exceptionName();
        }
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            // constants and TrueFilter / FalseFilter
            "1=1 | TRUE", "1=0 | FALSE", "1 = 1.0 | TRUE", "TRUE | TRUE", "true = false | FALSE",
            "'a' = 'a' | TRUE", "'a' = 'A' | FALSE", "'it''s' = quote | TRUE", "NULL = NULL | UNKNOWN",
            // keywords and property names are case-insensitive
            "color = 'red' AND Color = 'red' AND COLOR = 'red' | TRUE", "mixedcase = 'mc' | TRUE",
            "color='red' and size=10 | TRUE", "user.color = 'red' | TRUE", "USER.color = 'red' | TRUE",
            // delimited and quoted identifiers
            "[my prop] = 'spaced' | TRUE", "städte = 3 AND user.STÄDTE > 2 | TRUE", "\"my prop\" = 'spaced' | TRUE",
            "user.[color] = 'red' | TRUE",
            // comparisons and numeric conversions
            "size > 9 | TRUE", "size >= 10 | TRUE", "size < 10 | FALSE", "size <= 10 | TRUE", "size <> 10 | FALSE",
            "size != 11 | TRUE", "size = 10.0 | TRUE", "price > 2 | TRUE", "price = 2.5 | TRUE", "ratio = 0.5 | TRUE",
            "small = 3 | TRUE", "unsigned = 7 | TRUE", "count + size = 15 | TRUE", "2.5E0 = price | TRUE",
            "1e2 = 100 | TRUE", ".5 = ratio | TRUE", "color > 'blue' | TRUE", "color < 'blue' | FALSE",
            "flag = TRUE | TRUE", "flag | TRUE", "NOT flag | FALSE",
            // arithmetic
            "size * 2 = 20 | TRUE", "size / 3 = 3 | TRUE", "-7 / 2 = -3 | TRUE", "size % 3 = 1 | TRUE",
            "size / 4.0 = 2.5 | TRUE", "-size = -10 | TRUE", "+size = 10 | TRUE", "- -size = 10 | TRUE",
            "1 + 2 * 3 = 7 | TRUE", "(1 + 2) * 3 = 9 | TRUE", "color + 'dish' = 'reddish' | TRUE",
            "missing + 1 = 2 | UNKNOWN",
            // three-valued logic
            "missing = 1 | UNKNOWN", "NOT (missing = 1) | UNKNOWN", "missing = 1 AND 1 = 0 | FALSE",
            "missing = 1 AND 1 = 1 | UNKNOWN", "missing = 1 OR 1 = 1 | TRUE", "missing = 1 OR 1 = 0 | UNKNOWN",
            "nothing = 1 | UNKNOWN", "NOT 1 = 0 | TRUE", "NOT 1 = 1 OR 1 = 1 | TRUE", "1 = 1 OR 1 = 0 AND 1 = 0 | TRUE",
            // IS NULL and EXISTS
            "missing IS NULL | TRUE", "nothing IS NULL | TRUE", "color IS NULL | FALSE", "color IS NOT NULL | TRUE",
            "EXISTS(color) | TRUE", "EXISTS(nothing) | TRUE", "EXISTS(missing) | FALSE", "exists(user.COLOR) | TRUE",
            "sys.SessionId IS NULL | TRUE", "EXISTS(sys.MessageId) | TRUE", "EXISTS(sys.SessionId) | FALSE",
            // IN
            "color IN ('blue', 'red') | TRUE", "color IN ('blue') | FALSE", "color NOT IN ('blue') | TRUE",
            "color IN ('blue', NULL) | UNKNOWN", "color IN ('red', NULL) | TRUE", "missing IN ('red') | UNKNOWN",
            "size IN (1, 10.0) | TRUE", "color NOT IN ('red') | FALSE",
            // LIKE with % _ and ESCAPE
            "color LIKE 'r%' | TRUE", "color LIKE '_ed' | TRUE", "color LIKE 're' | FALSE", "color LIKE '%' | TRUE",
            "color NOT LIKE 'b%' | TRUE", "color LIKE 'R%' | FALSE", "pct LIKE '50!%%' ESCAPE '!' | TRUE",
            "color LIKE 're!%' ESCAPE '!' | FALSE", "pct LIKE '50%' | TRUE", "missing LIKE 'a%' | UNKNOWN",
            "color LIKE 'r.d' | FALSE", "color LIKE 'r[e]d' | FALSE",
            // system properties
            "sys.MessageId = 'm1' | TRUE", "sys.messageid = 'm1' | TRUE", "sys.Label = 'lbl' | TRUE",
            "sys.Subject = 'lbl' | TRUE", "sys.CorrelationId = 'c1' | TRUE", "sys.To = 'dest' | TRUE",
            "sys.ReplyTo = 'back' | TRUE", "sys.ContentType LIKE 'application/%' | TRUE",
            "sys.ReplyToSessionId = 'rs' | TRUE", "sys.SequenceNumber = 42 | TRUE", "sys.[Label] = 'lbl' | TRUE",
            "sys.Label = label | UNKNOWN",
            // functions
            "property('color') = 'red' | TRUE", "p('user.color') = 'red' | TRUE", "p('sys.MessageId') = 'm1' | TRUE",
            "newid() <> newid() | TRUE", "newid() = newid() | FALSE", "id = id | TRUE",
            // errors while evaluating
            "color > 1 | InvalidOperationException", "size = 'ten' | InvalidOperationException",
            "size / 0 = 1 | DivideByZeroException", "size % 0 = 1 | DivideByZeroException",
            "9223372036854775807 + size > 0 | OverflowException", "size LIKE '1%' | InvalidOperationException",
            "color AND 1 = 1 | InvalidOperationException", "flag > false | InvalidOperationException",
            "-color = 1 | InvalidOperationException", "size | InvalidOperationException",
            "price / 0 > 1 | TRUE",
    })
    void evaluates(String expression, String expected) {
        assertThat(eval(expression)).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "color =", "color = 'red", "(1 = 1", "1 = 1)", "color == 'red'",
            "sys.Nope = 1", "foo.color = 1", "color LIKE 'a' ESCAPE 'ab'", "unknownfn() = 1", "newid(1) IS NULL",
            "color LIKE 'a!' ESCAPE '!'", "99999999999999999999 = 1", "1 IS NULL", "color IN ()", "a b",
            "SET a = 1", "color = 'red';"})
    void rejectsInvalidFilters(String expression) {
        assertThatThrownBy(() -> SqlFilterExpression.compile(expression)).isInstanceOf(SqlSyntaxException.class);
    }

    @Test
    void nonStringMessageIdsReadAsStrings() {
        UUID id = UUID.fromString("0f8fad5b-d9cb-469f-a165-70867728950e");
        Message m = Message.builder().messageId(id).correlationId(new Unsigned(7, 8)).build();
        SqlMessage c = new SqlMessage(m, SEQ, ENQUEUED_MS);
        assertThat(SqlFilterExpression.compile("sys.MessageId = '" + id + "' AND sys.CorrelationId = '7'")
                .matches(c)).isTrue();
    }

    @Test
    void syntaxErrorsNamePosition() {
        assertThatThrownBy(() -> SqlFilterExpression.compile("color = 'red' AND AND size > 1"))
                .isInstanceOf(SqlSyntaxException.class)
                .hasMessageContaining("line 1, position 19").hasMessageContaining("AND");
        assertThatThrownBy(() -> SqlFilterExpression.compile("sys.Colour = 1"))
                .hasMessageContaining("'Colour' is not a system property");
    }

    @Test
    void expressionsLongerThanTheQuotaAreRejected() {
        String ok = "color = '" + "x".repeat(1024 - 10) + "'";
        assertThat(ok).hasSize(1024);
        SqlFilterExpression.compile(ok);
        assertThatThrownBy(() -> SqlFilterExpression.compile(ok + " ")).hasMessageContaining("maximum is 1024");
    }

    @Test
    void actionsSetAndRemoveUserAndSystemProperties() {
        SqlAction a = SqlAction.compile("SET color = 'blue'; SET total = size * 2; SET sys.Label = 'new' + color;"
                + " REMOVE price; remove [my prop]; SET sys.CorrelationId = sys.MessageId; SET Fresh = missing;");
        Message out = a.apply(new SqlMessage(message(), SEQ, ENQUEUED_MS));
        assertThat(out.applicationProperties()).containsEntry("color", "blue").containsEntry("total", 20L)
                .doesNotContainKey("price").doesNotContainKey("my prop").containsEntry("Fresh", null);
        assertThat(out.subject()).isEqualTo("newblue");
        assertThat(out.correlationId()).isEqualTo("m1");
        assertThat(out.body()).isEqualTo(message().body());
    }

    @Test
    void actionStatementsUseCaseInsensitiveNamesAndKeepTheExistingKey() {
        Message out = SqlAction.compile("set COLOR = 'green'").apply(new SqlMessage(message(), SEQ, ENQUEUED_MS));
        assertThat(out.applicationProperties()).containsEntry("color", "green").doesNotContainKey("COLOR");
    }

    @Test
    void invalidActionsAreRejected() {
        for (String bad : new String[] {"SET", "SET a", "SET a = ", "REMOVE", "a = 1", "SET sys.SequenceNumber = 1",
                "SET sys.Nope = 1", "SET a = 1 SET b = 2", "DELETE a"}) {
            assertThatThrownBy(() -> SqlAction.compile(bad)).as(bad).isInstanceOf(SqlSyntaxException.class);
        }
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 33; i++) {
            many.append("SET a").append(i).append(" = 1;");
        }
        assertThatThrownBy(() -> SqlAction.compile(many.toString())).hasMessageContaining("maximum is 32");
    }

    @Test
    void actionErrorsSurfaceWithTheExceptionName() {
        SqlAction a = SqlAction.compile("SET x = size / 0");
        assertThatThrownBy(() -> a.apply(new SqlMessage(message(), SEQ, ENQUEUED_MS)))
                .isInstanceOfSatisfying(SqlEvaluationException.class,
                        e -> assertThat(e.exceptionName()).isEqualTo("DivideByZeroException"));
    }
}
