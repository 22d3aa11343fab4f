package io.buslane.engine;

import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.filter.RuleSet;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Action copies on real file journals with a small resident budget: their own bodies are evicted, read back from the
 * journal, survive restarts and compaction, and are removed when completed.
 */
class RulesFileJournalTest {

    private static final long BUDGET = 8 * 1024;
    private static final long SEGMENT_BYTES = 64 * 1024;

    @TempDir
    Path dir;

    @Test
    void actionCopiesWithEvictedBodiesSurviveRestartsAndAreCompleted() {
        try (EngineHarness h = EngineHarness.onFiles(dir, 1, BUDGET, SEGMENT_BYTES)) {
            h.await(h.engine.createTopic(TopicProperties.builder("t").build()));
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "s").build(), List.of(
                    RuleProperties.defaultRule(), new RuleProperties("times10",
                            new RuleProperties.SqlFilter("n % 2 = 0"), "SET n = n * 10; SET sys.Label = 'x10'"))));
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                batch.add(Message.builder().body(new byte[1024]).applicationProperty("n", i).build());
            }
            h.send("t", batch);
            assertThat(h.await(h.engine.counts("t/Subscriptions/s")).activeMessageCount()).isEqualTo(300);
            h.restart();
            assertThat(h.await(h.engine.counts("t/Subscriptions/s")).activeMessageCount()).isEqualTo(300);

            EngineHarness.Sink sink = new EngineHarness.Sink();
            Receiver r = h.receiver("t/Subscriptions/s", ReceiveMode.PEEK_LOCK, sink, 150);
            List<ReceivedMessage> first = sink.take();
            assertThat(first).hasSize(150);
            for (ReceivedMessage m : first) {
                h.await(r.complete(m.lockToken()));
            }
            r.close();
            h.restart();
            sink = new EngineHarness.Sink();
            r = h.receiver("t/Subscriptions/s", ReceiveMode.PEEK_LOCK, sink, 300);
            List<ReceivedMessage> rest = sink.take();
            assertThat(rest).hasSize(150);
            List<ReceivedMessage> all = new ArrayList<>(first);
            all.addAll(rest);
            Map<Object, Integer> plain = new HashMap<>();
            int stamped = 0;
            for (ReceivedMessage m : all) {
                Map<String, Object> p = m.message().applicationProperties();
                if (p.containsKey(RuleSet.RULE_NAME_PROPERTY)) {
                    stamped++;
                    assertThat(p.get(RuleSet.RULE_NAME_PROPERTY)).isEqualTo("times10");
                    assertThat(((Number) p.get("n")).longValue() % 20).isZero();
                    assertThat(m.message().subject()).isEqualTo("x10");
                } else {
                    plain.merge(p.get("n"), 1, Integer::sum);
                }
                assertThat(m.message().body()).hasSize(1024);
            }
            assertThat(stamped).isEqualTo(100);
            assertThat(plain).hasSize(200).allSatisfy((n, c) -> assertThat(c).isEqualTo(1));
            for (ReceivedMessage m : rest) {
                h.await(r.complete(m.lockToken()));
            }
            r.close();
            h.restart();
            assertThat(h.await(h.engine.counts("t/Subscriptions/s")).activeMessageCount()).isZero();
        }
    }
}
