package io.buslane.amqp.transport;

import org.apache.qpid.proton.engine.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * Stateless. A proton-j setting its public API does not expose: how many bytes of frames the transport encodes per
 * output pass before it stops ("frame buffer full", 64 KiB by default).
 *
 * <p>Why: every {@code Transport.pending()} walks the connection's whole transport work list (twice), and at 64 KiB
 * per pass a receiver with 1,000 credits of 1 KiB messages queued makes ~16 passes, each over all still-queued
 * deliveries: with 4 such links on a connection (topic fan-out) the profile showed ~90 % of the broker's CPU in
 * those walks ({@code TransportImpl.processTransportWork}). Letting a pass fill the whole output buffer (the
 * advertised max frame size, 256 KiB) cuts the walks per message by 4.
 */
final class ProtonTuning {

    private static final Logger LOG = LoggerFactory.getLogger(ProtonTuning.class);

    private ProtonTuning() {
    }

    /** Sets the transport's frame-writer full mark to {@code bytes}; leaves proton-j's default if it cannot. */
    static void encodePerPass(Transport transport, int bytes) {
        try {
            Field f = transport.getClass().getDeclaredField("_frameWriter");
            f.setAccessible(true);
            Object writer = f.get(transport);
            Method set = writer.getClass().getDeclaredMethod("setFrameWriterMaxBytes", int.class);
            set.setAccessible(true);
            set.invoke(writer, bytes);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debug("proton-j frame writer mark left at its default: {}", e.toString());
        }
    }
}
