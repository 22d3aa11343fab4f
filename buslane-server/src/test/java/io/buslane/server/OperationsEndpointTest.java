package io.buslane.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.error.BrokerException;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.Engine;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /health}, {@code /metrics}, {@code /$admin/purge} and {@code /$admin/reset} against an in-process broker
 * with a durable journal on ephemeral ports and the emulator's SAS key. Messages are sent and received through the
 * engine; each test starts from a reset namespace.
 */
class OperationsEndpointTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    static Path dataDir;
    private static Broker broker;
    private static String namespaceToken;

    @BeforeAll
    static void start() throws Exception {
        broker = Broker.start(new BrokerOptions("127.0.0.1", 0, 0, dataDir.resolve("data"), null, 2, true, false,
                null, false, 100));
        namespaceToken = token("http://127.0.0.1/", SasRule.EMULATOR_KEY);
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @BeforeEach
    void reset() throws Exception {
        assertThat(post("/$admin/reset", namespaceToken).statusCode()).isEqualTo(200);
    }

    // ------------------------------------------------------------------------------------------------ health

    @Test
    void healthIsHealthyWithPortsAndEntityCounts() throws Exception {
        HttpResponse<String> r = get("/health");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.get("status").asText()).isEqualTo("healthy");
        assertThat(body.get("state").asText()).isEqualTo("READY");
        assertThat(body.get("amqpPort").asInt()).isEqualTo(broker.amqpPort());
        assertThat(body.get("httpPort").asInt()).isEqualTo(broker.httpPort());
        assertThat(body.get("uptimeSeconds").asLong()).isNotNegative();
        assertThat(body.get("entities").get("queues").asInt()).isEqualTo(3);
        assertThat(body.get("entities").get("topics").asInt()).isEqualTo(2);
        assertThat(body.get("entities").get("subscriptions").asInt()).isEqualTo(3);
    }

    // ------------------------------------------------------------------------------------------------ metrics

    @Test
    void metricsCountSendsDeliveriesSettlementsAndEntityMessages() throws Exception {
        Engine engine = broker.engine();
        String before = get("/metrics").body();
        double sent0 = metric(before, "buslane_messages_sent_total");
        double delivered0 = metric(before, "buslane_messages_delivered_total");
        double complete0 = metric(before, "buslane_messages_settled_total{outcome=\"complete\"}");
        double deadLetter0 = metric(before, "buslane_messages_settled_total{outcome=\"dead_letter\"}");
        double syncs0 = metric(before, "buslane_journal_sync_seconds_count");

        engine.send("myqueue", List.of(text("a"), text("b"), text("c"), text("d"))).get(10, TimeUnit.SECONDS);
        Sink sink = new Sink();
        Receiver receiver = engine.createReceiver(EntityAddress.parse("myqueue"), ReceiveMode.PEEK_LOCK, sink);
        receiver.addCredit(2);
        ReceivedMessage first = sink.next();
        ReceivedMessage second = sink.next();
        receiver.complete(first.lockToken()).get(10, TimeUnit.SECONDS);
        receiver.deadLetter(second.lockToken(), "reason", "description", null).get(10, TimeUnit.SECONDS);
        receiver.close();

        HttpResponse<String> r = get("/metrics");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/plain");
        String m = r.body();
        assertThat(metric(m, "buslane_messages_sent_total") - sent0).isEqualTo(4);
        assertThat(metric(m, "buslane_messages_delivered_total") - delivered0).isEqualTo(2);
        assertThat(metric(m, "buslane_messages_settled_total{outcome=\"complete\"}") - complete0).isEqualTo(1);
        assertThat(metric(m, "buslane_messages_settled_total{outcome=\"dead_letter\"}") - deadLetter0)
                .isEqualTo(1);
        assertThat(metric(m, "buslane_entity_active_messages{entity=\"myqueue\",type=\"queue\"}")).isEqualTo(2);
        assertThat(metric(m, "buslane_entity_dead_letter_messages{entity=\"myqueue\",type=\"queue\"}"))
                .isEqualTo(1);
        assertThat(metric(m, "buslane_entity_active_messages{entity=\"mytopic/Subscriptions/mysubscription\","
                + "type=\"subscription\"}")).isZero();
        assertThat(metric(m, "buslane_entity_size_bytes{entity=\"myqueue\",type=\"queue\"}")).isPositive();
        // a topic holds only scheduled messages: no active/dead-letter series of its own
        assertThat(metric(m, "buslane_entity_scheduled_messages{entity=\"mytopic\",type=\"topic\"}")).isZero();
        assertThat(m).doesNotContain("buslane_entity_active_messages{entity=\"mytopic\",");
        assertThat(metric(m, "buslane_entities{type=\"queue\"}")).isEqualTo(3);
        // every durable operation above synced the journal at least once: the histogram has them
        assertThat(metric(m, "buslane_journal_sync_seconds_count") - syncs0).isGreaterThanOrEqualTo(3);
        assertThat(metric(m, "buslane_journal_sync_seconds_bucket{le=\"+Inf\"}") - syncs0).isGreaterThanOrEqualTo(3);
        assertThat(metric(m, "buslane_journal_synced_records_total")).isPositive();
        assertThat(metric(m, "buslane_lock_expiries_total")).isNotNegative();
        assertThat(metric(m, "buslane_amqp_connections")).isZero();
        assertThat(metric(m, "buslane_amqp_links")).isZero();
        assertThat(metric(m, "buslane_amqp_connections_opened_total")).isNotNegative();
        assertThat(metric(m, "buslane_engine_queued_commands")).isNotNegative();
    }

    @Test
    void deletedEntitiesDisappearFromTheEntityGauges() throws Exception {
        broker.engine().createQueue(QueueProperties.builder("transient").build()).get(10, TimeUnit.SECONDS);
        assertThat(get("/metrics").body()).contains("entity=\"transient\"");
        broker.engine().deleteQueue("transient").get(10, TimeUnit.SECONDS);
        assertThat(get("/metrics").body()).doesNotContain("entity=\"transient\"");
    }

    // ------------------------------------------------------------------------------------------------ purge

    @Test
    void purgeEmptiesAQueueItsDeadLetterQueueAndItsScheduledMessages() throws Exception {
        Engine engine = broker.engine();
        engine.send("myqueue", List.of(text("a"), text("b"), text("c"))).get(10, TimeUnit.SECONDS);
        long inAnHour = System.currentTimeMillis() + 3_600_000;
        engine.schedule("myqueue", List.of(Message.builder().body(bytes("later"))
                .scheduledEnqueueTimeMs(inAnHour).build())).get(10, TimeUnit.SECONDS);
        Sink sink = new Sink();
        Receiver receiver = engine.createReceiver(EntityAddress.parse("myqueue"), ReceiveMode.PEEK_LOCK, sink);
        receiver.addCredit(1);
        receiver.deadLetter(sink.next().lockToken(), null, null, null).get(10, TimeUnit.SECONDS);
        receiver.close();

        HttpResponse<String> r = post("/$admin/purge/myqueue", namespaceToken);
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.get("entity").asText()).isEqualTo("myqueue");
        assertThat(body.get("purged").asLong()).isEqualTo(4);
        assertThat(body.get("active").asLong()).isEqualTo(2);
        assertThat(body.get("deadLetter").asLong()).isEqualTo(1);
        assertThat(body.get("scheduled").asLong()).isEqualTo(1);
        assertThat(counts("myqueue").messageCount()).isZero();
    }

    @Test
    void purgeOfADeadLetterQueueLeavesTheMainQueue() throws Exception {
        Engine engine = broker.engine();
        engine.send("queue.1", List.of(text("a"), text("b"))).get(10, TimeUnit.SECONDS);
        Sink sink = new Sink();
        Receiver receiver = engine.createReceiver(EntityAddress.parse("queue.1"), ReceiveMode.PEEK_LOCK, sink);
        receiver.addCredit(1);
        receiver.deadLetter(sink.next().lockToken(), null, null, null).get(10, TimeUnit.SECONDS);
        receiver.close();

        JsonNode body = JSON.readTree(post("/$admin/purge/queue.1/$DeadLetterQueue", namespaceToken).body());
        assertThat(body.get("entity").asText()).isEqualTo("queue.1/$DeadLetterQueue");
        assertThat(body.get("purged").asLong()).isEqualTo(1);
        RuntimeCounts c = counts("queue.1");
        assertThat(c.deadLetterMessageCount()).isZero();
        assertThat(c.activeMessageCount()).isEqualTo(1);
    }

    @Test
    void purgeOfASubscriptionOrATopic() throws Exception {
        broker.engine().send("topic.1", List.of(text("a"), text("b"))).get(10, TimeUnit.SECONDS);
        JsonNode sub = JSON.readTree(post("/$admin/purge/topic.1/Subscriptions/subscription.1", namespaceToken)
                .body());
        assertThat(sub.get("entity").asText()).isEqualTo("topic.1/Subscriptions/subscription.1");
        assertThat(sub.get("purged").asLong()).isEqualTo(2);
        assertThat(counts("topic.1/Subscriptions/subscription.2").activeMessageCount()).isEqualTo(2);

        JsonNode topic = JSON.readTree(post("/$admin/purge/topic.1", namespaceToken).body());
        assertThat(topic.get("purged").asLong()).isEqualTo(2);
        assertThat(counts("topic.1/Subscriptions/subscription.2").activeMessageCount()).isZero();
    }

    @Test
    void purgeOfAMissingEntityIs404() throws Exception {
        HttpResponse<String> r = post("/$admin/purge/nosuchqueue", namespaceToken);
        assertThat(r.statusCode()).isEqualTo(404);
        JsonNode error = JSON.readTree(r.body()).get("error");
        assertThat(error.get("code").asInt()).isEqualTo(404);
        assertThat(error.get("message").asText()).contains("nosuchqueue");
    }

    // ------------------------------------------------------------------------------------------------ reset

    @Test
    void resetDeletesEverythingAndRecreatesTheConfiguredTopology() throws Exception {
        Engine engine = broker.engine();
        engine.createQueue(QueueProperties.builder("extra").build()).get(10, TimeUnit.SECONDS);
        engine.deleteQueue("myqueue").get(10, TimeUnit.SECONDS);
        engine.send("queue.1", List.of(text("a"))).get(10, TimeUnit.SECONDS);

        HttpResponse<String> r = post("/$admin/reset", namespaceToken);
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.get("deleted").get("queues").asInt()).isEqualTo(3); // queue.1, sessionqueue, extra
        assertThat(body.get("deleted").get("topics").asInt()).isEqualTo(2);
        assertThat(body.get("entities").get("queues").asInt()).isEqualTo(3);
        assertThat(body.get("entities").get("topics").asInt()).isEqualTo(2);
        assertThat(body.get("entities").get("subscriptions").asInt()).isEqualTo(3);
        assertThat(engine.queue("extra")).isNull();
        assertThat(engine.queue("myqueue")).isNotNull();
        assertThat(counts("queue.1").messageCount()).isZero();
    }

    // ------------------------------------------------------------------------------------------------ auth

    @Test
    void adminOperationsNeedAValidManageToken() throws Exception {
        broker.engine().send("myqueue", List.of(text("a"))).get(10, TimeUnit.SECONDS);
        assertThat(post("/$admin/purge/myqueue", null).statusCode()).isEqualTo(401);
        assertThat(post("/$admin/reset", null).statusCode()).isEqualTo(401);
        assertThat(post("/$admin/reset", token("http://127.0.0.1/", "wrong-key")).statusCode()).isEqualTo(401);
        HttpResponse<String> r = post("/$admin/purge/myqueue", "garbage");
        assertThat(r.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(r.body()).get("error").get("code").asInt()).isEqualTo(401);
        assertThat(counts("myqueue").activeMessageCount()).isEqualTo(1);

        // a token scoped to one entity may purge it, but not another entity and not reset the namespace
        String scoped = token("http://127.0.0.1/myqueue", SasRule.EMULATOR_KEY);
        assertThat(post("/$admin/purge/queue.1", scoped).statusCode()).isEqualTo(401);
        assertThat(post("/$admin/reset", scoped).statusCode()).isEqualTo(401);
        assertThat(post("/$admin/purge/myqueue", scoped).statusCode()).isEqualTo(200);
        assertThat(counts("myqueue").activeMessageCount()).isZero();
    }

    @Test
    void metricsAndHealthNeedNoToken() throws Exception {
        assertThat(get("/metrics").statusCode()).isEqualTo(200);
        assertThat(get("/health").statusCode()).isEqualTo(200);
    }

    @Test
    void otherAdminPathsAre404NotEntityPaths() throws Exception {
        assertThat(get("/$admin/reset").statusCode()).isEqualTo(404);
        HttpResponse<String> r = post("/$admin/compact", namespaceToken);
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private static Message text(String s) {
        return Message.builder().body(bytes(s)).build();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static RuntimeCounts counts(String path) throws Exception {
        return broker.engine().counts(path).get(10, TimeUnit.SECONDS);
    }

    static String token(String resource, String key) {
        String sr = URLEncoder.encode(resource, StandardCharsets.UTF_8);
        long se = System.currentTimeMillis() / 1000 + 3600;
        String sig = URLEncoder.encode(SasValidator.sign(sr + "\n" + se, key), StandardCharsets.UTF_8);
        return "SharedAccessSignature sr=" + sr + "&sig=" + sig + "&se=" + se + "&skn="
                + SasRule.EMULATOR_KEY_NAME;
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> post(String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + broker.httpPort() + path);
    }

    /** The value of the sample whose name and labels are exactly {@code series}; fails if absent. */
    static double metric(String exposition, String series) {
        for (String line : exposition.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim().split(" ")[0]);
            }
        }
        throw new AssertionError("no sample " + series + " in:\n" + exposition);
    }

    /** Collects deliveries; {@link #next()} waits for one. */
    static final class Sink implements DeliverySink {
        private final BlockingQueue<ReceivedMessage> messages = new LinkedBlockingQueue<>();
        private final List<BrokerException> closed = new ArrayList<>();

        @Override
        public void onMessage(Receiver receiver, ReceivedMessage message) {
            messages.add(message);
        }

        @Override
        public synchronized void onClosed(Receiver receiver, BrokerException error) {
            closed.add(error);
        }

        ReceivedMessage next() throws InterruptedException {
            ReceivedMessage m = messages.poll(10, TimeUnit.SECONDS);
            assertThat(m).as("a delivery within 10 s").isNotNull();
            return m;
        }
    }
}
