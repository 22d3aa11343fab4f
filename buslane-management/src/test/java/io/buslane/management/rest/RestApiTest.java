package io.buslane.management.rest;

import io.buslane.common.auth.Right;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class RestApiTest {

    static RestTestServer server;
    static String manageToken;

    @BeforeAll
    static void start() throws Exception {
        server = new RestTestServer(new SasValidator(List.of(SasRule.emulatorDefault(),
                new SasRule("listener", "listen-key", Set.of(Right.LISTEN)),
                new SasRule("sender", "send-key", Set.of(Right.SEND)))), RestApi.DEFAULT_MAX_BODY_BYTES);
        manageToken = server.token("http://127.0.0.1/", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        server.authorization = manageToken;
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    private static String newQueue() {
        String name = "q-" + UUID.randomUUID().toString().substring(0, 8);
        server.create("/" + name, "QueueDescription", "");
        return name;
    }

    private static HttpResponse<String> post(String path, Map<String, String> headers, String body) {
        return server.request("POST", path, headers, body == null ? null : body.getBytes(StandardCharsets.UTF_8));
    }

    private static HttpResponse<String> send(String entity, String body) {
        return post("/" + entity + "/messages", Map.of("Content-Type", "text/plain"), body);
    }

    private static HttpResponse<String> peekLock(String entity) {
        return post("/" + entity + "/messages/head?timeout=0", Map.of(), null);
    }

    private static JsonObject brokerProperties(HttpResponse<?> r) {
        return new JsonObject(r.headers().firstValue("BrokerProperties").orElseThrow());
    }

    /** The lock URI's path (the Location header is absolute). */
    private static String lockPath(HttpResponse<?> r) {
        return URI.create(r.headers().firstValue("Location").orElseThrow()).getRawPath();
    }

    private static String errorCode(HttpResponse<String> r) {
        return r.body().replaceAll("(?s).*<Code>(\\d+)</Code>.*", "$1");
    }

    @Test
    void sendThenPeekLockCarriesBrokerAndUserPropertiesAndALockUri() {
        String q = newQueue();
        long now = server.clock.epochMillis();
        Map<String, String> headers = new HashMap<>();
        headers.put("Content-Type", "application/json");
        headers.put("BrokerProperties", "{\"MessageId\":\"m-1\",\"Label\":\"L\",\"CorrelationId\":\"c-7\","
                + "\"ReplyTo\":\"back\",\"To\":\"there\",\"TimeToLive\":90,\"ForcePersistence\":true,"
                + "\"SequenceNumber\":999}");
        headers.put("Color", "\"Red\"");
        headers.put("Count", "42");
        headers.put("Big", "12345678901");
        headers.put("Ratio", "1.5");
        headers.put("Flag", "true");
        headers.put("When", "\"Sun, 06 Nov 1994 08:49:37 GMT\"");
        headers.put("x-ms-retrypolicy", "NoRetry");
        HttpResponse<String> sent = post("/" + q + "/messages", headers, "{\"a\":1}");
        assertThat(sent.statusCode()).isEqualTo(201);

        HttpResponse<String> got = peekLock(q);
        assertThat(got.statusCode()).isEqualTo(201);
        assertThat(got.body()).isEqualTo("{\"a\":1}");
        assertThat(got.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonObject bp = brokerProperties(got);
        assertThat(bp.getString("MessageId")).isEqualTo("m-1");
        assertThat(bp.getString("Label")).isEqualTo("L");
        assertThat(bp.getString("CorrelationId")).isEqualTo("c-7");
        assertThat(bp.getString("ReplyTo")).isEqualTo("back");
        assertThat(bp.getString("To")).isEqualTo("there");
        assertThat(bp.getDouble("TimeToLive")).isEqualTo(90.0);
        assertThat(bp.getLong("SequenceNumber")).as("broker-assigned, not the client's").isEqualTo(1L);
        assertThat(bp.getInteger("DeliveryCount")).isEqualTo(1);
        assertThat(bp.getString("State")).isEqualTo("Active");
        assertThat(bp.getString("EnqueuedTimeUtc")).isEqualTo(RestProperties.formatDate(now));
        assertThat(bp.getString("LockedUntilUtc")).as("default lock duration: one minute")
                .isEqualTo(RestProperties.formatDate(now + 60_000));
        UUID lock = UUID.fromString(bp.getString("LockToken"));
        assertThat(got.headers().firstValue("Location").orElseThrow())
                .isEqualTo(server.base() + "/" + q + "/messages/m-1/" + lock);
        assertThat(got.headers().firstValue("Color")).hasValue("\"Red\"");
        assertThat(got.headers().firstValue("Count")).hasValue("42");
        assertThat(got.headers().firstValue("Big")).hasValue("12345678901");
        assertThat(got.headers().firstValue("Ratio")).hasValue("1.5");
        assertThat(got.headers().firstValue("Flag")).hasValue("true");
        assertThat(got.headers().firstValue("When")).hasValue("\"Sun, 06 Nov 1994 08:49:37 GMT\"");
        assertThat(got.headers().firstValue("x-ms-retrypolicy")).as("not a user property").isEmpty();

        HttpResponse<String> completed = server.request("DELETE", lockPath(got), Map.of(), null);
        assertThat(completed.statusCode()).isEqualTo(200);
        assertThat(peekLock(q).statusCode()).isEqualTo(204);
        assertThat(server.request("DELETE", lockPath(got), Map.of(), null).statusCode())
                .as("completing twice: the lock is gone").isEqualTo(404);
    }

    @Test
    void receiveAndDeleteRemovesTheMessage() {
        String q = newQueue();
        assertThat(send(q, "one").statusCode()).isEqualTo(201);
        HttpResponse<String> got = server.request("DELETE", "/" + q + "/messages/head?timeout=0", Map.of(), null);
        assertThat(got.statusCode()).isEqualTo(200);
        assertThat(got.body()).isEqualTo("one");
        assertThat(got.headers().firstValue("Location")).isEmpty();
        JsonObject bp = brokerProperties(got);
        assertThat(bp.containsKey("LockToken")).isFalse();
        assertThat(bp.getLong("SequenceNumber")).isEqualTo(1L);
        assertThat(bp.getString("MessageId")).as("the broker assigns an id").isNotBlank();
        assertThat(got.headers().firstValue("BrokerProperties").orElseThrow())
                .as("never expires: TimeSpan.MaxValue in seconds").contains("\"TimeToLive\":922337203685.4775807");
        assertThat(server.request("DELETE", "/" + q + "/messages/head?timeout=0", Map.of(), null).statusCode())
                .isEqualTo(204);
        assertThat(peekLock(q).statusCode()).isEqualTo(204);
    }

    @Test
    void aFormEncodedBodyIsKeptVerbatimAsCurlSendsIt() {
        String q = newQueue();
        assertThat(post("/" + q + "/messages", Map.of("Content-Type", "application/x-www-form-urlencoded"),
                "a=1&b=%202").statusCode()).isEqualTo(201);
        HttpResponse<String> got = server.request("DELETE", "/" + q + "/messages/head?timeout=0", Map.of(), null);
        assertThat(got.body()).isEqualTo("a=1&b=%202");
        assertThat(got.headers().firstValue("Content-Type")).hasValue("application/x-www-form-urlencoded");
        assertThat(got.headers().firstValue("a")).as("form fields are not user properties").isEmpty();
    }

    @Test
    void batchSendKeepsOrderAndProperties() {
        String q = newQueue();
        String batch = "[{\"Body\":\"first\",\"BrokerProperties\":{\"Label\":\"M1\"},"
                + "\"UserProperties\":{\"Color\":\"Red\",\"N\":1,\"Ok\":true,\"F\":2.5}},"
                + "{\"Body\":\"second\",\"UserProperties\":{\"Color\":\"Green\"}},"
                + "{\"Body\":\"third\",\"BrokerProperties\":{\"MessageId\":\"x3\"}}]";
        HttpResponse<String> sent = post("/" + q + "/messages",
                Map.of("Content-Type", "application/vnd.microsoft.servicebus.json"), batch);
        assertThat(sent.statusCode()).isEqualTo(201);
        HttpResponse<String> a = peekLock(q);
        HttpResponse<String> b = peekLock(q);
        HttpResponse<String> c = peekLock(q);
        assertThat(List.of(a.body(), b.body(), c.body())).containsExactly("first", "second", "third");
        assertThat(brokerProperties(a).getString("Label")).isEqualTo("M1");
        assertThat(a.headers().firstValue("Color")).hasValue("\"Red\"");
        assertThat(a.headers().firstValue("N")).hasValue("1");
        assertThat(a.headers().firstValue("Ok")).hasValue("true");
        assertThat(a.headers().firstValue("F")).hasValue("2.5");
        assertThat(b.headers().firstValue("Color")).hasValue("\"Green\"");
        assertThat(brokerProperties(c).getString("MessageId")).isEqualTo("x3");
        assertThat(lockPath(c)).startsWith("/" + q + "/messages/x3/");
    }

    @Test
    void malformedBatchesAndBrokerPropertiesAre400() {
        String q = newQueue();
        HttpResponse<String> notArray = post("/" + q + "/messages",
                Map.of("Content-Type", "application/vnd.microsoft.servicebus.json"), "{\"Body\":\"x\"}");
        assertThat(notArray.statusCode()).isEqualTo(400);
        assertThat(errorCode(notArray)).isEqualTo("400");
        assertThat(post("/" + q + "/messages", Map.of("BrokerProperties", "{not json"), "x").statusCode())
                .isEqualTo(400);
        assertThat(post("/" + q + "/messages", Map.of("BrokerProperties", "{\"TimeToLive\":\"soon\"}"), "x")
                .statusCode()).isEqualTo(400);
        assertThat(post("/" + q + "/messages",
                Map.of("BrokerProperties", "{\"ScheduledEnqueueTimeUtc\":\"tomorrow\"}"), "x").statusCode())
                .isEqualTo(400);
        assertThat(post("/" + q + "/messages/head?timeout=soon", Map.of(), null).statusCode()).isEqualTo(400);
        assertThat(post("/" + q + "/messages/head?timeout=-1", Map.of(), null).statusCode()).isEqualTo(400);
        assertThat(peekLock(q).statusCode()).as("nothing was sent").isEqualTo(204);
    }

    @Test
    void unlockMakesTheMessageAvailableAgainWithAHigherDeliveryCount() {
        String q = newQueue();
        send(q, "again");
        HttpResponse<String> first = peekLock(q);
        assertThat(peekLock(q).statusCode()).as("locked").isEqualTo(204);
        assertThat(server.request("PUT", lockPath(first), Map.of(), null).statusCode()).isEqualTo(200);
        HttpResponse<String> second = peekLock(q);
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.body()).isEqualTo("again");
        assertThat(brokerProperties(second).getInteger("DeliveryCount")).isEqualTo(2);
        assertThat(brokerProperties(second).getString("LockToken"))
                .isNotEqualTo(brokerProperties(first).getString("LockToken"));
        assertThat(server.request("PUT", lockPath(first), Map.of(), null).statusCode())
                .as("the first lock is gone").isEqualTo(404);
        assertThat(server.request("POST", lockPath(first), Map.of(), null).statusCode()).isEqualTo(404);
    }

    @Test
    void renewLockExtendsTheLockFromNow() {
        String q = newQueue();
        send(q, "long job");
        HttpResponse<String> got = peekLock(q);
        server.clock.advanceMs(20_000);
        HttpResponse<String> renewed = server.request("POST", lockPath(got), Map.of(), null);
        assertThat(renewed.statusCode()).isEqualTo(200);
        JsonObject bp = brokerProperties(renewed);
        assertThat(bp.getString("LockedUntilUtc")).isEqualTo(RestProperties.formatDate(server.clock.epochMillis()
                + 60_000));
        assertThat(bp.getString("LockToken")).isEqualTo(brokerProperties(got).getString("LockToken"));
        assertThat(server.request("DELETE", lockPath(got), Map.of(), null).statusCode()).isEqualTo(200);
    }

    @Test
    void anExpiredLockIs404OnceTheMessageWasTakenAgain() {
        String q = newQueue();
        send(q, "slow");
        HttpResponse<String> got = peekLock(q);
        server.clock.advanceMs(60_001);
        assertThat(peekLock(q).statusCode()).isEqualTo(201); // another receiver takes it under a new lock
        assertThat(server.request("POST", lockPath(got), Map.of(), null).statusCode()).isEqualTo(404);
        HttpResponse<String> completeLate = server.request("DELETE", lockPath(got), Map.of(), null);
        assertThat(completeLate.statusCode()).isEqualTo(404);
        assertThat(errorCode(completeLate)).isEqualTo("404");
    }

    @Test
    void anUnknownLockIs404AndAMalformedOneIsNotALockUri() {
        String q = newQueue();
        assertThat(server.request("DELETE", "/" + q + "/messages/1/" + UUID.randomUUID(), Map.of(), null)
                .statusCode()).isEqualTo(404);
        assertThat(server.request("POST", "/" + q + "/messages/1/" + UUID.randomUUID(), Map.of(), null)
                .statusCode()).isEqualTo(404);
    }

    @Test
    void missingEntitiesAre410() {
        HttpResponse<String> sendMissing = send("nope", "x");
        assertThat(sendMissing.statusCode()).isEqualTo(410);
        assertThat(errorCode(sendMissing)).isEqualTo("410");
        assertThat(sendMissing.headers().firstValue("Content-Type")).hasValue("application/xml;charset=utf-8");
        assertThat(peekLock("nope").statusCode()).isEqualTo(410);
        assertThat(server.request("DELETE", "/nope/messages/head?timeout=0", Map.of(), null).statusCode())
                .isEqualTo(410);
        assertThat(server.request("DELETE", "/nope/messages/1/" + UUID.randomUUID(), Map.of(), null).statusCode())
                .isEqualTo(410);
    }

    @Test
    void authorizationNeedsAValidTokenWithTheRightClaim() {
        String q = newQueue();
        HttpResponse<String> none = server.request("POST", "/" + q + "/messages",
                Map.of("Authorization", "SharedAccessSignature sr=x&sig=y&se=1&skn=z"), "x".getBytes());
        assertThat(none.statusCode()).isEqualTo(401);
        server.authorization = null;
        try {
            assertThat(send(q, "x").statusCode()).isEqualTo(401);
            assertThat(peekLock(q).statusCode()).isEqualTo(401);
        } finally {
            server.authorization = manageToken;
        }
        String listen = server.token("http://127.0.0.1/", "listener", "listen-key");
        String sendOnly = server.token("http://127.0.0.1/" + q, "sender", "send-key");
        HttpResponse<String> listenSends = server.request("POST", "/" + q + "/messages",
                Map.of("Authorization", listen), "x".getBytes());
        assertThat(listenSends.statusCode()).isEqualTo(401);
        assertThat(listenSends.body()).contains("'Send' claim(s) are required");
        assertThat(server.request("POST", "/" + q + "/messages", Map.of("Authorization", sendOnly),
                "ok".getBytes()).statusCode()).isEqualTo(201);
        assertThat(server.request("POST", "/" + q + "/messages/head?timeout=0", Map.of("Authorization", sendOnly),
                null).statusCode()).as("Listen needed").isEqualTo(401);
        assertThat(server.request("POST", "/other/messages", Map.of("Authorization", sendOnly), "x".getBytes())
                .statusCode()).as("token scoped to another entity").isEqualTo(401);
        HttpResponse<String> got = server.request("POST", "/" + q + "/messages/head?timeout=0",
                Map.of("Authorization", listen), null);
        assertThat(got.statusCode()).isEqualTo(201);
        assertThat(server.request("DELETE", lockPath(got), Map.of("Authorization", sendOnly), null).statusCode())
                .isEqualTo(401);
        assertThat(server.request("DELETE", lockPath(got), Map.of("Authorization", listen), null).statusCode())
                .isEqualTo(200);
    }

    @Test
    void aReceiveWaitsUpToItsTimeoutForAMessage() throws Exception {
        String q = newQueue();
        int before = server.timeouts.delays().size();
        CompletableFuture<HttpResponse<String>> waiting = server.requestAsync("POST",
                "/" + q + "/messages/head?timeout=30", Map.of(), null);
        server.timeouts.awaitScheduled(before + 1);
        assertThat(server.timeouts.delays().get(before)).isEqualTo(30_000L);
        assertThat(waiting).isNotDone();
        assertThat(send(q, "late").statusCode()).isEqualTo(201);
        HttpResponse<String> got = waiting.get(10, TimeUnit.SECONDS);
        assertThat(got.statusCode()).isEqualTo(201);
        assertThat(got.body()).isEqualTo("late");
    }

    @Test
    void aReceiveWithoutMessagesAnswers204WhenItsTimeoutFires() throws Exception {
        String q = newQueue();
        int before = server.timeouts.delays().size();
        CompletableFuture<HttpResponse<String>> waiting = server.requestAsync("DELETE",
                "/" + q + "/messages/head", Map.of(), null);
        server.timeouts.awaitScheduled(before + 1);
        assertThat(server.timeouts.delays().get(before)).as("the default timeout").isEqualTo(60_000L);
        server.timeouts.fireAll();
        assertThat(waiting.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(204);
        assertThat(send(q, "after").statusCode()).isEqualTo(201);
        assertThat(peekLock(q).body()).as("the expired receive took nothing").isEqualTo("after");
    }

    @Test
    void aMessageOverTheEntityLimitIs403() {
        String q = newQueue();
        long max = server.engine.maxMessageSizeBytes(q);
        byte[] big = new byte[(int) max + 1];
        HttpResponse<String> r = server.request("POST", "/" + q + "/messages",
                Map.of("Content-Type", "application/octet-stream"), big);
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(r.body()).contains("exceeds the limit");
    }

    @Test
    void aBodyOverTheHttpLimitIs413() throws Exception {
        try (RestTestServer small = new RestTestServer(SasValidator.acceptAll(), 1024)) {
            small.create("/small", "QueueDescription", "");
            assertThat(small.request("POST", "/small/messages", Map.of(), new byte[2048]).statusCode())
                    .isEqualTo(413);
            assertThat(small.request("POST", "/small/messages", Map.of(), new byte[512]).statusCode())
                    .isEqualTo(201);
        }
    }

    @Test
    void sessionEnabledQueuesAcceptSendsButNotRestReceives() {
        String q = "s-" + UUID.randomUUID().toString().substring(0, 8);
        server.create("/" + q, "QueueDescription", "<RequiresSession>true</RequiresSession>");
        assertThat(post("/" + q + "/messages", Map.of("BrokerProperties", "{\"SessionId\":\"s1\"}"), "x")
                .statusCode()).isEqualTo(201);
        HttpResponse<String> r = peekLock(q);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("requires sessions");
    }

    @Test
    void topicsFanOutToSubscriptionsThatReceiveOverRest() {
        String t = "t-" + UUID.randomUUID().toString().substring(0, 8);
        server.create("/" + t, "TopicDescription", "");
        server.create("/" + t + "/Subscriptions/a", "SubscriptionDescription", "");
        server.create("/" + t + "/Subscriptions/b", "SubscriptionDescription", "");
        assertThat(send(t, "news").statusCode()).isEqualTo(201);
        HttpResponse<String> a = peekLock(t + "/subscriptions/a");
        assertThat(a.statusCode()).isEqualTo(201);
        assertThat(a.body()).isEqualTo("news");
        assertThat(lockPath(a)).startsWith("/" + t + "/subscriptions/a/messages/");
        assertThat(server.request("DELETE", lockPath(a), Map.of(), null).statusCode()).isEqualTo(200);
        assertThat(server.request("DELETE", "/" + t + "/subscriptions/b/messages/head?timeout=0", Map.of(), null)
                .body()).isEqualTo("news");
        assertThat(peekLock(t).statusCode()).as("a topic has no messages of its own").isEqualTo(400);
        assertThat(peekLock(t + "/subscriptions/missing").statusCode()).isEqualTo(410);
    }

    @Test
    void aFutureScheduledEnqueueTimeSchedulesTheMessage() {
        String q = newQueue();
        String at = RestProperties.formatDate(server.clock.epochMillis() + 3_600_000);
        assertThat(post("/" + q + "/messages", Map.of("BrokerProperties",
                "{\"ScheduledEnqueueTimeUtc\":\"" + at + "\"}"), "later").statusCode()).isEqualTo(201);
        assertThat(peekLock(q).statusCode()).isEqualTo(204);
    }

    @Test
    void theDeadLetterQueueIsReceivableWithItsReasonAsUserProperties() {
        String q = newQueue();
        send(q, "poison");
        HttpResponse<String> got = peekLock(q);
        UUID lock = UUID.fromString(brokerProperties(got).getString("LockToken"));
        server.engine.deadLetter(io.buslane.engine.api.EntityAddress.queueOrTopic(q), lock, "Bad", "Very bad",
                Map.of()).join();
        HttpResponse<String> dead = server.request("DELETE", "/" + q + "/$DeadLetterQueue/messages/head?timeout=0",
                Map.of(), null);
        assertThat(dead.statusCode()).isEqualTo(200);
        assertThat(dead.body()).isEqualTo("poison");
        assertThat(dead.headers().firstValue("DeadLetterReason")).hasValue("\"Bad\"");
        assertThat(dead.headers().firstValue("DeadLetterErrorDescription")).hasValue("\"Very bad\"");
    }

    @Test
    void aMessageLockedForAClientThatWentAwayIsReleased() throws Exception {
        String q = newQueue();
        int before = server.timeouts.delays().size();
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", URI.create(server.base()).getPort())) {
            socket.getOutputStream().write(("POST /" + q + "/messages/head?timeout=30 HTTP/1.1\r\nHost: x\r\n"
                    + "Authorization: " + manageToken + "\r\nContent-Length: 0\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            server.timeouts.awaitScheduled(before + 1);
        }
        CompletableFuture<HttpResponse<String>> next = server.requestAsync("POST",
                "/" + q + "/messages/head?timeout=30", Map.of(), null);
        server.timeouts.awaitScheduled(before + 2);
        assertThat(send(q, "kept").statusCode()).isEqualTo(201);
        HttpResponse<String> got = next.get(20, TimeUnit.SECONDS);
        assertThat(got.statusCode()).isEqualTo(201);
        assertThat(got.body()).isEqualTo("kept");
        assertThat(brokerProperties(got).getInteger("DeliveryCount")).as("a release counts no delivery")
                .isEqualTo(1);
    }

    @Test
    void theAdminApiStillServesEntityPaths() {
        String q = newQueue();
        assertThat(server.request("GET", "/" + q, Map.of(), null).statusCode()).isEqualTo(200);
        assertThat(server.request("GET", "/" + q + "/messages/head", Map.of(), null).statusCode())
                .as("GET is not a REST data operation: the ATOM API answers").isNotIn(201, 204);
    }
}
