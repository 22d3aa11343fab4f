package io.buslane.conformance;

import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.EncoderImpl;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A hand-driven AMQP 1.0 client over a plain {@link Socket}: protocol headers and frames are written and read one
 * by one, so a test sees exactly what the broker puts on the wire (empty heartbeat frames, SASL outcomes, attach
 * fields). Performatives are encoded and decoded with proton-j's codec, the same codec the Azure Java SDK uses, so
 * decoded value types (Long, Integer, Date, ...) are what the SDK would see.
 */
final class RawAmqpConnection implements AutoCloseable {

    static final byte[] AMQP_HEADER = {'A', 'M', 'Q', 'P', 0, 1, 0, 0};
    static final byte[] SASL_HEADER = {'A', 'M', 'Q', 'P', 3, 1, 0, 0};
    static final int TYPE_AMQP = 0;
    static final int TYPE_SASL = 1;

    /** One received frame; {@code body} is null for an empty (heartbeat) frame. */
    record Frame(int type, int channel, Object body, byte[] payload) {
        boolean isHeartbeat() {
            return body == null;
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final DecoderImpl decoder = new DecoderImpl();
    private final EncoderImpl encoder = new EncoderImpl(decoder);

    private RawAmqpConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
        AMQPDefinedTypes.registerAllTypes(decoder, encoder);
    }

    static RawAmqpConnection connect(int port) throws IOException {
        Socket s = new Socket("127.0.0.1", port);
        s.setTcpNoDelay(true);
        s.setSoTimeout(10_000);
        return new RawAmqpConnection(s);
    }

    void setReadTimeout(int ms) throws SocketException {
        socket.setSoTimeout(ms);
    }

    void writeRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Reads the 8-byte protocol header the broker answers with. */
    byte[] readHeader() throws IOException {
        byte[] h = new byte[8];
        in.readFully(h);
        return h;
    }

    void writeFrame(int type, int channel, Object performative) throws IOException {
        writeFrame(type, channel, performative, null);
    }

    void writeFrame(int type, int channel, Object performative, byte[] payload) throws IOException {
        ByteBuffer body = ByteBuffer.allocate(1 << 20);
        encoder.setByteBuffer(body);
        encoder.writeObject(performative);
        if (payload != null) {
            body.put(payload);
        }
        body.flip();
        ByteBuffer frame = ByteBuffer.allocate(8 + body.remaining());
        frame.putInt(8 + body.remaining()).put((byte) 2).put((byte) type).putShort((short) channel).put(body);
        writeRaw(frame.array());
    }

    void writeHeartbeat() throws IOException {
        writeRaw(new byte[] {0, 0, 0, 8, 2, 0, 0, 0});
    }

    /** Reads one frame (blocking up to the read timeout). */
    Frame readFrame() throws IOException {
        int size = in.readInt();
        int doff = in.readUnsignedByte();
        int type = in.readUnsignedByte();
        int channel = in.readUnsignedShort();
        if (size < 8 || doff < 2) {
            throw new IOException("Malformed frame from the broker: size " + size + ", doff " + doff);
        }
        in.skipNBytes(doff * 4L - 8);
        byte[] body = new byte[size - doff * 4];
        in.readFully(body);
        if (body.length == 0) {
            return new Frame(type, channel, null, new byte[0]);
        }
        ByteBuffer bb = ByteBuffer.wrap(body);
        decoder.setByteBuffer(bb);
        Object performative = decoder.readObject();
        byte[] payload = Arrays.copyOfRange(body, bb.position(), body.length);
        return new Frame(type, channel, performative, payload);
    }

    /** Reads frames, skipping heartbeats and other performatives, until one of the given class arrives. */
    <T> T expect(Class<T> performative) throws IOException {
        while (true) {
            Frame f = readFrame();
            if (performative.isInstance(f.body())) {
                return performative.cast(f.body());
            }
            if (f.body() instanceof org.apache.qpid.proton.amqp.transport.Close close
                    && performative != org.apache.qpid.proton.amqp.transport.Close.class) {
                throw new IOException("The broker closed the connection while waiting for "
                        + performative.getSimpleName() + ": " + close.getError());
            }
        }
    }

    /** SASL header exchange; returns the offered mechanisms. */
    SaslMechanisms saslHeader() throws IOException {
        writeRaw(SASL_HEADER);
        byte[] h = readHeader();
        if (!Arrays.equals(h, SASL_HEADER)) {
            throw new IOException("Expected the SASL header, got " + Arrays.toString(h));
        }
        return expect(SaslMechanisms.class);
    }

    /** Sends sasl-init and returns the outcome. */
    SaslOutcome saslInit(String mechanism, byte[] initialResponse) throws IOException {
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf(mechanism));
        if (initialResponse != null) {
            init.setInitialResponse(new Binary(initialResponse));
        }
        init.setHostname("localhost");
        writeFrame(TYPE_SASL, 0, init);
        return expect(SaslOutcome.class);
    }

    static byte[] plainResponse(String user, String password) {
        return ("\0" + user + "\0" + password).getBytes(StandardCharsets.UTF_8);
    }

    /** AMQP header exchange (after SASL, or without it). */
    void amqpHeader() throws IOException {
        writeRaw(AMQP_HEADER);
        byte[] h = readHeader();
        if (!Arrays.equals(h, AMQP_HEADER)) {
            throw new IOException("Expected the AMQP header, got " + Arrays.toString(h));
        }
    }

    /** Sends open and returns the broker's open. */
    Open open(long idleTimeoutMs) throws IOException {
        Open open = new Open();
        open.setContainerId("raw-" + System.nanoTime());
        open.setHostname("localhost");
        open.setMaxFrameSize(UnsignedInteger.valueOf(65536));
        open.setChannelMax(org.apache.qpid.proton.amqp.UnsignedShort.valueOf((short) 255));
        if (idleTimeoutMs > 0) {
            open.setIdleTimeOut(UnsignedInteger.valueOf(idleTimeoutMs));
        }
        writeFrame(TYPE_AMQP, 0, open);
        return expect(Open.class);
    }

    /** Sends begin on the channel and returns the broker's begin. */
    Begin begin(int channel) throws IOException {
        Begin begin = new Begin();
        begin.setNextOutgoingId(UnsignedInteger.ZERO);
        begin.setIncomingWindow(UnsignedInteger.valueOf(1000));
        begin.setOutgoingWindow(UnsignedInteger.valueOf(1000));
        writeFrame(TYPE_AMQP, channel, begin);
        return expect(Begin.class);
    }

    /** Sends a sender attach (role=sender) to {@code address} on channel 0. */
    void attachSender(int handle, String name, String address) throws IOException {
        org.apache.qpid.proton.amqp.transport.Attach attach = new org.apache.qpid.proton.amqp.transport.Attach();
        attach.setName(name);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(org.apache.qpid.proton.amqp.transport.Role.SENDER);
        attach.setSndSettleMode(org.apache.qpid.proton.amqp.transport.SenderSettleMode.UNSETTLED);
        attach.setRcvSettleMode(org.apache.qpid.proton.amqp.transport.ReceiverSettleMode.FIRST);
        org.apache.qpid.proton.amqp.messaging.Source source = new org.apache.qpid.proton.amqp.messaging.Source();
        source.setAddress("raw-client-" + handle);
        attach.setSource(source);
        org.apache.qpid.proton.amqp.messaging.Target target = new org.apache.qpid.proton.amqp.messaging.Target();
        target.setAddress(address);
        attach.setTarget(target);
        attach.setInitialDeliveryCount(UnsignedInteger.ZERO);
        writeFrame(TYPE_AMQP, 0, attach);
    }

    /** Sends a receiver attach (role=receiver, peek-lock) from {@code address} on channel 0. */
    void attachReceiver(int handle, String name, String address) throws IOException {
        org.apache.qpid.proton.amqp.transport.Attach attach = new org.apache.qpid.proton.amqp.transport.Attach();
        attach.setName(name);
        attach.setHandle(UnsignedInteger.valueOf(handle));
        attach.setRole(org.apache.qpid.proton.amqp.transport.Role.RECEIVER);
        attach.setSndSettleMode(org.apache.qpid.proton.amqp.transport.SenderSettleMode.UNSETTLED);
        attach.setRcvSettleMode(org.apache.qpid.proton.amqp.transport.ReceiverSettleMode.FIRST);
        org.apache.qpid.proton.amqp.messaging.Source source = new org.apache.qpid.proton.amqp.messaging.Source();
        source.setAddress(address);
        attach.setSource(source);
        org.apache.qpid.proton.amqp.messaging.Target target = new org.apache.qpid.proton.amqp.messaging.Target();
        target.setAddress("raw-client-" + handle);
        attach.setTarget(target);
        writeFrame(TYPE_AMQP, 0, attach);
    }

    /** Sends a link flow on channel 0: {@code credit} for the link {@code handle}, with drain as given. */
    void flow(int handle, long deliveryCount, int credit, boolean drain) throws IOException {
        org.apache.qpid.proton.amqp.transport.Flow flow = new org.apache.qpid.proton.amqp.transport.Flow();
        flow.setNextIncomingId(UnsignedInteger.ZERO);
        flow.setIncomingWindow(UnsignedInteger.valueOf(1000));
        flow.setNextOutgoingId(UnsignedInteger.ZERO);
        flow.setOutgoingWindow(UnsignedInteger.valueOf(1000));
        flow.setHandle(UnsignedInteger.valueOf(handle));
        flow.setDeliveryCount(UnsignedInteger.valueOf(deliveryCount));
        flow.setLinkCredit(UnsignedInteger.valueOf(credit));
        flow.setDrain(drain);
        writeFrame(TYPE_AMQP, 0, flow);
    }

    /**
     * Reads until the broker closes the socket, up to {@code timeoutMs}; returns the last performative read (e.g. a
     * close frame), or throws if the socket is still open after the timeout.
     */
    Object awaitSocketClosed(int timeoutMs) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        Object last = null;
        while (true) {
            int left = (int) (deadline - System.currentTimeMillis());
            if (left <= 0) {
                throw new IOException("The broker did not close the connection within " + timeoutMs + " ms");
            }
            socket.setSoTimeout(left);
            try {
                Frame f = readFrame();
                if (f.body() != null) {
                    last = f.body();
                }
            } catch (EOFException e) {
                return last;
            } catch (SocketTimeoutException e) {
                throw new IOException("The broker did not close the connection within " + timeoutMs + " ms", e);
            } catch (IOException e) {
                // connection reset, or a frame cut short: the broker dropped us
                return last;
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
