package io.buslane.conformance;

import org.apache.qpid.protonj2.client.Connection;
import org.apache.qpid.protonj2.client.Delivery;
import org.apache.qpid.protonj2.client.DeliveryState;
import org.apache.qpid.protonj2.client.Message;
import org.apache.qpid.protonj2.client.Receiver;
import org.apache.qpid.protonj2.client.ReceiverOptions;
import org.apache.qpid.protonj2.client.Sender;
import org.apache.qpid.protonj2.client.SenderOptions;
import org.apache.qpid.protonj2.client.Session;
import org.apache.qpid.protonj2.client.Tracker;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactions and send-via on the wire, with the Qpid protonj2 client (its transactions use a coordinator link on
 * the session, like the SDKs' cross-entity mode): the send-via link property, {@code transactional-state} outcomes,
 * the receive-settle-forward pattern through a via entity, and rollback when the connection goes away.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RawTransactionsConformanceTest extends RawAmqpBase {

    private static final String TRANSFER_DESTINATION = "com.microsoft:transfer-destination-address";

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [
                      { "Name": "raw-via-in" },
                      { "Name": "raw-via-out" },
                      { "Name": "raw-txn-in" },
                      { "Name": "raw-txn-out" },
                      { "Name": "raw-txn-close" },
                      { "Name": "raw-txn-cancel" }
                    ],
                    "Topics": []
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    @BeforeAll
    static void start() throws Exception {
        startBroker(CONFIG);
    }

    @Test
    void aSendViaLinkEchoesItsDestinationAndDeliversThere() throws Exception {
        try (Connection c = connect()) {
            Sender via = c.openSender("raw-via-in", new SenderOptions().properties(Map.of(TRANSFER_DESTINATION,
                    "raw-via-out")));
            via.openFuture().get(10, TimeUnit.SECONDS);
            assertThat(via.properties()).containsEntry(TRANSFER_DESTINATION, "raw-via-out");
            via.send(Message.create("through")).awaitAccepted(10, TimeUnit.SECONDS);

            Delivery d = c.openReceiver("raw-via-out").receive(10, TimeUnit.SECONDS);
            assertThat(d).as("delivered to the destination\n%s", broker.logTail(4000)).isNotNull();
            assertThat(d.message().body()).isEqualTo("through");
            d.accept();
            assertThat(c.openReceiver("raw-via-in").receive(1, TimeUnit.SECONDS)).as("nothing on the via entity")
                    .isNull();
        }
    }

    @Test
    void receiveSettleAndSendViaCommitTogether() throws Exception {
        try (Connection c = connect()) {
            c.openSender("raw-txn-in").send(Message.create("input")).awaitAccepted(10, TimeUnit.SECONDS);

            Session session = c.openSession();
            Receiver in = session.openReceiver("raw-txn-in", new ReceiverOptions().autoAccept(false));
            Delivery input = in.receive(10, TimeUnit.SECONDS);
            assertThat(input).isNotNull();
            Sender out = session.openSender("raw-txn-in", new SenderOptions().properties(Map.of(
                    TRANSFER_DESTINATION, "raw-txn-out")));

            session.beginTransaction();
            input.accept();
            Tracker sent = out.send(Message.create("output"));
            sent.awaitSettlement(10, TimeUnit.SECONDS);
            assertThat(sent.remoteState().getType()).isEqualTo(DeliveryState.Type.TRANSACTIONAL);

            try (Connection observer = connect()) {
                Receiver outReader = observer.openReceiver("raw-txn-out");
                assertThat(outReader.receive(1, TimeUnit.SECONDS)).as("not visible before the commit").isNull();

                session.commitTransaction();
                Delivery output = outReader.receive(10, TimeUnit.SECONDS);
                assertThat(output).as("visible after the commit\n%s", broker.logTail(4000)).isNotNull();
                assertThat(output.message().body()).isEqualTo("output");
                output.accept();
                assertThat(observer.openReceiver("raw-txn-in").receive(1, TimeUnit.SECONDS))
                        .as("the input was completed by the commit").isNull();
            }
        }
    }

    @Test
    void closingTheConnectionRollsBackItsOpenTransaction() throws Exception {
        try (Connection c = connect()) {
            Session session = c.openSession();
            Sender sender = session.openSender("raw-txn-close");
            session.beginTransaction();
            Tracker t = sender.send(Message.create("never"));
            t.awaitSettlement(10, TimeUnit.SECONDS);
            assertThat(t.remoteState().getType()).isEqualTo(DeliveryState.Type.TRANSACTIONAL);
        }
        try (Connection c = connect()) {
            c.openSender("raw-txn-close").send(Message.create("after")).awaitAccepted(10, TimeUnit.SECONDS);
            Receiver r = c.openReceiver("raw-txn-close");
            Delivery d = r.receive(10, TimeUnit.SECONDS);
            assertThat(d).isNotNull();
            assertThat(d.message().body()).isEqualTo("after");
            d.accept();
            assertThat(r.receive(1, TimeUnit.SECONDS)).isNull();
        }
    }

    @Test
    void aCancelOfAScheduledMessageUnderATransactionTakesEffectOnlyAtCommit() throws Exception {
        try (Connection c = connect()) {
            Sender sender = c.openSender("raw-txn-cancel");
            Message<String> scheduled = Message.create("later");
            scheduled.annotation("x-opt-scheduled-enqueue-time", new java.util.Date(System.currentTimeMillis()
                    + 3_600_000));
            sender.send(scheduled).awaitAccepted(10, TimeUnit.SECONDS);
            RequestResponse peeker = new RequestResponse(c, "raw-txn-cancel/$management");
            long seq = scheduledSequenceNumbers(peeker).get(0);

            Session session = c.openSession();
            RequestResponse mgmt = new RequestResponse(session, "raw-txn-cancel/$management");
            session.beginTransaction();
            assertThat(status(mgmt.request(cancel(seq)))).isEqualTo(200);
            session.rollbackTransaction();
            assertThat(scheduledSequenceNumbers(peeker)).as("a rolled-back cancel leaves it").containsExactly(seq);

            session.beginTransaction();
            assertThat(status(mgmt.request(cancel(seq)))).isEqualTo(200);
            assertThat(scheduledSequenceNumbers(peeker)).as("still scheduled before the commit")
                    .containsExactly(seq);
            session.commitTransaction();
            assertThat(scheduledSequenceNumbers(peeker)).as("cancelled by the commit").isEmpty();
        }
    }

    private static Message<Map<String, Object>> cancel(long seq) throws Exception {
        Message<Map<String, Object>> m = Message.create(Map.of("sequence-numbers", new long[] {seq}));
        m.property("operation", "com.microsoft:cancel-scheduled-message");
        return m;
    }

    private static int status(org.apache.qpid.proton.message.Message response) {
        return (Integer) response.getApplicationProperties().getValue().get("statusCode");
    }

    /** The sequence numbers of the queue's scheduled messages, by peek-message. */
    private static java.util.List<Long> scheduledSequenceNumbers(RequestResponse mgmt) throws Exception {
        Map<String, Object> body = new java.util.LinkedHashMap<>();
        body.put("from-sequence-number", 1L);
        body.put("message-count", 10);
        Message<Map<String, Object>> request = Message.create(body);
        request.property("operation", "com.microsoft:peek-message");
        org.apache.qpid.proton.message.Message response = mgmt.request(request);
        java.util.List<Long> seqs = new java.util.ArrayList<>();
        if (status(response) == 204) {
            return seqs;
        }
        Map<?, ?> answer = (Map<?, ?>) ((org.apache.qpid.proton.amqp.messaging.AmqpValue) response.getBody())
                .getValue();
        for (Object entry : (java.util.List<?>) answer.get("messages")) {
            org.apache.qpid.proton.amqp.Binary bytes = (org.apache.qpid.proton.amqp.Binary) ((Map<?, ?>) entry)
                    .get("message");
            org.apache.qpid.proton.message.Message peeked = decode(bytes.getArray(), bytes.getArrayOffset(),
                    bytes.getLength());
            seqs.add((Long) peeked.getMessageAnnotations().getValue()
                    .get(org.apache.qpid.proton.amqp.Symbol.valueOf("x-opt-sequence-number")));
        }
        return seqs;
    }
}
