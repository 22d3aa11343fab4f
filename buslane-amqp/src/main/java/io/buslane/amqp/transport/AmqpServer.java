package io.buslane.amqp.transport;

import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.amqp.mgmt.ManagementProcessor;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The AMQP 1.0 listener. Each accepted socket becomes an {@link AmqpConnection} confined to the Vert.x event loop
 * that owns the socket; a slow or misbehaving client affects only its own connection.
 *
 * <p>Design note: the frames are handled by proton-j directly rather than through vertx-proton, because
 * vertx-proton decodes every transfer with proton-j's {@code MessageImpl}, which keeps only the first body
 * section: Service Bus batches (message format {@code 0x80013700}, one {@code data} section per message) would
 * lose all but their first message. Owning the pump also gives direct control over SASL (MSSBCBS, skipping SASL),
 * delivery tags and dispositions.
 */
public final class AmqpServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AmqpServer.class);

    private final NetServer server;
    private final AtomicInteger connections = new AtomicInteger();
    private final AmqpStats stats = new AmqpStats(); // ops (metrics)

    private AmqpServer(NetServer server) {
        this.server = server;
    }

    /** Starts listening; returns once the port is bound. */
    public static AmqpServer start(Vertx vertx, Engine engine, Clock clock, CbsAuthorizer authorizer,
                                   AmqpOptions options) throws Exception {
        NetServerOptions netOptions = new NetServerOptions()
                .setHost(options.host())
                .setPort(options.port())
                .setTcpNoDelay(true)
                .setReuseAddress(true);
        NetServer net = vertx.createNetServer(netOptions);
        AmqpServer self = new AmqpServer(net);
        ManagementProcessor management = new ManagementProcessor(engine);
        net.connectHandler(socket -> {
            if (self.connections.incrementAndGet() > options.maxConnections()) {
                self.connections.decrementAndGet();
                self.stats.connectionRefused(); // ops (metrics)
                LOG.warn("Refusing connection from {}: the limit of {} connections is reached",
                        socket.remoteAddress(), options.maxConnections());
                socket.close();
                return;
            }
            AmqpConnection connection = new AmqpConnection(vertx, vertx.getOrCreateContext(), socket, engine, clock,
                    authorizer, management, options, self.connections::decrementAndGet);
            self.stats.connectionOpened(); // ops (metrics)
            connection.links = self.stats.newLinks(); // ops (metrics)
            connection.start();
        });
        net.listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        LOG.info("AMQP listening on {}:{}", options.host(), net.actualPort());
        return self;
    }

    public int port() {
        return server.actualPort();
    }

    public int connectionCount() {
        return connections.get();
    }

    /** Connection and link counters, for metrics. */
    public AmqpStats stats() {
        return stats;
    }

    @Override
    public void close() {
        try {
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warn("AMQP listener did not close cleanly", e);
        }
    }
}
