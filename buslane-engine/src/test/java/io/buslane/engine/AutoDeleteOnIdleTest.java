package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;

/** AutoDeleteOnIdle (message-expiration.md; service-bus-behaviour.md §2.5), driven by a manual clock. */
class AutoDeleteOnIdleTest {

    private static final Duration IDLE = Duration.ofMinutes(5);

    private static QueueProperties idleQueue(String name) {
        return QueueProperties.builder(name).autoDeleteOnIdle(IDLE).build();
    }

    @Test
    void anIdleQueueIsDeletedWhenItsPeriodHasPassedWithItsMessages() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(idleQueue("q"));
            h.send("q", text("left behind"));
            h.advance(IDLE.minusMillis(1));
            assertThat(h.engine.queue("q")).isNotNull();
            h.advance(Duration.ofMillis(1));
            assertThat(h.engine.queue("q")).isNull();
            h.crashAndRestart();
            assertThat(h.engine.queue("q")).isNull();
        }
    }

    @Test
    void sendsPeeksAndUpdatesCountAsActivity() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(idleQueue("q"));
            h.advance(Duration.ofMinutes(4));
            h.send("q", text("m"));
            h.advance(Duration.ofMinutes(4));
            h.await(h.engine.peek(EntityAddress.parse("q"), 0, 1, null));
            h.advance(Duration.ofMinutes(4));
            h.await(h.engine.updateQueue(QueueProperties.builder("q").autoDeleteOnIdle(IDLE)
                    .maxDeliveryCount(3).build()));
            h.advance(Duration.ofMinutes(4));
            assertThat(h.engine.queue("q")).isNotNull();
            h.advance(Duration.ofMinutes(1));
            assertThat(h.engine.queue("q")).isNull();
        }
    }

    @Test
    void aQueueWithAnAttachedReceiverIsNotIdle() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(idleQueue("q"));
            Receiver r = h.receiver("q", ReceiveMode.PEEK_LOCK, h.sink(), 1);
            h.advance(Duration.ofMinutes(30));
            assertThat(h.engine.queue("q")).isNotNull();
            r.close();
            h.engine.runUntilIdle();
            h.advance(Duration.ofMinutes(30));
            assertThat(h.engine.queue("q")).isNull();
        }
    }

    @Test
    void theDefaultNeverDeletes() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            h.advance(Duration.ofDays(400));
            assertThat(h.engine.queue("q")).isNotNull();
        }
    }

    @Test
    void aRestartStartsTheIdlePeriodAgain() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(idleQueue("q"));
            h.advance(Duration.ofMinutes(4));
            h.crashAndRestart();
            h.advance(Duration.ofMinutes(4));
            assertThat(h.engine.queue("q")).isNotNull();
            h.advance(Duration.ofMinutes(1));
            assertThat(h.engine.queue("q")).isNull();
        }
    }

    @Test
    void subscriptionsAndTopicsHaveTheirOwnIdleness() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").autoDeleteOnIdle(Duration.ofMinutes(10)).build());
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "s").autoDeleteOnIdle(IDLE)
                    .build(), null));
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "busy").build(), null));
            h.advance(Duration.ofMinutes(3));
            h.send("t", text("x")); // a send is topic activity, not subscription activity
            h.advance(Duration.ofMinutes(2));
            assertThat(h.engine.topic("t").subscription("s")).isNull();
            assertThat(h.engine.topic("t").subscription("busy")).isNotNull();
            h.advance(Duration.ofMinutes(7)); // 12 minutes in; the topic was last used at minute 3
            assertThat(h.engine.topic("t")).isNotNull();
            h.advance(Duration.ofMinutes(1));
            assertThat(h.engine.topic("t")).isNull();
        }
    }

    @Test
    void anEntityThatAutoForwardsIsNeverDeletedForIdleness() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("dest");
            h.queue(QueueProperties.builder("src").forwardTo("dest").autoDeleteOnIdle(IDLE).build());
            h.advance(Duration.ofHours(1));
            assertThat(h.engine.queue("src")).isNotNull();
            assertThat(List.of(h.engine.queue("dest"))).doesNotContainNull();
        }
    }
}
