package io.buslane.cluster;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.persist.RecordWriter;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.parsetools.RecordParser;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * The cluster channel's framing: each frame is a 4-byte big-endian length, then that many bytes: a type byte and
 * the type's fields in the engine's record encoding. Also the connect handshake's MAC.
 *
 * <pre>
 * HELLO      client → server  32 random bytes (the client's nonce)
 * CHALLENGE  server → client  32 random bytes (the server's nonce),
 *                             HMAC-SHA256(secret, "buslane-cluster-2 server" + client nonce),
 *                             the server's protocol version (var-int; appended: absent from a node of before, 1)
 * AUTH       client → server  HMAC-SHA256(secret, "buslane-cluster-2 client" + server nonce),
 *                             the client's protocol version (var-int), only when the CHALLENGE carried one
 * REQUEST    client → server  request id (long), op code (var-int), the operation
 * OK         server → client  request id, the result
 * ERROR      server → client  request id, error kind name, description
 * </pre>
 * The client speaks first and the server says nothing before the client's HELLO: a Vert.x client socket's data
 * handler is installed by the connect future's callback, which runs as a later task on the event loop, so bytes a
 * server wrote at once on accept could be read (and dropped) before it. The client sends AUTH only after checking
 * the server's proof, and its requests right after AUTH. A server that gets a wrong AUTH closes the connection and
 * ignores every frame after it, the rest of the same read included: no request runs.
 *
 * <p>The protocol version names the layout of the requests and answers ({@code engine.remote.OpCodec}: the op
 * codes, each operation's slots and each result type's bytes); each side refuses a peer whose version it does not
 * speak, with a message naming both, instead of misreading its frames. A node of before the version (no version
 * in its frames) speaks version 1.
 */
final class Frames {

    static final byte CHALLENGE = 1;
    static final byte AUTH = 2;
    static final byte HELLO = 3;
    static final byte REQUEST = 4;
    static final byte OK = 5;
    static final byte ERROR = 6;
    static final int NONCE_BYTES = 32;
    /** The cluster protocol version this node speaks (the layout of {@code engine.remote.OpCodec}). */
    static final int PROTOCOL_VERSION = 1;
    /** The version of a peer whose handshake carries none (a node of before the version). */
    static final int UNVERSIONED = 1;
    /** The largest frame accepted; a peer sending a larger one is closed. */
    static final int MAX_FRAME_BYTES = 256 * 1024 * 1024;
    static final int MAC_BYTES = 32;
    /** Whose answer a MAC is (so that a peer cannot reflect the other's challenge back at it). */
    static final byte[] CLIENT = "buslane-cluster-2 client".getBytes(StandardCharsets.US_ASCII);
    static final byte[] SERVER = "buslane-cluster-2 server".getBytes(StandardCharsets.US_ASCII);

    private Frames() {
    }

    /** A frame of the bytes a writer holds (the type byte first). */
    static Buffer frame(RecordWriter w) {
        Buffer b = Buffer.buffer(4 + w.size());
        b.appendInt(w.size());
        b.appendBytes(w.buffer(), 0, w.size());
        return b;
    }

    /** Whether this node speaks the protocol version a peer announced. */
    static boolean speaks(int version) {
        return version == PROTOCOL_VERSION;
    }

    /** The largest frame accepted before the handshake completed. */
    static final int MAX_HANDSHAKE_FRAME_BYTES = 1024;

    /**
     * A parser that hands each frame's body to {@code onFrame}, and calls {@code onBad} (once, then nothing more)
     * for a frame longer than {@code maxBytes} answers at that moment, or empty.
     */
    static RecordParser parser(Consumer<Buffer> onFrame, Runnable onBad, IntSupplier maxBytes) {
        RecordParser parser = RecordParser.newFixed(4);
        boolean[] body = {false};
        boolean[] bad = {false};
        parser.handler(buf -> {
            if (bad[0]) {
                return;
            }
            if (!body[0]) {
                int len = buf.getInt(0);
                if (len < 1 || len > maxBytes.getAsInt()) {
                    bad[0] = true;
                    onBad.run();
                    return;
                }
                body[0] = true;
                parser.fixedSizeMode(len);
            } else {
                body[0] = false;
                parser.fixedSizeMode(4);
                onFrame.accept(buf);
            }
        });
        return parser;
    }

    /** The handshake's answer to a nonce, by the client or the server side. */
    static byte[] mac(byte[] secret, byte[] side, byte[] nonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(side);
            return mac.doFinal(nonce);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    /** The error an ERROR frame carried, as the owner raised it. */
    static BrokerException error(String kind, String description) {
        ErrorKind k;
        try {
            k = ErrorKind.valueOf(kind);
        } catch (IllegalArgumentException | NullPointerException e) {
            k = ErrorKind.INTERNAL;
        }
        return new BrokerException(k, description);
    }

    static BrokerException busy(String why) {
        return new BrokerException(ErrorKind.SERVER_BUSY, why);
    }
}
