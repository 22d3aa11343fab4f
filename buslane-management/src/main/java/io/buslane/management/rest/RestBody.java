package io.buslane.management.rest;

import io.buslane.engine.message.Message;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.messaging.AmqpSequence;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.EncoderImpl;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The HTTP body of a received message. A message sent over REST keeps its bytes as they were posted. A message
 * sent over AMQP carries its AMQP body sections; the HTTP body is then the bytes of its {@code data} sections
 * (concatenated), or of an {@code amqp-value} holding binary or a string (UTF-8); any other value is given as
 * its text.
 */
final class RestBody {

    private static final ThreadLocal<DecoderImpl> DECODER = ThreadLocal.withInitial(() -> {
        DecoderImpl decoder = new DecoderImpl();
        EncoderImpl encoder = new EncoderImpl(decoder);
        AMQPDefinedTypes.registerAllTypes(decoder, encoder);
        return decoder;
    });

    private RestBody() {
    }

    static byte[] bytes(Message m) {
        if (m.bodyFormat() != Message.BODY_AMQP_SECTIONS || m.body().length == 0) {
            return m.body();
        }
        DecoderImpl decoder = DECODER.get();
        ByteBuffer buffer = ByteBuffer.wrap(m.body());
        decoder.setByteBuffer(buffer);
        ByteArrayOutputStream out = new ByteArrayOutputStream(m.body().length);
        try {
            while (buffer.hasRemaining()) {
                Object section = decoder.readObject();
                if (section instanceof Data d && d.getValue() != null) {
                    Binary b = d.getValue();
                    out.write(b.getArray(), b.getArrayOffset(), b.getLength());
                } else if (section instanceof AmqpValue v) {
                    write(out, v.getValue());
                } else if (section instanceof AmqpSequence s && s.getValue() != null) {
                    out.writeBytes(String.valueOf(s.getValue()).getBytes(StandardCharsets.UTF_8));
                }
                // a footer adds nothing to the body
            }
        } catch (RuntimeException e) {
            return m.body();
        } finally {
            decoder.setByteBuffer(null);
        }
        return out.toByteArray();
    }

    private static void write(ByteArrayOutputStream out, Object value) {
        if (value == null) {
            return;
        }
        if (value instanceof Binary b) {
            out.write(b.getArray(), b.getArrayOffset(), b.getLength());
        } else {
            out.writeBytes(String.valueOf(value).getBytes(StandardCharsets.UTF_8));
        }
    }
}
