package io.buslane.amqp.transport;

import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.EncoderImpl;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/**
 * Builds AMQP frames for wire tests: well-formed performatives through proton-j's encoder (the codec of the Java
 * SDK), and the hostile byte sequences the broker must survive, written by hand.
 */
final class Frames {

    static final byte[] AMQP_HEADER = {'A', 'M', 'Q', 'P', 0, 1, 0, 0};
    static final byte[] SASL_HEADER = {'A', 'M', 'Q', 'P', 3, 1, 0, 0};
    static final int AMQP = 0;
    static final int SASL = 1;

    private final DecoderImpl decoder = new DecoderImpl();
    private final EncoderImpl encoder = new EncoderImpl(decoder);

    Frames() {
        AMQPDefinedTypes.registerAllTypes(decoder, encoder);
    }

    DecoderImpl decoder() {
        return decoder;
    }

    /** One frame of {@code type} on {@code channel}: the encoded performative, then {@code payload}. */
    byte[] frame(int type, int channel, Object performative, byte[] payload) {
        ByteBuffer body = ByteBuffer.allocate(1 << 20);
        encoder.setByteBuffer(body);
        encoder.writeObject(performative);
        if (payload != null) {
            body.put(payload);
        }
        body.flip();
        return raw(type, channel, body);
    }

    byte[] frame(int channel, Object performative) {
        return frame(AMQP, channel, performative, null);
    }

    /** A frame around an already encoded body. */
    static byte[] raw(int type, int channel, ByteBuffer body) {
        ByteBuffer frame = ByteBuffer.allocate(8 + body.remaining());
        frame.putInt(8 + body.remaining()).put((byte) 2).put((byte) type).putShort((short) channel).put(body);
        return frame.array();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static Open open() {
        Open open = new Open();
        open.setContainerId("wire-test");
        open.setHostname("localhost");
        open.setMaxFrameSize(UnsignedInteger.valueOf(65_536));
        return open;
    }

    static Begin begin() {
        Begin begin = new Begin();
        begin.setNextOutgoingId(UnsignedInteger.ZERO);
        begin.setIncomingWindow(UnsignedInteger.valueOf(1000));
        begin.setOutgoingWindow(UnsignedInteger.valueOf(1000));
        return begin;
    }

    /** A client sender's attach (role sender) to {@code address}. */
    static Attach attachSender(long handle, String address) {
        Attach attach = new Attach();
        attach.setName("sender-" + handle);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(Role.SENDER);
        attach.setSndSettleMode(SenderSettleMode.UNSETTLED);
        attach.setRcvSettleMode(ReceiverSettleMode.FIRST);
        Source source = new Source();
        source.setAddress("client-" + handle);
        attach.setSource(source);
        Target target = new Target();
        target.setAddress(address);
        attach.setTarget(target);
        attach.setInitialDeliveryCount(UnsignedInteger.ZERO);
        return attach;
    }

    /** A client receiver's attach (role receiver) from {@code address}. */
    static Attach attachReceiver(long handle, String address) {
        Attach attach = new Attach();
        attach.setName("receiver-" + handle);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(Role.RECEIVER);
        attach.setSndSettleMode(SenderSettleMode.UNSETTLED);
        attach.setRcvSettleMode(ReceiverSettleMode.FIRST);
        Source source = new Source();
        source.setAddress(address);
        attach.setSource(source);
        Target target = new Target();
        target.setAddress("client-" + handle);
        attach.setTarget(target);
        return attach;
    }

    static Detach detach(long handle) {
        Detach detach = new Detach();
        detach.setHandle(UnsignedInteger.valueOf(handle));
        detach.setClosed(true);
        return detach;
    }

    static Transfer transfer(long handle, long deliveryId, boolean more) {
        Transfer t = new Transfer();
        t.setHandle(UnsignedInteger.valueOf(handle));
        t.setDeliveryId(UnsignedInteger.valueOf(deliveryId));
        t.setDeliveryTag(new Binary(new byte[] {(byte) deliveryId}));
        t.setMessageFormat(UnsignedInteger.ZERO);
        t.setMore(more);
        return t;
    }

    static Flow flow(long handle, long credit) {
        Flow flow = new Flow();
        flow.setNextIncomingId(UnsignedInteger.ZERO);
        flow.setIncomingWindow(UnsignedInteger.valueOf(1000));
        flow.setNextOutgoingId(UnsignedInteger.ZERO);
        flow.setOutgoingWindow(UnsignedInteger.valueOf(1000));
        flow.setHandle(UnsignedInteger.valueOf(handle));
        flow.setDeliveryCount(UnsignedInteger.ZERO);
        flow.setLinkCredit(UnsignedInteger.valueOf(credit));
        return flow;
    }

    /** The 15-byte-performative disposition that sent proton-j around its loop for good: first 0, last 2^32-1. */
    static Disposition endlessDisposition() {
        Disposition d = new Disposition();
        d.setRole(Role.RECEIVER);
        d.setFirst(UnsignedInteger.ZERO);
        d.setLast(UnsignedInteger.valueOf(0xffffffffL));
        d.setSettled(true);
        return d;
    }

    /** An open performative whose first field is a described value nested {@code depth} levels deep. */
    static byte[] deeplyNestedOpen(int depth) {
        ByteArrayOutputStream fields = new ByteArrayOutputStream();
        for (int i = 0; i < depth; i++) {
            fields.writeBytes(new byte[] {0x00, 0x53, 0x01}); // described(smallulong 1, ...)
        }
        fields.write(0x40); // null at the bottom
        byte[] f = fields.toByteArray();
        ByteBuffer body = ByteBuffer.allocate(3 + 9 + f.length);
        body.put((byte) 0x00).put((byte) 0x53).put((byte) 0x10);
        body.put((byte) 0xd0).putInt(4 + f.length).putInt(1).put(f);
        body.flip();
        return raw(AMQP, 0, body);
    }
}
