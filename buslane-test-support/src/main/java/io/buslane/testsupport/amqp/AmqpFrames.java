package io.buslane.testsupport.amqp;

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
 * Builds AMQP 1.0 frames for wire tests, with or without a socket ({@link RawAmqpClient} writes them; codec and
 * frame-guard tests feed them to proton-j directly): well-formed performatives through proton-j's encoder (the
 * codec of the Azure Java SDK), and hostile byte sequences a broker must survive, written by hand. One instance
 * holds one encoder and decoder pair (not thread-safe); the performative builders are static.
 */
public final class AmqpFrames {

    /** The AMQP protocol header (protocol id 0). */
    public static final byte[] AMQP_HEADER = {'A', 'M', 'Q', 'P', 0, 1, 0, 0};
    /** The SASL protocol header (protocol id 3). */
    public static final byte[] SASL_HEADER = {'A', 'M', 'Q', 'P', 3, 1, 0, 0};
    /** The frame type of AMQP frames. */
    public static final int TYPE_AMQP = 0;
    /** The frame type of SASL frames. */
    public static final int TYPE_SASL = 1;

    private final DecoderImpl decoder = new DecoderImpl();
    private final EncoderImpl encoder = new EncoderImpl(decoder);

    /** A codec with every AMQP-defined type registered. */
    public AmqpFrames() {
        AMQPDefinedTypes.registerAllTypes(decoder, encoder);
    }

    /** The decoder of this codec, for reading performatives back. */
    public DecoderImpl decoder() {
        return decoder;
    }

    /** One frame of {@code type} on {@code channel}: the encoded performative, then {@code payload} (may be null). */
    public byte[] frame(int type, int channel, Object performative, byte[] payload) {
        ByteBuffer body = ByteBuffer.allocate(1 << 20);
        encoder.setByteBuffer(body);
        encoder.writeObject(performative);
        if (payload != null) {
            body.put(payload);
        }
        body.flip();
        return raw(type, channel, body);
    }

    /** One AMQP frame on {@code channel} holding only {@code performative}. */
    public byte[] frame(int channel, Object performative) {
        return frame(TYPE_AMQP, channel, performative, null);
    }

    /** A frame (data offset 2) around an already encoded body. */
    public static byte[] raw(int type, int channel, ByteBuffer body) {
        ByteBuffer frame = ByteBuffer.allocate(8 + body.remaining());
        frame.putInt(8 + body.remaining()).put((byte) 2).put((byte) type).putShort((short) channel).put(body);
        return frame.array();
    }

    /** The parts one after the other. */
    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    /** An open: container id {@code wire-test}, host name {@code localhost}, max frame size 65536. */
    public static Open open() {
        Open open = new Open();
        open.setContainerId("wire-test");
        open.setHostname("localhost");
        open.setMaxFrameSize(UnsignedInteger.valueOf(65_536));
        return open;
    }

    /** A begin: next outgoing id 0, incoming and outgoing windows 1000. */
    public static Begin begin() {
        Begin begin = new Begin();
        begin.setNextOutgoingId(UnsignedInteger.ZERO);
        begin.setIncomingWindow(UnsignedInteger.valueOf(1000));
        begin.setOutgoingWindow(UnsignedInteger.valueOf(1000));
        return begin;
    }

    /** A client sender's attach (role sender) to {@code address}, named {@code sender-<handle>}. */
    public static Attach attachSender(long handle, String address) {
        return attachSender(handle, "sender-" + handle, "client-" + handle, address);
    }

    /**
     * A client sender's attach (role sender, unsettled, first) named {@code name}, from the source
     * {@code localAddress} to the target {@code address}, initial delivery count 0.
     */
    public static Attach attachSender(long handle, String name, String localAddress, String address) {
        Attach attach = attach(handle, name, Role.SENDER, localAddress, address);
        attach.setInitialDeliveryCount(UnsignedInteger.ZERO);
        return attach;
    }

    /** A client receiver's attach (role receiver) from {@code address}, named {@code receiver-<handle>}. */
    public static Attach attachReceiver(long handle, String address) {
        return attachReceiver(handle, "receiver-" + handle, "client-" + handle, address);
    }

    /**
     * A client receiver's attach (role receiver, unsettled, first: peek-lock) named {@code name}, from the source
     * {@code address} to the target {@code localAddress}.
     */
    public static Attach attachReceiver(long handle, String name, String localAddress, String address) {
        return attach(handle, name, Role.RECEIVER, address, localAddress);
    }

    /** An attach (unsettled, first) named {@code name} with {@code role}, from {@code source} to {@code target}. */
    private static Attach attach(long handle, String name, Role role, String sourceAddress, String targetAddress) {
        Attach attach = new Attach();
        attach.setName(name);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(role);
        attach.setSndSettleMode(SenderSettleMode.UNSETTLED);
        attach.setRcvSettleMode(ReceiverSettleMode.FIRST);
        Source source = new Source();
        source.setAddress(sourceAddress);
        attach.setSource(source);
        Target target = new Target();
        target.setAddress(targetAddress);
        attach.setTarget(target);
        return attach;
    }

    /** A closing detach of {@code handle}. */
    public static Detach detach(long handle) {
        Detach detach = new Detach();
        detach.setHandle(UnsignedInteger.valueOf(handle));
        detach.setClosed(true);
        return detach;
    }

    /** A transfer on {@code handle}: delivery {@code deliveryId}, tag its low byte, message format 0. */
    public static Transfer transfer(long handle, long deliveryId, boolean more) {
        Transfer t = new Transfer();
        t.setHandle(UnsignedInteger.valueOf(handle));
        t.setDeliveryId(UnsignedInteger.valueOf(deliveryId));
        t.setDeliveryTag(new Binary(new byte[] {(byte) deliveryId}));
        t.setMessageFormat(UnsignedInteger.ZERO);
        t.setMore(more);
        return t;
    }

    /** A link flow: {@code credit} for {@code handle}, delivery count 0, no drain. */
    public static Flow flow(long handle, long credit) {
        return flow(handle, 0, credit, false);
    }

    /** A link flow: {@code credit} for {@code handle} at {@code deliveryCount}, drain as given; windows 1000. */
    public static Flow flow(long handle, long deliveryCount, long credit, boolean drain) {
        Flow flow = new Flow();
        flow.setNextIncomingId(UnsignedInteger.ZERO);
        flow.setIncomingWindow(UnsignedInteger.valueOf(1000));
        flow.setNextOutgoingId(UnsignedInteger.ZERO);
        flow.setOutgoingWindow(UnsignedInteger.valueOf(1000));
        flow.setHandle(UnsignedInteger.valueOf(handle));
        flow.setDeliveryCount(UnsignedInteger.valueOf(deliveryCount));
        flow.setLinkCredit(UnsignedInteger.valueOf(credit));
        flow.setDrain(drain);
        return flow;
    }

    /** The 15-byte-performative disposition that sent proton-j around its loop for good: first 0, last 2^32-1. */
    public static Disposition endlessDisposition() {
        Disposition d = new Disposition();
        d.setRole(Role.RECEIVER);
        d.setFirst(UnsignedInteger.ZERO);
        d.setLast(UnsignedInteger.valueOf(0xffffffffL));
        d.setSettled(true);
        return d;
    }

    /** An open performative whose first field is a described value nested {@code depth} levels deep. */
    public static byte[] deeplyNestedOpen(int depth) {
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
        return raw(TYPE_AMQP, 0, body);
    }
}
