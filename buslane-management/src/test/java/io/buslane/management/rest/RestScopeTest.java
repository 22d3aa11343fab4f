package io.buslane.management.rest;

import io.buslane.common.auth.SasRule;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A REST path cannot escape its token's scope (docs/security.md, "One canonical address"): the scope check and the
 * entity lookup read one parse of the path, and a path that does not canonicalise is refused with 400 before
 * anything is looked up. Each request goes over a raw socket so its path reaches the server byte for byte. Before
 * the canonical parser, the scope check read {@code /queue.1/x://y/myqueue} as inside {@code queue.1} and the
 * lookup as {@code myqueue}: a token for {@code queue.1} sent into, received from, peek-locked and settled on
 * {@code myqueue} and peeked subscriptions.
 */
class RestScopeTest {

    private static final String LOCK = "/00000000-0000-0000-0000-000000000001";
    private static final List<String> ESCAPES = List.of(
            "/queue.1/x://y/myqueue",
            "/queue.1/X://Y/MyQueue",
            "/queue.1/x:%2F%2Fy/myqueue",
            "/queue.1%2F..%2Fmyqueue",
            "/queue.1/..%2Fmyqueue",
            "/queue.1/../myqueue",
            "/queue.1/%2e%2e/myqueue",
            "/queue.1//myqueue",
            "/queue.1/./myqueue",
            "/queue.1%2F%2Fmyqueue",
            "/queue.1/%2Fmyqueue",
            "/queue.1%2F.%2Fmyqueue",
            "/queue.1/myqueue%3F",
            "/queue.1/%23/myqueue");

    private RestTestServer server;
    private String queue1Token;

    @BeforeEach
    void start() throws Exception {
        server = RestTestServer.validating();
        server.create("/queue.1", "QueueDescription", "");
        server.create("/myqueue", "QueueDescription", "");
        server.create("/t", "TopicDescription", "");
        server.create("/t/Subscriptions/s", "SubscriptionDescription", "");
        // a namespace rule's token signed for queue.1 only
        queue1Token = server.token("http://127.0.0.1/queue.1", SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
        assertThat(raw("POST", "/myqueue/messages", server.authorization)).isEqualTo(201);
        assertThat(raw("POST", "/t/messages", server.authorization)).isEqualTo(201);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void aTokenForOneQueueCannotSendIntoAnotherThroughAPathThatDoesNotCanonicalise() throws Exception {
        for (String escape : ESCAPES) {
            assertThat(raw("POST", escape + "/messages", queue1Token)).as(escape).isEqualTo(400);
        }
        assertThat(active("myqueue")).isEqualTo(1);
        assertThat(active("queue.1")).isZero();
    }

    @Test
    void norReceiveNorPeekLockNorSettleThere() throws Exception {
        for (String escape : ESCAPES) {
            assertThat(raw("DELETE", escape + "/messages/head?timeout=0", queue1Token)).as(escape).isEqualTo(400);
            assertThat(raw("POST", escape + "/messages/head?timeout=0", queue1Token)).as(escape).isEqualTo(400);
            for (String method : List.of("PUT", "DELETE", "POST")) {
                assertThat(raw(method, escape + "/messages/1" + LOCK, queue1Token)).as(method + " " + escape)
                        .isEqualTo(400);
            }
            String sub = escape.replace("myqueue", "t/subscriptions/s");
            assertThat(raw("POST", sub + "/messages/head?timeout=0", queue1Token)).as(sub).isEqualTo(400);
            assertThat(raw("DELETE", sub + "/messages/head?timeout=0", queue1Token)).as(sub).isEqualTo(400);
        }
        assertThat(active("myqueue")).isEqualTo(1);
        assertThat(active("t/Subscriptions/s")).isEqualTo(1);
    }

    @Test
    void anEncodedSlashIsASeparatorThatNamesAnotherEntityUnderTheScopeNotAnEscape() throws Exception {
        // the Java admin client escapes the '/' of entity names; read once, it names queue.1/myqueue, which the
        // token covers by path but which does not exist: myqueue is not touched
        assertThat(raw("POST", "/queue.1%2Fmyqueue/messages", queue1Token)).isEqualTo(410);
        assertThat(raw("DELETE", "/queue.1%2Fmyqueue/messages/head?timeout=0", queue1Token)).isEqualTo(410);
        assertThat(active("myqueue")).isEqualTo(1);
    }

    @Test
    void theTokenStillReachesItsOwnQueueInEveryCanonicalSpelling() throws Exception {
        for (String path : List.of("/queue.1", "/QUEUE.1", "/queue%2E1", "/queue.1/")) {
            assertThat(raw("POST", path + "/messages", queue1Token)).as(path).isEqualTo(201);
        }
        assertThat(active("queue.1")).isEqualTo(4);
        assertThat(raw("POST", "/myqueue/messages", queue1Token)).isEqualTo(401);
        assertThat(raw("DELETE", "/Queue.1/messages/head", queue1Token)).isEqualTo(200);
        assertThat(active("queue.1")).isEqualTo(3);
    }

    private long active(String entity) throws Exception {
        return server.engine.counts(entity).get().activeMessageCount();
    }

    /** Sends one request with a one-byte body over a raw socket; returns the status code. */
    private int raw(String method, String path, String authorization) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(10_000);
            String request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: " + authorization
                    + "\r\nContent-Type: text/plain\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx";
            OutputStream out = socket.getOutputStream();
            out.write(request.getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c >= 0 && c != '\n'; c = in.read()) {
                line.append((char) c);
            }
            String[] parts = line.toString().split(" ");
            if (parts.length < 2) {
                throw new AssertionError(method + " " + path + ": no status line, got '" + line + "'");
            }
            return Integer.parseInt(parts[1]);
        }
    }
}
