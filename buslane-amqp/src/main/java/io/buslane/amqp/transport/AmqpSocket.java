package io.buslane.amqp.transport;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocketBase;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;

/**
 * The byte stream an {@link AmqpConnection} reads and writes: a TCP socket (plain or TLS) or a WebSocket whose
 * binary frames carry the AMQP bytes (subprotocol {@code AMQPWSB10}). The connection is the same either way, with
 * the same {@link FrameGuard}: only where the bytes come from differs.
 */
interface AmqpSocket {

    void handler(Handler<Buffer> handler);

    void closeHandler(Handler<Void> handler);

    void exceptionHandler(Handler<Throwable> handler);

    void write(Buffer data);

    void close();

    SocketAddress remoteAddress();

    /** A TCP socket. */
    static AmqpSocket of(NetSocket socket) {
        return new AmqpSocket() {
            @Override
            public void handler(Handler<Buffer> handler) {
                socket.handler(handler);
            }

            @Override
            public void closeHandler(Handler<Void> handler) {
                socket.closeHandler(handler);
            }

            @Override
            public void exceptionHandler(Handler<Throwable> handler) {
                socket.exceptionHandler(handler);
            }

            @Override
            public void write(Buffer data) {
                socket.write(data);
            }

            @Override
            public void close() {
                socket.close();
            }

            @Override
            public SocketAddress remoteAddress() {
                return socket.remoteAddress();
            }
        };
    }

    /** A WebSocket: each frame's payload is read as stream bytes, each write is one binary frame. */
    static AmqpSocket of(WebSocketBase socket) {
        return new AmqpSocket() {
            @Override
            public void handler(Handler<Buffer> handler) {
                socket.handler(handler);
            }

            @Override
            public void closeHandler(Handler<Void> handler) {
                socket.closeHandler(handler);
            }

            @Override
            public void exceptionHandler(Handler<Throwable> handler) {
                socket.exceptionHandler(handler);
            }

            @Override
            public void write(Buffer data) {
                socket.writeBinaryMessage(data);
            }

            @Override
            public void close() {
                socket.close();
            }

            @Override
            public SocketAddress remoteAddress() {
                return socket.remoteAddress();
            }
        };
    }
}
