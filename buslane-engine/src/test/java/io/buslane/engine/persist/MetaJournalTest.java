package io.buslane.engine.persist;

import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.journal.RecordKind;
import io.buslane.journal.memory.InMemoryJournal;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The meta journal's records replay as written, and records written before an appended field still replay. */
class MetaJournalTest {

    private record Subscription(SubscriptionProperties properties, List<RuleProperties> rules) {
    }

    private static List<Object> replay(InMemoryJournal journal) {
        journal.sync();
        List<Object> seen = new ArrayList<>();
        new MetaJournal(journal).replay(new MetaJournal.Handler() {
            @Override
            public void onNamespace(long nextEntityId, int shardCount) {
            }

            @Override
            public void onQueue(long id, long createdAtMs, long updatedAtMs, QueueProperties properties) {
                seen.add(properties);
            }

            @Override
            public void onTopic(long id, long createdAtMs, long updatedAtMs, TopicProperties properties) {
                seen.add(properties);
            }

            @Override
            public void onSubscription(long id, long topicId, long createdAtMs, long updatedAtMs,
                                       SubscriptionProperties properties, List<RuleProperties> rules) {
                seen.add(new Subscription(properties, rules));
            }

            @Override
            public void onDelete(long id) {
            }
        });
        return seen;
    }

    private static final List<RuleProperties> RULES = List.of(RuleProperties.defaultRule(),
            new RuleProperties("red", new RuleProperties.SqlFilter("color = 'red'"), "SET level = 2"));

    @Test
    void aSubscriptionKeepsItsRulesAndTheForwardingAddressesItWasGiven() {
        InMemoryJournal journal = new InMemoryJournal();
        SubscriptionProperties s = SubscriptionProperties.builder("t", "s").forwardTo("target")
                .forwardToAddress("sb://localhost:5300/target").forwardDeadLetteredMessagesTo("dl")
                .forwardDeadLetteredMessagesToAddress("https://localhost/dl").build();
        new MetaJournal(journal).putSubscription(20, true, 19, 1_000, 2_000, s, RULES);
        assertThat(replay(journal)).containsExactly(new Subscription(s, RULES));
    }

    /**
     * A subscription record of before the forwarding addresses (its rules last) replays with its rules intact and no
     * address; the addresses follow the rules, so that reading the rules never takes them for rule bytes.
     */
    @Test
    void aSubscriptionRecordOfBeforeTheAddressesReplaysWithItsRules() {
        InMemoryJournal journal = new InMemoryJournal();
        SubscriptionProperties s = SubscriptionProperties.builder("t", "s").forwardTo("target").build();
        RecordWriter w = new RecordWriter();
        w.writeVarLong(19);
        w.writeLong(1_000);
        w.writeLong(2_000);
        EntityCodec.writeSubscription(w, s);
        w.writeVarInt(RULES.size());
        for (RuleProperties r : RULES) {
            EntityCodec.writeRule(w, r);
        }
        journal.append(RecordKind.ADD, 20, RecordTypes.META_SUBSCRIPTION, w.buffer(), 0, w.size());
        assertThat(replay(journal)).containsExactly(new Subscription(s, RULES));
    }

    @Test
    void aQueueKeepsTheForwardingAddressesItWasGiven() {
        InMemoryJournal journal = new InMemoryJournal();
        QueueProperties q = QueueProperties.builder("src").forwardTo("target")
                .forwardToAddress("sb://localhost:5300/target").build();
        new MetaJournal(journal).putQueue(20, true, 1_000, 2_000, q);
        assertThat(replay(journal)).containsExactly(q);
    }
}
