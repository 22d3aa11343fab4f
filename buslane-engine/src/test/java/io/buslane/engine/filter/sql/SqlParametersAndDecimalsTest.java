package io.buslane.engine.filter.sql;

import io.buslane.engine.message.Message;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code @name} parameters of filters and actions, and decimals (AMQP decimal properties) compared exactly. */
class SqlParametersAndDecimalsTest {

    static Message message() {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("color", "red");
        p.put("size", 10);
        p.put("tenth", new BigDecimal("0.1"));
        p.put("beyondDouble", new BigDecimal("9007199254740993"));
        p.put("price", new BigDecimal("19.99"));
        p.put("huge", new BigDecimal("79228162514264337593543950335"));
        p.put("zero", BigDecimal.ZERO);
        return Message.builder().messageId("m1").applicationProperties(p).build();
    }

    static Boolean eval(String expression, Map<String, Object> parameters) {
        return SqlFilterExpression.compile(expression, parameters).evaluate(new SqlMessage(message(), 1, 0));
    }

    static String eval(String expression) {
        try {
            Boolean b = eval(expression, Map.of());
            return b == null ? "UNKNOWN" : b.toString();
        } catch (SqlEvaluationException e) {
            return e.exceptionName();
        }
    }

    @Test
    void parametersTakeTheirValuesWithOrWithoutTheirAtSign() {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("@color", "red");
        params.put("min", 5L);
        params.put("@Ratio", 2.5d);
        params.put("@missing", null);
        assertThat(eval("color = @color AND size > @min", params)).isTrue();
        assertThat(eval("size * @RATIO = 25.0 AND @COLOR = 'red'", params)).isTrue();
        assertThat(eval("color IN (@color, 'blue')", params)).isTrue();
        assertThat(eval("color = @missing", params)).isNull();
        assertThat(eval("color <> @color", params)).isFalse();
    }

    @Test
    void aParameterWithoutAValueIsRefusedWhenTheRuleIsCreated() {
        assertThatThrownBy(() -> SqlFilterExpression.compile("color = @nope", Map.of("@color", "red")))
                .isInstanceOf(SqlSyntaxException.class).hasMessageContaining("@nope has no value");
        assertThatThrownBy(() -> SqlFilterExpression.compile("color = @color"))
                .isInstanceOf(SqlSyntaxException.class).hasMessageContaining("@color");
        assertThatThrownBy(() -> SqlAction.compile("SET x = @v")).isInstanceOf(SqlSyntaxException.class);
    }

    @Test
    void actionsUseTheirParameters() {
        SqlMessage m = new SqlMessage(message(), 1, 0);
        Message out = SqlAction.compile("SET level = @level; SET sys.Label = @label",
                Map.of("@level", 3L, "label", "tagged")).apply(m);
        assertThat(out.applicationProperties()).containsEntry("level", 3L);
        assertThat(out.subject()).isEqualTo("tagged");
    }

    @Test
    void decimalsCompareAndComputeExactly() {
        assertThat(eval("tenth = 0.1")).isEqualTo("true");
        assertThat(eval("tenth + 0.2 = 0.3")).as("0.1 + 0.2 in doubles is 0.30000000000000004").isEqualTo("true");
        assertThat(eval("tenth * 3 = 0.3")).isEqualTo("true");
        assertThat(eval("beyondDouble > 9007199254740992")).as("2^53 + 1 against 2^53").isEqualTo("true");
        assertThat(eval("beyondDouble = 9007199254740993")).isEqualTo("true");
        assertThat(eval("price >= 19.99 AND price < 20")).isEqualTo("true");
        assertThat(eval("price * 100 = 1999")).isEqualTo("true");
        assertThat(eval("price % 1 = 0.99")).isEqualTo("true");
        assertThat(eval("1 / tenth = 10")).isEqualTo("true");
        assertThat(eval("-tenth = -0.1 AND +tenth = 0.1")).isEqualTo("true");
        assertThat(eval("tenth IN (0.1, 7)")).isEqualTo("true");
        assertThat(eval("price = @p".replace("@p", "19.990"))).as("scale does not matter").isEqualTo("true");
        assertThat(eval("size / zero = 1")).isEqualTo("DivideByZeroException");
        assertThat(eval("huge + 1 > 0")).as("beyond System.Decimal").isEqualTo("OverflowException");
        assertThat(eval("tenth = 'x'")).isEqualTo("InvalidOperationException");
        assertThat(eval("price = @p", Map.of("@p", new BigDecimal("19.99")))).isTrue();
    }
}
