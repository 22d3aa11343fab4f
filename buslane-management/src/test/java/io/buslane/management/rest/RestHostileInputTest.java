package io.buslane.management.rest;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.buslane.common.auth.AuthFailureThrottle;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.management.HttpGuard;
import io.buslane.management.LogCapture;
import io.buslane.management.RawHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an unauthenticated or careless client can do to the REST data plane and the ATOM API behind it: nothing is
 * buffered before the token is checked, oversized bodies are cut off as they arrive, failed tokens are throttled per
 * address, and client mistakes answer 4xx with one rate-limited WARN line, never an ERROR.
 */
class RestHostileInputTest {

    private RestTestServer server;

    @BeforeEach
    void start() throws Exception {
        server = RestTestServer.validating();
        server.create("/q", "QueueDescription", "");
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private String badToken() {
        return server.token("http://127.0.0.1/", SasRule.EMULATOR_KEY_NAME, "wrong-key");
    }

    private static String headers(String method, String path, String authorization, String... more) {
        StringBuilder b = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        if (authorization != null) {
            b.append("Authorization: ").append(authorization).append("\r\n");
        }
        for (String h : more) {
            b.append(h).append("\r\n");
        }
        return b.append("\r\n").toString();
    }

    // ============================================================================================== item 3

    @Test
    void anUnauthenticatedSendIsRefusedBeforeItsBodyArrivesAndItsConnectionIsCut() throws Exception {
        for (String authorization : new String[] {null, badToken()}) {
            try (RawHttp http = new RawHttp(server.port())) {
                http.write(headers("POST", "/q/messages", authorization, "Content-Type: application/octet-stream",
                        "Content-Length: " + 100L * 1024 * 1024));
                http.write(new byte[1024]);
                RawHttp.Response r = http.read(); // today's code waits for all 100 MB first
                assertThat(r.status()).isEqualTo(401);
                assertThat(r.body()).contains("<Code>401</Code>");
                assertThat(http.closedByServerWithin(8L * 1024 * 1024))
                        .as("the rest of the body is not read to the end").isTrue();
            }
        }
        assertThat(server.engine.queue("q")).isNotNull();
    }

    @Test
    void aSendWithExpectContinueIsAuthorisedBeforeTheClientIsToldToSendItsBody() throws Exception {
        try (RawHttp http = new RawHttp(server.port())) {
            http.write(headers("POST", "/q/messages", badToken(), "Content-Length: 5", "Expect: 100-continue"));
            assertThat(http.read().status()).as("no 100 Continue for a bad token").isEqualTo(401);
        }
        try (RawHttp http = new RawHttp(server.port())) {
            http.write(headers("POST", "/q/messages", server.authorization, "Content-Length: 5",
                    "Expect: 100-continue"));
            assertThat(http.read().status()).isEqualTo(100);
            http.write("hello");
            assertThat(http.read().status()).isEqualTo(201);
        }
    }

    @Test
    void aDeclaredBodyOverTheEntitysLimitIsRefusedBeforeItArrives() throws Exception {
        long max = server.engine.maxMessageSizeBytes("q");
        try (RawHttp http = new RawHttp(server.port())) {
            http.write(headers("POST", "/q/messages", server.authorization, "Content-Length: " + 10 * max));
            RawHttp.Response r = http.read();
            assertThat(r.status()).as("the service's answer to a message over the entity's limit").isEqualTo(403);
            assertThat(r.body()).contains("exceeds the limit (" + max + " bytes)");
        }
    }

    @Test
    void aChunkedBodyIsRefusedAsSoonAsItExceedsTheEntitysLimit() throws Exception {
        long max = server.engine.maxMessageSizeBytes("q");
        try (RawHttp http = new RawHttp(server.port())) {
            http.write(headers("POST", "/q/messages", server.authorization, "Transfer-Encoding: chunked"));
            byte[] chunk = new byte[32 * 1024];
            for (long sent = 0; sent <= max; sent += chunk.length) {
                http.chunk(chunk);
            }
            RawHttp.Response r = http.read(); // today's code waits for the end of the body (up to 100 MB)
            assertThat(r.status()).isEqualTo(403);
            assertThat(r.body()).contains("exceeds the limit (" + max + " bytes)");
        }
        assertThat(server.request("POST", "/q/messages/head?timeout=0", Map.of(), null).statusCode())
                .as("nothing was sent").isEqualTo(204);
    }

    @Test
    void aBatchOverTheHttpLimitIs413AsSoonAsItExceedsIt() throws Exception {
        try (RestTestServer small = new RestTestServer(SasValidator.acceptAll(), 4096)) {
            small.create("/b", "QueueDescription", "");
            try (RawHttp http = new RawHttp(small.port())) {
                http.write(headers("POST", "/b/messages", null, "Transfer-Encoding: chunked",
                        "Content-Type: " + RestApi.BATCH_CONTENT_TYPE));
                http.chunk(new byte[3000]).chunk(new byte[3000]);
                RawHttp.Response r = http.read();
                assertThat(r.status()).isEqualTo(413);
                assertThat(r.body()).contains("exceeds the limit of 4096 bytes");
            }
            String batch = "[{\"Body\":\"one\"},{\"Body\":\"two\"}]";
            assertThat(small.request("POST", "/b/messages", Map.of("Content-Type", RestApi.BATCH_CONTENT_TYPE),
                    batch.getBytes(StandardCharsets.UTF_8)).statusCode()).isEqualTo(201);
        }
    }

    @Test
    void aFormEncodedBodyIsAnOrdinaryMessageBody() {
        byte[] form = ("a=" + "x".repeat(20_000)).getBytes(StandardCharsets.UTF_8);
        try (LogCapture logs = new LogCapture()) {
            HttpResponse<String> sent = server.request("POST", "/q/messages",
                    Map.of("Content-Type", "application/x-www-form-urlencoded"), form);
            assertThat(sent.statusCode()).isEqualTo(201); // today: 400 and an ERROR with a stack trace
            HttpResponse<String> got = server.request("DELETE", "/q/messages/head?timeout=0", Map.of(), null);
            assertThat(got.body().getBytes(StandardCharsets.UTF_8)).isEqualTo(form);
            assertThat(logs.events(Level.ERROR)).isEmpty();
        }
    }

    // ============================================================================================== item 13

    @Test
    void anAddressThatKeepsPresentingBadTokensForOneKeyIsThrottledOnEveryRouteButAValidTokenIsNeverRefused() {
        String bad = badToken();
        for (int i = 0; i < AuthFailureThrottle.DEFAULT_MAX_FAILURES; i++) {
            HttpResponse<String> r = server.request("POST", "/q/messages", Map.of("Authorization", bad),
                    "x".getBytes(StandardCharsets.UTF_8));
            assertThat(r.statusCode()).as("attempt " + i).isEqualTo(401);
        }
        HttpResponse<String> again = server.request("POST", "/q/messages", Map.of("Authorization", bad),
                "x".getBytes(StandardCharsets.UTF_8));
        assertThat(again.statusCode()).isEqualTo(429);
        assertThat(again.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(again.body()).contains("<Code>429</Code>").contains("Too many failed authentication attempts");
        assertThat(server.request("POST", "/q/messages/head?timeout=0", Map.of("Authorization", bad), null)
                .statusCode()).isEqualTo(429);
        HttpResponse<String> admin = server.request("GET", "/q", Map.of("Authorization", bad), null);
        assertThat(admin.statusCode()).as("the ATOM API shares the throttle").isEqualTo(429);
        assertThat(admin.headers().firstValue("Retry-After")).hasValue("60");

        // behind one load balancer every client shares the address: a valid token is still accepted, and a wrong
        // one for another key name is counted apart
        assertThat(server.request("POST", "/q/messages", Map.of(), "x".getBytes()).statusCode())
                .as("a valid token from the same address").isEqualTo(201);
        String otherKey = server.token("http://127.0.0.1/", "OtherRule", "wrong-key");
        assertThat(server.request("POST", "/q/messages", Map.of("Authorization", otherKey), "x".getBytes())
                .statusCode()).isEqualTo(401);

        server.clock.advanceMs(AuthFailureThrottle.DEFAULT_BLOCK_MS - 1_000);
        assertThat(server.request("POST", "/q/messages", Map.of("Authorization", bad), "x".getBytes()).headers()
                .firstValue("Retry-After")).hasValue("1");
        server.clock.advanceMs(1_000);
        assertThat(server.request("POST", "/q/messages", Map.of("Authorization", bad), "x".getBytes()).statusCode())
                .isEqualTo(401);
    }

    @Test
    void requestsWithoutATokenAreNotCountedAsFailedAttempts() {
        for (int i = 0; i < 3 * AuthFailureThrottle.DEFAULT_MAX_FAILURES; i++) {
            assertThat(server.request("POST", "/q/messages", Map.of("Authorization", ""), "x".getBytes())
                    .statusCode()).isEqualTo(401);
        }
        assertThat(server.request("POST", "/q/messages", Map.of(), "x".getBytes()).statusCode()).isEqualTo(201);
    }

    // ============================================================================================== item 15

    @Test
    void clientMistakesAnswer4xxAndLogOneRateLimitedWarnLineWithoutAStackTrace() throws Exception {
        try (LogCapture logs = new LogCapture()) {
            for (String path : new String[] {"/%zz", "/%zz/messages", "/q%zz/Subscriptions", "/q?api-version=%zz"}) {
                try (RawHttp http = new RawHttp(server.port())) {
                    http.write(headers("GET", path, server.authorization));
                    RawHttp.Response r = http.read();
                    assertThat(r.status()).as(path).isEqualTo(400);
                    assertThat(r.body()).as(path).startsWith("<Error><Code>400</Code><Detail>");
                }
            }
            byte[] form = ("a=" + "x".repeat(20_000)).getBytes(StandardCharsets.UTF_8);
            HttpResponse<String> admin = server.request("PUT", "/q2",
                    Map.of("Content-Type", "application/x-www-form-urlencoded"), form);
            assertThat(admin.statusCode()).isEqualTo(400);
            byte[] big = new byte[1024 * 1024 + 64 * 1024]; // over the 1 MB limit, within what is drained
            Arrays.fill(big, (byte) 'x');
            HttpResponse<String> tooBig = server.request("PUT", "/q3", Map.of("Content-Type",
                    "application/atom+xml"), big);
            assertThat(tooBig.statusCode()).isEqualTo(413);
            assertThat(tooBig.body()).contains("<Code>413</Code>");

            assertThat(logs.events(Level.ERROR)).as("client mistakes are not errors").isEmpty();
            assertThat(logs.messages(Level.WARN, HttpGuard.class)).as("at most one line per second per status")
                    .hasSize(2).allSatisfy(m -> assertThat(m).doesNotContain("\n"));
            assertThat(logs.events(Level.WARN)).extracting(ILoggingEvent::getThrowableProxy).containsOnlyNulls();

            server.clock.advanceMs(1_000);
            try (RawHttp http = new RawHttp(server.port())) {
                http.write(headers("GET", "/%zz", server.authorization));
                assertThat(http.read().status()).isEqualTo(400);
            }
            assertThat(logs.messages(Level.WARN, HttpGuard.class)).hasSize(3).last().asString()
                    .startsWith("HTTP 400 for GET /%zz from 127.0.0.1: The path '/%zz' has an invalid "
                            + "percent-encoding.")
                    .endsWith("(4 similar lines suppressed)");
        }
    }
}
