package io.buslane.engine;

import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

import static io.buslane.engine.EngineHarness.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Entity status (entity-suspend.md): which operations each status refuses, and with which error. */
class EntityStatusTest {

    private static QueueProperties queue(String name, EntityStatus status) {
        return QueueProperties.builder(name).status(status).build();
    }

    private static void assertDisabled(Throwable t, String text) {
        assertThat(t).isInstanceOf(BrokerException.class);
        assertThat(((BrokerException) t).kind()).isEqualTo(ErrorKind.ENTITY_DISABLED);
        assertThat(t.getMessage()).contains(text);
    }

    @ParameterizedTest
    @EnumSource(EntityStatus.class)
    void sendsAndReceivesFollowTheStatus(EntityStatus status) {
        try (EngineHarness h = new EngineHarness()) {
            h.queue(queue("q", status));
            boolean canSend = status == EntityStatus.ACTIVE || status == EntityStatus.RECEIVE_DISABLED;
            boolean canReceive = status == EntityStatus.ACTIVE || status == EntityStatus.SEND_DISABLED;
            if (canSend) {
                h.send("q", text("x"));
                h.await(h.engine.schedule("q", List.of(io.buslane.engine.message.Message.builder()
                        .scheduledEnqueueTimeMs(h.clock.epochMillis() + 60_000).build())));
            } else {
                String text = status == EntityStatus.SEND_DISABLED
                        ? "Messaging entity 'q' is currently disabled for Send operations."
                        : "Messaging entity 'q' is currently disabled.";
                assertThatThrownBy(() -> h.send("q", text("x"))).satisfies(t -> assertDisabled(t, text));
                assertThatThrownBy(() -> h.engine.checkSendable("q")).satisfies(t -> assertDisabled(t, text));
                assertThatThrownBy(() -> h.await(h.engine.schedule("q", List.of(text("x")))))
                        .satisfies(t -> assertDisabled(t, text));
            }
            if (canReceive) {
                h.engine.checkReceivable(EntityAddress.parse("q"));
                h.receiver("q", ReceiveMode.PEEK_LOCK, h.sink(), 1).close();
            } else {
                String text = "Messaging entity 'q' is currently disabled.";
                assertThatThrownBy(() -> h.engine.checkReceivable(EntityAddress.parse("q")))
                        .satisfies(t -> assertDisabled(t, text));
                assertThatThrownBy(() -> h.engine.createReceiver(EntityAddress.parse("q"), ReceiveMode.PEEK_LOCK,
                        h.sink())).satisfies(t -> assertDisabled(t, text));
                assertThatThrownBy(() -> h.engine.createReceiver(EntityAddress.parse("q/$DeadLetterQueue"),
                        ReceiveMode.PEEK_LOCK, h.sink())).satisfies(t -> assertDisabled(t, text));
            }
        }
    }

    @Test
    void disablingAQueueDetachesItsReceiversWithTheServiceError() {
        try (EngineHarness h = new EngineHarness()) {
            h.queue("q");
            EngineHarness.Sink main = h.sink();
            EngineHarness.Sink dlq = h.sink();
            h.receiver("q", ReceiveMode.PEEK_LOCK, main, 1);
            h.receiver("q/$DeadLetterQueue", ReceiveMode.PEEK_LOCK, dlq, 1);
            h.await(h.engine.updateQueue(queue("q", EntityStatus.RECEIVE_DISABLED)));
            assertDisabled(main.closedWith, "is currently disabled");
            assertDisabled(dlq.closedWith, "is currently disabled");
            h.send("q", text("still accepted"));
            assertThat(h.await(h.engine.counts("q")).activeMessageCount()).isEqualTo(1);
        }
    }

    @Test
    void aDisabledTopicRefusesSendsAndAReceiveDisabledSubscriptionStillGetsCopies() {
        try (EngineHarness h = new EngineHarness()) {
            h.topic(TopicProperties.builder("t").build());
            h.await(h.engine.createSubscription(SubscriptionProperties.builder("t", "s")
                    .status(EntityStatus.RECEIVE_DISABLED).build(), null));
            h.send("t", text("x"));
            assertThat(h.await(h.engine.counts("t/subscriptions/s")).activeMessageCount()).isEqualTo(1);
            assertThatThrownBy(() -> h.engine.createReceiver(EntityAddress.parse("t/subscriptions/s"),
                    ReceiveMode.PEEK_LOCK, h.sink())).satisfies(t -> assertDisabled(t, "currently disabled"));
            h.await(h.engine.updateTopic(TopicProperties.builder("t").status(EntityStatus.DISABLED).build()));
            assertThatThrownBy(() -> h.send("t", text("y")))
                    .satisfies(t -> assertDisabled(t, "Messaging entity 't' is currently disabled."));
        }
    }
}
