package io.buslane.conformance;

import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import io.buslane.testsupport.amqp.RawAmqpClient;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile clients against the packaged broker (a child process with a 512 MiB heap), as an attacker on the loopback
 * interface would be, without any token: after each attack the broker must still serve the official Java SDK, with
 * {@code /health} answering 200, and its log must show no {@link OutOfMemoryError}. The wire-level details of each
 * item are tested in-process in {@code buslane-amqp} ({@code HostileWireTest}, {@code FrameGuardTest}); this class
 * is the proof that a real broker process survives them together.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HostileClientConformanceTest extends ConformanceBase {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [ { "Name": "hostile" } ],
                    "Topics": []
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    @BeforeAll
    static void start() throws Exception {
        startBroker(CONFIG);
    }

    @AfterEach
    void brokerStillServes() throws Exception {
        assertThat(health()).as("/health after the attack\n%s", broker.logTail(4000)).isEqualTo(200);
        String body = "after-" + System.nanoTime();
        sender("hostile").sendMessage(new ServiceBusMessage(body));
        ServiceBusReceiverClient receiver = receiver("hostile");
        List<String> got = new ArrayList<>();
        for (int i = 0; i < 5 && !got.contains(body); i++) {
            for (ServiceBusReceivedMessage m : receiver.receiveMessages(1, Duration.ofSeconds(10))) {
                got.add(m.getBody().toString());
                receiver.complete(m);
            }
        }
        assertThat(got).as("the SDK is still served\n%s", broker.logTail(4000)).contains(body);
        assertThat(broker.log()).doesNotContain("OutOfMemoryError");
    }

    @Test
    void anEndlessDispositionFreezesNothing() throws Exception {
        for (int i = 0; i < 3; i++) {
            try (RawAmqpClient raw = anonymous()) {
                Disposition d = new Disposition();
                d.setRole(Role.RECEIVER);
                d.setFirst(UnsignedInteger.ZERO);
                d.setLast(UnsignedInteger.valueOf(0xffffffffL));
                d.setSettled(true);
                raw.send(0, d);
                raw.awaitSocketClosed(5_000);
            }
        }
    }

    @Test
    void neverEndingTransfersFromManyUnauthenticatedConnectionsDoNotExhaustTheHeap() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> attacks = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                attacks.add(pool.submit(() -> {
                    try (RawAmqpClient raw = anonymous()) {
                        raw.attachSender(0, "cbs", "$cbs");
                        raw.expect(Attach.class);
                        byte[] chunk = new byte[60_000];
                        for (int n = 0; n < 20_000; n++) { // 1.2 GB if nothing stopped it
                            Transfer t = new Transfer();
                            t.setHandle(UnsignedInteger.ZERO);
                            t.setDeliveryId(UnsignedInteger.ZERO);
                            t.setDeliveryTag(new Binary(new byte[] {1}));
                            t.setMore(true);
                            raw.send(0, t, chunk);
                        }
                    } catch (Exception e) {
                        return null; // the broker dropped the connection: what should happen
                    }
                    throw new AssertionError("the broker took 1.2 GB of an unfinished delivery");
                }));
            }
            for (Future<?> f : attacks) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void deeplyNestedAndOutOfRangeFramesCloseOnlyTheirConnection() throws Exception {
        try (RawAmqpClient raw = anonymous()) {
            raw.attachSender(-1, "huge-handle", "$cbs"); // handle 2^32-1
            raw.awaitSocketClosed(5_000);
        }
        try (RawAmqpClient raw = anonymous()) {
            ByteBuffer body = ByteBuffer.allocate(12 + 3 * 20_000 + 1);
            body.put((byte) 0x00).put((byte) 0x53).put((byte) 0x11); // begin
            body.put((byte) 0xd0).putInt(4 + 3 * 20_000 + 1).putInt(1);
            for (int i = 0; i < 20_000; i++) {
                body.put((byte) 0x00).put((byte) 0x53).put((byte) 0x01);
            }
            body.put((byte) 0x40);
            body.flip();
            ByteBuffer frame = ByteBuffer.allocate(8 + body.remaining());
            frame.putInt(8 + body.remaining()).put((byte) 2).put((byte) 0).putShort((short) 1).put(body);
            raw.write(frame.array());
            raw.awaitSocketClosed(5_000);
        }
    }

    @Test
    void silentSocketsAndTokenlessConnectionsAreClosed() throws Exception {
        List<Socket> silent = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            silent.add(new Socket("127.0.0.1", broker.amqpPort()));
        }
        try (RawAmqpClient idle = anonymous()) {
            idle.awaitSocketClosed(30_000); // no token within 20 s
        }
        for (Socket s : silent) {
            s.setSoTimeout(15_000);
            try (InputStream in = s.getInputStream()) {
                assertThat(in.read()).as("a socket that never sent a byte is closed").isEqualTo(-1);
            } catch (java.net.SocketException reset) {
                // closed by the broker too
            }
            s.close();
        }
    }

    @Test
    void unauthenticatedHundredMegabytePostsAreRefusedBeforeTheirBodies() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(12);
        try {
            List<Future<Integer>> posts = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                posts.add(pool.submit(() -> {
                    HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + broker.httpPort()
                            + "/hostile/messages").toURL().openConnection();
                    c.setRequestMethod("POST");
                    c.setDoOutput(true);
                    c.setFixedLengthStreamingMode(100L << 20);
                    c.setConnectTimeout(5_000);
                    c.setReadTimeout(30_000);
                    byte[] chunk = new byte[1 << 16];
                    try (OutputStream out = c.getOutputStream()) {
                        for (long sent = 0; sent < (100L << 20); sent += chunk.length) {
                            out.write(chunk);
                        }
                    } catch (java.io.IOException refused) {
                        // the broker answered and closed before the body was all sent
                    }
                    try {
                        return c.getResponseCode();
                    } catch (java.io.IOException e) {
                        return -1;
                    }
                }));
            }
            for (Future<Integer> p : posts) {
                assertThat(p.get(120, TimeUnit.SECONDS)).isIn(401, -1);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static RawAmqpClient anonymous() throws Exception {
        RawAmqpClient raw = RawAmqpClient.connect(broker.amqpPort(), 10_000);
        raw.saslHeader();
        raw.saslInit("ANONYMOUS", null);
        raw.amqpHeader();
        raw.open(0);
        raw.begin(0);
        return raw;
    }

    private static int health() throws Exception {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + broker.httpPort() + "/health")
                .toURL().openConnection();
        c.setConnectTimeout(5_000);
        c.setReadTimeout(5_000);
        return c.getResponseCode();
    }
}
