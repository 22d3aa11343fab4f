package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.partition.ManualPartitionContext.TestConsumer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One queue partition driven directly with explicit times (no shard, no engine, no threads): sequence numbers,
 * scheduling, peek-lock settlement and lock expiry, MaxDeliveryCount, time-to-live and the session requirement.
 */
class PartitionTest {

    private static final long T0 = 1_000_000;
    private static final long LOCK_MS = 30_000;

    private final ManualPartitionContext ctx = new ManualPartitionContext(T0);

    private static QueueSettings settings(int maxDeliveryCount, boolean requiresSession, boolean deadLetterOnExpiry) {
        return new QueueSettings("q", LOCK_MS, maxDeliveryCount, requiresSession, Long.MAX_VALUE,
                deadLetterOnExpiry, EntityStatus.ACTIVE, Long.MAX_VALUE);
    }

    private Partition queue(QueueSettings settings) {
        return Partition.forQueue(7, 0, false, settings, ctx);
    }

    private Partition queue() {
        return queue(settings(10, false, false));
    }

    private static Message message(String id) {
        return Message.builder().messageId(id).body(id.getBytes(StandardCharsets.UTF_8)).build();
    }

    /** A receiver attached to the main queue; what it is given arrives at the cycle's sync. */
    private TestConsumer receiver(Partition p, ReceiveMode mode, int credit) {
        TestConsumer c = new TestConsumer(mode, credit);
        p.queue().deliveries().addConsumer(c);
        p.queue().deliveries().pump();
        ctx.sync();
        return c;
    }

    private TestConsumer receiveOne(Partition p) {
        TestConsumer c = receiver(p, ReceiveMode.PEEK_LOCK, 1);
        assertThat(c.received).hasSize(1);
        return c;
    }

    private static long[] sequenceNumbers(List<ReceivedMessage> messages) {
        return messages.stream().mapToLong(ReceivedMessage::sequenceNumber).toArray();
    }

    @Test
    void sendsTakeGapFreeSequenceNumbersInOrder() {
        Partition p = queue();
        p.send(List.of(message("a"), message("b"), message("c")), T0);
        p.send(List.of(message("d")), T0 + 5);
        p.send(List.of(message("e"), message("f")), T0 + 9);

        assertThat(p.queue().messageCount()).isEqualTo(6);
        assertThat(ctx.log.records).containsExactly("entryAdded 1", "entryAdded 2", "entryAdded 3",
                "entryAdded 4", "entryAdded 5", "entryAdded 6");
        TestConsumer c = receiver(p, ReceiveMode.RECEIVE_AND_DELETE, 10);
        assertThat(sequenceNumbers(c.received)).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(c.received).extracting(m -> m.message().messageId())
                .containsExactly("a", "b", "c", "d", "e", "f");
        assertThat(c.received).extracting(ReceivedMessage::enqueuedTimeMs)
                .containsExactly(T0, T0, T0, T0 + 5, T0 + 9, T0 + 9);
        assertThat(p.queue().messageCount()).isZero();
    }

    @Test
    void aScheduledMessageBecomesActiveAtItsTimeAndNotBefore() {
        Partition p = queue();
        p.send(List.of(Message.builder().messageId("later").scheduledEnqueueTimeMs(T0 + 5_000).build(),
                message("now")), T0);

        assertThat(p.scheduledCount()).isEqualTo(1);
        assertThat(p.queue().messageCount()).isEqualTo(1);
        assertThat(p.peekScheduled(0, 10)).extracting(ReceivedMessage::scheduledEnqueueTimeMs)
                .containsExactly(T0 + 5_000);

        ctx.advanceTo(T0 + 4_999);
        assertThat(p.scheduledCount()).isEqualTo(1);
        assertThat(p.queue().messageCount()).isEqualTo(1);

        ctx.advanceTo(T0 + 5_000);
        assertThat(p.scheduledCount()).isZero();
        assertThat(p.queue().messageCount()).isEqualTo(2);
        TestConsumer c = receiver(p, ReceiveMode.RECEIVE_AND_DELETE, 10);
        assertThat(c.received).extracting(m -> m.message().messageId()).containsExactly("now", "later");
        // the activated message is enqueued at its scheduled time, with the next sequence number
        assertThat(c.received.get(1).enqueuedTimeMs()).isEqualTo(T0 + 5_000);
        assertThat(sequenceNumbers(c.received)).containsExactly(2, 3);
    }

    @Test
    void aCancelledScheduledMessageNeverArrives() {
        Partition p = queue();
        long seq = p.schedule(message("x"), T0 + 1_000, T0);
        p.cancelScheduled(seq);

        ctx.advanceTo(T0 + 2_000);

        assertThat(p.scheduledCount()).isZero();
        assertThat(p.queue().messageCount()).isZero();
        assertThat(ctx.log.records).containsExactly("scheduledAdded " + seq, "scheduledRemoved " + seq);
        assertThatThrownBy(() -> p.cancelScheduled(seq))
                .isInstanceOfSatisfying(BrokerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ErrorKind.MESSAGE_NOT_FOUND));
    }

    @Test
    void aLockedMessageIsCompletedWithItsToken() {
        Partition p = queue();
        p.send(List.of(message("a")), T0);
        ReceivedMessage m = receiveOne(p).received.get(0);

        assertThat(m.lockToken()).isNotNull();
        assertThat(m.lockedUntilMs()).isEqualTo(T0 + LOCK_MS);
        assertThat(p.queue().lockedCount()).isEqualTo(1);

        p.queue().settlements().complete(m.lockToken(), T0 + 10);

        assertThat(p.queue().messageCount()).isZero();
        assertThat(p.queue().lockedCount()).isZero();
        assertThat(ctx.log.records).containsExactly("entryAdded 1", "entryRemoved 1");
        assertThatThrownBy(() -> p.queue().settlements().complete(m.lockToken(), T0 + 11))
                .isInstanceOfSatisfying(BrokerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ErrorKind.MESSAGE_LOCK_LOST));
    }

    @Test
    void anAbandonedMessageIsDeliveredAgainWithOneMoreDelivery() {
        Partition p = queue();
        p.send(List.of(message("a")), T0);
        ReceivedMessage first = receiveOne(p).received.get(0);

        p.queue().settlements().abandon(first.lockToken(), Map.of("tried", 1), T0 + 10);

        assertThat(p.queue().lockedCount()).isZero();
        ReceivedMessage second = receiveOne(p).received.get(0);
        assertThat(second.sequenceNumber()).isEqualTo(first.sequenceNumber());
        assertThat(second.deliveryCount()).isEqualTo(first.deliveryCount() + 1);
        assertThat(second.message().applicationProperties()).containsEntry("tried", 1);
        assertThat(second.lockToken()).isNotEqualTo(first.lockToken());
    }

    @Test
    void anExpiredLockReturnsTheMessageWithOneMoreDelivery() {
        Partition p = queue();
        p.send(List.of(message("a")), T0);
        ReceivedMessage first = receiveOne(p).received.get(0);

        ctx.advanceTo(T0 + LOCK_MS - 1);
        assertThat(p.queue().lockedCount()).isEqualTo(1);

        ctx.advanceTo(T0 + LOCK_MS);
        assertThat(p.queue().lockedCount()).isZero();
        assertThat(p.lockExpiries()).isEqualTo(1);
        ReceivedMessage second = receiveOne(p).received.get(0);
        assertThat(second.deliveryCount()).isEqualTo(first.deliveryCount() + 1);
        // taken again: the lapsed lock can no longer be used
        assertThatThrownBy(() -> p.queue().settlements().complete(first.lockToken(), T0 + LOCK_MS))
                .isInstanceOfSatisfying(BrokerException.class,
                        e -> assertThat(e.kind()).isEqualTo(ErrorKind.MESSAGE_LOCK_LOST));
    }

    @Test
    void aRenewedLockOutlivesItsFirstDuration() {
        Partition p = queue();
        p.send(List.of(message("a")), T0);
        UUID token = receiveOne(p).received.get(0).lockToken();

        ctx.advanceTo(T0 + 20_000);
        assertThat(p.queue().settlements().renewLock(token, T0 + 20_000)).isEqualTo(T0 + 20_000 + LOCK_MS);
        ctx.advanceTo(T0 + LOCK_MS);

        assertThat(p.queue().lockedCount()).isEqualTo(1);
        p.queue().settlements().complete(token, T0 + LOCK_MS);
        assertThat(p.queue().messageCount()).isZero();
    }

    @Test
    void theLastFailedDeliveryBeyondMaxDeliveryCountDeadLettersTheMessage() {
        Partition p = queue(settings(2, false, false));
        p.send(List.of(message("a")), T0);

        p.queue().settlements().abandon(receiveOne(p).received.get(0).lockToken(), null, T0 + 1);
        assertThat(p.queue().messageCount()).isEqualTo(1);
        UUID second = receiveOne(p).received.get(0).lockToken();
        ctx.advanceTo(T0 + 1 + LOCK_MS); // the second failure is a lock expiry

        assertThat(p.queue().messageCount()).isZero();
        SubQueueState dlq = p.queue().subQueue(SubQueue.DEAD_LETTER);
        assertThat(dlq.messageCount()).isEqualTo(1);
        ReceivedMessage dead = dlq.peek(0, 10, null).get(0);
        assertThat(dead.sequenceNumber()).isEqualTo(1);
        assertThat(dead.deliveryCount()).isEqualTo(2);
        assertThat(dead.message().applicationProperties())
                .containsEntry(DeadLetterReasons.DEAD_LETTER_REASON, DeadLetterReasons.MAX_DELIVERY_COUNT_EXCEEDED)
                .containsEntry(DeadLetterReasons.DEAD_LETTER_DESCRIPTION,
                        DeadLetterReasons.maxDeliveryCountDescription(2));
        assertThat(p.queue().settlements().holdsLock(second)).isFalse();
    }

    @Test
    void anExpiredMessageIsDeadLetteredWhenTheQueueSaysSo() {
        Partition p = queue(settings(10, false, true));
        p.send(List.of(Message.builder().messageId("short").timeToLiveMs(1_000L).build(), message("long")), T0);

        ctx.advanceTo(T0 + 999);
        assertThat(p.queue().messageCount()).isEqualTo(2);

        ctx.advanceTo(T0 + 1_000);
        assertThat(p.queue().messageCount()).isEqualTo(1);
        List<ReceivedMessage> dead = p.queue().subQueue(SubQueue.DEAD_LETTER).peek(0, 10, null);
        assertThat(dead).extracting(m -> m.message().messageId()).containsExactly("short");
        assertThat(dead.get(0).message().applicationProperties())
                .containsEntry(DeadLetterReasons.DEAD_LETTER_REASON, DeadLetterReasons.TTL_EXPIRED);
    }

    @Test
    void anExpiredMessageIsDroppedOtherwise() {
        Partition p = queue();
        p.send(List.of(Message.builder().messageId("short").timeToLiveMs(1_000L).build()), T0);

        ctx.advanceTo(T0 + 1_000);

        assertThat(p.queue().messageCount()).isZero();
        assertThat(p.queue().subQueue(SubQueue.DEAD_LETTER).messageCount()).isZero();
        assertThat(ctx.log.records).containsExactly("entryAdded 1", "entryRemoved 1");
    }

    @Test
    void aSessionEnabledQueueRefusesMessagesWithoutSessionId() {
        Partition p = queue(settings(10, true, false));

        assertThatThrownBy(() -> p.send(List.of(Message.builder().sessionId("s").build(), message("no-session")),
                T0)).isInstanceOfSatisfying(BrokerException.class, e -> {
                    assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_OPERATION);
                    assertThat(e.getMessage()).contains(Partition.SESSION_REQUIRED_TEXT);
                });
        assertThatThrownBy(() -> p.schedule(message("no-session"), T0 + 1_000, T0))
                .isInstanceOf(BrokerException.class);
        assertThat(p.queue().messageCount()).isZero();
        assertThat(ctx.log.records).isEmpty(); // the whole batch is refused before anything is written

        p.send(List.of(Message.builder().messageId("x").sessionId("s").build()), T0);
        assertThat(p.queue().messageCount()).isEqualTo(1);
        assertThat(p.queue().sessions().ids(Long.MIN_VALUE, null, 10)).containsExactly("s");
    }

    @Test
    void aSessionReceiverGetsOnlyItsSessionsMessages() {
        Partition p = queue(settings(10, true, false));
        p.send(List.of(Message.builder().messageId("a1").sessionId("a").build(),
                Message.builder().messageId("b1").sessionId("b").build(),
                Message.builder().messageId("a2").sessionId("a").build()), T0);
        TestConsumer c = new TestConsumer(ReceiveMode.PEEK_LOCK, 10);

        ConsumerSlot slot = p.queue().deliveries().acceptSession("a", c, T0);
        p.queue().deliveries().pumpSessionOf(slot);
        ctx.sync();

        assertThat(c.received).extracting(m -> m.message().messageId()).containsExactly("a1", "a2");
        assertThat(p.queue().sessions().lockedUntil("a", T0, null)).isEqualTo(T0 + LOCK_MS);
    }

    @Test
    void aTopicsParkedMessageOutlivesTheSubscriptionHoldingIt() {
        Partition topic = Partition.forTopic(20, "t", 0, false, Long.MAX_VALUE, Long.MAX_VALUE, ctx);
        SubQueueState s1 = topic.addSubscription("s1", 21, settings(10, false, false), List.of());
        SubQueueState s2 = topic.addSubscription("s2", 22, settings(10, false, false), List.of());
        List<Transfer> forwarded = new java.util.ArrayList<>();
        topic.setForwarder(forwarded::add);
        assertThat(topic.viaOwner("s1")).isSameAs(s1);
        topic.sendVia(topic.viaOwner("s1"), "dest", List.of(message("parked")), T0);
        ctx.sync(); // durable: handed to the forwarder, not yet done
        assertThat(forwarded).hasSize(1);
        String key = forwarded.get(0).key();

        topic.removeSubscription("s1");
        assertThat(topic.subscriptionCounts("s2").transferMessageCount()).as("held by s2 now").isEqualTo(1);
        assertThat(forwarded.get(0).owner()).isSameAs(s2);
        assertThat(forwarded.get(0).key()).as("the transfer key names the topic, unchanged").isEqualTo(key)
                .startsWith("20/0/v/");
        topic.transferDone(forwarded.get(0));
        assertThat(topic.transferCount()).isZero();
        assertThat(topic.subscriptionCounts("s2").transferMessageCount()).isZero();
    }
}
