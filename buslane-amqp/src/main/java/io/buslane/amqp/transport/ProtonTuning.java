package io.buslane.amqp.transport;

import org.apache.qpid.proton.engine.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;

/**
 * Stateless. Two proton-j settings its public API does not expose. First, how many bytes of frames the transport
 * encodes per output pass before it stops ("frame buffer full", 64 KiB by default).
 *
 * <p>Why: every {@code Transport.pending()} walks the connection's whole transport work list (twice), and at 64 KiB
 * per pass a receiver with 1,000 credits of 1 KiB messages queued makes ~16 passes, each over all still-queued
 * deliveries: with 4 such links on a connection (topic fan-out) the profile showed ~90 % of the broker's CPU in
 * those walks ({@code TransportImpl.processTransportWork}). Letting a pass fill the whole output buffer (the
 * advertised max frame size, 256 KiB) cuts the walks per message by 4.
 *
 * <p>Second, {@link #releaseBuffers}: proton-j gives each transport an input and an output buffer of the max frame
 * size (256 KiB each) and keeps them for the connection's life (it releases only buffers over 2 MiB): 576 KiB of
 * heap per idle connection, measured. Dropping them while a connection is quiet (proton-j allocates them again on
 * its next read or write) brings an idle connection to a few KiB.
 */
final class ProtonTuning {

    private static final Logger LOG = LoggerFactory.getLogger(ProtonTuning.class);

    private ProtonTuning() {
    }

    private static final Field FRAME_PARSER = field("org.apache.qpid.proton.engine.impl.TransportImpl",
            "_frameParser");
    private static final Field OUTPUT_PROCESSOR = field("org.apache.qpid.proton.engine.impl.TransportImpl",
            "_outputProcessor");
    private static final Field INPUT_BUFFER = field("org.apache.qpid.proton.engine.impl.FrameParser",
            "_inputBuffer");
    private static final Field OUTPUT_BUFFER = field("org.apache.qpid.proton.engine.impl.TransportOutputAdaptor",
            "_outputBuffer");
    private static final Field OUTPUT_HEAD = field("org.apache.qpid.proton.engine.impl.TransportOutputAdaptor",
            "_head");

    private static Field field(String className, String name) {
        try {
            Field f = Class.forName(className).getDeclaredField(name);
            f.setAccessible(true);
            return f;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debug("proton-j field {}.{} not reachable: idle buffers are kept", className, name);
            return null;
        }
    }

    /**
     * Drops the transport's input and output buffers if they hold nothing (proton-j allocates them again when it
     * next needs them). Call only on the connection's thread, between reads and writes.
     */
    static void releaseBuffers(Transport transport) {
        if (FRAME_PARSER == null || OUTPUT_PROCESSOR == null || INPUT_BUFFER == null || OUTPUT_BUFFER == null
                || OUTPUT_HEAD == null) {
            return;
        }
        try {
            Object parser = FRAME_PARSER.get(transport);
            if (parser != null && INPUT_BUFFER.get(parser) instanceof ByteBuffer in && in.position() == 0) {
                INPUT_BUFFER.set(parser, null);
            }
            Object output = outputAdaptor(OUTPUT_PROCESSOR.get(transport), 0);
            if (OUTPUT_BUFFER.getDeclaringClass().isInstance(output)
                    && OUTPUT_BUFFER.get(output) instanceof ByteBuffer out && out.position() == 0) {
                OUTPUT_BUFFER.set(output, null);
                OUTPUT_HEAD.set(output, null);
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debug("proton-j buffers not released: {}", e.toString());
        }
    }

    /**
     * The transport's output adaptor (the holder of the output buffer) behind the wrappers proton-j puts around it:
     * the handshake sniffer, then the SASL switch or the plain wrapper.
     */
    private static Object outputAdaptor(Object output, int depth) throws ReflectiveOperationException {
        if (output == null || OUTPUT_BUFFER.getDeclaringClass().isInstance(output)) {
            return output;
        }
        if (depth > 3) {
            return null;
        }
        for (String name : new String[] {"_selectedTransportWrapper", "_underlyingOutput", "_outputProcessor"}) {
            Field f = declared(output.getClass(), name);
            if (f != null) {
                Object found = outputAdaptor(f.get(output), depth + 1);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }

    /** The field {@code name} declared by {@code type} or a superclass of it, or null. */
    private static Field declared(Class<?> type, String name) {
        for (Class<?> k = type; k != null && k != Object.class; k = k.getSuperclass()) {
            try {
                Field f = k.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // look further up
            }
        }
        return null;
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
