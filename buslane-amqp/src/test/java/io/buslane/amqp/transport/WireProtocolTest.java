package io.buslane.amqp.transport;

import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.testsupport.amqp.AmqpFrames;
import io.buslane.testsupport.amqp.RawAmqpClient;
import io.vertx.core.Vertx;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.security.SaslCode;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The AMQP layer on the wire, frame by frame, against the in-process listener (a real engine, in memory): what the
 * broker answers to open, begin, attach, flow, transfer, disposition, detach, end and close, and to the ordinary
 * error paths. No sleeps: every step waits only for the broker's next frame.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class WireProtocolTest {

    private static final byte[] MESSAGE = {0x00, 0x53, 0x75, (byte) 0xa0, 5, 'h', 'e', 'l', 'l', 'o'};
    private static Vertx vertx;
    private static Engine engine;
    private static AmqpServer server;

    @BeforeAll
    static void start() throws Exception {
        engine = Engine.start(new EngineConfig(Clock.system(), Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.DEDICATED));
        vertx = Vertx.vertx();
        server = AmqpServer.start(vertx, engine, Clock.system(), new CbsAuthorizer(SasValidator.emulatorDefault()),
                AmqpOptions.defaults("127.0.0.1", 0));
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        engine.close();
    }

    private static String newQueue() throws Exception {
        String name = "wire-" + UUID.randomUUID();
        engine.createQueue(io.buslane.engine.entity.QueueProperties.builder(name).build()).get(5, TimeUnit.SECONDS);
        return name;
    }

    private static RawAmqpClient plain() throws Exception {
        return RawAmqpClient.connect(server.port(), 5_000).openPlain(SasRule.EMULATOR_KEY_NAME, SasRule.EMULATOR_KEY);
    }

    @Test
    void saslOffersTheServiceBusMechanismsAndOpenAdvertisesTheLimits() throws Exception {
        try (RawAmqpClient c = RawAmqpClient.connect(server.port(), 5_000)) {
            c.write(AmqpFrames.SASL_HEADER);
            assertThat(c.readHeader()).isEqualTo(AmqpFrames.SASL_HEADER);
            SaslMechanisms mechanisms = c.expect(SaslMechanisms.class);
            assertThat(Arrays.asList(mechanisms.getSaslServerMechanisms())).containsExactly(
                    Symbol.valueOf("MSSBCBS"), Symbol.valueOf("ANONYMOUS"), Symbol.valueOf("PLAIN"));
        }
        try (RawAmqpClient c = RawAmqpClient.connect(server.port(), 5_000)) {
            assertThat(c.sasl("ANONYMOUS", null).getCode()).isEqualTo(SaslCode.OK);
            c.write(AmqpFrames.AMQP_HEADER);
            assertThat(c.readHeader()).isEqualTo(AmqpFrames.AMQP_HEADER);
            c.send(0, AmqpFrames.open());
            Open open = c.expect(Open.class);
            assertThat(open.getContainerId()).startsWith("buslane-");
            assertThat(open.getMaxFrameSize().longValue()).isEqualTo(262_144);
            assertThat(open.getChannelMax().intValue()).isEqualTo(AmqpLimits.defaults().channelMax());
            assertThat(open.getIdleTimeOut()).isNotNull();
            assertThat(open.getProperties()).containsEntry(Symbol.valueOf("product"), "Buslane");
        }
    }

    @Test
    void sendsAndReceivesAMessageAndSettlesIt() throws Exception {
        String queue = newQueue();
        try (RawAmqpClient c = plain()) {
            c.send(0, AmqpFrames.attachSender(0, queue));
            Attach attached = c.expect(Attach.class);
            assertThat(attached.getRole()).isEqualTo(Role.RECEIVER);
            assertThat(((Target) attached.getTarget()).getAddress()).isEqualTo(queue);
            assertThat(attached.getMaxMessageSize().longValue()).isEqualTo(256L * 1024);
            Flow credit = c.expect(Flow.class);
            assertThat(credit.getLinkCredit().longValue()).isPositive();

            c.send(0, AmqpFrames.transfer(0, 0, false), MESSAGE);
            Disposition accepted = c.expect(Disposition.class);
            assertThat(accepted.getFirst().longValue()).isZero();
            assertThat(accepted.getSettled()).isTrue();
            assertThat(accepted.getState()).isInstanceOf(Accepted.class);

            c.send(0, AmqpFrames.attachReceiver(1, queue));
            c.expect(Attach.class);
            c.send(0, AmqpFrames.flow(1, 10));
            Transfer delivered = c.expect(Transfer.class);
            assertThat(delivered.getDeliveryTag().getLength()).as("the lock token").isEqualTo(16);
            Disposition complete = new Disposition();
            complete.setRole(Role.RECEIVER);
            complete.setFirst(delivered.getDeliveryId());
            complete.setSettled(false);
            complete.setState(Accepted.getInstance());
            c.send(0, complete);
            Disposition settled = c.expect(Disposition.class);
            assertThat(settled.getSettled()).isTrue();
            assertThat(settled.getState()).isInstanceOf(Accepted.class);

            c.send(0, AmqpFrames.detach(1));
            assertThat(c.expect(Detach.class).getClosed()).isTrue();
            c.send(0, new End());
            c.expect(End.class);
            c.send(0, new Close());
            c.expect(Close.class);
        }
        assertThat(engine.queue(queue)).isNotNull();
    }

    @Test
    void anAttachToAMissingEntityIsRefusedWithNotFound() throws Exception {
        try (RawAmqpClient c = plain()) {
            c.send(0, AmqpFrames.attachSender(0, "no-such-queue"));
            Attach refused = c.expect(Attach.class);
            assertThat(refused.getTarget()).as("a null terminus: refused").isNull();
            Detach detach = c.expect(Detach.class);
            assertThat(detach.getError().getCondition().toString()).isEqualTo("amqp:not-found");
        }
    }

    @Test
    void anAttachWithoutAnAddressIsRefusedWithInvalidField() throws Exception {
        try (RawAmqpClient c = plain()) {
            Attach attach = AmqpFrames.attachSender(0, "x");
            attach.setTarget(new Target());
            c.send(0, attach);
            Detach detach = c.expect(Detach.class);
            assertThat(detach.getError().getCondition().toString()).isEqualTo("amqp:invalid-field");
        }
    }

    @Test
    void anUndecodableMessageIsRejectedAndTheLinkGoesOn() throws Exception {
        String queue = newQueue();
        try (RawAmqpClient c = plain()) {
            c.send(0, AmqpFrames.attachSender(0, queue));
            c.expect(Attach.class);
            c.send(0, AmqpFrames.transfer(0, 0, false), new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, 50, 1});
            Disposition rejected = c.expect(Disposition.class);
            assertThat(rejected.getState()).isInstanceOf(org.apache.qpid.proton.amqp.messaging.Rejected.class);
            assertThat(((org.apache.qpid.proton.amqp.messaging.Rejected) rejected.getState()).getError()
                    .getCondition().toString()).isEqualTo("amqp:decode-error");
            c.send(0, AmqpFrames.transfer(0, 1, false), MESSAGE);
            assertThat(c.expect(Disposition.class).getState()).isInstanceOf(Accepted.class);
        }
    }

    @Test
    void aSecondSessionWorksBesideTheFirst() throws Exception {
        String queue = newQueue();
        try (RawAmqpClient c = plain()) {
            c.send(1, AmqpFrames.begin());
            Begin begin = c.expect(Begin.class);
            assertThat(begin.getRemoteChannel().intValue()).isEqualTo(1);
            c.send(1, AmqpFrames.attachSender(0, queue));
            assertThat(c.expect(Attach.class).getTarget()).isNotNull();
        }
    }

    @Test
    void garbageInsteadOfAProtocolHeaderEndsTheConnection() throws Exception {
        try (RawAmqpClient c = RawAmqpClient.connect(server.port(), 5_000)) {
            c.write("GET / HTTP/1.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            c.awaitSocketClosed(5_000);
        }
    }
}
