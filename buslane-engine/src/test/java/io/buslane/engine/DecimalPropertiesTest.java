package io.buslane.engine;

import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.receive.Receiver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AMQP decimal application properties on a file journal: SQL filters compare them exactly, actions copy them and
 * compute with them, correlation filters match them, and every value survives a restart with its type and bits.
 */
class DecimalPropertiesTest {

    /** .NET's 1.5m as Microsoft.Azure.Amqp writes it (decimal128). */
    private static final Decimal DOTNET_1_5 = Decimal.decimal128(0x0C3E_0000_0000_0000L, 15);
    /** .NET's 0.1m: a value no double holds exactly. */
    private static final Decimal DOTNET_0_1 = Decimal.decimal128(0x0C3E_0000_0000_0000L, 1);
    /** decimal64 -7.50. */
    private static final Decimal D64_MINUS_7_50 = Decimal.decimal64(0xB180_0000_0000_02EEL);

    @TempDir
    Path dir;

    @Test
    void decimalsFilterExactlyAndSurviveRestarts() {
        try (EngineHarness h = EngineHarness.onFiles(dir, 1, 1 << 20, 64 * 1024)) {
            h.await(h.engine.createTopic(TopicProperties.builder("t").build()));
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "sql").build(), List.of(
                    new RuleProperties("exact", new RuleProperties.SqlFilter("price = 0.1 OR price > 1.4"),
                            "SET copy = price; SET doubled = price * 2"))));
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "corr").build(), List.of(
                    new RuleProperties("corr", new RuleProperties.CorrelationFilter(null, null, null, null, null,
                            null, null, null, Map.of("price", Decimal.of(new BigDecimal("1.50")))), null))));
            h.send("t", List.of(
                    Message.builder().body(new byte[] {1}).applicationProperty("price", DOTNET_1_5)
                            .applicationProperty("n", 1).build(),
                    Message.builder().body(new byte[] {2}).applicationProperty("price", DOTNET_0_1)
                            .applicationProperty("n", 2).build(),
                    Message.builder().body(new byte[] {3}).applicationProperty("price", D64_MINUS_7_50)
                            .applicationProperty("n", 3).build()));
            h.restart();

            List<ReceivedMessage> sql = receiveAll(h, "t/Subscriptions/sql", 2);
            assertThat(sql).extracting(m -> m.message().applicationProperties().get("n")).containsExactly(1, 2);
            Map<String, Object> first = sql.get(0).message().applicationProperties();
            assertThat(first.get("price")).isEqualTo(DOTNET_1_5);
            assertThat(first.get("copy")).isEqualTo(DOTNET_1_5);
            assertThat(first.get("doubled")).isInstanceOf(Decimal.class);
            assertThat(((Decimal) first.get("doubled")).toBigDecimal()).isEqualByComparingTo("3.0");
            assertThat(sql.get(1).message().applicationProperties().get("price")).isEqualTo(DOTNET_0_1);

            List<ReceivedMessage> corr = receiveAll(h, "t/Subscriptions/corr", 1);
            assertThat(corr.get(0).message().applicationProperties().get("price")).isEqualTo(DOTNET_1_5);
            assertThat(h.await(h.engine.counts("t/Subscriptions/sql")).activeMessageCount()).isEqualTo(2);
            h.restart();
            List<ReceivedMessage> again = receiveAll(h, "t/Subscriptions/sql", 2);
            assertThat(again.get(0).message().applicationProperties().get("doubled"))
                    .isEqualTo(first.get("doubled"));
        }
    }

    private static List<ReceivedMessage> receiveAll(EngineHarness h, String address, int expected) {
        EngineHarness.Sink sink = new EngineHarness.Sink();
        Receiver r = h.receiver(address, ReceiveMode.PEEK_LOCK, sink, 10);
        List<ReceivedMessage> got = sink.take();
        r.close();
        assertThat(got).hasSize(expected);
        return got.stream().sorted(Comparator.comparingLong(ReceivedMessage::sequenceNumber)).toList();
    }
}
