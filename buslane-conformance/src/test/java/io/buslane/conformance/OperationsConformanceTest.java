package io.buslane.conformance;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.SubQueue;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The operations endpoints of the packaged broker, driven by the official Java SDK: {@code /metrics} counts what
 * the SDK sent, received and settled, and its connections and links; {@code /$admin/purge} and
 * {@code /$admin/reset} (with a SAS token as the management API takes) empty an entity and restore the starter
 * topology; {@code /health} reports the entity counts.
 */
class OperationsConformanceTest extends ConformanceBase {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    @BeforeAll
    static void start() throws Exception {
        startBroker(null);
    }

    @Test
    void metricsPurgeAndResetAgainstTheSdk() throws Exception {
        ServiceBusClientBuilder builder = new ServiceBusClientBuilder().connectionString(broker.connectionString());
        try (ServiceBusSenderClient sender = builder.sender().queueName("queue.1").buildClient();
             ServiceBusReceiverClient receiver = builder.receiver().queueName("queue.1").buildClient()) {
            List<ServiceBusMessage> batch = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                batch.add(new ServiceBusMessage("m" + i));
            }
            sender.sendMessages(batch);
            List<ServiceBusReceivedMessage> got = new ArrayList<>();
            receiver.receiveMessages(2, Duration.ofSeconds(10)).forEach(got::add);
            assertThat(got).hasSize(2);
            receiver.complete(got.get(0));
            receiver.deadLetter(got.get(1));

            String m = metrics();
            assertThat(metric(m, "buslane_messages_sent_total")).isEqualTo(5);
            assertThat(metric(m, "buslane_messages_delivered_total")).isGreaterThanOrEqualTo(2);
            assertThat(metric(m, "buslane_messages_settled_total{outcome=\"complete\"}")).isEqualTo(1);
            assertThat(metric(m, "buslane_messages_settled_total{outcome=\"dead_letter\"}")).isEqualTo(1);
            assertThat(metric(m, "buslane_entity_active_messages{entity=\"queue.1\",type=\"queue\"}")).isEqualTo(3);
            assertThat(metric(m, "buslane_entity_dead_letter_messages{entity=\"queue.1\",type=\"queue\"}"))
                    .isEqualTo(1);
            assertThat(metric(m, "buslane_amqp_connections")).isGreaterThanOrEqualTo(1);
            assertThat(metric(m, "buslane_amqp_connections_opened_total")).isGreaterThanOrEqualTo(1);
            // the sender and receiver links at least (plus $cbs and $management links)
            assertThat(metric(m, "buslane_amqp_links")).isGreaterThanOrEqualTo(2);
            assertThat(metric(m, "buslane_journal_sync_seconds_count")).isPositive();
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            String m = metrics();
            assertThat(metric(m, "buslane_amqp_connections")).isZero();
            assertThat(metric(m, "buslane_amqp_links")).isZero();
        });

        // purge: the three remaining messages and the dead-lettered one
        String token = sasToken("http://localhost/");
        HttpResponse<String> purge = post("/$admin/purge/queue.1", token);
        assertThat(purge.statusCode()).isEqualTo(200);
        JsonNode purged = JSON.readTree(purge.body());
        assertThat(purged.get("purged").asLong()).isEqualTo(4);
        assertThat(purged.get("active").asLong()).isEqualTo(3);
        assertThat(purged.get("deadLetter").asLong()).isEqualTo(1);
        try (ServiceBusReceiverClient dlq = builder.receiver().queueName("queue.1").subQueue(SubQueue.DEAD_LETTER_QUEUE)
                .buildClient()) {
            assertThat(dlq.peekMessage()).isNull();
        }
        String m = metrics();
        assertThat(metric(m, "buslane_entity_active_messages{entity=\"queue.1\",type=\"queue\"}")).isZero();

        // without a token: 401, nothing done
        assertThat(post("/$admin/reset", null).statusCode()).isEqualTo(401);

        // reset: a queue created at run time goes, the starter topology is back and empty
        HttpResponse<String> put = HTTP.send(HttpRequest.newBuilder(uri("/extra"))
                .header("Authorization", token).header("Content-Type", "application/atom+xml")
                .PUT(HttpRequest.BodyPublishers.ofString("<entry xmlns=\"http://www.w3.org/2005/Atom\"><content "
                        + "type=\"application/xml\"><QueueDescription xmlns=\"http://schemas.microsoft.com/"
                        + "netservices/2010/10/servicebus/connect\"/></content></entry>")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(put.statusCode()).isEqualTo(201);
        try (ServiceBusSenderClient sender = builder.sender().queueName("myqueue").buildClient()) {
            sender.sendMessage(new ServiceBusMessage("before reset"));
        }
        HttpResponse<String> reset = post("/$admin/reset", token);
        assertThat(reset.statusCode()).isEqualTo(200);
        JsonNode body = JSON.readTree(reset.body());
        assertThat(body.get("deleted").get("queues").asInt()).isEqualTo(4);
        assertThat(body.get("entities").get("queues").asInt()).isEqualTo(3);
        JsonNode health = JSON.readTree(get("/health").body());
        assertThat(health.get("status").asText()).isEqualTo("healthy");
        assertThat(health.get("entities").get("queues").asInt()).isEqualTo(3);
        assertThat(health.get("entities").get("subscriptions").asInt()).isEqualTo(3);
        // the deleted queue is gone: the service answers a GET of a missing queue with 200 and an empty feed
        HttpResponse<String> extra = HTTP.send(HttpRequest.newBuilder(uri("/extra")).header("Authorization", token)
                .GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(extra.statusCode()).isEqualTo(200);
        assertThat(extra.body()).contains("<feed").doesNotContain("<entry");
        try (ServiceBusReceiverClient r = builder.receiver().queueName("myqueue").buildClient()) {
            assertThat(r.peekMessage()).isNull();
        }
        // and the re-created queue works
        try (ServiceBusSenderClient sender = builder.sender().queueName("myqueue").buildClient();
             ServiceBusReceiverClient r = builder.receiver().queueName("myqueue").buildClient()) {
            sender.sendMessage(new ServiceBusMessage("after reset"));
            List<ServiceBusReceivedMessage> after = new ArrayList<>();
            r.receiveMessages(1, Duration.ofSeconds(10)).forEach(after::add);
            assertThat(after).extracting(x -> x.getBody().toString()).containsExactly("after reset");
            r.complete(after.get(0));
        }
    }

    private static String metrics() throws Exception {
        HttpResponse<String> r = get("/metrics");
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    /** The value of the sample whose name and labels are exactly {@code series}. */
    private static double metric(String exposition, String series) {
        for (String line : exposition.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim().split(" ")[0]);
            }
        }
        throw new AssertionError("no sample " + series + " in:\n" + exposition);
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + broker.httpPort() + path);
    }
}
