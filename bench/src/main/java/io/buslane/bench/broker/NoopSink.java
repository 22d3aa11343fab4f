package io.buslane.bench.broker;

import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.engine.Collector;
import org.apache.qpid.proton.engine.Connection;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.Event;
import org.apache.qpid.proton.engine.Link;
import org.apache.qpid.proton.engine.Receiver;
import org.apache.qpid.proton.engine.Sasl;
import org.apache.qpid.proton.engine.Transport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;

/**
 * A no-op AMQP 1.0 sink (proton-j over blocking sockets, one thread per connection): accepts SASL PLAIN or
 * ANONYMOUS, opens whatever the client opens, grants credit and accepts and settles every transfer at once without
 * storing it. Sending to it measures the load client's own ceiling on this machine.
 *
 * <p>Usage: {@code NoopSink <port>}; prints {@value #READY} once listening.
 */
public final class NoopSink {

    static final String READY = "SINK-READY";
    private static final int CREDIT = 2000;

    private NoopSink() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        try (ServerSocket server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress())) {
            System.out.println(READY);
            System.out.flush();
            while (true) {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                Thread t = new Thread(() -> serve(s), "sink-" + s.getPort());
                t.setDaemon(true);
                t.start();
            }
        }
    }

    private static void serve(Socket socket) {
        Transport transport = Proton.transport();
        transport.setMaxFrameSize(256 * 1024);
        Sasl sasl = transport.sasl();
        sasl.server();
        sasl.setMechanisms("PLAIN", "ANONYMOUS");
        Connection connection = Proton.connection();
        Collector collector = Proton.collector();
        connection.collect(collector);
        transport.bind(connection);
        byte[] in = new byte[64 * 1024];
        try (socket; InputStream is = socket.getInputStream(); OutputStream os = socket.getOutputStream()) {
            byte[] out = new byte[64 * 1024];
            boolean authenticated = false;
            while (true) {
                if (!authenticated && sasl.getRemoteMechanisms().length > 0) {
                    authenticated = true;
                    byte[] ignored = new byte[sasl.pending()];
                    sasl.recv(ignored, 0, ignored.length);
                    sasl.done(Sasl.SaslOutcome.PN_SASL_OK);
                }
                handle(collector);
                flush(transport, os, out);
                int n = is.read(in);
                if (n < 0) {
                    return;
                }
                int off = 0;
                while (off < n) {
                    ByteBuffer tail = transport.tail();
                    int k = Math.min(tail.remaining(), n - off);
                    tail.put(in, off, k);
                    transport.process();
                    off += k;
                }
            }
        } catch (IOException | RuntimeException e) {
            // the client went away
        }
    }

    private static void flush(Transport transport, OutputStream os, byte[] out) throws IOException {
        boolean wrote = false;
        while (transport.pending() > 0) {
            ByteBuffer head = transport.head();
            int k = Math.min(head.remaining(), out.length);
            head.get(out, 0, k);
            transport.pop(k);
            os.write(out, 0, k);
            wrote = true;
        }
        if (wrote) {
            os.flush();
        }
    }

    private static void handle(Collector collector) {
        Event e;
        while ((e = collector.peek()) != null) {
            switch (e.getType()) {
                case CONNECTION_REMOTE_OPEN -> {
                    Connection c = e.getConnection();
                    c.setContainer("noop-sink");
                    c.open();
                }
                case SESSION_REMOTE_OPEN -> e.getSession().open();
                case LINK_REMOTE_OPEN -> {
                    Link link = e.getLink();
                    link.setSource(link.getRemoteSource());
                    link.setTarget(link.getRemoteTarget());
                    link.open();
                    if (link instanceof Receiver r) {
                        r.flow(CREDIT);
                    }
                }
                case DELIVERY -> {
                    Delivery d = e.getDelivery();
                    if (d.getLink() instanceof Receiver r && d.isReadable() && !d.isPartial()) {
                        r.advance();
                        d.disposition(Accepted.getInstance());
                        d.settle();
                        if (r.getCredit() < CREDIT / 2) {
                            r.flow(CREDIT - r.getCredit());
                        }
                    }
                }
                case LINK_REMOTE_CLOSE -> e.getLink().close();
                case SESSION_REMOTE_CLOSE -> e.getSession().close();
                case CONNECTION_REMOTE_CLOSE -> e.getConnection().close();
                default -> {
                }
            }
            collector.pop();
        }
    }
}
