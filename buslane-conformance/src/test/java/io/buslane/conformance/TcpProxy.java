package io.buslane.conformance;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy a test can cut: {@link #sever()} drops every connection through it and refuses new ones (a network
 * partition between a broker and its database that the broker notices: its connections are reset),
 * {@link #blackHole()} keeps every connection open and accepts new ones but forwards nothing in either direction
 * (packets dropped: the broker notices only by its own timeouts), {@link #heal()} forwards again on the same port.
 */
final class TcpProxy implements AutoCloseable {

    private final String targetHost;
    private final int targetPort;
    private final int port;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile ServerSocket server;
    private volatile boolean silent;

    TcpProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.port = s.getLocalPort();
        start(s);
    }

    int port() {
        return port;
    }

    private void start(ServerSocket s) {
        server = s;
        Thread accept = new Thread(() -> {
            while (!s.isClosed()) {
                try {
                    Socket client = s.accept();
                    if (silent) {
                        sockets.add(client); // held open, never answered
                        swallow(client);
                        continue;
                    }
                    Socket upstream;
                    try {
                        upstream = new Socket(targetHost, targetPort);
                    } catch (IOException refused) {
                        closeQuietly(client); // as the target would: refused at once, not left hanging
                        continue;
                    }
                    sockets.add(client);
                    sockets.add(upstream);
                    pump(client, upstream);
                    pump(upstream, client);
                } catch (IOException e) {
                    // closed by sever(), or the target refused: the client sees its connection fail
                }
            }
        }, "tcp-proxy-accept-" + port);
        accept.setDaemon(true);
        accept.start();
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    if (silent) {
                        continue; // dropped
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Reads and drops what a held connection sends. */
    private void swallow(Socket from) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream()) {
                while (in.read(buf) >= 0) {
                    // dropped
                }
            } catch (IOException e) {
                // the client gave up
            } finally {
                closeQuietly(from);
            }
        }, "tcp-proxy-swallow");
        t.setDaemon(true);
        t.start();
    }

    /** Forwards nothing any more, in either direction, on the open connections and on new ones; closes nothing. */
    void blackHole() {
        silent = true;
    }

    /** Drops every connection and refuses new ones. */
    void sever() {
        closeQuietly(server);
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    /**
     * Forwards again: after {@link #sever()}, accepts connections again on the same port; after {@link #blackHole()},
     * drops the connections that lost bytes (a peer whose packets were dropped that long has timed out) and forwards
     * on new ones.
     */
    void heal() throws IOException {
        if (silent) {
            for (Socket s : sockets) {
                closeQuietly(s);
            }
            sockets.clear();
            silent = false;
            return;
        }
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        start(s);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            if (c != null) {
                c.close();
            }
        } catch (Exception e) {
            // nothing to do
        }
    }

    @Override
    public void close() {
        sever();
    }
}
