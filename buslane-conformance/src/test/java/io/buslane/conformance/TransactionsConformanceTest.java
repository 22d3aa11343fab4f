package io.buslane.conformance;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusMessageBatch;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusTransactionContext;
import com.azure.messaging.servicebus.models.CompleteOptions;
import com.azure.messaging.servicebus.models.DeadLetterOptions;
import com.azure.messaging.servicebus.models.ServiceBusMessageState;
import com.azure.messaging.servicebus.models.SubQueue;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * AMQP transactions through the official Java SDK's {@link ServiceBusTransactionContext} against the packaged
 * broker: transactional sends, settlements and schedules become visible at commit and vanish at rollback, the
 * 100-message limit, and cross-entity transactions (send via the first entity). One queue (or pair) per test.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TransactionsConformanceTest extends ConformanceBase {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [
                      { "Name": "txn-send", "Properties": {} },
                      { "Name": "txn-send-rollback", "Properties": {} },
                      { "Name": "txn-complete", "Properties": {} },
                      { "Name": "txn-complete-rollback", "Properties": { "LockDuration": "PT5S" } },
                      { "Name": "txn-dead-letter", "Properties": {} },
                      { "Name": "txn-schedule", "Properties": {} },
                      { "Name": "txn-limit", "Properties": {} },
                      { "Name": "txn-via-in", "Properties": {} },
                      { "Name": "txn-via-out", "Properties": {} },
                      { "Name": "txn-span-in", "Properties": {} },
                      { "Name": "txn-span-out", "Properties": {} },
                      { "Name": "txn-fan-0" }, { "Name": "txn-fan-1" }, { "Name": "txn-fan-2" },
                      { "Name": "txn-fan-3" },
                      { "Name": "txn-sched-in" },
                      { "Name": "txn-sched-0" }, { "Name": "txn-sched-1" }, { "Name": "txn-sched-2" },
                      { "Name": "txn-sched-3" }
                    ],
                    "Topics": [
                      { "Name": "txn-fan-topic", "Subscriptions": [ { "Name": "s" } ] }
                    ]
                  }
                ],
                "Logging": { "Type": "File" }
              }
            }
            """;

    @BeforeAll
    static void start() throws Exception {
        startBroker(CONFIG);
    }

    // ---------------------------------------------------------------------------------------------------------
    // sends

    @Test
    void sendsInATransactionBecomeVisibleAtCommit() {
        ServiceBusSenderClient sender = sender(builder(), "txn-send");
        ServiceBusReceiverClient receiver = receiver(builder(), "txn-send");
        ServiceBusTransactionContext txn = sender.createTransaction();
        sender.sendMessage(new ServiceBusMessage("t1"), txn);
        ServiceBusMessageBatch batch = sender.createMessageBatch();
        assertThat(batch.tryAddMessage(new ServiceBusMessage("t2"))).isTrue();
        assertThat(batch.tryAddMessage(new ServiceBusMessage("t3"))).isTrue();
        sender.sendMessages(batch, txn);
        assertThat(peek(receiver, 10, 0)).as("nothing visible before the commit").isEmpty();

        sender.commitTransaction(txn);
        List<ServiceBusReceivedMessage> got = receive(receiver, 3);
        assertThat(got).extracting(m -> m.getBody().toString()).containsExactly("t1", "t2", "t3");
        got.forEach(receiver::complete);
    }

    @Test
    void rollbackDiscardsTransactionalSends() {
        ServiceBusSenderClient sender = sender(builder(), "txn-send-rollback");
        ServiceBusReceiverClient receiver = receiver(builder(), "txn-send-rollback");
        ServiceBusTransactionContext txn = sender.createTransaction();
        sender.sendMessage(new ServiceBusMessage("gone"), txn);
        sender.rollbackTransaction(txn);
        sender.sendMessage(new ServiceBusMessage("kept"));

        List<ServiceBusReceivedMessage> got = receive(receiver, 2, Duration.ofSeconds(3));
        assertThat(got).extracting(m -> m.getBody().toString()).containsExactly("kept");
        receiver.complete(got.get(0));
    }

    @Test
    void aDischargedTransactionCannotBeUsedAgain() {
        ServiceBusSenderClient sender = sender(builder(), "txn-send-rollback");
        ServiceBusTransactionContext txn = sender.createTransaction();
        sender.commitTransaction(txn);
        assertThatThrownBy(() -> sender.commitTransaction(txn)).isInstanceOf(RuntimeException.class)
                .hasMessageContaining("amqp:transaction:unknown-id");
        // the Java SDK ignores the outcome of transactional sends: the send "succeeds" but goes nowhere
        sender.sendMessage(new ServiceBusMessage("late"), txn);
        assertThat(peek(receiver(builder(), "txn-send-rollback"), 10, 0))
                .extracting(m -> m.getBody().toString()).doesNotContain("late");
    }

    // ---------------------------------------------------------------------------------------------------------
    // settlements

    @Test
    void completeInATransactionTakesEffectAtCommitAndKeepsTheMessageLockedMeanwhile() {
        ServiceBusSenderClient sender = sender(builder(), "txn-complete");
        sender.sendMessage(new ServiceBusMessage("c"));
        ServiceBusReceiverClient receiver = receiver(builder(), "txn-complete");
        ServiceBusReceivedMessage m = receiveOne(receiver);

        ServiceBusTransactionContext txn = receiver.createTransaction();
        receiver.complete(m, new CompleteOptions().setTransactionContext(txn));
        assertThat(peek(receiver, 10, 0)).as("not completed before the commit").hasSize(1);
        ServiceBusReceiverClient other = receiver(builder(), "txn-complete");
        assertThat(receive(other, 1, Duration.ofSeconds(2))).as("still locked").isEmpty();

        receiver.commitTransaction(txn);
        assertThat(peek(receiver, 10, 0)).as("completed by the commit").isEmpty();
    }

    @Test
    void aRolledBackCompleteLeavesTheMessageLockedByItsReceiver() {
        ServiceBusSenderClient sender = sender(builder(), "txn-complete-rollback");
        sender.sendMessage(new ServiceBusMessage("r"));
        ServiceBusReceiverClient receiver = receiver(builder(), "txn-complete-rollback");
        ServiceBusReceivedMessage m = receiveOne(receiver);

        ServiceBusTransactionContext txn = receiver.createTransaction();
        receiver.complete(m, new CompleteOptions().setTransactionContext(txn));
        receiver.rollbackTransaction(txn);
        assertThat(peek(receiver, 10, 0)).hasSize(1);

        // not completed, and still locked until its 5-second lock expires; then it is delivered again
        ServiceBusReceivedMessage again = receiveOne(receiver, Duration.ofSeconds(15));
        assertThat(again.getBody().toString()).isEqualTo("r");
        assertThat(again.getDeliveryCount()).isEqualTo(1);
        receiver.complete(again);
    }

    @Test
    void deadLetterInATransactionTakesEffectAtCommit() {
        ServiceBusSenderClient sender = sender(builder(), "txn-dead-letter");
        sender.sendMessage(new ServiceBusMessage("d"));
        ServiceBusReceiverClient receiver = receiver(builder(), "txn-dead-letter");
        ServiceBusReceivedMessage m = receiveOne(receiver);
        ServiceBusTransactionContext txn = receiver.createTransaction();
        receiver.deadLetter(m, new DeadLetterOptions().setDeadLetterReason("why").setDeadLetterErrorDescription("so")
                .setTransactionContext(txn));
        ServiceBusReceiverClient dlq = track(builder().receiver().queueName("txn-dead-letter")
                .subQueue(SubQueue.DEAD_LETTER_QUEUE).maxAutoLockRenewDuration(Duration.ZERO).buildClient());
        assertThat(peek(dlq, 10, 0)).isEmpty();

        receiver.commitTransaction(txn);
        ServiceBusReceivedMessage dead = receiveOne(dlq);
        assertThat(dead.getDeadLetterReason()).isEqualTo("why");
        assertThat(dead.getDeadLetterErrorDescription()).isEqualTo("so");
        dlq.complete(dead);
    }

    // ---------------------------------------------------------------------------------------------------------
    // scheduling

    @Test
    void scheduleInATransactionIsKeptAtCommitAndCancelledAtRollback() {
        ServiceBusSenderClient sender = sender(builder(), "txn-schedule");
        ServiceBusReceiverClient receiver = receiver(builder(), "txn-schedule");
        OffsetDateTime at = OffsetDateTime.now(ZoneOffset.UTC).plusMinutes(10).truncatedTo(ChronoUnit.MILLIS);

        ServiceBusTransactionContext rolledBack = sender.createTransaction();
        Long first = sender.scheduleMessage(new ServiceBusMessage("never"), at, rolledBack);
        assertThat(first).isPositive();
        sender.rollbackTransaction(rolledBack);
        assertThat(peek(receiver, 10, 0)).isEmpty();

        ServiceBusTransactionContext committed = sender.createTransaction();
        Long second = sender.scheduleMessage(new ServiceBusMessage("later"), at, committed);
        assertThat(peek(receiver, 10, 0)).isEmpty(); // stored at commit, not before
        sender.commitTransaction(committed);
        List<ServiceBusReceivedMessage> peeked = peek(receiver, 10, 0);
        assertThat(peeked).extracting(ServiceBusReceivedMessage::getSequenceNumber).containsExactly(second);
        assertThat(peeked.get(0).getState()).isEqualTo(ServiceBusMessageState.SCHEDULED);
        assertThat(peeked.get(0).getBody().toString()).isEqualTo("later");
    }

    // ---------------------------------------------------------------------------------------------------------
    // limits

    @Test
    void aTransactionSendsAtMostOneHundredMessages() {
        ServiceBusSenderClient sender = sender(builder(), "txn-limit");
        ServiceBusTransactionContext txn = sender.createTransaction();
        List<ServiceBusMessage> hundred = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            hundred.add(new ServiceBusMessage("m" + i));
        }
        sender.sendMessages(hundred, txn);
        sender.commitTransaction(txn);
        ServiceBusReceiverClient receiver = receiver(builder(), "txn-limit");
        assertThat(peek(receiver, 200, 0)).hasSize(100);

        // the 101st send is refused; the Java SDK ignores the outcome of transactional sends, so the refusal
        // surfaces at the commit, which rolls the whole transaction back
        ServiceBusTransactionContext tooMany = sender.createTransaction();
        sender.sendMessages(hundred, tooMany);
        sender.sendMessage(new ServiceBusMessage("101st"), tooMany);
        assertThatThrownBy(() -> sender.commitTransaction(tooMany))
                .hasMessageContaining("amqp:transaction:rollback")
                .hasMessageContaining("Cannot send more than 100 messages in a single transaction.");
        assertThat(peek(receiver, 300, 0)).hasSize(100);
    }

    // ---------------------------------------------------------------------------------------------------------
    // cross-entity transactions

    @Test
    void crossEntityTransactionsCompleteOnOneQueueAndSendToAnotherAtomically() {
        sender(builder(), "txn-via-in").sendMessage(new ServiceBusMessage("input"));
        ServiceBusClientBuilder cross = builder().enableCrossEntityTransactions();
        ServiceBusReceiverClient in = receiver(cross, "txn-via-in");
        ServiceBusReceivedMessage m = receiveOne(in);
        ServiceBusSenderClient out = sender(cross, "txn-via-out");
        ServiceBusReceiverClient outReader = receiver(builder(), "txn-via-out");

        ServiceBusTransactionContext txn = in.createTransaction();
        in.complete(m, new CompleteOptions().setTransactionContext(txn));
        out.sendMessage(new ServiceBusMessage("output"), txn);
        assertThat(peek(outReader, 10, 0)).isEmpty();
        in.commitTransaction(txn);

        assertThat(peek(in, 10, 0)).isEmpty();
        ServiceBusReceivedMessage forwarded = receiveOne(outReader);
        assertThat(forwarded.getBody().toString()).isEqualTo("output");
        outReader.complete(forwarded);
    }

    @Test
    void withoutCrossEntityTransactionsATransactionCannotSpanTwoQueues() {
        sender(builder(), "txn-span-in").sendMessage(new ServiceBusMessage("input"));
        ServiceBusClientBuilder shared = builder(); // one connection: transactions are per connection
        ServiceBusReceiverClient in = receiver(shared, "txn-span-in");
        ServiceBusReceivedMessage m = receiveOne(in);
        ServiceBusSenderClient out = sender(shared, "txn-span-out");

        ServiceBusTransactionContext txn = in.createTransaction();
        in.complete(m, new CompleteOptions().setTransactionContext(txn));
        out.sendMessage(new ServiceBusMessage("output"), txn); // refused; the Java SDK ignores the outcome
        assertThatThrownBy(() -> in.commitTransaction(txn))
                .hasMessageContaining("amqp:transaction:rollback")
                .hasMessageContaining("Local transactions cannot span multiple top-level entities");
        assertThat(peek(in, 10, 0)).as("not completed").hasSize(1);
        assertThat(peek(receiver(builder(), "txn-span-out"), 10, 0)).as("not sent").isEmpty();
    }

    // ---------------------------------------------------------------------------------------------------------
    // all or nothing across entities (and shards)

    private static final List<String> FAN = List.of("txn-fan-0", "txn-fan-1", "txn-fan-2", "txn-fan-3");
    private static final List<String> SCHED = List.of("txn-sched-0", "txn-sched-1", "txn-sched-2", "txn-sched-3");

    /**
     * Abandons a locked message over the REST API with its lock token (the lock the SDK's receiver holds is gone
     * once this answers): what a lock lost meanwhile does to a transaction, without waiting for it to expire.
     */
    private static void unlockOverRest(String entityPath, ServiceBusReceivedMessage m) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(broker.baseUrl() + "/" + entityPath
                        + "/messages/" + m.getMessageId() + "/" + m.getLockToken()))
                        .header("Authorization", sasToken("http://localhost/"))
                        .PUT(java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("unlocked: %s", r.body()).isEqualTo(200);
    }

    @Test
    void aTransactionFromASubscriptionSendingViaItsTopicToFourQueuesIsAllOrNothing() throws Exception {
        sender(builder(), "txn-fan-topic").sendMessages(List.of(new ServiceBusMessage("in-1"),
                new ServiceBusMessage("in-2")));
        ServiceBusClientBuilder cross = builder().enableCrossEntityTransactions();
        ServiceBusReceiverClient in = track(cross.receiver().topicName("txn-fan-topic").subscriptionName("s")
                .maxAutoLockRenewDuration(Duration.ZERO).buildClient());
        List<ServiceBusReceivedMessage> got = receive(in, 2);
        assertThat(got).hasSize(2);
        List<ServiceBusSenderClient> outs = new ArrayList<>();
        for (String q : FAN) {
            outs.add(sender(cross, q));
        }

        ServiceBusTransactionContext lost = in.createTransaction();
        in.complete(got.get(0), new CompleteOptions().setTransactionContext(lost));
        for (ServiceBusSenderClient out : outs) {
            out.sendMessage(new ServiceBusMessage("lost"), lost);
        }
        unlockOverRest("txn-fan-topic/subscriptions/s", got.get(0));
        assertThatThrownBy(() -> in.commitTransaction(lost)).hasMessageContaining("amqp:transaction:rollback");
        for (String q : FAN) {
            assertThat(peek(receiver(builder(), q), 10, 0)).as("nothing sent to %s", q).isEmpty();
        }

        ServiceBusTransactionContext kept = in.createTransaction();
        in.complete(got.get(1), new CompleteOptions().setTransactionContext(kept));
        for (ServiceBusSenderClient out : outs) {
            out.sendMessage(new ServiceBusMessage("kept"), kept);
        }
        in.commitTransaction(kept);
        for (String q : FAN) {
            ServiceBusReceiverClient reader = receiver(builder(), q);
            assertThat(bodies(receive(reader, 1))).as(q).containsExactly("kept");
            assertThat(peek(reader, 10, 0)).as("%s holds it once", q).hasSize(1);
        }
        ServiceBusReceiverClient subscription = track(builder().receiver().topicName("txn-fan-topic")
                .subscriptionName("s").buildClient());
        assertThat(bodies(peek(subscription, 10, 0))).as("the unlocked input is back, the other completed")
                .containsExactly("in-1");
    }

    @Test
    void messagesScheduledForOtherEntitiesInARolledBackTransactionAreNeverStored() throws Exception {
        sender(builder(), "txn-sched-in").sendMessages(List.of(new ServiceBusMessage("in-1"),
                new ServiceBusMessage("in-2")));
        ServiceBusClientBuilder cross = builder().enableCrossEntityTransactions();
        ServiceBusReceiverClient in = receiver(cross, "txn-sched-in");
        List<ServiceBusReceivedMessage> got = receive(in, 2);
        assertThat(got).hasSize(2);
        List<ServiceBusSenderClient> outs = new ArrayList<>();
        for (String q : SCHED) {
            outs.add(sender(cross, q));
        }
        OffsetDateTime later = OffsetDateTime.now(ZoneOffset.UTC).plusHours(1);

        ServiceBusTransactionContext lost = in.createTransaction();
        in.complete(got.get(0), new CompleteOptions().setTransactionContext(lost));
        for (ServiceBusSenderClient out : outs) {
            out.scheduleMessage(new ServiceBusMessage("lost"), later, lost);
        }
        unlockOverRest("txn-sched-in", got.get(0));
        assertThatThrownBy(() -> in.commitTransaction(lost)).hasMessageContaining("amqp:transaction:rollback");
        for (String q : SCHED) {
            assertThat(peek(receiver(builder(), q), 10, 0)).as("nothing scheduled in %s", q).isEmpty();
        }

        ServiceBusTransactionContext kept = in.createTransaction();
        in.complete(got.get(1), new CompleteOptions().setTransactionContext(kept));
        List<Long> numbers = new ArrayList<>();
        for (ServiceBusSenderClient out : outs) {
            numbers.add(out.scheduleMessage(new ServiceBusMessage("kept"), later, kept));
        }
        in.commitTransaction(kept);
        for (int i = 0; i < SCHED.size(); i++) {
            ServiceBusReceiverClient reader = receiver(builder(), SCHED.get(i));
            List<ServiceBusReceivedMessage> scheduled = peekUntilAny(reader);
            assertThat(scheduled).as(SCHED.get(i)).hasSize(1);
            assertThat(scheduled.get(0).getState()).isEqualTo(ServiceBusMessageState.SCHEDULED);
            assertThat(scheduled.get(0).getSequenceNumber()).as("the number the schedule answered")
                    .isEqualTo(numbers.get(i));
            outs.get(i).cancelScheduledMessage(numbers.get(i));
            assertThat(peek(reader, 10, 0)).isEmpty();
        }
    }

    /** Peeks until something is there (a message parked at commit is forwarded right after it), for 10 s at most. */
    private static List<ServiceBusReceivedMessage> peekUntilAny(ServiceBusReceiverClient reader) {
        return await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> peek(reader, 10, 0), got -> !got.isEmpty());
    }
}
