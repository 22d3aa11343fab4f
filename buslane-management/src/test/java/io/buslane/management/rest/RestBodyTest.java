package io.buslane.management.rest;

import io.buslane.engine.message.Message;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.EncoderImpl;
import org.apache.qpid.proton.codec.WritableBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RestBodyTest {

    /** The AMQP encoding of body sections, as the AMQP front end stores an AMQP-sent message's body. */
    private static byte[] sections(Object... sections) {
        DecoderImpl decoder = new DecoderImpl();
        EncoderImpl encoder = new EncoderImpl(decoder);
        AMQPDefinedTypes.registerAllTypes(decoder, encoder);
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        encoder.setByteBuffer(new WritableBuffer.ByteBufferWrapper(buffer));
        for (Object section : sections) {
            encoder.writeObject(section);
        }
        return Arrays.copyOf(buffer.array(), buffer.position());
    }

    private static Message amqp(byte[] body) {
        return Message.builder().bodyFormat(Message.BODY_AMQP_SECTIONS).body(body).build();
    }

    @Test
    void aRestBodyIsReturnedAsPosted() {
        byte[] raw = {0, 1, 2, (byte) 0xff};
        assertThat(RestBody.bytes(Message.builder().body(raw).build())).isEqualTo(raw);
    }

    @Test
    void dataSectionsAreConcatenated() {
        byte[] body = sections(new Data(new Binary("hello ".getBytes(StandardCharsets.UTF_8))),
                new Data(new Binary("world".getBytes(StandardCharsets.UTF_8))),
                new Footer(Map.of()));
        assertThat(new String(RestBody.bytes(amqp(body)), StandardCharsets.UTF_8)).isEqualTo("hello world");
    }

    @Test
    void anAmqpValueIsItsBinaryOrText() {
        assertThat(new String(RestBody.bytes(amqp(sections(new AmqpValue("text body")))), StandardCharsets.UTF_8))
                .isEqualTo("text body");
        assertThat(RestBody.bytes(amqp(sections(new AmqpValue(new Binary(new byte[]{7, 8}))))))
                .containsExactly(7, 8);
        assertThat(new String(RestBody.bytes(amqp(sections(new AmqpValue(42L)))), StandardCharsets.UTF_8))
                .isEqualTo("42");
    }
}
