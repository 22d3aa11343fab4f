package io.buslane.cluster;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.Engine;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.remote.OpCodec;
import io.buslane.engine.remote.PartitionOp;
import io.buslane.engine.remote.RemotePartitions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.ServerSSLOptions;
import io.vertx.core.net.NetSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * The owner's side of the cluster channel: a Vert.x TCP server on the cluster address. A connecting node must say
 * hello and answer the server's random challenge with the HMAC of the shared cluster secret within the handshake
 * time, else it is closed with nothing answered but the challenge (the handshake is in {@link Frames}). Then each
 * REQUEST runs through {@link io.buslane.engine.EngineCluster#ownerSide} (which refuses partitions this node does
 * not serve) and is answered with OK or ERROR (the engine's error kind and text). At most {@code maxInFlight}
 * requests per connection run at a time; more are answered SERVER_BUSY at once.
 *
 * <p>With TLS options ({@code tls}: the node's certificate, the cluster CA to trust, client certificates required)
 * the channel is mutual TLS: a peer must present a certificate the cluster CA signed before a byte of the handshake
 * is read, and every frame after it is encrypted and integrity-checked. The HMAC handshake still runs inside it.
 */
public final class ClusterServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterServer.class);
    private static final long HANDSHAKE_MS = 5_000;

    private final Vertx vertx;
    private final RemotePartitions.Owner owner;
    private final byte[] secret;
    private final int maxInFlight;
    private final ServerSSLOptions tls;
    private final SecureRandom random = new SecureRandom();
    private NetServer server;

    /** A server on a plain TCP channel, authenticated by the HMAC handshake only. */
    public ClusterServer(Vertx vertx, Engine engine, byte[] secret, int maxInFlight) {
        this(vertx, engine, secret, maxInFlight, null);
    }

    /** @param tls mutual TLS for the channel (client certificates required), or null for plain TCP */
    public ClusterServer(Vertx vertx, Engine engine, byte[] secret, int maxInFlight, ServerSSLOptions tls) {
        this.vertx = vertx;
        this.owner = engine.cluster().ownerSide();
        this.secret = secret.clone();
        this.maxInFlight = maxInFlight;
        this.tls = tls;
    }

    /** Listens on {@code host:port} (0: any free port); completes with the port. */
    public Future<Integer> listen(String host, int port) {
        NetServerOptions options = new NetServerOptions();
        if (tls != null) {
            options.setSsl(true).setKeyCertOptions(tls.getKeyCertOptions()).setTrustOptions(tls.getTrustOptions())
                    .setClientAuth(ClientAuth.REQUIRED)
                    .setEnabledSecureTransportProtocols(tls.getEnabledSecureTransportProtocols())
                    .setSslHandshakeTimeout(HANDSHAKE_MS).setSslHandshakeTimeoutUnit(TimeUnit.MILLISECONDS);
        }
        server = vertx.createNetServer(options).connectHandler(this::connected);
        return server.listen(port, host).map(NetServer::actualPort);
    }

    /** Makes the next connections use {@code newTls} (a renewed certificate or CA); open connections keep theirs. */
    public Future<Boolean> updateTls(ServerSSLOptions newTls) {
        return server.updateSSLOptions(newTls, true);
    }

    private void connected(NetSocket socket) {
        new Connection(socket, vertx.getOrCreateContext()).start();
    }

    @Override
    public void close() {
        if (server != null) {
            server.close().await();
        }
    }

    /** One peer's connection: the handshake, then requests. */
    private final class Connection {
        private final NetSocket socket;
        private final Context context;
        private final byte[] nonce = new byte[Frames.NONCE_BYTES];
        private boolean challenged;
        private boolean refused;
        private boolean authenticated;
        private int inFlight;

        Connection(NetSocket socket, Context context) {
            this.socket = socket;
            this.context = context;
        }

        void start() {
            random.nextBytes(nonce);
            socket.handler(Frames.parser(this::frame, this::refuse,
                    () -> authenticated ? Frames.MAX_FRAME_BYTES : Frames.MAX_HANDSHAKE_FRAME_BYTES));
            vertx.setTimer(HANDSHAKE_MS, t -> {
                if (!authenticated) {
                    refuse();
                }
            });
        }

        private void refuse() {
            if (refused) {
                return; // the rest of a chunk read with the bad frame
            }
            refused = true;
            LOG.warn("Refusing the cluster connection from {}: no valid handshake", socket.remoteAddress());
            socket.close();
        }

        private void frame(Buffer frame) {
            byte[] bytes = frame.getBytes();
            RecordReader r = new RecordReader(bytes);
            try {
                byte type = r.readByte();
                if (!authenticated) {
                    handshake(type, r, bytes.length);
                } else if (type == Frames.REQUEST) {
                    request(r);
                } else {
                    refuse();
                }
            } catch (RuntimeException e) {
                LOG.warn("Closing the cluster connection from {}: bad frame", socket.remoteAddress(), e);
                socket.close();
            }
        }

        private void handshake(byte type, RecordReader r, int length) {
            if (type == Frames.HELLO && !challenged && length == 1 + Frames.NONCE_BYTES) {
                byte[] clientNonce = new byte[Frames.NONCE_BYTES];
                r.readRaw(clientNonce, 0, clientNonce.length);
                challenged = true;
                RecordWriter w = new RecordWriter(80);
                w.writeByte(Frames.CHALLENGE);
                w.writeRaw(nonce, 0, nonce.length);
                byte[] proof = Frames.mac(secret, Frames.SERVER, clientNonce);
                w.writeRaw(proof, 0, proof.length);
                w.writeVarInt(Frames.PROTOCOL_VERSION);
                socket.write(Frames.frame(w));
                return;
            }
            if (type != Frames.AUTH || !challenged || length < 1 + Frames.MAC_BYTES) {
                refuse();
                return;
            }
            byte[] answer = new byte[Frames.MAC_BYTES];
            r.readRaw(answer, 0, answer.length);
            if (!MessageDigest.isEqual(answer, Frames.mac(secret, Frames.CLIENT, nonce))) {
                refuse();
                return;
            }
            int version;
            try {
                version = r.hasRemaining() ? r.readVarInt() : Frames.UNVERSIONED;
            } catch (RuntimeException malformed) {
                refuse();
                return;
            }
            if (r.hasRemaining()) {
                refuse(); // nothing may follow the version
                return;
            }
            if (!Frames.speaks(version)) {
                LOG.warn("Refusing the cluster connection from {}: it speaks cluster protocol version {}, this node "
                        + "speaks {}", socket.remoteAddress(), version, Frames.PROTOCOL_VERSION);
                refuse();
                return;
            }
            authenticated = true;
        }

        private void request(RecordReader r) {
            long id = r.readLong();
            PartitionOp<?> op;
            try {
                op = OpCodec.read(r);
            } catch (RuntimeException e) {
                answer(id, null, null, new BrokerException(ErrorKind.INTERNAL, "Undecodable cluster request: " + e));
                return;
            }
            if (inFlight >= maxInFlight) {
                answer(id, op, null, Frames.busy("This node is busy with requests of other nodes; retry."));
                return;
            }
            inFlight++;
            owner.run(op).whenComplete((result, error) -> context.runOnContext(v -> {
                inFlight--;
                answer(id, op, result, error);
            }));
        }

        private void answer(long id, PartitionOp<?> op, Object result, Throwable error) {
            RecordWriter w = new RecordWriter(64);
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause()
                    : error;
            if (cause == null) {
                w.writeByte(Frames.OK);
                w.writeLong(id);
                try {
                    OpCodec.writeResult(w, op, result);
                } catch (RuntimeException e) {
                    answer(id, op, null, e);
                    return;
                }
            } else {
                BrokerException be = cause instanceof BrokerException b ? b
                        : new BrokerException(ErrorKind.INTERNAL, String.valueOf(cause.getMessage()));
                w.writeByte(Frames.ERROR);
                w.writeLong(id);
                w.writeString(be.kind().name());
                w.writeString(be.description());
            }
            socket.write(Frames.frame(w));
        }
    }
}
