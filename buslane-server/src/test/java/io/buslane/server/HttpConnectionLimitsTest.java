package io.buslane.server;

import io.buslane.common.time.ManualClock;
import io.buslane.server.ops.Health;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP port's connection limits (docs/limits.md#http, docs/security.md): a connection cap, and an idle timeout
 * that also bounds how long a request's headers may take (a slowloris client). Before them, 2,000 silent sockets
 * and 500 slowloris requests stayed open forever and the broker ran out of file descriptors. Time is a
 * {@link ManualClock}: the test moves it and runs the sweep, it never waits for the timeout.
 */
class HttpConnectionLimitsTest {

    private static final long IDLE_MS = 30_000;

    private Vertx vertx;
    private ManualClock clock;
    private HttpEndpoint http;
    private final CompletableFuture<RoutingContext> held = new CompletableFuture<>();

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx();
        clock = new ManualClock();
        Health health = new Health(clock);
        http = HttpEndpoint.start(vertx, "127.0.0.1", 0, health::report, new HttpLimits(5, IDLE_MS), clock);
        http.mount(router -> router.get("/hold").handler(held::complete));
    }

    @AfterEach
    void stop() throws Exception {
        http.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private Socket connect() throws Exception {
        Socket s = new Socket("127.0.0.1", http.port());
        s.setSoTimeout(5_000);
        return s;
    }

    /** Whether the server has closed the socket (a read returns end of stream or fails with a reset). */
    private static boolean closedByServer(Socket s) throws Exception {
        try {
            InputStream in = s.getInputStream();
            while (true) {
                int b = in.read();
                if (b < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (java.io.IOException reset) {
            return true;
        }
    }

    private void awaitOpen(int n) throws Exception {
        for (int i = 0; i < 500 && openCount() != n; i++) {
            Thread.sleep(10); // the server's accept runs on its loop: wait for it to count, not for a timeout
        }
        assertThat(openCount()).isEqualTo(n);
    }

    private void awaitNoRequestInFlight() throws Exception {
        for (int i = 0; i < 500; i++) {
            CompletableFuture<Integer> n = new CompletableFuture<>();
            http.context().runOnContext(v -> n.complete(http.connections().inFlightCount()));
            if (n.get(5, TimeUnit.SECONDS) == 0) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("the request is still in flight");
    }

    private int openCount() throws Exception {
        CompletableFuture<Integer> n = new CompletableFuture<>();
        http.context().runOnContext(v -> n.complete(http.connections().openCount()));
        return n.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aConnectionBeyondTheCapIsClosedAsItArrivesAndHealthStillAnswersOnceOneGoes() throws Exception {
        List<Socket> silent = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            silent.add(connect());
        }
        awaitOpen(5);
        try (Socket sixth = connect()) {
            assertThat(closedByServer(sixth)).isTrue();
        }
        silent.get(0).close();
        awaitOpen(4);
        try (Socket s = connect()) {
            s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII))
                    .startsWith("HTTP/1.1 503"); // answered (503: the test's broker is not ready)
        }
        for (Socket s : silent) {
            s.close();
        }
    }

    @Test
    void aSilentSocketAndASlowlorisRequestAreClosedAfterTheIdleTimeout() throws Exception {
        try (Socket silent = connect(); Socket slowloris = connect()) {
            OutputStream out = slowloris.getOutputStream();
            out.write("GET /health HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII)); // never ends
            awaitOpen(2);
            clock.advanceMs(IDLE_MS - 1);
            out.write("X-Slow: 1\r\n".getBytes(StandardCharsets.US_ASCII));
            http.sweepNow();
            assertThat(openCount()).as("not yet").isEqualTo(2);
            clock.advanceMs(1);
            out.write("X-Slow: 2\r\n".getBytes(StandardCharsets.US_ASCII));
            http.sweepNow();
            assertThat(closedByServer(silent)).isTrue();
            assertThat(closedByServer(slowloris)).isTrue();
            assertThat(http.connections().timedOutCount()).isEqualTo(2);
        }
    }

    @Test
    void aRequestInFlightKeepsItsConnectionAndAnIdleKeepAliveConnectionGoesAfterItsResponse() throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            out.write("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            RoutingContext ctx = held.get(5, TimeUnit.SECONDS); // like a REST receive waiting for a message
            clock.advanceMs(10 * IDLE_MS);
            http.sweepNow();
            assertThat(openCount()).as("a request is in flight").isEqualTo(1);

            http.context().runOnContext(v -> ctx.response().end("done"));
            byte[] head = s.getInputStream().readNBytes(12);
            assertThat(new String(head, StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200");
            awaitNoRequestInFlight(); // the response's end handler runs on the loop after the bytes are written
            clock.advanceMs(IDLE_MS - 1);
            http.sweepNow();
            assertThat(openCount()).as("keep-alive, idle for less than the timeout").isEqualTo(1);
            clock.advanceMs(1);
            http.sweepNow();
            assertThat(http.connections().timedOutCount()).as("closed by the sweep").isEqualTo(1);
            assertThat(closedByServer(s)).isTrue();
        }
    }
}
