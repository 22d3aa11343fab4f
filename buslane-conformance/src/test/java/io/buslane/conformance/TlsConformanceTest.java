package io.buslane.conformance;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.core.amqp.AmqpTransportType;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import io.buslane.testsupport.BrokerProcess;
import io.buslane.testsupport.TestCa;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The Java SDK, unmodified, over TLS from a normal connection string ({@code Endpoint=sb://localhost/} without the
 * emulator flag): AMQPS on 5671, AMQP over WebSockets and the administration client on 443, the broker's certificate
 * signed by a CA made in the test. The administration client always uses 443 and the Python SDK 7.8.2 always 5671
 * (the Java SDK's AMQP connection would take a port from the Endpoint), so the broker binds the service's ports: the
 * test needs to be root (CI is); elsewhere it is skipped, and in CI ({@code CI=true} or
 * {@code BUSLANE_REQUIRE_TLS=1}) it fails.
 *
 * <p>Also: a certificate for another host name or an expired one fails the client's handshake while the broker
 * keeps serving, and a certificate replaced on disk is used by the next connection.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class TlsConformanceTest extends ConformanceBase {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [
                      { "Name": "tls-queue", "Properties": { "LockDuration": "PT5S" } },
                      { "Name": "tls-host", "Properties": { "LockDuration": "PT5S" } },
                      { "Name": "tls-reload", "Properties": { "LockDuration": "PT5S" } },
                      { "Name": "tls-sessions", "Properties": { "RequiresSession": true, "LockDuration": "PT5S" } },
                      { "Name": "js-queue" },
                      { "Name": "js-sessions", "Properties": { "RequiresSession": true } },
                      { "Name": "js-schedule" },
                      { "Name": "js-peek" },
                      { "Name": "js-deadletter" },
                      { "Name": "js-defer" },
                      { "Name": "js-ttl" },
                      { "Name": "js-footer" },
                      { "Name": "js-lock", "Properties": { "LockDuration": "PT5S" } },
                      { "Name": "py-queue-amqps" },
                      { "Name": "py-sessions-amqps", "Properties": { "RequiresSession": true } },
                      { "Name": "py-schedule-amqps" },
                      { "Name": "py-peek-amqps" },
                      { "Name": "py-deadletter-amqps" },
                      { "Name": "py-queue-ws" },
                      { "Name": "py-sessions-ws", "Properties": { "RequiresSession": true } },
                      { "Name": "py-schedule-ws" },
                      { "Name": "py-peek-ws" },
                      { "Name": "py-deadletter-ws" },
                      %s,
                      %s,
                      %s
                    ],
                    "Topics": [ %s, %s, %s ]
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """.formatted(PythonSdkConformanceTest.queues("pyamqp-tls"), PythonSdkConformanceTest.queues("pyamqp-ws"),
            GoSdkConformanceTest.queues("tls"), PythonSdkConformanceTest.topics("pyamqp-tls"),
            PythonSdkConformanceTest.topics("pyamqp-ws"), GoSdkConformanceTest.topics("tls"));
    static final String CONNECTION_STRING = "Endpoint=sb://localhost/;SharedAccessKeyName=" + KEY_NAME
            + ";SharedAccessKey=" + KEY;

    /** The folder of the Python conformance script. */
    static final Path PY_DIR = Path.of(System.getProperty("buslane.conformance.py", "py")).toAbsolutePath();

    private static TestCa ca;
    private static Path certFile;
    private static Path keyFile;
    private static SSLContext previousDefault;

    @BeforeAll
    static void start() throws Exception {
        requireServicePorts();
        ca = TestCa.create();
        Path[] good = ca.issue("server", "localhost", 30);
        Path live = Files.createTempDirectory("buslane-tls-live-");
        certFile = Files.copy(good[0], live.resolve("tls.crt"));
        keyFile = Files.copy(good[1], live.resolve("tls.key"));
        // the SDK's AMQP transport trusts the JVM's default SSL context, its HTTP client the default trust store
        previousDefault = SSLContext.getDefault();
        SSLContext.setDefault(ca.sslContext());
        System.setProperty("javax.net.ssl.trustStore", ca.trustStore().toString());
        System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
        broker = BrokerProcess.builder().config(CONFIG).args("--amqps-port", "5671", "--https-port", "443",
                "--tls-cert", certFile.toString(), "--tls-key", keyFile.toString()).start();
    }

    @AfterAll
    static void restoreTrust() {
        if (previousDefault != null) {
            SSLContext.setDefault(previousDefault);
        }
        System.clearProperty("javax.net.ssl.trustStore");
        System.clearProperty("javax.net.ssl.trustStorePassword");
        System.clearProperty("javax.net.ssl.trustStoreType");
    }

    /** Skips (outside CI) or fails (CI=true) unless 5671 and 443 can be bound here. */
    private static void requireServicePorts() {
        for (int port : new int[] {5671, 443}) {
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
                s.getLocalPort();
            } catch (IOException e) {
                skipOutsideCi("The TLS conformance test binds the service's ports 5671 and 443 (the administration "
                        + "clients and the Python SDK have no other); port " + port + " cannot be bound here: " + e);
            }
        }
    }

    /** Skips the test, or fails it in CI ({@code CI=true} or {@code BUSLANE_REQUIRE_TLS=1}, as .ci/run sets). */
    private static void skipOutsideCi(String why) {
        if ("true".equals(System.getenv("CI")) || "1".equals(System.getenv("BUSLANE_REQUIRE_TLS"))) {
            throw new IllegalStateException(why + " (CI=true or BUSLANE_REQUIRE_TLS=1 makes this a failure)");
        }
        Assumptions.abort(why);
    }

    private static ServiceBusClientBuilder tls(AmqpTransportType transport, String connectionString) {
        return new ServiceBusClientBuilder().connectionString(connectionString).transportType(transport)
                .retryOptions(new AmqpRetryOptions().setTryTimeout(Duration.ofSeconds(10)).setMaxRetries(0));
    }

    /** A sender expected to fail its handshake: a short try, no retry. */
    private ServiceBusSenderClient refusedSender(String connectionString, String queue) {
        return sender(new ServiceBusClientBuilder().connectionString(connectionString)
                .retryOptions(new AmqpRetryOptions().setTryTimeout(Duration.ofSeconds(3)).setMaxRetries(0)), queue);
    }

    @ParameterizedTest
    @EnumSource(value = AmqpTransportType.class, names = {"AMQP", "AMQP_WEB_SOCKETS"})
    void sendScheduleAndSessionReceiveOverTls(AmqpTransportType transport) {
        ServiceBusClientBuilder b = tls(transport, CONNECTION_STRING);
        ServiceBusSenderClient sender = sender(b, "tls-queue");
        String tag = transport.name();
        sender.sendMessage(new ServiceBusMessage("hello-" + tag));
        long seq = sender.scheduleMessage(new ServiceBusMessage("scheduled-" + tag),
                OffsetDateTime.now().plusMinutes(10));
        sender.cancelScheduledMessage(seq);
        ServiceBusReceiverClient receiver = receiver(tls(transport, CONNECTION_STRING), "tls-queue");
        ServiceBusReceivedMessage m = receiveOne(receiver);
        assertThat(m.getBody().toString()).isEqualTo("hello-" + tag);
        receiver.complete(m);
        assertThat(receive(receiver, 1, Duration.ofSeconds(1))).as("the cancelled scheduled message").isEmpty();

        ServiceBusSenderClient sessions = sender(b, "tls-sessions");
        sessions.sendMessage(new ServiceBusMessage("in-session-" + tag).setSessionId("s-" + tag));
        var sessionClient = track(tls(transport, CONNECTION_STRING).sessionReceiver().queueName("tls-sessions")
                .disableAutoComplete().buildClient());
        ServiceBusReceiverClient session = track(sessionClient.acceptSession("s-" + tag));
        ServiceBusReceivedMessage s = receiveOne(session);
        assertThat(s.getBody().toString()).isEqualTo("in-session-" + tag);
        assertThat(s.getSessionId()).isEqualTo("s-" + tag);
        session.complete(s);
    }

    @Test
    void administrationClientWorksFromThePlainConnectionString() {
        ServiceBusAdministrationClient admin = new ServiceBusAdministrationClientBuilder()
                .connectionString(CONNECTION_STRING).buildClient();
        admin.createQueue("tls-admin", new CreateQueueOptions().setMaxDeliveryCount(3));
        assertThat(admin.getQueue("tls-admin").getMaxDeliveryCount()).isEqualTo(3);
        sender(tls(AmqpTransportType.AMQP, CONNECTION_STRING), "tls-admin")
                .sendMessage(new ServiceBusMessage("counted"));
        assertThat(admin.getQueueRuntimeProperties("tls-admin").getActiveMessageCount()).isEqualTo(1);
        admin.deleteQueue("tls-admin");
        assertThat(admin.getQueueExists("tls-admin")).isFalse();
    }

    @Test
    void aCertificateForAnotherHostNameFailsTheClientAndTheBrokerServesOthers() {
        // 127.0.0.1 reaches the same listener, but the certificate names localhost only
        String wrongHost = CONNECTION_STRING.replace("sb://localhost/", "sb://127.0.0.1/");
        ServiceBusSenderClient wrong = refusedSender(wrongHost, "tls-host");
        assertThatThrownBy(() -> wrong.sendMessage(new ServiceBusMessage("never")))
                .isInstanceOf(RuntimeException.class);
        assertThatThrownBy(() -> handshake("127.0.0.1", 5671)).isInstanceOf(IOException.class);
        sender(tls(AmqpTransportType.AMQP, CONNECTION_STRING), "tls-host").sendMessage(new ServiceBusMessage("ok"));
        ServiceBusReceiverClient r = receiver(tls(AmqpTransportType.AMQP, CONNECTION_STRING), "tls-host");
        ServiceBusReceivedMessage m = receiveOne(r);
        assertThat(m.getBody().toString()).isEqualTo("ok");
        r.complete(m);
    }

    @Test
    void aCertificateReplacedOnDiskIsUsedByTheNextConnection() throws Exception {
        BigInteger before = handshake("localhost", 5671).getSerialNumber();
        Path[] expired = ca.issue("expired", "localhost", -1);
        replace(expired);
        // a renewal that cannot work (expired) is not used: the broker keeps the certificate it has, so the next
        // connections still succeed on both TLS ports and in the SDK (docs/tls.md; before, every handshake failed)
        Thread.sleep(2_500); // the broker looks at the files every second: give it two looks
        assertThat(handshake("localhost", 5671).getSerialNumber()).isEqualTo(before);
        assertThat(handshake("localhost", 443).getSerialNumber()).isEqualTo(before);
        sender(tls(AmqpTransportType.AMQP, CONNECTION_STRING), "tls-reload")
                .sendMessage(new ServiceBusMessage("kept"));
        // the plain port serves on
        sender("tls-reload").sendMessage(new ServiceBusMessage("plain"));

        Path[] renewed = ca.issue("renewed", "localhost", 30);
        replace(renewed);
        BigInteger renewedSerial = readSerial(renewed[0]);
        await().atMost(Duration.ofSeconds(15)).ignoreExceptions().untilAsserted(() ->
                assertThat(handshake("localhost", 5671).getSerialNumber()).isEqualTo(renewedSerial));
        assertThat(handshake("localhost", 443).getSerialNumber()).isEqualTo(renewedSerial).isNotEqualTo(before);
        ServiceBusReceiverClient r = receiver(tls(AmqpTransportType.AMQP_WEB_SOCKETS, CONNECTION_STRING),
                "tls-reload");
        for (String expected : List.of("kept", "plain")) {
            ServiceBusReceivedMessage m = receiveOne(r);
            assertThat(m.getBody().toString()).isEqualTo(expected);
            r.complete(m);
        }
    }

    /**
     * {@code js/conformance.mjs} (the official JavaScript SDK) from the plain connection string, trusting the test CA
     * through NODE_EXTRA_CA_CERTS: over AMQPS, and over WebSockets with the {@code ws} package.
     */
    @ParameterizedTest
    @ValueSource(strings = {"0", "1"})
    void javaScriptSdkOverTls(String webSockets) throws Exception {
        JsSdkConformanceTest.ensureSdkInstalled();
        JsSdkConformanceTest.Result result = JsSdkConformanceTest.run(List.of("node", "conformance.mjs"),
                JsSdkConformanceTest.JS_DIR, Map.of("BUSLANE_CONNECTION_STRING", CONNECTION_STRING,
                        "NODE_EXTRA_CA_CERTS", ca.caCert().toString(), "BUSLANE_WEBSOCKETS", webSockets), 2);
        System.out.println(result.output());
        assertThat(result.exitCode()).as("node conformance.mjs failed:\n%s\n--- broker log ---\n%s",
                result.output(), broker.log()).isZero();
    }

    /**
     * {@code js/admin.mjs}: the JavaScript SDK's administration client, which always speaks HTTPS, over the HTTPS
     * listener (port 443 of the plain connection string's host): the details its own live tests check (#32).
     */
    @Test
    void javaScriptAdministrationClientOverHttps() throws Exception {
        JsSdkConformanceTest.ensureSdkInstalled();
        JsSdkConformanceTest.Result result = JsSdkConformanceTest.run(List.of("node", "admin.mjs"),
                JsSdkConformanceTest.JS_DIR, Map.of("BUSLANE_CONNECTION_STRING", CONNECTION_STRING,
                        "NODE_EXTRA_CA_CERTS", ca.caCert().toString()), 2);
        System.out.println(result.output());
        assertThat(result.exitCode()).as("node admin.mjs failed:\n%s\n--- broker log ---\n%s",
                result.output(), broker.log()).isZero();
    }

    /**
     * {@code py/tls_conformance.py}: Debian's Python SDK (azure-servicebus 7.8.2 on uamqp, which always speaks TLS)
     * with {@code connection_verify} set to the test CA, over AMQPS and over WebSockets at the same time (each on
     * queues of its own: uamqp takes about 18 s a run). Skipped outside CI when /usr/bin/python3 lacks the packages
     * ({@code apt-get install python3-azure python3-uamqp}).
     */
    @Test
    void pythonSdkOverTls() throws Exception {
        Path python = Path.of("/usr/bin/python3");
        JsSdkConformanceTest.Result probe = Files.isExecutable(python)
                ? JsSdkConformanceTest.run(List.of(python.toString(), "-c", "import azure.servicebus, uamqp"),
                        PY_DIR, Map.of(), 1)
                : new JsSdkConformanceTest.Result(-1, "no /usr/bin/python3");
        if (probe.exitCode() != 0) {
            skipOutsideCi("Debian's python3-azure and python3-uamqp are not installed: " + probe.output());
        }
        List<Map<String, String>> runs = new ArrayList<>();
        for (String webSockets : List.of("0", "1")) {
            runs.add(Map.of("BUSLANE_CONNECTION_STRING", CONNECTION_STRING, "BUSLANE_CA", ca.caCert().toString(),
                    "BUSLANE_WEBSOCKETS", webSockets));
        }
        runAtOnce(List.of(python.toString(), "tls_conformance.py"), runs);
    }

    /**
     * Runs {@code command} in py/ once per environment in {@code runs}, all at the same time (each on entities of
     * its own); each must exit 0.
     */
    private static void runAtOnce(List<String> command, List<Map<String, String>> runs) throws Exception {
        List<CompletableFuture<JsSdkConformanceTest.Result>> started = new ArrayList<>();
        for (Map<String, String> env : runs) {
            started.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return JsSdkConformanceTest.run(command, PY_DIR, env, 2);
                } catch (Exception e) {
                    return new JsSdkConformanceTest.Result(-1, e.toString());
                }
            }));
        }
        for (CompletableFuture<JsSdkConformanceTest.Result> run : started) {
            JsSdkConformanceTest.Result result = run.get(3, TimeUnit.MINUTES);
            System.out.println(result.output());
            assertThat(result.exitCode()).as("%s failed:\n%s\n--- broker log ---\n%s", String.join(" ", command),
                    result.output(), broker.log()).isZero();
        }
    }

    /**
     * {@code py/sdk_conformance.py} with the Python SDK of today (7.15, pyamqp) from the plain connection string:
     * over AMQPS with the administration client (HTTPS on 443), and over AMQP over WebSockets at the same time, each
     * on entities of its own; {@code connection_verify} is the test CA.
     */
    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES) // the first run installs the SDK into py/.venv
    void pythonSdkOfTodayOverTlsWebSocketsAndAdministration() throws Exception {
        Path python = PythonSdkConformanceTest.venvPython();
        List<Map<String, String>> runs = new ArrayList<>();
        for (String tag : List.of("pyamqp-tls", "pyamqp-ws")) {
            runs.add(Map.of("BUSLANE_CONNECTION_STRING", CONNECTION_STRING, "BUSLANE_CA", ca.caCert().toString(),
                    "BUSLANE_TAG", tag, "BUSLANE_WEBSOCKETS", tag.endsWith("ws") ? "1" : "0", "BUSLANE_ADMIN",
                    tag.endsWith("tls") ? "1" : "0"));
        }
        runAtOnce(List.of(python.toString(), "sdk_conformance.py"), runs);
    }

    /**
     * {@code go/main.go} with the Go SDK from the plain connection string: AMQPS to 5671 and the administration
     * client over HTTPS on 443, the test CA trusted through {@code SSL_CERT_FILE}.
     */
    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES) // the first run builds the program
    void goSdkOverTlsWithAdministration() throws Exception {
        Path program = GoSdkConformanceTest.build();
        JsSdkConformanceTest.Result result = JsSdkConformanceTest.run(List.of(program.toString()),
                GoSdkConformanceTest.GO_DIR, Map.of("BUSLANE_CONNECTION_STRING", CONNECTION_STRING, "SSL_CERT_FILE",
                        ca.caCert().toString(), "BUSLANE_TAG", "tls", "BUSLANE_ADMIN", "1"), 3);
        System.out.println(result.output());
        assertThat(result.exitCode()).as("go/main.go failed:\n%s\n--- broker log ---\n%s", result.output(),
                broker.log()).isZero();
        assertThat(result.output()).contains("PASS administration (tls)");
    }

    /** Replaces the broker's certificate and key files, each by an atomic rename. */
    private static void replace(Path[] certAndKey) throws IOException {
        Path tmpKey = Files.copy(certAndKey[1], keyFile.resolveSibling("new.key"),
                StandardCopyOption.REPLACE_EXISTING);
        Path tmpCert = Files.copy(certAndKey[0], certFile.resolveSibling("new.crt"),
                StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmpKey, keyFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.move(tmpCert, certFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static BigInteger readSerial(Path pem) throws Exception {
        try (var in = Files.newInputStream(pem)) {
            return ((X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(in)).getSerialNumber();
        }
    }

    /** A TLS handshake as a client trusting the test CA and checking the host name; the server's certificate. */
    private static X509Certificate handshake(String host, int port) throws Exception {
        try (SSLSocket s = (SSLSocket) ca.sslContext().getSocketFactory().createSocket(host, port)) {
            var params = s.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            s.setSSLParameters(params);
            s.setSoTimeout(5_000);
            s.startHandshake();
            return (X509Certificate) s.getSession().getPeerCertificates()[0];
        }
    }
}
