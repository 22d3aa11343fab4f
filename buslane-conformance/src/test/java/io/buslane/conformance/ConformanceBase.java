package io.buslane.conformance;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the conformance test classes share: one packaged broker per test class (started by the subclass's
 * {@code @BeforeAll} with {@link #startBroker}, closed here after all its tests), the SDK clients a test
 * {@linkplain #track tracks} (closed after each test, newest first), and SDK client helpers built from the broker's
 * connection string.
 *
 * <p>The broker is a static field shared by every subclass: the test classes of this module run one after the other
 * in one JVM (no parallel execution), each starting its own broker and closing it when done.
 */
abstract class ConformanceBase {

    /** The emulator's well-known key. */
    static final String KEY_NAME = "RootManageSharedAccessKey";
    static final String KEY = "SAS_KEY_VALUE";

    /** How long {@link #receive(ServiceBusReceiverClient, int)} waits by default. */
    static final Duration SHORT = Duration.ofSeconds(5);

    /** The broker of the test class that is running. */
    static BrokerProcess broker;

    private final List<AutoCloseable> clients = new ArrayList<>();

    /**
     * Starts the broker for the test class; {@code configJson} null means the default configuration. It keeps its
     * journals in the {@linkplain ConformanceStorage storage} the run chose (files, or a fresh PostgreSQL database).
     */
    static void startBroker(String configJson) throws Exception {
        broker = BrokerProcess.startWithArgs(configJson, ConformanceStorage.brokerArgs());
    }

    @AfterAll
    static void stopBroker() throws Exception {
        if (broker != null) {
            try {
                broker.close();
            } finally {
                broker = null;
            }
        }
    }

    @AfterEach
    void closeClients() {
        Collections.reverse(clients);
        for (AutoCloseable c : clients) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
        clients.clear();
    }

    /** Closes {@code client} after the test. */
    <T extends AutoCloseable> T track(T client) {
        clients.add(client);
        return client;
    }

    // ------------------------------------------------------------------------------------------------ SAS tokens

    /** A SAS token for {@code resource} with the emulator's well-known key, valid for an hour. */
    static String sasToken(String resource) throws Exception {
        return sasToken(resource, KEY_NAME, KEY, 3600);
    }

    /** A SAS token as the SDKs build it: HMAC-SHA256 over the URL-encoded resource, newline, expiry. */
    static String sasToken(String audience, String keyName, String key, long validitySeconds) throws Exception {
        String sr = URLEncoder.encode(audience, StandardCharsets.UTF_8);
        long se = System.currentTimeMillis() / 1000 + validitySeconds;
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        String sig = Base64.getEncoder().encodeToString(
                mac.doFinal((sr + "\n" + se).getBytes(StandardCharsets.UTF_8)));
        return "SharedAccessSignature sr=" + sr + "&sig=" + URLEncoder.encode(sig, StandardCharsets.UTF_8)
                + "&se=" + se + "&skn=" + keyName;
    }

    // ------------------------------------------------------------------------------------------------ builders

    /** A builder for the broker's connection string with the SDK's default retry options. */
    static ServiceBusClientBuilder clientBuilder() {
        return new ServiceBusClientBuilder().connectionString(broker.connectionString());
    }

    /** A builder for the broker's connection string with the given retry options. */
    static ServiceBusClientBuilder builder(AmqpRetryOptions retry) {
        return clientBuilder().retryOptions(retry);
    }

    /**
     * The builder the {@link #sender(String)} and {@link #receiver(String)} helpers use (a new one, hence a new
     * connection, per call): 10-second tries, one quick retry. Subclasses override it for other retry options.
     */
    ServiceBusClientBuilder builder() {
        return builder(new AmqpRetryOptions().setTryTimeout(Duration.ofSeconds(10)).setMaxRetries(1)
                .setDelay(Duration.ofMillis(200)).setMaxDelay(Duration.ofSeconds(1)));
    }

    /** A tracked sender to the queue or topic {@code entity}. */
    ServiceBusSenderClient sender(String entity) {
        return sender(builder(), entity);
    }

    ServiceBusSenderClient sender(ServiceBusClientBuilder b, String entity) {
        return track(b.sender().queueName(entity).buildClient());
    }

    /** A tracked peek-lock receiver of {@code queue} that does not renew locks in the background. */
    ServiceBusReceiverClient receiver(String queue) {
        return receiver(builder(), queue);
    }

    ServiceBusReceiverClient receiver(ServiceBusClientBuilder b, String queue) {
        return track(b.receiver().queueName(queue).maxAutoLockRenewDuration(Duration.ZERO).buildClient());
    }

    // ------------------------------------------------------------------------------------------------ receiving

    static List<ServiceBusReceivedMessage> receive(ServiceBusReceiverClient r, int n) {
        return receive(r, n, SHORT);
    }

    /** Receives until {@code n} messages arrived or {@code timeout} elapsed. */
    static List<ServiceBusReceivedMessage> receive(ServiceBusReceiverClient r, int n, Duration timeout) {
        List<ServiceBusReceivedMessage> all = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (all.size() < n) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            r.receiveMessages(n - all.size(), Duration.ofNanos(Math.max(left, 1_000_000L))).forEach(all::add);
        }
        return all;
    }

    static ServiceBusReceivedMessage receiveOne(ServiceBusReceiverClient r) {
        return receiveOne(r, SHORT);
    }

    static ServiceBusReceivedMessage receiveOne(ServiceBusReceiverClient r, Duration timeout) {
        List<ServiceBusReceivedMessage> got = receive(r, 1, timeout);
        assertThat(got).as("one message within %s", timeout).hasSize(1);
        return got.get(0);
    }

    static List<ServiceBusReceivedMessage> peek(ServiceBusReceiverClient r, int n, long from) {
        return StreamSupport.stream(r.peekMessages(n, from).spliterator(), false).collect(Collectors.toList());
    }

    static List<String> bodies(List<ServiceBusReceivedMessage> ms) {
        return ms.stream().map(m -> m.getBody().toString()).collect(Collectors.toList());
    }
}
