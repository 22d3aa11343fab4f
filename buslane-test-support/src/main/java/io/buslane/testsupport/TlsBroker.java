package io.buslane.testsupport;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The packaged broker serving AMQPS on the service's port 5671 with a certificate for {@code localhost} signed by a
 * {@link TestCa} that this JVM trusts while it runs: the JVM's default SSL context and the
 * {@code javax.net.ssl.trustStore} properties point at the CA (the Java SDK's AMQP transport takes the first, HTTP
 * clients and qpid-jms the second), both restored on {@link #close()}. Clients connect from the plain connection
 * string {@link #CONNECTION_STRING} ({@code Endpoint=sb://localhost/}, no emulator flag), as against the service.
 *
 * <p>Binding 5671 needs root: {@link #whyUnavailable()} says whether it can be bound here; the tests skip on it
 * outside CI and fail in CI.
 */
public final class TlsBroker implements AutoCloseable {

    /** The service's AMQPS port, the one a plain connection string implies. */
    public static final int AMQPS_PORT = 5671;
    /** A normal connection string for the broker: the emulator's well-known key, no emulator flag. */
    public static final String CONNECTION_STRING = "Endpoint=sb://localhost/;SharedAccessKeyName="
            + "RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE";

    private static final String[] TRUST_PROPERTIES = {
        "javax.net.ssl.trustStore", "javax.net.ssl.trustStorePassword", "javax.net.ssl.trustStoreType"};

    private final TestCa ca;
    private final SSLContext previousDefault;
    private final String[] previousProperties;
    private BrokerProcess broker;

    private TlsBroker(TestCa ca, SSLContext previousDefault, String[] previousProperties) {
        this.ca = ca;
        this.previousDefault = previousDefault;
        this.previousProperties = previousProperties;
    }

    /** Null when port 5671 can be bound on loopback here, else why not. */
    public static String whyUnavailable() {
        try (ServerSocket s = new ServerSocket(AMQPS_PORT, 1, InetAddress.getByName("127.0.0.1"))) {
            s.getLocalPort();
            return null;
        } catch (IOException e) {
            return "The framework tests connect from a plain connection string, so to AMQPS on the service's port "
                    + AMQPS_PORT + ", which cannot be bound here (binding it needs root): " + e;
        }
    }

    /**
     * Makes a CA and a certificate for {@code localhost}, trusts the CA JVM-wide, and starts the broker with the
     * given Config.json (null: the starter topology) and AMQPS on 5671.
     */
    public static TlsBroker start(String configJson) throws Exception {
        TestCa ca = TestCa.create();
        Path[] cert = ca.issue("server", "localhost", 30);
        String[] previous = new String[TRUST_PROPERTIES.length];
        for (int i = 0; i < previous.length; i++) {
            previous[i] = System.getProperty(TRUST_PROPERTIES[i]);
        }
        TlsBroker tls = new TlsBroker(ca, SSLContext.getDefault(), previous);
        SSLContext.setDefault(ca.sslContext());
        System.setProperty("javax.net.ssl.trustStore", ca.trustStore().toString());
        System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
        try {
            Path live = Files.createTempDirectory("buslane-tls-live-");
            tls.broker = BrokerProcess.builder().config(configJson).args("--amqps-port", Integer.toString(AMQPS_PORT),
                    "--tls-cert", Files.copy(cert[0], live.resolve("tls.crt")).toString(),
                    "--tls-key", Files.copy(cert[1], live.resolve("tls.key")).toString()).start();
        } catch (Exception | Error e) {
            tls.close();
            throw e;
        }
        return tls;
    }

    /** The broker process (its log, its plain AMQP port). */
    public BrokerProcess broker() {
        return broker;
    }

    /** The CA the broker's certificate is signed by. */
    public TestCa ca() {
        return ca;
    }

    /** Stops the broker and restores the JVM's trust settings. */
    @Override
    public void close() throws InterruptedException {
        try {
            if (broker != null) {
                broker.close();
            }
        } finally {
            SSLContext.setDefault(previousDefault);
            for (int i = 0; i < TRUST_PROPERTIES.length; i++) {
                if (previousProperties[i] == null) {
                    System.clearProperty(TRUST_PROPERTIES[i]);
                } else {
                    System.setProperty(TRUST_PROPERTIES[i], previousProperties[i]);
                }
            }
        }
    }
}
