package io.buslane.amqp.transport;

import io.buslane.testsupport.amqp.AmqpFrames;
import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.engine.Connection;
import org.apache.qpid.proton.engine.Sasl;
import org.apache.qpid.proton.engine.Transport;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ProtonTuning#releaseBuffers} reaches proton-j's buffers through its wrappers (it fails here, not silently in
 * production, if a proton-j upgrade moves them) and the transport carries on after they are dropped.
 */
class ProtonTuningTest {

    @Test
    void dropsTheIdleInputAndOutputBuffersAndTheTransportCarriesOn() throws Exception {
        Transport transport = Proton.transport();
        transport.setMaxFrameSize(262_144);
        Connection connection = Proton.connection();
        transport.bind(connection);
        Sasl sasl = transport.sasl();
        sasl.server();
        sasl.allowSkip(true);
        sasl.setMechanisms("ANONYMOUS");
        AmqpFrames frames = new AmqpFrames();
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf("ANONYMOUS"));
        feed(transport, AmqpFrames.concat(AmqpFrames.SASL_HEADER, frames.frame(AmqpFrames.TYPE_SASL, 0, init, null)));
        sasl.done(Sasl.SaslOutcome.PN_SASL_OK);
        drain(transport);
        feed(transport, AmqpFrames.concat(AmqpFrames.AMQP_HEADER, frames.frame(0, AmqpFrames.open())));
        connection.open();
        drain(transport);
        assertThat(largeBuffers(transport)).as("before").isNotEmpty();

        ProtonTuning.releaseBuffers(transport);
        assertThat(largeBuffers(transport)).as("after").isEmpty();

        feed(transport, frames.frame(0, AmqpFrames.begin())); // reads and writes again after the release
        assertThat(connection.sessionHead(null, null)).isNotNull();
        connection.sessionHead(null, null).open();
        assertThat(transport.pending()).isPositive();
    }

    private static void feed(Transport transport, byte[] bytes) {
        int off = 0;
        while (off < bytes.length) {
            int n = Math.min(transport.capacity(), bytes.length - off);
            transport.tail().put(bytes, off, n);
            off += n;
            transport.process();
        }
    }

    private static void drain(Transport transport) {
        while (transport.pending() > 0) {
            transport.pop(transport.head().remaining());
        }
    }

    /** Buffers over 64 KiB reachable from the transport's proton-j objects. */
    private static List<String> largeBuffers(Object root) throws Exception {
        List<String> out = new ArrayList<>();
        walk(root, "transport", out, new IdentityHashMap<>(), 0);
        return out;
    }

    private static void walk(Object o, String path, List<String> out, Map<Object, Boolean> seen, int depth)
            throws Exception {
        if (o == null || depth > 6 || seen.put(o, Boolean.TRUE) != null) {
            return;
        }
        for (Class<?> k = o.getClass(); k != null && k.getName().startsWith("org.apache.qpid"); k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (java.lang.reflect.Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                    continue;
                }
                f.setAccessible(true);
                Object v = f.get(o);
                if (v instanceof ByteBuffer b && b.capacity() > 65_536) {
                    out.add(path + "." + f.getName());
                } else if (v != null && v.getClass().getName().startsWith("org.apache.qpid.proton.engine.impl")) {
                    walk(v, path + "." + f.getName(), out, seen, depth + 1);
                }
            }
        }
    }
}
