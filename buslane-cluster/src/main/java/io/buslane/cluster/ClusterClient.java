package io.buslane.cluster;

import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.remote.OpCodec;
import io.buslane.engine.remote.PartitionOp;
import io.buslane.engine.remote.RemotePartitions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;

import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The requesting side of the cluster channel, the engine's {@link RemotePartitions}: one authenticated connection
 * per peer node (opened on first use, opened again after it closes), requests multiplexed on it by request id.
 * Bounded: at most {@code maxInFlight} requests wait for one peer; beyond that a request fails at once with
 * SERVER_BUSY. Never hangs: a request without an answer within {@code timeout}, or whose peer cannot be reached or
 * closes, fails with SERVER_BUSY (retriable). A send (the owner takes it once per transfer key) and a read whose
 * connection closed before the answer are sent once more on a new connection, within the same timeout. Futures
 * complete on a Vert.x event-loop thread.
 */
public final class ClusterClient implements RemotePartitions, AutoCloseable {

    private final Vertx vertx;
    private final ShardDirectory directory;
    private final byte[] secret;
    private final int maxInFlight;
    private final long timeoutMs;
    private final NetClient client;
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final SecureRandom random = new SecureRandom();

    /** A client on plain TCP channels, authenticated by the HMAC handshake only. */
    public ClusterClient(Vertx vertx, ShardDirectory directory, byte[] secret, int maxInFlight, Duration timeout) {
        this(vertx, directory, secret, maxInFlight, timeout, null);
    }

    /**
     * @param tls mutual TLS for the channels (this node's certificate, the cluster CA to trust; the peer's certificate
     *            must name the host of its cluster address), or null for plain TCP
     */
    public ClusterClient(Vertx vertx, ShardDirectory directory, byte[] secret, int maxInFlight, Duration timeout,
                         ClientSSLOptions tls) {
        this.vertx = vertx;
        this.directory = directory;
        this.secret = secret.clone();
        this.maxInFlight = maxInFlight;
        this.timeoutMs = Math.max(1, timeout.toMillis());
        NetClientOptions options = new NetClientOptions().setConnectTimeout((int) Math.min(timeoutMs,
                Integer.MAX_VALUE));
        if (tls != null) {
            options.setSsl(true).setKeyCertOptions(tls.getKeyCertOptions()).setTrustOptions(tls.getTrustOptions())
                    .setHostnameVerificationAlgorithm(tls.getHostnameVerificationAlgorithm())
                    .setEnabledSecureTransportProtocols(tls.getEnabledSecureTransportProtocols())
                    .setSslHandshakeTimeout(timeoutMs).setSslHandshakeTimeoutUnit(TimeUnit.MILLISECONDS);
        }
        this.client = vertx.createNetClient(options);
    }

    /** Makes the next connections use {@code newTls} (a renewed certificate or CA); open connections keep theirs. */
    public Future<Boolean> updateTls(ClientSSLOptions newTls) {
        return client.updateSSLOptions(newTls, true);
    }

    @Override
    public <R> CompletableFuture<R> call(int shard, PartitionOp<R> op) {
        String address = directory.addressOf(shard);
        if (address == null) {
            return CompletableFuture.failedFuture(Frames.busy("Shard " + shard + " is not served by any node now "
                    + "(it is moving). Retry later."));
        }
        return peers.computeIfAbsent(address, Peer::new).request(op);
    }

    @Override
    public void schedule(Runnable action, long delayMs) {
        vertx.setTimer(Math.max(1, delayMs), t -> action.run());
    }

    /** Requests waiting for an answer from the node at {@code address} (a metric, and for tests). */
    public int inFlight(String address) {
        Peer p = peers.get(address);
        return p == null ? 0 : p.inFlight.get();
    }

    @Override
    public void close() {
        for (Peer p : peers.values()) {
            p.close();
        }
        client.close();
    }

    /** One peer node: its connection and its requests waiting for an answer. */
    private final class Peer {
        private final String address;
        private final String host;
        private final int port;
        private final AtomicInteger inFlight = new AtomicInteger();
        private final Map<Long, Waiting<?>> waiting = new ConcurrentHashMap<>();
        private Future<NetSocket> connection;

        Peer(String address) {
            this.address = address;
            int colon = address.lastIndexOf(':');
            this.host = address.substring(0, colon);
            this.port = Integer.parseInt(address.substring(colon + 1));
        }

        <R> CompletableFuture<R> request(PartitionOp<R> op) {
            if (inFlight.incrementAndGet() > maxInFlight) {
                inFlight.decrementAndGet();
                return CompletableFuture.failedFuture(Frames.busy("Too many requests in flight to cluster node "
                        + address + "; retry later."));
            }
            long id = ids.incrementAndGet();
            Waiting<R> w = new Waiting<>(op);
            waiting.put(id, w);
            w.timer = vertx.setTimer(timeoutMs, t -> fail(id, "Cluster node " + address + " did not answer within "
                    + timeoutMs + " ms; retry later."));
            Buffer frame;
            try {
                RecordWriter out = new RecordWriter(256);
                out.writeByte(Frames.REQUEST);
                out.writeLong(id);
                OpCodec.write(out, op);
                w.frame = Frames.frame(out);
            } catch (RuntimeException e) {
                finish(id);
                return CompletableFuture.failedFuture(e);
            }
            send(id, w);
            return w.future;
        }

        private void send(long id, Waiting<?> w) {
            connection().onComplete(ar -> {
                if (!waiting.containsKey(id)) {
                    return; // timed out meanwhile
                }
                if (ar.failed()) {
                    fail(id, "Cluster node " + address + " cannot be reached (" + ar.cause().getMessage()
                            + "); retry later.");
                } else {
                    w.sentOn = ar.result();
                    ar.result().write(w.frame.copy());
                }
            });
        }

        private synchronized Future<NetSocket> connection() {
            if (connection == null || connection.failed()) {
                connection = connect();
            }
            return connection;
        }

        private Future<NetSocket> connect() {
            Promise<NetSocket> ready = Promise.promise();
            client.connect(port, host).onComplete(ar -> {
                if (ar.failed()) {
                    ready.tryFail(ar.cause());
                    return;
                }
                NetSocket socket = ar.result();
                socket.closeHandler(v -> closed(socket, ready));
                vertx.setTimer(timeoutMs, t -> {
                    if (ready.tryFail("No handshake from cluster node " + address + " within " + timeoutMs
                            + " ms")) {
                        socket.close(); // the next request connects again
                    }
                });
                byte[] clientNonce = new byte[Frames.NONCE_BYTES];
                random.nextBytes(clientNonce);
                socket.handler(Frames.parser(frame -> {
                    try {
                        frame(socket, frame, ready, clientNonce);
                    } catch (RuntimeException e) {
                        socket.close();
                    }
                }, socket::close, () -> ready.future().succeeded() ? Frames.MAX_FRAME_BYTES
                        : Frames.MAX_HANDSHAKE_FRAME_BYTES));
                // the client speaks first: the server answers only once this handler is in place (see Frames)
                RecordWriter hello = new RecordWriter(40);
                hello.writeByte(Frames.HELLO);
                hello.writeRaw(clientNonce, 0, clientNonce.length);
                socket.write(Frames.frame(hello));
            });
            return ready.future();
        }

        private void frame(NetSocket socket, Buffer frame, Promise<NetSocket> ready, byte[] clientNonce) {
            RecordReader r = new RecordReader(frame.getBytes());
            byte type = r.readByte();
            switch (type) {
                case Frames.CHALLENGE -> {
                    if (ready.future().isComplete()) {
                        socket.close(); // a second challenge: not a node of this cluster
                        return;
                    }
                    byte[] nonce = new byte[Frames.NONCE_BYTES];
                    r.readRaw(nonce, 0, nonce.length);
                    byte[] proof = new byte[Frames.MAC_BYTES];
                    r.readRaw(proof, 0, proof.length);
                    if (!MessageDigest.isEqual(proof, Frames.mac(secret, Frames.SERVER, clientNonce))) {
                        ready.tryFail("The cluster node " + address + " does not know this cluster's secret; "
                                + "closed the connection");
                        socket.close();
                        return;
                    }
                    boolean versioned = r.hasRemaining();
                    int version = versioned ? r.readVarInt() : Frames.UNVERSIONED;
                    if (!Frames.speaks(version)) {
                        ready.tryFail("The cluster node " + address + " speaks cluster protocol version " + version
                                + ", this node speaks " + Frames.PROTOCOL_VERSION + "; closed the connection");
                        socket.close();
                        return;
                    }
                    RecordWriter w = new RecordWriter(40);
                    w.writeByte(Frames.AUTH);
                    byte[] mac = Frames.mac(secret, Frames.CLIENT, nonce);
                    w.writeRaw(mac, 0, mac.length);
                    if (versioned) {
                        w.writeVarInt(Frames.PROTOCOL_VERSION); // a node of before the version refuses more bytes
                    }
                    socket.write(Frames.frame(w));
                    ready.tryComplete(socket); // requests follow the AUTH on this connection
                }
                case Frames.OK, Frames.ERROR -> {
                    if (ready.future().succeeded()) {
                        answer(r, type);
                    } else {
                        socket.close(); // an answer before the server proved itself
                    }
                }
                default -> socket.close();
            }
        }

        private void answer(RecordReader r, byte type) {
            long id = r.readLong();
            Waiting<?> w = waiting.get(id);
            if (w == null) {
                return; // timed out meanwhile
            }
            if (type == Frames.OK) {
                answered(id, w, r);
            } else {
                String kind = r.readString();
                String description = r.readString();
                if (finish(id) != null) {
                    w.future.completeExceptionally(Frames.error(kind, description));
                }
            }
        }

        private void closed(NetSocket socket, Promise<NetSocket> ready) {
            ready.tryFail("The cluster node " + address + " closed the connection (refused the handshake?)");
            synchronized (this) {
                if (connection != null && connection.succeeded() && connection.result() == socket) {
                    connection = null;
                }
            }
            for (Map.Entry<Long, Waiting<?>> e : waiting.entrySet()) {
                Waiting<?> w = e.getValue();
                if (w.sentOn != socket) {
                    continue; // not sent yet, or sent on a newer connection
                }
                if (w.resendable && !w.resent) {
                    // the answer may be lost while the owner did it: sent once more, within the same timeout;
                    // a send's transfer key makes the owner take it once
                    w.resent = true;
                    w.sentOn = null;
                    send(e.getKey(), w);
                } else {
                    fail(e.getKey(), "The connection to cluster node " + address + " closed; retry later.");
                }
            }
        }

        private void fail(long id, String why) {
            Waiting<?> w = finish(id);
            if (w != null) {
                w.future.completeExceptionally(Frames.busy(why));
            }
        }

        private <R> void answered(long id, Waiting<R> w, RecordReader r) {
            R result;
            try {
                result = OpCodec.readResult(r, w.op);
            } catch (RuntimeException e) {
                if (finish(id) != null) {
                    w.future.completeExceptionally(e);
                }
                return;
            }
            if (finish(id) != null) {
                w.future.complete(result);
            }
        }

        /** Removes a waiting request (null when it was answered or failed already). */
        private Waiting<?> finish(long id) {
            Waiting<?> w = waiting.remove(id);
            if (w != null) {
                inFlight.decrementAndGet();
                vertx.cancelTimer(w.timer);
            }
            return w;
        }

        synchronized void close() {
            if (connection != null && connection.succeeded()) {
                connection.result().close();
            }
        }
    }

    /** A request waiting for its answer. */
    private static final class Waiting<R> {
        final PartitionOp<R> op;
        /** Whether it may be sent again on a new connection when the one it went on closed before the answer. */
        final boolean resendable;
        final CompletableFuture<R> future = new CompletableFuture<>();
        volatile long timer;
        volatile Buffer frame;
        /** The connection it was written on, or null while it waits for one. */
        volatile NetSocket sentOn;
        volatile boolean resent;

        Waiting(PartitionOp<R> op) {
            this.op = op;
            this.resendable = op.resendable();
        }
    }
}
