package io.buslane.amqp.transport;

import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import io.buslane.testsupport.amqp.AmqpFrames;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.security.SaslInit;

import java.io.DataInputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The heap an idle, unauthenticated connection costs (SASL done, AMQP open, one session): measured over a few
 * hundred connections against the in-process listener, and bounded, so that the default connection cap fits in a
 * small heap (docs: "Limits").
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdleConnectionHeapTest {

    private static final int CONNECTIONS = 300;

    @Test
    void anIdleConnectionCostsLittleHeap() throws Exception {
        Engine engine = Engine.start(new EngineConfig(Clock.system(), Storage.of(new InMemoryJournalFactory()), 1,
                ThreadingMode.DEDICATED));
        Vertx vertx = Vertx.vertx();
        AmqpLimits d = AmqpLimits.defaults();
        AmqpLimits patient = new AmqpLimits(60_000, 60_000, d.maxSessions(), d.maxLinksPerSession(), d.maxLinks(),
                d.maxBufferedBytes(), d.maxPreAuthBufferedBytes(), d.maxDispositionRange(), d.maxNestingDepth());
        AmqpServer server = AmqpServer.start(vertx, engine, Clock.system(),
                new CbsAuthorizer(SasValidator.emulatorDefault()),
                AmqpOptions.defaults("127.0.0.1", 0).withLimits(patient));
        AmqpFrames frames = new AmqpFrames();
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf("ANONYMOUS"));
        // the whole handshake pipelined, as clients may: SASL ANONYMOUS, AMQP open, one session
        byte[] hello = AmqpFrames.concat(AmqpFrames.SASL_HEADER, frames.frame(AmqpFrames.TYPE_SASL, 0, init, null),
                AmqpFrames.AMQP_HEADER, frames.frame(0, AmqpFrames.open()), frames.frame(0, AmqpFrames.begin()));
        List<Socket> clients = new ArrayList<>();
        try {
            // warm up: classes loaded, pools filled
            for (int i = 0; i < 20; i++) {
                clients.add(connect(server.port(), hello));
            }
            server.sweepNow(-1);
            long before = usedHeapAfterGc();
            for (int i = 0; i < CONNECTIONS; i++) {
                clients.add(connect(server.port(), hello));
            }
            server.sweepNow(-1); // what the periodic sweep does once they have been quiet for a second
            long after = usedHeapAfterGc();
            long perConnection = (after - before) / CONNECTIONS;
            System.out.printf("heap per idle connection: %d bytes%n", perConnection);
            assertThat(perConnection).as("bytes of heap per idle connection").isLessThan(50_000);
        } finally {
            for (Socket c : clients) {
                c.close();
            }
            server.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            engine.close();
        }
    }

    /** Connects, sends the handshake and reads the broker's answer up to its begin. */
    private static Socket connect(int port, byte[] hello) throws Exception {
        Socket s = new Socket("127.0.0.1", port);
        s.setSoTimeout(5_000);
        s.getOutputStream().write(hello);
        s.getOutputStream().flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        in.readFully(new byte[8]); // SASL header
        skipFrame(in); // mechanisms
        skipFrame(in); // outcome
        in.readFully(new byte[8]); // AMQP header
        skipFrame(in); // open
        skipFrame(in); // begin
        return s;
    }

    private static void skipFrame(DataInputStream in) throws Exception {
        int size = in.readInt();
        in.readFully(new byte[size - 4]);
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
