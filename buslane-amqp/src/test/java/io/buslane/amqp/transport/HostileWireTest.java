package io.buslane.amqp.transport;

import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.testsupport.amqp.AmqpFrames;
import io.buslane.testsupport.amqp.RawAmqpClient;
import io.vertx.core.Vertx;
import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.security.SaslCode;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile clients against the in-process AMQP listener (a real engine, in memory), each followed by a well-behaved
 * client that must still be served: the items of the hostile-input review that live in the wire layer. Limits are
 * short (0.4 s to open, 0.8 s to authenticate) so that nothing here waits long.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class HostileWireTest {

    private static final byte[] MESSAGE = {0x00, 0x53, 0x75, (byte) 0xa0, 2, 'h', 'i'};
    private static Vertx vertx;
    private static Engine engine;
    private static AmqpServer server;

    @BeforeAll
    static void start() throws Exception {
        engine = Engine.start(new EngineConfig(Clock.system(), Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.DEDICATED));
        engine.createQueue(QueueProperties.builder("q").build()).get(10, TimeUnit.SECONDS);
        engine.createQueue(QueueProperties.builder("credit").build()).get(10, TimeUnit.SECONDS);
        vertx = Vertx.vertx();
        AmqpLimits d = AmqpLimits.defaults();
        AmqpLimits limits = new AmqpLimits(400, 800, 16, 16, 64, d.maxBufferedBytes(), d.maxPreAuthBufferedBytes(),
                d.maxDispositionRange(), d.maxNestingDepth());
        server = AmqpServer.start(vertx, engine, Clock.system(), new CbsAuthorizer(SasValidator.emulatorDefault()),
                AmqpOptions.defaults("127.0.0.1", 0).withLimits(limits));
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        engine.close();
    }

    private static RawAmqpClient plain() throws Exception {
        return RawAmqpClient.connect(server.port(), 5_000).openPlain(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
    }

    private static String conditionOf(Object closeOrDetach) {
        if (closeOrDetach instanceof Close c) {
            return c.getError().getCondition().toString();
        }
        return ((Detach) closeOrDetach).getError().getCondition().toString();
    }

    /** A well-behaved client still gets a message accepted. */
    private static void assertServes() throws Exception {
        try (RawAmqpClient c = plain()) {
            c.send(0, AmqpFrames.attachSender(0, "q"));
            assertThat(c.expect(Attach.class).getTarget()).isNotNull();
            c.expect(Flow.class);
            c.send(0, AmqpFrames.transfer(0, 0, false), MESSAGE);
            Disposition d = c.expect(Disposition.class);
            assertThat(d.getState()).isInstanceOf(Accepted.class);
        }
    }

    @Test
    void anEndlessDispositionWithoutATokenClosesOnlyItsConnection() throws Exception {
        try (RawAmqpClient bad = RawAmqpClient.connect(server.port(), 5_000).openAnonymous()) {
            bad.send(0, AmqpFrames.endlessDisposition());
            Object last = bad.awaitSocketClosed(3_000);
            assertThat(conditionOf(last)).isEqualTo("amqp:invalid-field");
        }
        assertServes();
    }

    @Test
    void aNeverEndingTransferBeforeAuthenticationIsCutOffAsItArrives() throws Exception {
        try (RawAmqpClient bad = RawAmqpClient.connect(server.port(), 5_000).openAnonymous()) {
            Attach cbs = AmqpFrames.attachSender(0, "$cbs");
            bad.send(0, cbs);
            bad.expect(Attach.class);
            byte[] chunk = new byte[16 * 1024];
            for (int i = 0; i < 5; i++) { // the fifth frame takes it past 64 KiB
                bad.send(0, AmqpFrames.transfer(0, 0, true), chunk);
            }
            Object last = bad.awaitSocketClosed(3_000);
            assertThat(conditionOf(last)).isEqualTo("amqp:resource-limit-exceeded");
        }
        assertServes();
    }

    @Test
    void aSocketThatNeverSendsAByteIsClosed() throws Exception {
        try (RawAmqpClient silent = RawAmqpClient.connect(server.port(), 5_000)) {
            assertThat(silent.awaitSocketClosed(3_000)).isNull();
        }
        assertThat(server.connectionCount()).isLessThanOrEqualTo(1);
    }

    @Test
    void aConnectionThatNeverPutsATokenIsClosed() throws Exception {
        try (RawAmqpClient idle = RawAmqpClient.connect(server.port(), 5_000).openAnonymous()) {
            Object last = idle.awaitSocketClosed(3_000);
            assertThat(conditionOf(last)).isEqualTo("amqp:unauthorized-access");
        }
    }

    @Test
    void aHandleBeyondTheHandleMaxClosesTheConnection() throws Exception {
        try (RawAmqpClient bad = RawAmqpClient.connect(server.port(), 5_000).openAnonymous()) {
            bad.send(0, AmqpFrames.attachSender(0xffffffffL, "$cbs"));
            assertThat(conditionOf(bad.awaitSocketClosed(3_000)))
                    .isEqualTo("amqp:connection:framing-error");
        }
        assertServes();
    }

    @Test
    void deeplyNestedValuesCloseTheConnectionWithoutAStackOverflow() throws Exception {
        try (RawAmqpClient bad = RawAmqpClient.connect(server.port(), 5_000)) {
            bad.sasl("ANONYMOUS", null);
            bad.write(AmqpFrames.AMQP_HEADER);
            bad.readHeader();
            bad.write(AmqpFrames.deeplyNestedOpen(20_000));
            assertThat(conditionOf(bad.awaitSocketClosed(3_000))).isEqualTo("amqp:decode-error");
        }
        assertServes();
    }

    @Test
    void sessionsBeyondTheLimitCloseTheConnection() throws Exception {
        try (RawAmqpClient bad = RawAmqpClient.connect(server.port(), 5_000).openAnonymous()) {
            bad.send(16, AmqpFrames.begin());
            assertThat(conditionOf(bad.awaitSocketClosed(3_000)))
                    .isEqualTo("amqp:connection:framing-error");
        }
    }

    @Test
    void aFailedSaslExchangeClosesTheConnection() throws Exception {
        try (RawAmqpClient bad = RawAmqpClient.connect(server.port(), 5_000)) {
            assertThat(bad.sasl("PLAIN", "\0RootManageSharedAccessKey\0wrong".getBytes(StandardCharsets.UTF_8))
                    .getCode()).isEqualTo(SaslCode.AUTH);
            bad.awaitSocketClosed(3_000);
        }
    }

    @Test
    void aCreditOfTwoToTheThirtyFirstStillDelivers() throws Exception {
        try (RawAmqpClient c = plain()) {
            c.send(0, AmqpFrames.attachSender(0, "credit"));
            c.expect(Attach.class);
            c.send(0, AmqpFrames.transfer(0, 0, false), MESSAGE);
            c.expect(Disposition.class);
            c.send(0, AmqpFrames.attachReceiver(1, "credit"));
            c.expect(Attach.class);
            Flow flow = AmqpFrames.flow(1, 0x80000000L);
            flow.setNextIncomingId(null);
            c.send(0, flow);
            Transfer t = c.expect(Transfer.class);
            assertThat(t.getHandle().longValue()).isEqualTo(1);
        }
    }

    @Test
    void anAbortedTransferLetsTheLinkMoveOn() throws Exception {
        try (RawAmqpClient c = plain()) {
            c.send(0, AmqpFrames.attachSender(0, "q"));
            c.expect(Attach.class);
            c.send(0, AmqpFrames.transfer(0, 0, true), new byte[] {0x00, 0x53});
            Transfer abort = new Transfer();
            abort.setHandle(UnsignedInteger.ZERO);
            abort.setAborted(true);
            c.send(0, abort);
            c.send(0, AmqpFrames.transfer(0, 1, false), MESSAGE);
            Disposition d = c.expect(Disposition.class);
            assertThat(d.getFirst().longValue()).isEqualTo(1);
            assertThat(d.getState()).isInstanceOf(Accepted.class);
        }
    }

    @Test
    void anUnauthenticatedAttachLearnsNothingAboutWhichEntitiesExist() throws Exception {
        try (RawAmqpClient c = RawAmqpClient.connect(server.port(), 5_000).openAnonymous()) {
            c.send(0, AmqpFrames.attachSender(0, "q"));
            String existing = conditionOf(c.expect(Detach.class));
            c.send(0, AmqpFrames.attachSender(1, "no-such-queue"));
            String missing = conditionOf(c.expect(Detach.class));
            assertThat(existing).isEqualTo(missing).isEqualTo("amqp:unauthorized-access");
        }
    }

    @Test
    void aMessageOverTheLimitIsRefusedAsItsFramesArriveAndTheConnectionLives() throws Exception {
        try (RawAmqpClient c = plain()) {
            c.send(0, AmqpFrames.attachSender(0, "q"));
            c.expect(Attach.class);
            byte[] chunk = new byte[60 * 1024];
            for (int i = 0; i < 6; i++) {
                c.send(0, AmqpFrames.transfer(0, 0, true), chunk);
            }
            Detach detach = c.expect(Detach.class);
            assertThat(conditionOf(detach)).isEqualTo("amqp:link:message-size-exceeded");
            c.send(0, AmqpFrames.transfer(0, 0, true), chunk); // still arriving: dropped
            c.send(0, AmqpFrames.attachSender(1, "q"));
            Attach second = c.expect(Attach.class);
            assertThat(second.getName()).isEqualTo("sender-1");
            assertThat(second.getTarget()).as("attached, not refused").isNotNull();
        }
    }

    @Test
    void aLinkIsDetachedWhenItsTokenExpires() throws Exception {
        try (RawAmqpClient c = RawAmqpClient.connect(server.port(), 5_000).openAnonymous()) {
            attachCbs(c);
            long expiry = System.currentTimeMillis() / 1000 + 2;
            c.send(0, AmqpFrames.transfer(0, 0, false), putToken("sb://localhost/q", expiry));
            c.send(0, AmqpFrames.attachSender(2, "q"));
            Attach accepted = c.expect(Attach.class);
            assertThat(accepted.getTarget()).isNotNull();
            Detach detach = c.expect(Detach.class);
            assertThat(detach.getHandle().longValue()).isEqualTo(2);
            assertThat(conditionOf(detach)).isEqualTo("amqp:unauthorized-access");
        }
    }

    @Test
    void aConnectionWithoutATokenCanHoldOnlyAFewTransactions() throws Exception {
        try (RawAmqpClient c = RawAmqpClient.connect(server.port(), 5_000).openAnonymous()) {
            Attach coordinator = AmqpFrames.attachSender(0, "unused");
            coordinator.setTarget(new org.apache.qpid.proton.amqp.transaction.Coordinator());
            c.send(0, coordinator);
            assertThat(c.expect(Attach.class).getTarget()).isNotNull(); // attaching needs no token, as the SDKs do
            c.expect(Flow.class);
            int limit = io.buslane.amqp.link.CoordinatorLink.MAX_OPEN_BEFORE_TOKEN;
            for (int i = 0; i < limit + 3; i++) {
                c.send(0, AmqpFrames.transfer(0, i, false), declare());
                Disposition d = c.expect(Disposition.class);
                if (i < limit) {
                    // the Java SDK declares before it puts its first token
                    assertThat(d.getState()).as("declare %d", i)
                            .isInstanceOf(org.apache.qpid.proton.amqp.transaction.Declared.class);
                    continue;
                }
                assertThat(d.getState()).isInstanceOf(org.apache.qpid.proton.amqp.messaging.Rejected.class);
                Object condition = ((org.apache.qpid.proton.amqp.messaging.Rejected) d.getState()).getError()
                        .getCondition();
                assertThat(String.valueOf(condition)).isEqualTo("amqp:unauthorized-access");
            }
        }
    }

    private static byte[] declare() {
        Message m = Proton.message();
        m.setBody(new AmqpValue(new org.apache.qpid.proton.amqp.transaction.Declare()));
        byte[] bytes = new byte[256];
        int n = m.encode(bytes, 0, bytes.length);
        return java.util.Arrays.copyOf(bytes, n);
    }

    @Test
    void anAddressThatDoesNotCanonicaliseIsRefusedAsAnArgumentErrorBeforeAnythingIsLookedUp() throws Exception {
        try (RawAmqpClient c = RawAmqpClient.connect(server.port(), 5_000).openAnonymous()) {
            attachCbs(c);
            c.send(0, AmqpFrames.transfer(0, 0, false), putToken("sb://localhost/q",
                    System.currentTimeMillis() / 1000 + 3600));
            long handle = 2;
            for (String address : List.of("q/x://y/credit", "sb://localhost/q//credit", "q/../credit", "q/./credit",
                    "q/$bogus", "q/Subscriptions")) {
                c.send(0, AmqpFrames.attachSender(handle, address));
                Attach refused = c.expect(Attach.class);
                assertThat(refused.getTarget()).as(address).isNull();
                Detach detach = c.expect(Detach.class);
                assertThat(conditionOf(detach)).as(address).isEqualTo("com.microsoft:argument-error");
                assertThat(detach.getError().getDescription()).as(address).contains("is not a valid entity address");
                handle++;
                c.send(0, AmqpFrames.attachReceiver(handle, address));
                assertThat(conditionOf(c.expect(Detach.class))).as(address).isEqualTo("com.microsoft:argument-error");
                handle++;
            }
            // the token's own queue, spelt as the SDKs spell it, still attaches
            c.send(0, AmqpFrames.attachSender(handle, "amqps://LOCALHOST:5671/Q/"));
            assertThat(c.expect(Attach.class).getTarget()).isNotNull();
        }
    }

    /** Attaches the {@code $cbs} request link (handle 0) and its reply link (handle 1, address cbs-reply). */
    private static void attachCbs(RawAmqpClient c) throws Exception {
        c.send(0, AmqpFrames.attachSender(0, "$cbs"));
        c.expect(Attach.class);
        Attach reply = AmqpFrames.attachReceiver(1, "$cbs");
        ((Target) reply.getTarget()).setAddress("cbs-reply");
        c.send(0, reply);
        c.expect(Attach.class);
    }

    private static byte[] putToken(String audience, long expirySeconds) throws Exception {
        String resource = URLEncoder.encode(audience, StandardCharsets.UTF_8);
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(SasRule.EMULATOR_KEY.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        String signature = Base64.getEncoder().encodeToString(
                mac.doFinal((resource + "\n" + expirySeconds).getBytes(StandardCharsets.UTF_8)));
        String token = "SharedAccessSignature sr=" + resource + "&sig="
                + URLEncoder.encode(signature, StandardCharsets.UTF_8) + "&se=" + expirySeconds + "&skn="
                + SasRule.EMULATOR_KEY_NAME;
        Message m = Proton.message();
        Properties p = new Properties();
        p.setMessageId("1");
        p.setReplyTo("cbs-reply");
        m.setProperties(p);
        m.setApplicationProperties(new ApplicationProperties(Map.of("operation", "put-token",
                "type", "servicebus.windows.net:sastoken", "name", audience)));
        m.setBody(new AmqpValue(token));
        ByteBuffer out = ByteBuffer.allocate(4096);
        byte[] bytes = new byte[4096];
        int n = m.encode(bytes, 0, bytes.length);
        out.put(bytes, 0, n);
        return java.util.Arrays.copyOf(bytes, n);
    }

    static Binary tag(int i) {
        return new Binary(new byte[] {(byte) i});
    }
}
