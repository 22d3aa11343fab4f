package io.buslane.testsupport.amqp;

import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedShort;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Open;

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
 * A hand-driven AMQP 1.0 client over a plain {@link Socket} to a broker on loopback, for wire and conformance tests:
 * it writes whatever bytes or frames a test gives it (protocol headers, performatives, hostile byte sequences) and
 * reads the broker's frames one by one, so a test sees exactly what the broker puts on the wire (empty heartbeat
 * frames, SASL outcomes, attach fields) and when it drops the connection. Performatives are encoded and decoded
 * with proton-j's codec ({@link AmqpFrames}), the codec of the Azure Java SDK, so decoded value types (Long,
 * Integer, Date, ...) are what the SDK would see.
 *
 * <p>Two sets of handshake helpers: {@link #openAnonymous()} and {@link #openPlain(String, String)} (SASL, AMQP
 * header, open and begin on channel 0 in one call, the headers read but not compared), and the steps one by one
 * ({@link #saslHeader()}, {@link #saslInit(String, byte[])}, {@link #amqpHeader()}, {@link #open(long)},
 * {@link #begin(int)}), which check the headers the broker answers with.
 */
public final class RawAmqpClient implements AutoCloseable {

    /** One frame from the broker; {@code body} is null for an empty (heartbeat) frame. */
    public record Frame(int type, int channel, Object body, byte[] payload) {
        /** Whether this is an empty (heartbeat) frame. */
        public boolean isHeartbeat() {
            return body == null;
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final AmqpFrames frames = new AmqpFrames();

    private RawAmqpClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Connects to {@code 127.0.0.1:port} (TCP no-delay), reads blocking up to {@code readTimeoutMs}. */
    public static RawAmqpClient connect(int port, int readTimeoutMs) throws IOException {
        Socket s = new Socket("127.0.0.1", port);
        s.setTcpNoDelay(true);
        s.setSoTimeout(readTimeoutMs);
        return new RawAmqpClient(s);
    }

    /** Sets the socket's read timeout. */
    public void setReadTimeout(int ms) throws SocketException {
        socket.setSoTimeout(ms);
    }

    /** Writes {@code bytes} as they are, and flushes. */
    public void write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Writes one frame of {@code type} on {@code channel}: the encoded performative, then {@code payload}. */
    public void writeFrame(int type, int channel, Object performative, byte[] payload) throws IOException {
        write(frames.frame(type, channel, performative, payload));
    }

    /** Writes one AMQP frame on {@code channel} holding only {@code performative}. */
    public void send(int channel, Object performative) throws IOException {
        write(frames.frame(channel, performative));
    }

    /** Writes one AMQP frame on {@code channel}: {@code performative}, then {@code payload}. */
    public void send(int channel, Object performative, byte[] payload) throws IOException {
        writeFrame(AmqpFrames.TYPE_AMQP, channel, performative, payload);
    }

    /** Reads the 8-byte protocol header the broker answers with. */
    public byte[] readHeader() throws IOException {
        byte[] h = new byte[8];
        in.readFully(h);
        return h;
    }

    /** Reads one frame (blocking up to the read timeout); fails on a size below 8 or a data offset below 2. */
    public Frame readFrame() throws IOException {
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
            return new Frame(type, channel, null, body);
        }
        ByteBuffer bb = ByteBuffer.wrap(body);
        frames.decoder().setByteBuffer(bb);
        Object performative = frames.decoder().readObject();
        return new Frame(type, channel, performative, Arrays.copyOfRange(body, bb.position(), body.length));
    }

    /**
     * Reads frames, skipping heartbeats and other performatives, until one of the given class arrives; fails if a
     * close arrives first (unless a close is what it waits for).
     */
    public <T> T expect(Class<T> performative) throws IOException {
        while (true) {
            Frame f = readFrame();
            if (performative.isInstance(f.body())) {
                return performative.cast(f.body());
            }
            if (f.body() instanceof Close close && performative != Close.class) {
                throw new IOException("The broker closed the connection while waiting for "
                        + performative.getSimpleName() + ": " + close.getError());
            }
        }
    }

    /**
     * SASL with {@code mechanism} in one call: the SASL header (the broker's answer read, not compared), its
     * mechanisms, then a sasl-init without host name; returns the outcome.
     */
    public SaslOutcome sasl(String mechanism, byte[] response) throws IOException {
        write(AmqpFrames.SASL_HEADER);
        readHeader();
        expect(SaslMechanisms.class);
        return saslInit(mechanism, response, null);
    }

    /** SASL ANONYMOUS, AMQP header, open and begin on channel 0: a connection with no token. */
    public RawAmqpClient openAnonymous() throws IOException {
        sasl("ANONYMOUS", null);
        return openAmqp();
    }

    /** SASL PLAIN with the rule name and key: a connection authorised for the whole namespace. */
    public RawAmqpClient openPlain(String keyName, String key) throws IOException {
        sasl("PLAIN", plainResponse(keyName, key));
        return openAmqp();
    }

    private RawAmqpClient openAmqp() throws IOException {
        write(AmqpFrames.AMQP_HEADER);
        readHeader();
        send(0, AmqpFrames.open());
        expect(Open.class);
        send(0, AmqpFrames.begin());
        expect(Begin.class);
        return this;
    }

    /** SASL header exchange, failing unless the broker answers with the SASL header; returns the mechanisms. */
    public SaslMechanisms saslHeader() throws IOException {
        write(AmqpFrames.SASL_HEADER);
        byte[] h = readHeader();
        if (!Arrays.equals(h, AmqpFrames.SASL_HEADER)) {
            throw new IOException("Expected the SASL header, got " + Arrays.toString(h));
        }
        return expect(SaslMechanisms.class);
    }

    /** Sends sasl-init (host name {@code localhost}) and returns the outcome. */
    public SaslOutcome saslInit(String mechanism, byte[] initialResponse) throws IOException {
        return saslInit(mechanism, initialResponse, "localhost");
    }

    private SaslOutcome saslInit(String mechanism, byte[] initialResponse, String hostname) throws IOException {
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf(mechanism));
        if (initialResponse != null) {
            init.setInitialResponse(new Binary(initialResponse));
        }
        if (hostname != null) {
            init.setHostname(hostname);
        }
        writeFrame(AmqpFrames.TYPE_SASL, 0, init, null);
        return expect(SaslOutcome.class);
    }

    /** The SASL PLAIN initial response: NUL, user, NUL, password (UTF-8). */
    public static byte[] plainResponse(String user, String password) {
        return ("\0" + user + "\0" + password).getBytes(StandardCharsets.UTF_8);
    }

    /** AMQP header exchange (after SASL, or without it), failing unless the broker answers with the AMQP header. */
    public void amqpHeader() throws IOException {
        write(AmqpFrames.AMQP_HEADER);
        byte[] h = readHeader();
        if (!Arrays.equals(h, AmqpFrames.AMQP_HEADER)) {
            throw new IOException("Expected the AMQP header, got " + Arrays.toString(h));
        }
    }

    /**
     * Sends an open (container id {@code raw-<nanos>}, host name {@code localhost}, max frame size 65536, channel
     * max 255, the idle time-out if positive) and returns the broker's open.
     */
    public Open open(long idleTimeoutMs) throws IOException {
        Open open = new Open();
        open.setContainerId("raw-" + System.nanoTime());
        open.setHostname("localhost");
        open.setMaxFrameSize(UnsignedInteger.valueOf(65536));
        open.setChannelMax(UnsignedShort.valueOf((short) 255));
        if (idleTimeoutMs > 0) {
            open.setIdleTimeOut(UnsignedInteger.valueOf(idleTimeoutMs));
        }
        send(0, open);
        return expect(Open.class);
    }

    /** Sends a begin ({@link AmqpFrames#begin()}) on the channel and returns the broker's begin. */
    public Begin begin(int channel) throws IOException {
        send(channel, AmqpFrames.begin());
        return expect(Begin.class);
    }

    /**
     * Sends a sender attach (role sender) named {@code name} from {@code raw-client-<handle>} to {@code address}
     * on channel 0; {@code handle} is read as unsigned (-1 is 2^32-1).
     */
    public void attachSender(int handle, String name, String address) throws IOException {
        send(0, AmqpFrames.attachSender(Integer.toUnsignedLong(handle), name, "raw-client-" + handle, address));
    }

    /**
     * Sends a receiver attach (role receiver, peek-lock) named {@code name} from {@code address} to
     * {@code raw-client-<handle>} on channel 0; {@code handle} is read as unsigned.
     */
    public void attachReceiver(int handle, String name, String address) throws IOException {
        send(0, AmqpFrames.attachReceiver(Integer.toUnsignedLong(handle), name, "raw-client-" + handle, address));
    }

    /** Sends a link flow on channel 0: {@code credit} for the link {@code handle}, with drain as given. */
    public void flow(int handle, long deliveryCount, int credit, boolean drain) throws IOException {
        send(0, AmqpFrames.flow(Integer.toUnsignedLong(handle), deliveryCount, Integer.toUnsignedLong(credit),
                drain));
    }

    /**
     * Reads until the broker closes the socket, within {@code timeoutMs}; returns the last performative read (its
     * close frame, if it sent one). Fails if the socket is still open then. A reset, or a frame cut short or
     * malformed, counts as closed.
     */
    public Object awaitSocketClosed(int timeoutMs) throws IOException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        Object last = null;
        while (true) {
            int left = (int) ((deadline - System.nanoTime()) / 1_000_000L);
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

    /** Closes the socket. */
    @Override
    public void close() throws IOException {
        socket.close();
    }
}
