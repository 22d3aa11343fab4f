package io.buslane.management.atom;

import io.buslane.common.auth.SasRule;
import io.buslane.management.RawHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

class AuthApiTest {

    static AdminTestServer server;
    static String valid;

    @BeforeAll
    static void start() throws Exception {
        server = AdminTestServer.validating();
        valid = server.authorization;
        assertThat(server.put("/secured", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(201);
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    private static HttpResponse<String> getWith(String authorization, String path) {
        server.authorization = authorization;
        try {
            return server.get(path);
        } finally {
            server.authorization = valid;
        }
    }

    @Test
    void aMissingOrInvalidTokenIs401() {
        HttpResponse<String> none = getWith(null, "/secured");
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(TestXml.parse(none.body()).text("/Error/Code")).isEqualTo("401");
        assertThat(getWith("Bearer abc", "/secured").statusCode()).isEqualTo(401);
        assertThat(getWith(server.token("http://127.0.0.1/", SasRule.EMULATOR_KEY_NAME, "wrong-key"), "/secured")
                .statusCode()).isEqualTo(401);
        assertThat(getWith(server.token("http://127.0.0.1/", "OtherRule", SasRule.EMULATOR_KEY), "/secured")
                .statusCode()).isEqualTo(401);
        assertThat(getWith(null, "/nope").statusCode()).as("no existence probing without a token").isEqualTo(401);
    }

    @Test
    void aValidTokenIsScopedToItsSignedResource() {
        assertThat(getWith(valid, "/secured").statusCode()).isEqualTo(200);
        String entityToken = server.token("http://127.0.0.1/secured", SasRule.EMULATOR_KEY_NAME,
                SasRule.EMULATOR_KEY);
        assertThat(getWith(entityToken, "/secured").statusCode()).isEqualTo(200);
        assertThat(getWith(entityToken, "/other").statusCode()).isEqualTo(401);
        assertThat(getWith(entityToken, "/$Resources/queues").statusCode()).isEqualTo(401);
    }

    @Test
    void anUnauthenticatedRequestIsRefusedBeforeItsBodyIsRead() throws Exception {
        for (String authorization : new String[] {null, server.token("http://127.0.0.1/", SasRule.EMULATOR_KEY_NAME,
                "wrong-key")}) {
            try (RawHttp http = new RawHttp(server.port())) {
                http.write("PUT /big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/atom+xml\r\n"
                        + (authorization == null ? "" : "Authorization: " + authorization + "\r\n")
                        + "Content-Length: " + AdminApi.MAX_BODY_BYTES + "\r\n\r\n<entry");
                RawHttp.Response r = http.read(); // today's code reads the 1 MB body first
                assertThat(r.status()).isEqualTo(401);
                assertThat(TestXml.parse(r.body()).text("/Error/Code")).isEqualTo("401");
            }
        }
        assertThat(server.engine.queue("big")).isNull();
    }

    @Test
    void acceptAllModeAcceptsRequestsWithoutAToken() throws Exception {
        try (AdminTestServer open = AdminTestServer.acceptingAll()) {
            assertThat(open.put("/anything", AdminTestServer.entry("QueueDescription", "")).statusCode())
                    .isEqualTo(201);
            assertThat(open.get("/anything").statusCode()).isEqualTo(200);
        }
    }

    private static HttpResponse<String> putWith(String authorization, String path, String body, boolean update) {
        server.authorization = authorization;
        try {
            return update ? server.update(path, body) : server.put(path, body);
        } finally {
            server.authorization = valid;
        }
    }

    @Test
    void aTokenScopedToOneEntityCannotForwardItIntoAnotherItDoesNotManage() {
        assertThat(server.put("/fwd-victim", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(201);
        assertThat(server.put("/fwd-topic", AdminTestServer.entry("TopicDescription", "")).statusCode())
                .isEqualTo(201);
        String onlyA = server.token("http://127.0.0.1/fwd-a", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        String forwardToVictim = AdminTestServer.entry("QueueDescription",
                "<ForwardTo>https://127.0.0.1/fwd-victim</ForwardTo>");
        String dlqToVictim = AdminTestServer.entry("QueueDescription",
                "<ForwardDeadLetteredMessagesTo>sb://127.0.0.1/fwd-victim</ForwardDeadLetteredMessagesTo>");

        // create: refused before anything is created
        HttpResponse<String> create = putWith(onlyA, "/fwd-a", forwardToVictim, false);
        assertThat(create.statusCode()).isEqualTo(401);
        assertThat(create.body()).contains("ForwardTo").contains("fwd-victim");
        assertThat(server.engine.queue("fwd-a")).isNull();
        assertThat(putWith(onlyA, "/fwd-a", dlqToVictim, false).statusCode()).isEqualTo(401);
        assertThat(server.engine.queue("fwd-a")).isNull();

        // update: refused, the entity keeps its description
        assertThat(putWith(onlyA, "/fwd-a", AdminTestServer.entry("QueueDescription", ""), false).statusCode())
                .isEqualTo(201);
        assertThat(putWith(onlyA, "/fwd-a", forwardToVictim, true).statusCode()).isEqualTo(401);
        assertThat(server.engine.queue("fwd-a").properties().forwardTo()).isNull();

        // a subscription of a topic the token manages cannot forward elsewhere either
        String onlyTopic = server.token("http://127.0.0.1/fwd-topic", SasRule.EMULATOR_KEY_NAME,
                SasRule.EMULATOR_KEY);
        assertThat(putWith(onlyTopic, "/fwd-topic/Subscriptions/s", AdminTestServer.entry("SubscriptionDescription",
                "<ForwardTo>fwd-victim</ForwardTo>"), false).statusCode()).isEqualTo(401);
        assertThat(server.engine.topic("fwd-topic").subscription("s")).isNull();

        // a token that manages both may; forwarding into itself within scope is allowed too
        assertThat(putWith(valid, "/fwd-a", forwardToVictim, true).statusCode()).isEqualTo(200);
        assertThat(server.engine.queue("fwd-a").properties().forwardTo()).isEqualTo("fwd-victim");
        // once set by someone entitled, an update that keeps the target needs no rights on it
        assertThat(putWith(onlyA, "/fwd-a", AdminTestServer.entry("QueueDescription",
                "<ForwardTo>https://127.0.0.1/fwd-victim</ForwardTo><MaxDeliveryCount>7</MaxDeliveryCount>"), true)
                .statusCode()).isEqualTo(200);
        assertThat(server.engine.queue("fwd-a").properties().maxDeliveryCount()).isEqualTo(7);
    }

    /**
     * #32: the JavaScript SDK signs the request for its own URL and sends a token for the target in the supplementary
     * headers, signed for the namespace's host name without a scheme; the service accepts it.
     */
    @Test
    void aSupplementaryTokenForTheTargetOrTheNamespaceHostLetsAScopedRequestForwardThere() {
        assertThat(server.put("/sup-victim", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(201);
        String onlyB = server.token("http://127.0.0.1/sup-b", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        String forward = AdminTestServer.entry("QueueDescription", "<ForwardTo>sup-victim</ForwardTo>");
        String dlq = AdminTestServer.entry("QueueDescription",
                "<ForwardDeadLetteredMessagesTo>sup-victim</ForwardDeadLetteredMessagesTo>");
        String host = server.token("127.0.0.1", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        String other = server.token("http://127.0.0.1/sup-other", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        String forged = server.token("127.0.0.1", SasRule.EMULATOR_KEY_NAME, "not-the-key");
        try {
            server.headers.put("ServiceBusSupplementaryAuthorization", other);
            assertThat(putWith(onlyB, "/sup-b", forward, false).statusCode()).as("a token for another entity")
                    .isEqualTo(401);
            server.headers.put("ServiceBusSupplementaryAuthorization", forged);
            assertThat(putWith(onlyB, "/sup-b", forward, false).statusCode()).as("a forged token").isEqualTo(401);
            server.headers.clear();
            server.headers.put("ServiceBusDlqSupplementaryAuthorization", host);
            assertThat(putWith(onlyB, "/sup-b", forward, false).statusCode()).as("the other target's header")
                    .isEqualTo(401);
            assertThat(server.engine.queue("sup-b")).isNull();
            assertThat(putWith(onlyB, "/sup-b", dlq, false).statusCode()).isEqualTo(201);
            assertThat(server.engine.queue("sup-b").properties().forwardDeadLetteredMessagesTo())
                    .isEqualTo("sup-victim");
            server.headers.clear();
            server.headers.put("ServiceBusSupplementaryAuthorization",
                    server.token("http://127.0.0.1/sup-victim", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY));
            assertThat(putWith(onlyB, "/sup-b", forward, true).statusCode()).isEqualTo(200);
            assertThat(server.engine.queue("sup-b").properties().forwardTo()).isEqualTo("sup-victim");
        } finally {
            server.headers.clear();
        }
    }

    /**
     * A token whose resource is a bare name equal to the addressed host is read as the namespace only when it is a
     * supplementary token and no entity bears that name: a token scoped to an entity named like the host never
     * reaches beyond it, as the request's own token or as a supplementary one.
     */
    @Test
    void aTokenForAnEntityNamedLikeTheHostNeverCoversTheNamespace() {
        assertThat(server.put("/host-victim", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(201);
        String forward = AdminTestServer.entry("QueueDescription", "<ForwardTo>host-victim</ForwardTo>");
        String onlyHostNamed = server.token("127.0.0.1", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        // as the request's own token: it covers the entity 127.0.0.1 and nothing more
        assertThat(putWith(onlyHostNamed, "/127.0.0.1", forward, false).statusCode()).isEqualTo(401);
        assertThat(server.engine.queue("127.0.0.1")).isNull();
        assertThat(putWith(onlyHostNamed, "/127.0.0.1", AdminTestServer.entry("QueueDescription", ""), false)
                .statusCode()).isEqualTo(201);
        // as a supplementary token, once an entity bears the host's name
        String onlyC = server.token("http://127.0.0.1/host-c", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        try {
            server.headers.put("ServiceBusSupplementaryAuthorization", onlyHostNamed);
            assertThat(putWith(onlyC, "/host-c", forward, false).statusCode()).isEqualTo(401);
            assertThat(server.engine.queue("host-c")).isNull();
        } finally {
            server.headers.clear();
        }
    }

    @Test
    void aForwardingTargetThatDoesNotCanonicaliseIsABadRequest() {
        HttpResponse<String> r = server.put("/fwd-odd", AdminTestServer.entry("QueueDescription",
                "<ForwardTo>https://127.0.0.1/secured/x://y/fwd-victim</ForwardTo>"));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(server.engine.queue("fwd-odd")).isNull();
    }

    /** The JavaScript administration client signs every request for its own URL, lower-cased, query included. */
    private static String tokenForUrl(String pathAndQuery) {
        return server.token(("http://127.0.0.1:" + server.port() + pathAndQuery).toLowerCase(java.util.Locale.ROOT),
                SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
    }

    @Test
    void aTokenForARequestsOwnUrlCoversThatRequestAndNothingElse() {
        assertThat(server.put("/js-topic", AdminTestServer.entry("TopicDescription", "")).statusCode())
                .isEqualTo(201);
        assertThat(server.put("/js-topic/Subscriptions/s", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(201);
        String list = "/$Resources/queues?api-version=2021-05&%24skip=0&%24top=10";
        String listToken = tokenForUrl(list);
        assertThat(getWith(listToken, list).statusCode()).isEqualTo(200);
        assertThat(getWith(listToken, "/$Resources/topics?api-version=2021-05").statusCode()).isEqualTo(401);
        assertThat(getWith(listToken, "/secured").statusCode()).isEqualTo(401);
        String info = "/$namespaceinfo?api-version=2021-05";
        assertThat(getWith(tokenForUrl(info), info).statusCode()).isEqualTo(200);
        assertThat(getWith(tokenForUrl(info), list).statusCode()).isEqualTo(401);

        String subs = "/js-topic/Subscriptions?api-version=2021-05&%24skip=0&%24top=10";
        String subsToken = tokenForUrl(subs);
        assertThat(getWith(subsToken, subs).statusCode()).isEqualTo(200);
        assertThat(getWith(subsToken, "/js-topic").statusCode()).as("not the topic").isEqualTo(401);
        assertThat(getWith(subsToken, "/js-topic/Subscriptions/s").statusCode()).as("nor a subscription")
                .isEqualTo(401);
        String rules = "/js-topic/Subscriptions/s/Rules?api-version=2021-05";
        assertThat(getWith(tokenForUrl(rules), rules).statusCode()).isEqualTo(200);
        // an entity's own URL, as before
        String get = "/js-topic?api-version=2021-05";
        assertThat(getWith(tokenForUrl(get), get).statusCode()).isEqualTo(200);
        assertThat(getWith(tokenForUrl(get), subs).statusCode()).as("a topic's token lists its subscriptions")
                .isEqualTo(200);
    }
}
