package io.buslane.amqp.codec;

import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.DescribedTypeConstructor;
import org.apache.qpid.proton.codec.EncoderImpl;
import org.apache.qpid.proton.codec.messaging.AmqpSequenceType;
import org.apache.qpid.proton.codec.messaging.AmqpValueType;
import org.apache.qpid.proton.codec.messaging.ApplicationPropertiesType;
import org.apache.qpid.proton.codec.messaging.DataType;
import org.apache.qpid.proton.codec.messaging.DeliveryAnnotationsType;
import org.apache.qpid.proton.codec.messaging.FastPathAmqpSequenceType;
import org.apache.qpid.proton.codec.messaging.FastPathAmqpValueType;
import org.apache.qpid.proton.codec.messaging.FastPathApplicationPropertiesType;
import org.apache.qpid.proton.codec.messaging.FastPathDataType;
import org.apache.qpid.proton.codec.messaging.FastPathDeliveryAnnotationsType;
import org.apache.qpid.proton.codec.messaging.FastPathFooterType;
import org.apache.qpid.proton.codec.messaging.FastPathHeaderType;
import org.apache.qpid.proton.codec.messaging.FastPathMessageAnnotationsType;
import org.apache.qpid.proton.codec.messaging.FastPathPropertiesType;
import org.apache.qpid.proton.codec.messaging.FooterType;
import org.apache.qpid.proton.codec.messaging.HeaderType;
import org.apache.qpid.proton.codec.messaging.MessageAnnotationsType;
import org.apache.qpid.proton.codec.messaging.PropertiesType;

/**
 * The per-thread proton-j codec: each thread's decoder and encoder for the message section types, replaced
 * with a fresh pair once its caches have grown too much.
 */
final class ProtonCodecs {

    private static final ThreadLocal<Codec> CODEC = ThreadLocal.withInitial(Codec::new);

    private ProtonCodecs() {
    }

    /** This thread's codec; a worn one is replaced first. */
    static Codec codec() {
        Codec c = CODEC.get();
        if (c.worn()) {
            c = new Codec();
            CODEC.set(c);
        }
        return c;
    }

    /**
     * One thread's proton-j decoder and encoder, registered with the message section types only (so values
     * carrying other AMQP-defined descriptors decode as plain described values).
     *
     * <p>proton-j's codec caches per instance every symbol it decodes and every unknown descriptor it meets (the
     * decoder and the encoder alike) and never forgets them; a client could grow those caches without bound. The
     * pair is therefore replaced after it has decoded {@value #MAX_DECODED_BYTES} bytes, met
     * {@value #MAX_UNKNOWN_DESCRIPTORS} unknown descriptors or encoded {@value #MAX_DESCRIBED_ENCODED} described
     * values (proton-j's process-wide {@link Symbol} intern table is beyond reach).
     */
    static final class Codec {
        static final long MAX_DECODED_BYTES = 1L << 20; // a fresh pair costs ~10 µs
        static final int MAX_UNKNOWN_DESCRIPTORS = 1024;
        static final int MAX_DESCRIBED_ENCODED = 8192;

        /** A scratch buffer that grew beyond this is dropped after use rather than kept by the thread. */
        static final int MAX_KEPT_SCRATCH_BYTES = 256 * 1024;

        final CountingDecoder decoder = new CountingDecoder();
        final EncoderImpl encoder = new EncoderImpl(decoder);
        long decodedBytes;
        int describedEncoded;
        /** The thread's reusable encoding buffer; null while lent out (or before first use). */
        private GrowableWritableBuffer scratch;

        GrowableWritableBuffer scratch() {
            GrowableWritableBuffer b = scratch;
            scratch = null;
            if (b == null) {
                b = new GrowableWritableBuffer(4096);
            }
            b.reset();
            return b;
        }

        void releaseScratch(GrowableWritableBuffer b) {
            if (b.capacity() <= MAX_KEPT_SCRATCH_BYTES) {
                scratch = b;
            }
        }

        Codec() {
            HeaderType.register(decoder, encoder);
            PropertiesType.register(decoder, encoder);
            DeliveryAnnotationsType.register(decoder, encoder);
            MessageAnnotationsType.register(decoder, encoder);
            ApplicationPropertiesType.register(decoder, encoder);
            DataType.register(decoder, encoder);
            AmqpSequenceType.register(decoder, encoder);
            AmqpValueType.register(decoder, encoder);
            FooterType.register(decoder, encoder);
            FastPathHeaderType.register(decoder, encoder);
            FastPathPropertiesType.register(decoder, encoder);
            FastPathDeliveryAnnotationsType.register(decoder, encoder);
            FastPathMessageAnnotationsType.register(decoder, encoder);
            FastPathApplicationPropertiesType.register(decoder, encoder);
            FastPathDataType.register(decoder, encoder);
            FastPathAmqpSequenceType.register(decoder, encoder);
            FastPathAmqpValueType.register(decoder, encoder);
            FastPathFooterType.register(decoder, encoder);
            decoder.armed = true;
        }

        boolean worn() {
            return decodedBytes > MAX_DECODED_BYTES
                    || decoder.unknownDescriptors > MAX_UNKNOWN_DESCRIPTORS
                    || describedEncoded > MAX_DESCRIBED_ENCODED;
        }
    }

    /** A decoder that counts the descriptors it registers on the fly (unknown ones met while decoding). */
    static final class CountingDecoder extends DecoderImpl {
        boolean armed;
        int unknownDescriptors;

        @Override
        @SuppressWarnings("rawtypes")
        public void register(Object descriptor, DescribedTypeConstructor dtc) {
            super.register(descriptor, dtc);
            if (armed) {
                unknownDescriptors++;
            }
        }
    }
}
