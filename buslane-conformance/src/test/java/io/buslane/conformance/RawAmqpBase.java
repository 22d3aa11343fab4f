package io.buslane.conformance;

import org.apache.qpid.protonj2.client.Client;
import org.apache.qpid.protonj2.client.Connection;
import org.apache.qpid.protonj2.client.ConnectionOptions;
import org.apache.qpid.protonj2.client.Delivery;
import org.apache.qpid.protonj2.client.Message;
import org.apache.qpid.protonj2.client.Receiver;
import org.apache.qpid.protonj2.client.ReceiverOptions;
import org.apache.qpid.protonj2.client.Sender;
import org.apache.qpid.protonj2.client.Session;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the raw AMQP conformance tests share on top of {@link ConformanceBase}: one protonj2 {@link Client} per test
 * class (closed before the broker) and connections to the broker with SASL PLAIN or ANONYMOUS.
 */
abstract class RawAmqpBase extends ConformanceBase {

    static Client client;

    @BeforeAll
    static void createClient() {
        client = Client.create();
    }

    @AfterAll
    static void closeClient() throws Exception {
        if (client != null) {
            try {
                client.close();
            } finally {
                client = null;
            }
        }
    }

    static ConnectionOptions plainOptions(String user, String password) {
        ConnectionOptions options = new ConnectionOptions();
        options.user(user).password(password);
        options.saslOptions().addAllowedMechanism("PLAIN");
        return options;
    }

    /** A SASL PLAIN connection; with the root key's name and value it waits until the connection is open. */
    static Connection connectPlain(String user, String password) throws Exception {
        Connection c = client.connect("127.0.0.1", broker.amqpPort(), plainOptions(user, password));
        if (KEY.equals(password) && KEY_NAME.equals(user)) {
            c.openFuture().get(10, TimeUnit.SECONDS);
        }
        return c;
    }

    /** An open SASL PLAIN connection with the root key. */
    static Connection connect() throws Exception {
        return connectPlain(KEY_NAME, KEY);
    }

    static Connection connectAnonymous() throws Exception {
        ConnectionOptions options = new ConnectionOptions();
        options.saslOptions().addAllowedMechanism("ANONYMOUS");
        Connection c = client.connect("127.0.0.1", broker.amqpPort(), options);
        c.openFuture().get(10, TimeUnit.SECONDS);
        return c;
    }

    static org.apache.qpid.proton.message.Message decode(byte[] bytes) {
        return decode(bytes, 0, bytes.length);
    }

    static org.apache.qpid.proton.message.Message decode(byte[] bytes, int offset, int length) {
        org.apache.qpid.proton.message.Message m = org.apache.qpid.proton.message.Message.Factory.create();
        m.decode(bytes, offset, length);
        return m;
    }

    /**
     * A request/response link pair on a node ({@code $cbs} or {@code <entity>/$management}): requests go out on a
     * sender to the node, responses come back on a receiver from the node, whose link name is the request's
     * {@code reply-to} (the broker routes replies by reply-to = receiver target address, else = receiver link
     * name; protonj2 cannot set a receiver's target address, so the name is used). On a session, requests sent
     * while it has a transaction carry it.
     */
    static final class RequestResponse {
        private final Sender sender;
        private final Receiver receiver;
        final String replyTo;
        private long nextId = 1;

        RequestResponse(Connection c, String node) throws Exception {
            this(c.defaultSession(), node);
        }

        RequestResponse(Session session, String node) throws Exception {
            replyTo = node.replace("$", "") + "-reply-" + UUID.randomUUID();
            receiver = session.openReceiver(node, new ReceiverOptions().linkName(replyTo).creditWindow(10));
            receiver.openFuture().get(10, TimeUnit.SECONDS);
            sender = session.openSender(node);
            sender.openFuture().get(10, TimeUnit.SECONDS);
        }

        org.apache.qpid.proton.message.Message request(Message<?> request) throws Exception {
            return response(send(request));
        }

        /** Sends a request and returns its id once the broker settled its transfer (it holds the request). */
        String send(Message<?> request) throws Exception {
            String id = "req-" + nextId++;
            request.messageId(id);
            request.replyTo(replyTo);
            sender.send(request).awaitSettlement(10, TimeUnit.SECONDS);
            return id;
        }

        /** The response to the request {@code id}, the next one to arrive. */
        org.apache.qpid.proton.message.Message response(String id) throws Exception {
            Delivery d = receiver.receive(10, TimeUnit.SECONDS);
            assertThat(d).as("a response to %s\n%s", id, broker.log()).isNotNull();
            org.apache.qpid.proton.message.Message response = decode(d.rawInputStream().readAllBytes());
            assertThat(response.getCorrelationId()).isEqualTo(id);
            return response;
        }
    }
}
