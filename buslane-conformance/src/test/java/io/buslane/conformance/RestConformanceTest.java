package io.buslane.conformance;

import com.azure.core.util.BinaryData;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Date;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The runtime REST API of the packaged broker against the official Java SDK: messages sent over REST are received
 * by the SDK and vice versa, with user-property headers as application properties and BrokerProperties as system
 * properties.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestConformanceTest extends ConformanceBase {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [
                      { "Name": "rest-to-sdk", "Properties": {} },
                      { "Name": "sdk-to-rest", "Properties": {} },
                      { "Name": "rest-batch", "Properties": {} }
                    ],
                    "Topics": [
                      {
                        "Name": "rest-topic",
                        "Properties": {},
                        "Subscriptions": [ { "Name": "sub", "Properties": {} } ]
                      }
                    ]
                  }
                ],
                "Logging": { "Type": "File" }
              }
            }
            """;

    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        startBroker(CONFIG);
    }

    /** A SAS token for the emulator's well-known key, as the openssl one-liner of docs/usage.md makes it. */
    static String token() throws Exception {
        return sasToken("http://localhost:" + broker.httpPort() + "/");
    }

    static HttpResponse<byte[]> http(String method, String path, Map<String, String> headers, byte[] body)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + broker.httpPort() + path))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Authorization", token());
        headers.forEach(b::header);
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void aRestSendIsReceivedByTheSdkWithItsProperties() throws Exception {
        HttpResponse<byte[]> sent = http("POST", "/rest-to-sdk/messages", Map.of(
                "Content-Type", "application/json",
                "BrokerProperties", "{\"MessageId\":\"rest-1\",\"CorrelationId\":\"corr\",\"Label\":\"subject\","
                        + "\"ReplyTo\":\"replies\",\"To\":\"dest\",\"TimeToLive\":120}",
                "Color", "\"Red\"",
                "Count", "42",
                "Flag", "true",
                "Ratio", "2.5",
                "When", "\"Sun, 06 Nov 1994 08:49:37 GMT\""),
                "{\"hello\":\"sdk\"}".getBytes(StandardCharsets.UTF_8));
        assertThat(sent.statusCode()).isEqualTo(201);

        try (ServiceBusReceiverClient receiver = clientBuilder().receiver().queueName("rest-to-sdk").buildClient()) {
            Iterator<ServiceBusReceivedMessage> it = receiver.receiveMessages(1, Duration.ofSeconds(10)).iterator();
            assertThat(it.hasNext()).isTrue();
            ServiceBusReceivedMessage m = it.next();
            assertThat(m.getBody().toString()).isEqualTo("{\"hello\":\"sdk\"}");
            assertThat(m.getMessageId()).isEqualTo("rest-1");
            assertThat(m.getCorrelationId()).isEqualTo("corr");
            assertThat(m.getSubject()).isEqualTo("subject");
            assertThat(m.getReplyTo()).isEqualTo("replies");
            assertThat(m.getTo()).isEqualTo("dest");
            assertThat(m.getContentType()).isEqualTo("application/json");
            assertThat(m.getTimeToLive()).isEqualTo(Duration.ofSeconds(120));
            assertThat(m.getSequenceNumber()).isEqualTo(1L);
            Map<String, Object> props = m.getApplicationProperties();
            assertThat(props.get("Color")).isEqualTo("Red");
            assertThat(props.get("Count")).isEqualTo(42);
            assertThat(props.get("Flag")).isEqualTo(true);
            assertThat(props.get("Ratio")).isEqualTo(2.5);
            Object when = props.get("When");
            Instant whenInstant = when instanceof Date d ? d.toInstant()
                    : when instanceof OffsetDateTime o ? o.toInstant() : null;
            assertThat(whenInstant).as("a quoted RFC 1123 date is a timestamp: %s", when)
                    .isEqualTo(Instant.parse("1994-11-06T08:49:37Z"));
            receiver.complete(m);
        }
    }

    @Test
    void anSdkSendIsReceivedOverRestAndSettledByItsLockUri() throws Exception {
        ServiceBusMessage out = new ServiceBusMessage(BinaryData.fromString("from the sdk"))
                .setMessageId("sdk-1").setCorrelationId("c").setSubject("label").setReplyTo("r").setTo("t")
                .setContentType("text/plain").setTimeToLive(Duration.ofMinutes(5));
        out.getApplicationProperties().put("Color", "Blue");
        out.getApplicationProperties().put("Count", 7);
        out.getApplicationProperties().put("Big", 12345678901L);
        out.getApplicationProperties().put("Flag", false);
        try (ServiceBusSenderClient sender = clientBuilder().sender().queueName("sdk-to-rest").buildClient()) {
            sender.sendMessage(out);
        }
        HttpResponse<byte[]> got = http("POST", "/sdk-to-rest/messages/head?timeout=10", Map.of(), null);
        assertThat(got.statusCode()).isEqualTo(201);
        assertThat(new String(got.body(), StandardCharsets.UTF_8)).isEqualTo("from the sdk");
        assertThat(got.headers().firstValue("Content-Type")).hasValue("text/plain");
        String bp = got.headers().firstValue("BrokerProperties").orElseThrow();
        assertThat(bp).contains("\"MessageId\":\"sdk-1\"", "\"CorrelationId\":\"c\"", "\"Label\":\"label\"",
                "\"ReplyTo\":\"r\"", "\"To\":\"t\"", "\"TimeToLive\":300,", "\"DeliveryCount\":1",
                "\"SequenceNumber\":1", "\"State\":\"Active\"", "\"LockToken\":\"");
        assertThat(got.headers().firstValue("Color")).hasValue("\"Blue\"");
        assertThat(got.headers().firstValue("Count")).hasValue("7");
        assertThat(got.headers().firstValue("Big")).hasValue("12345678901");
        assertThat(got.headers().firstValue("Flag")).hasValue("false");
        String location = got.headers().firstValue("Location").orElseThrow();
        assertThat(location).startsWith("http://localhost:" + broker.httpPort() + "/sdk-to-rest/messages/sdk-1/");

        // renew, unlock (the SDK then sees the second delivery), complete from the SDK
        String lockPath = URI.create(location).getRawPath();
        assertThat(http("POST", lockPath, Map.of(), null).statusCode()).isEqualTo(200);
        assertThat(http("PUT", lockPath, Map.of(), null).statusCode()).isEqualTo(200);
        try (ServiceBusReceiverClient receiver = clientBuilder().receiver().queueName("sdk-to-rest").buildClient()) {
            ServiceBusReceivedMessage m = receiver.receiveMessages(1, Duration.ofSeconds(10)).iterator().next();
            assertThat(m.getMessageId()).isEqualTo("sdk-1");
            assertThat(m.getDeliveryCount()).as("unlocked once over REST").isEqualTo(1);
            receiver.complete(m);
        }
        assertThat(http("DELETE", lockPath, Map.of(), null).statusCode()).as("the REST lock is gone")
                .isEqualTo(404);
        assertThat(http("DELETE", "/sdk-to-rest/messages/head?timeout=0", Map.of(), null).statusCode())
                .isEqualTo(204);
    }

    @Test
    void aRestBatchToATopicReachesTheSubscriptionInOrder() throws Exception {
        String batch = "[{\"Body\":\"one\",\"BrokerProperties\":{\"Label\":\"a\"},\"UserProperties\":{\"N\":1}},"
                + "{\"Body\":\"two\",\"UserProperties\":{\"N\":2}}]";
        assertThat(http("POST", "/rest-topic/messages",
                Map.of("Content-Type", "application/vnd.microsoft.servicebus.json"),
                batch.getBytes(StandardCharsets.UTF_8)).statusCode()).isEqualTo(201);
        try (ServiceBusReceiverClient receiver = clientBuilder().receiver().topicName("rest-topic")
                .subscriptionName("sub").receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            Iterator<ServiceBusReceivedMessage> it = receiver.receiveMessages(2, Duration.ofSeconds(10)).iterator();
            ServiceBusReceivedMessage first = it.next();
            ServiceBusReceivedMessage second = it.hasNext() ? it.next()
                    : receiver.receiveMessages(1, Duration.ofSeconds(10)).iterator().next();
            assertThat(first.getBody().toString()).isEqualTo("one");
            assertThat(first.getSubject()).isEqualTo("a");
            assertThat(first.getApplicationProperties().get("N")).isEqualTo(1);
            assertThat(second.getBody().toString()).isEqualTo("two");
            assertThat(second.getApplicationProperties().get("N")).isEqualTo(2);
        }
    }

    @Test
    void restErrorsUseTheDocumentedStatuses() throws Exception {
        assertThat(http("POST", "/missing/messages", Map.of(), "x".getBytes()).statusCode()).isEqualTo(410);
        HttpResponse<byte[]> unauthorized = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://localhost:" + broker.httpPort() + "/rest-batch/messages"))
                .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(unauthorized.statusCode()).isEqualTo(401);
    }
}
