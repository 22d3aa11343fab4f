package io.buslane.conformance;

import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.core.amqp.exception.AmqpException;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusMessageBatch;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import com.azure.messaging.servicebus.administration.models.CreateSubscriptionOptions;
import com.azure.messaging.servicebus.administration.models.EntityStatus;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import com.azure.messaging.servicebus.administration.models.QueueRuntimeProperties;
import com.azure.messaging.servicebus.models.DeadLetterOptions;
import com.azure.messaging.servicebus.models.SubQueue;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Duplicate detection, auto-forwarding and entity status through the official Java SDK (and its administration
 * client) against the packaged broker, including kill -9 of the broker while messages are being forwarded.
 * AutoDeleteOnIdle (5 minutes at least) is covered by the engine's tests on a manual clock.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SemanticsConformanceTest extends ConformanceBase {

    static ServiceBusAdministrationClient admin;

    @BeforeAll
    static void start() throws Exception {
        startBroker(null);
        admin = AdminClientConformanceTest.adminClient(broker.connectionString(), broker.httpPort());
    }

    // ---------------------------------------------------------------------------------------------------------
    // duplicate detection

    @Test
    void aDuplicateMessageIdIsAcceptedAndDroppedAlsoAfterKillDashNine() throws Exception {
        admin.createQueue("dedup", new CreateQueueOptions().setDuplicateDetectionRequired(true)
                .setDuplicateDetectionHistoryTimeWindow(Duration.ofMinutes(10)));
        ServiceBusSenderClient sender = sender("dedup");
        sender.sendMessage(new ServiceBusMessage("first").setMessageId("order-1"));
        sender.sendMessage(new ServiceBusMessage("duplicate").setMessageId("order-1"));
        ServiceBusMessageBatch batch = sender.createMessageBatch();
        batch.tryAddMessage(new ServiceBusMessage("second").setMessageId("order-2"));
        batch.tryAddMessage(new ServiceBusMessage("duplicate in batch").setMessageId("order-2"));
        sender.sendMessages(batch);
        ServiceBusReceiverClient receiver = receiver("dedup");
        List<ServiceBusReceivedMessage> got = receive(receiver, 3, SHORT);
        assertThat(got).extracting(m -> m.getBody().toString()).containsExactly("first", "second");
        got.forEach(receiver::complete);
        closeClients();

        broker.crashAndRestart();
        ServiceBusSenderClient again = sender("dedup");
        again.sendMessage(new ServiceBusMessage("after crash").setMessageId("order-1"));
        again.sendMessage(new ServiceBusMessage("new").setMessageId("order-3"));
        assertThat(receive(receiver("dedup"), 2, SHORT)).extracting(m -> m.getBody().toString())
                .containsExactly("new");
    }

    @Test
    void scheduledMessagesTakePartInDuplicateDetectionBothWays() {
        admin.createQueue("dedup-scheduled", new CreateQueueOptions().setDuplicateDetectionRequired(true)
                .setDuplicateDetectionHistoryTimeWindow(Duration.ofMinutes(10)));
        ServiceBusSenderClient sender = sender("dedup-scheduled");
        OffsetDateTime soon = OffsetDateTime.now().plusSeconds(1);
        OffsetDateTime later = OffsetDateTime.now().plusHours(1);
        long first = sender.scheduleMessage(new ServiceBusMessage("scheduled").setMessageId("s-1"), soon);
        // a scheduled duplicate is dropped but, as on the service, still answered with a sequence number of its own
        long duplicate = sender.scheduleMessage(new ServiceBusMessage("scheduled again").setMessageId("s-1"), later);
        assertThat(duplicate).isNotEqualTo(first);
        sender.cancelScheduledMessage(duplicate); // names no message: message-not-found, which the Java SDK accepts
        sender.sendMessage(new ServiceBusMessage("sent after scheduling").setMessageId("s-1"));
        sender.sendMessage(new ServiceBusMessage("sent").setMessageId("s-2"));
        sender.scheduleMessage(new ServiceBusMessage("scheduled after sending").setMessageId("s-2"), soon);
        ServiceBusReceiverClient receiver = receiver("dedup-scheduled");
        List<ServiceBusReceivedMessage> got = receive(receiver, 3, Duration.ofSeconds(8));
        assertThat(got).extracting(m -> m.getBody().toString()).containsExactlyInAnyOrder("scheduled", "sent");
        got.forEach(receiver::complete);
        assertThat(admin.getQueueRuntimeProperties("dedup-scheduled").getScheduledMessageCount()).isZero();
    }

    // ---------------------------------------------------------------------------------------------------------
    // auto-forwarding

    @Test
    void aQueueAndASubscriptionForwardToAQueue() {
        admin.createQueue("fwd-dest");
        admin.createQueue("fwd-src", new CreateQueueOptions().setForwardTo("fwd-dest"));
        admin.createTopic("fwd-topic");
        admin.createSubscription("fwd-topic", "to-queue", new CreateSubscriptionOptions().setForwardTo("fwd-dest"));
        sender("fwd-src").sendMessage(new ServiceBusMessage("from queue"));
        track(builder().sender().topicName("fwd-topic").buildClient())
                .sendMessage(new ServiceBusMessage("from topic"));
        ServiceBusReceiverClient receiver = receiver("fwd-dest");
        List<ServiceBusReceivedMessage> got = receive(receiver, 2, SHORT);
        assertThat(got).extracting(m -> m.getBody().toString())
                .containsExactlyInAnyOrder("from queue", "from topic");
        assertThat(got).extracting(ServiceBusReceivedMessage::getSequenceNumber).containsExactlyInAnyOrder(1L, 2L);
        // x-opt-enqueue-sequence-number: the number each had at its original point of submission
        assertThat(got).extracting(ServiceBusReceivedMessage::getEnqueuedSequenceNumber).containsExactly(1L, 1L);
        got.forEach(receiver::complete);
        QueueRuntimeProperties src = admin.getQueueRuntimeProperties("fwd-src");
        assertThat(src.getTotalMessageCount()).isZero();
        assertThat(src.getTransferMessageCount()).isZero();
    }

    @Test
    void aChainOfFiveHopsEndsInTheTransferDeadLetterQueueWithMaxTransferHopCountExceeded() {
        admin.createQueue("hop-6");
        for (int i = 5; i >= 1; i--) {
            admin.createQueue("hop-" + i, new CreateQueueOptions().setForwardTo("hop-" + (i + 1)));
        }
        sender("hop-1").sendMessage(new ServiceBusMessage("far"));
        ServiceBusReceiverClient tdlq = track(builder().receiver().queueName("hop-5")
                .subQueue(SubQueue.TRANSFER_DEAD_LETTER_QUEUE).buildClient());
        List<ServiceBusReceivedMessage> got = receive(tdlq, 1, SHORT);
        assertThat(got).hasSize(1);
        assertThat(got.get(0).getDeadLetterReason()).isEqualTo("MaxTransferHopCountExceeded");
        assertThat(got.get(0).getBody().toString()).isEqualTo("far");
        tdlq.complete(got.get(0));
        assertThat(admin.getQueueRuntimeProperties("hop-6").getTotalMessageCount()).isZero();
    }

    @Test
    void aDisabledDestinationParksTheMessageInTheTransferDeadLetterQueue() {
        admin.createQueue("parked-dest", new CreateQueueOptions().setStatus(EntityStatus.DISABLED));
        admin.createQueue("parked-src", new CreateQueueOptions().setForwardTo("parked-dest"));
        sender("parked-src").sendMessage(new ServiceBusMessage("parked"));
        ServiceBusReceiverClient tdlq = track(builder().receiver().queueName("parked-src")
                .subQueue(SubQueue.TRANSFER_DEAD_LETTER_QUEUE).buildClient());
        List<ServiceBusReceivedMessage> got = receive(tdlq, 1, SHORT);
        assertThat(got).extracting(m -> m.getBody().toString()).containsExactly("parked");
        assertThat(admin.getQueueRuntimeProperties("parked-src").getTransferDeadLetterMessageCount()).isEqualTo(1);
    }

    @Test
    void deadLetteredMessagesAreForwardedWithDeadLetterSource() {
        admin.createQueue("dl-dest");
        admin.createQueue("dl-src", new CreateQueueOptions().setForwardDeadLetteredMessagesTo("dl-dest"));
        sender("dl-src").sendMessage(new ServiceBusMessage("poison"));
        ServiceBusReceiverClient src = receiver("dl-src");
        ServiceBusReceivedMessage m = receive(src, 1, SHORT).get(0);
        src.deadLetter(m, new DeadLetterOptions().setDeadLetterReason("Unparseable")
                .setDeadLetterErrorDescription("bad json"));
        ServiceBusReceiverClient dest = receiver("dl-dest");
        ServiceBusReceivedMessage got = receive(dest, 1, SHORT).get(0);
        assertThat(got.getBody().toString()).isEqualTo("poison");
        assertThat(got.getDeadLetterSource()).isEqualTo("dl-src");
        assertThat(got.getDeadLetterReason()).isEqualTo("Unparseable");
        assertThat(got.getDeadLetterErrorDescription()).isEqualTo("bad json");
        assertThat(got.getApplicationProperties()).doesNotContainKey("x-opt-buslane-transfer-hop-count");
        dest.complete(got);
    }

    /**
     * Senders keep sending to a forwarding queue while the broker is killed with kill -9 (three times, at different
     * points). Every acknowledged message must reach the destination, and nothing may arrive twice, whatever was in
     * flight between the two entities at the kill (the broker's replay log reports the pending transfers).
     */
    @Test
    void forwardingAcrossPartitionsLosesNothingAndDuplicatesNothingAcrossKillDashNine() throws Exception {
        admin.createQueue("crash-dest", new CreateQueueOptions().setPartitioningEnabled(true));
        // duplicate detection on the source: an SDK retry of a batch stored just before a kill is not a second copy
        admin.createQueue("crash-src", new CreateQueueOptions().setPartitioningEnabled(true)
                .setDuplicateDetectionRequired(true).setForwardTo("crash-dest"));
        Set<String> acknowledged = java.util.concurrent.ConcurrentHashMap.newKeySet();
        Set<String> attempted = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        for (int round = 0; round < 3; round++) {
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            List<Thread> senders = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                ServiceBusSenderClient sender = sender("crash-src");
                Thread thread = new Thread(() -> {
                    while (!stop.get()) {
                        // one message per send: a partitioned entity with duplicate detection refuses a batch of
                        // distinct MessageIds, as the service does
                        String id = "m" + next.getAndIncrement();
                        try {
                            attempted.add(id);
                            sender.sendMessage(new ServiceBusMessage(id).setMessageId(id));
                            acknowledged.add(id);
                        } catch (RuntimeException e) {
                            return; // the broker went away: this batch may or may not have been stored
                        }
                    }
                }, "forward-crash-sender-" + t);
                senders.add(thread);
                thread.start();
            }
            Thread.sleep(700 + 400L * round); // a different kill point each round
            broker.crashAndRestart();
            stop.set(true);
            for (Thread t : senders) {
                t.join(30_000);
            }
            closeClients();
        }
        assertThat(acknowledged).hasSizeGreaterThan(100);

        ServiceBusReceiverClient receiver = receiver("crash-dest");
        Set<String> seen = new HashSet<>();
        List<String> duplicates = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!seen.containsAll(acknowledged) && System.nanoTime() < deadline) {
            for (ServiceBusReceivedMessage m : receiver.receiveMessages(100, Duration.ofSeconds(2))) {
                if (!seen.add(m.getBody().toString())) {
                    duplicates.add(m.getBody().toString());
                }
                receiver.complete(m);
            }
        }
        for (ServiceBusReceivedMessage m : receiver.receiveMessages(100, Duration.ofSeconds(3))) {
            if (!seen.add(m.getBody().toString())) {
                duplicates.add(m.getBody().toString());
            }
            receiver.complete(m);
        }
        assertThat(seen).containsAll(acknowledged);
        assertThat(attempted).containsAll(seen);
        assertThat(duplicates).isEmpty();
        QueueRuntimeProperties src = admin.getQueueRuntimeProperties("crash-src");
        assertThat(src.getTotalMessageCount()).isZero();
        System.out.printf("forwarding across kill -9: %d acknowledged, %d received; replay reported: %s%n",
                acknowledged.size(), seen.size(), java.util.regex.Pattern.compile("\\d+ pending transfers")
                        .matcher(broker.log()).results().map(java.util.regex.MatchResult::group)
                        .filter(g -> !g.startsWith("0 ")).toList());
    }

    // ---------------------------------------------------------------------------------------------------------
    // entity status

    @Test
    void sendingToASendDisabledQueueFailsWithMessagingEntityDisabled() {
        admin.createQueue("send-disabled", new CreateQueueOptions().setStatus(EntityStatus.SEND_DISABLED));
        ServiceBusSenderClient sender = sender("send-disabled");
        assertThatThrownBy(() -> sender.sendMessage(new ServiceBusMessage("x")))
                .isInstanceOf(ServiceBusException.class)
                .satisfies(e -> {
                    assertThat(((ServiceBusException) e).getReason())
                            .isEqualTo(ServiceBusFailureReason.MESSAGING_ENTITY_DISABLED);
                    assertThat(((ServiceBusException) e).isTransient()).isFalse();
                })
                .hasMessageContaining("currently disabled for Send operations");
    }

    @Test
    void receivingFromAReceiveDisabledQueueFailsWithMessagingEntityDisabledWhileSendsSucceed() {
        admin.createQueue("receive-disabled", new CreateQueueOptions().setStatus(EntityStatus.RECEIVE_DISABLED));
        sender("receive-disabled").sendMessage(new ServiceBusMessage("kept"));
        ServiceBusReceiverClient receiver = receiver("receive-disabled");
        // the synchronous receiver wraps the link's error ("The receiver client is terminated ...")
        assertThatThrownBy(() -> receiver.receiveMessages(1, SHORT).forEach(m -> { }))
                .satisfies(e -> {
                    // the receive path reports the link's error as the AMQP exception the SDK maps to
                    // MessagingEntityDisabled (ServiceBusFailureReason.MESSAGING_ENTITY_DISABLED)
                    AmqpException amqp = causeOfType(e, AmqpException.class);
                    assertThat(amqp).as("AmqpException in the cause chain of %s", e).isNotNull();
                    assertThat(amqp.getErrorCondition()).isEqualTo(AmqpErrorCondition.ENTITY_DISABLED_ERROR);
                    assertThat(amqp.isTransient()).isFalse();
                    assertThat(amqp.getMessage()).contains("is currently disabled");
                });
        QueueProperties q = admin.getQueue("receive-disabled");
        admin.updateQueue(q.setStatus(EntityStatus.ACTIVE));
        ServiceBusReceiverClient again = receiver("receive-disabled");
        assertThat(receive(again, 1, SHORT)).extracting(m -> m.getBody().toString()).containsExactly("kept");
    }

    @Test
    void aDisabledQueueRefusesBoth() {
        admin.createQueue("disabled", new CreateQueueOptions().setStatus(EntityStatus.DISABLED));
        assertThatThrownBy(() -> sender("disabled").sendMessage(new ServiceBusMessage("x")))
                .isInstanceOf(ServiceBusException.class)
                .satisfies(e -> assertThat(((ServiceBusException) e).getReason())
                        .isEqualTo(ServiceBusFailureReason.MESSAGING_ENTITY_DISABLED))
                .hasMessageContaining("is currently disabled");
    }

    // ---------------------------------------------------------------------------------------------------------
    // helpers

    private static <T extends Throwable> T causeOfType(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }
}
