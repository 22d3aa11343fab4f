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
                      { "Name": "raw-txn-close" }
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
}
