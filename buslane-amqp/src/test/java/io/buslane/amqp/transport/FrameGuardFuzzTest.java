package io.buslane.amqp.transport;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.buslane.amqp.fuzz.KnownIssues;
import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.engine.Collector;
import org.apache.qpid.proton.engine.Connection;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.EndpointState;
import org.apache.qpid.proton.engine.Event;
import org.apache.qpid.proton.engine.Link;
import org.apache.qpid.proton.engine.Receiver;
import org.apache.qpid.proton.engine.Sasl;
import org.apache.qpid.proton.engine.Transport;
import org.apache.qpid.proton.engine.TransportException;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * Coverage-guided fuzzing of {@link FrameGuard} and of proton-j's frame decoder behind it, as
 * {@code AmqpConnection.pushToProton} drives them (a server transport with SASL that may be skipped), without the
 * rest of the broker: faster than {@link AmqpConnectionFuzzTest}, so it reaches further into framing.
 *
 * <p>Input: the bytes a client sends. Invariants:
 * <ul>
 *   <li>only {@link FrameGuard.Violation} or proton-j's {@link TransportException} ends the input early; no other
 *       exception, no {@link StackOverflowError}, no {@link OutOfMemoryError}, bounded time (but for
 *       {@link KnownIssues#protonRejectsWithRuntimeException}, reported and not fixed yet);</li>
 *   <li>the guard decides the same whether the bytes arrive at once or in pieces: it passes on the same bytes and
 *       raises the same violation (it promises to pass bytes on unchanged, in order, whatever the reads).</li>
 * </ul>
 * Seeds: the recorded SDK conversations of {@link AmqpConnectionFuzzTest} plus the hostile frames of
 * {@code HostileWireTest}, in {@code FrameGuardFuzzTestInputs/guardThenProton/}.
 */
class FrameGuardFuzzTest {

    private static final int MAX_FRAME = 65_536;
    private static final AmqpLimits LIMITS = AmqpLimits.defaults();

    @FuzzTest(maxDuration = "30s")
    void guardThenProton(byte[] input) {
        // 1. the guard alone, whole and in pieces: the same bytes pass and the same violation ends them
        Result whole = guardOnly(input, input.length);
        Result pieces = guardOnly(input, InProcessBroker.chunkSize(input.length) % 97 + 1);
        if (!Arrays.equals(whole.passed, pieces.passed) || !Objects.equals(whole.violation, pieces.violation)) {
            throw new AssertionError("FrameGuard decides differently when the same bytes arrive in pieces: whole "
                    + whole + ", in pieces " + pieces);
        }
        // 2. the guard in front of a proton-j server transport that answers opens and attaches
        ServerTransport server = new ServerTransport();
        FrameGuard guard = new FrameGuard(LIMITS, MAX_FRAME, () -> true);
        try {
            byte[] copy = input.clone();
            guard.feed(copy, 0, copy.length, server::push);
        } catch (FrameGuard.Violation | TransportException expected) {
            // the broker closes the connection
        } catch (RuntimeException e) {
            if (!KnownIssues.protonRejectsWithRuntimeException(e)) {
                throw e;
            }
        }
        server.drainOutput();
    }

    private record Result(byte[] passed, String violation) {
        @Override
        public String toString() {
            return passed.length + " bytes passed, violation " + violation;
        }
    }

    private static Result guardOnly(byte[] input, int chunk) {
        byte[] copy = input.clone(); // the guard may lower a credit in place
        FrameGuard guard = new FrameGuard(LIMITS, MAX_FRAME, () -> true);
        ByteArrayOutputStream passed = new ByteArrayOutputStream();
        String violation = null;
        try {
            for (int off = 0; off < copy.length; off += chunk) {
                guard.feed(copy, off, Math.min(chunk, copy.length - off), passed::write);
            }
        } catch (FrameGuard.Violation v) {
            violation = v.condition() + ": " + v.getMessage();
        }
        return new Result(passed.toByteArray(), violation);
    }

    /** A proton-j server transport, set up as {@code AmqpConnection} sets up its own, with a minimal responder. */
    private static final class ServerTransport {
        final Transport transport = Proton.transport();
        final Connection connection = Proton.connection();
        final Collector collector = Proton.collector();
        final Sasl sasl;

        ServerTransport() {
            transport.setMaxFrameSize(MAX_FRAME);
            transport.setChannelMax(LIMITS.channelMax());
            transport.setIdleTimeout(240_000);
            connection.collect(collector);
            transport.bind(connection);
            sasl = transport.sasl();
            sasl.server();
            sasl.allowSkip(true);
            sasl.setMechanisms(AmqpConnection.MECHANISMS);
        }

        void push(byte[] bytes, int offset, int length) {
            int off = offset;
            int end = offset + length;
            while (off < end) {
                int capacity = transport.capacity();
                if (capacity <= 0) {
                    throw new TransportException("the transport accepts no more input");
                }
                int n = Math.min(capacity, end - off);
                transport.tail().put(bytes, off, n);
                off += n;
                transport.process();
                if (sasl.getState() != Sasl.SaslState.PN_SASL_PASS && sasl.getRemoteMechanisms().length > 0) {
                    byte[] response = new byte[sasl.pending()];
                    sasl.recv(response, 0, response.length);
                    sasl.done(Sasl.SaslOutcome.PN_SASL_OK);
                }
                respond();
                drainOutput();
            }
        }

        private void respond() {
            Event event;
            while ((event = collector.peek()) != null) {
                switch (event.getType()) {
                    case CONNECTION_REMOTE_OPEN -> connection.open();
                    case CONNECTION_REMOTE_CLOSE -> connection.close();
                    case SESSION_REMOTE_OPEN -> {
                        if (event.getSession().getLocalState() == EndpointState.UNINITIALIZED) {
                            event.getSession().setIncomingCapacity(Integer.MAX_VALUE);
                            event.getSession().open();
                        }
                    }
                    case SESSION_REMOTE_CLOSE -> event.getSession().close();
                    case LINK_REMOTE_OPEN -> {
                        Link link = event.getLink();
                        if (link != null && link.getLocalState() == EndpointState.UNINITIALIZED) {
                            link.setSource(link.getRemoteSource());
                            link.setTarget(link.getRemoteTarget());
                            link.open();
                            if (link instanceof Receiver r) {
                                r.flow(100);
                            }
                        }
                    }
                    case LINK_REMOTE_CLOSE, LINK_REMOTE_DETACH -> {
                        if (event.getLink() != null) {
                            event.getLink().close();
                        }
                    }
                    case DELIVERY -> {
                        Delivery d = event.getDelivery();
                        if (d.getLink() instanceof Receiver r && d.isReadable() && !d.isPartial()) {
                            byte[] message = new byte[Math.max(0, d.pending())];
                            r.recv(message, 0, message.length);
                            r.advance();
                            d.settle();
                            r.flow(1);
                        }
                    }
                    default -> {
                        // nothing to answer
                    }
                }
                collector.pop();
            }
        }

        void drainOutput() {
            try {
                ByteBuffer head;
                while ((head = transport.head()).hasRemaining()) {
                    transport.pop(head.remaining());
                }
            } catch (TransportException expected) {
                // output after a protocol error
            }
        }
    }
}
