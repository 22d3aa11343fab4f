package io.buslane.conformance;

import org.apache.qpid.protonj2.client.Client;
import org.apache.qpid.protonj2.client.Connection;
import org.apache.qpid.protonj2.client.ConnectionOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.util.concurrent.TimeUnit;

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
}
