package io.buslane.amqp.transport;

import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.security.SaslMechanisms;
import org.apache.qpid.proton.amqp.security.SaslOutcome;
import org.apache.qpid.proton.amqp.transport.Close;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A hand-driven AMQP client over a plain socket, for wire tests against the in-process listener: writes whatever
 * bytes a test gives it and reads the broker's frames one by one (performatives decoded with proton-j).
 */
final class WireClient implements AutoCloseable {

    /** One frame from the broker; {@code body} is null for an empty (heartbeat) frame. */
    record Frame(int type, int channel, Object body, byte[] payload) {
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    final Frames frames = new Frames();

    WireClient(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(5_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    void write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    void send(int channel, Object performative) throws IOException {
        write(frames.frame(channel, performative));
    }

    void send(int channel, Object performative, byte[] payload) throws IOException {
        write(frames.frame(Frames.AMQP, channel, performative, payload));
    }

    byte[] readHeader() throws IOException {
        byte[] h = new byte[8];
        in.readFully(h);
        return h;
    }

    Frame readFrame() throws IOException {
        int size = in.readInt();
        int doff = in.readUnsignedByte();
        int type = in.readUnsignedByte();
        int channel = in.readUnsignedShort();
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

    /** Reads frames until one of the class arrives (skipping heartbeats and others). */
    <T> T expect(Class<T> type) throws IOException {
        while (true) {
            Frame f = readFrame();
            if (type.isInstance(f.body())) {
                return type.cast(f.body());
            }
            if (f.body() instanceof Close close && type != Close.class) {
                throw new IOException("closed while waiting for " + type.getSimpleName() + ": " + close.getError());
            }
        }
    }

    /** SASL with {@code mechanism}, then the AMQP header and open; returns the SASL outcome. */
    SaslOutcome sasl(String mechanism, byte[] response) throws IOException {
        write(Frames.SASL_HEADER);
        readHeader();
        expect(SaslMechanisms.class);
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf(mechanism));
        if (response != null) {
            init.setInitialResponse(new Binary(response));
        }
        write(frames.frame(Frames.SASL, 0, init, null));
        return expect(SaslOutcome.class);
    }

    /** SASL ANONYMOUS, AMQP header, open and begin on channel 0: a connection with no token. */
    WireClient openAnonymous() throws IOException {
        sasl("ANONYMOUS", null);
        return openAmqp();
    }

    /** SASL PLAIN with the rule name and key: a connection authorised for the whole namespace. */
    WireClient openPlain(String keyName, String key) throws IOException {
        sasl("PLAIN", ("\0" + keyName + "\0" + key).getBytes(StandardCharsets.UTF_8));
        return openAmqp();
    }

    private WireClient openAmqp() throws IOException {
        write(Frames.AMQP_HEADER);
        readHeader();
        send(0, Frames.open());
        expect(org.apache.qpid.proton.amqp.transport.Open.class);
        send(0, Frames.begin());
        expect(org.apache.qpid.proton.amqp.transport.Begin.class);
        return this;
    }

    /**
     * Reads until the broker drops the socket, within {@code timeoutMs}; returns the last performative read (its
     * close frame, if it sent one). Fails if the socket is still open then.
     */
    Object awaitDropped(int timeoutMs) throws IOException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        Object last = null;
        while (true) {
            int left = (int) ((deadline - System.nanoTime()) / 1_000_000L);
            if (left <= 0) {
                throw new IOException("the broker did not drop the connection within " + timeoutMs + " ms");
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
                throw new IOException("the broker did not drop the connection within " + timeoutMs + " ms", e);
            } catch (IOException e) {
                return last; // reset
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
