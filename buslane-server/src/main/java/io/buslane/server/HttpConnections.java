package io.buslane.server;

import io.buslane.common.time.Clock;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * What one HTTP port lets its connections hold (docs/limits.md#http): at most {@link HttpLimits#maxConnections()}
 * open at once (one more is closed as it arrives), and a connection with no request in flight is closed once
 * {@link HttpLimits#idleTimeoutMs()} has passed since it opened or since its last response ended. A request's
 * headers must therefore arrive within that time (Vert.x hands a request over only once its headers are complete,
 * so a slowloris client that trickles them never has one in flight), and an idle keep-alive connection is
 * reclaimed. A request in flight (a REST receive waiting for a message, a body being read) keeps its connection;
 * an AMQP-over-WebSocket connection is the AMQP listener's, with its own timeouts, and is not closed here.
 *
 * <p>Time comes from the broker's {@link Clock}; {@link #sweep()} runs from a periodic timer on the port's event
 * loop (tests call it after moving a manual clock). Confined to that event loop.
 */
final class HttpConnections {

    private static final Logger LOG = LoggerFactory.getLogger(HttpConnections.class);

    private static final class Tracked {
        final HttpConnection connection;
        int inFlight;
        long quietSinceMs;

        Tracked(HttpConnection connection, long nowMs) {
            this.connection = connection;
            this.quietSinceMs = nowMs;
        }
    }

    private final HttpLimits limits;
    private final Clock clock;
    private final Map<HttpConnection, Tracked> open = new HashMap<>();
    private final Map<String, Tracked> byRemote = new HashMap<>();
    private long refused;
    private long timedOut;
    private long lastRefusalLogMs = Long.MIN_VALUE;

    HttpConnections(HttpLimits limits, Clock clock) {
        this.limits = limits;
        this.clock = clock;
    }

    /** A connection opened: tracked, or closed at once when the port holds its maximum already. */
    void opened(HttpConnection connection) {
        long now = clock.epochMillis();
        if (open.size() >= limits.maxConnections()) {
            refused++;
            if (now - lastRefusalLogMs >= 1_000) {
                lastRefusalLogMs = now;
                LOG.warn("HTTP connection from {} refused: {} are open, the most allowed (--http-max-connections); "
                        + "{} refused so far", connection.remoteAddress(), open.size(), refused);
            }
            connection.close();
            return;
        }
        Tracked t = new Tracked(connection, now);
        open.put(connection, t);
        String remote = key(connection.remoteAddress());
        if (remote != null) {
            byRemote.put(remote, t);
        }
        connection.closeHandler(v -> {
            open.remove(connection);
            if (remote != null) {
                byRemote.remove(remote, t);
            }
        });
    }

    /**
     * A request of one of this port's connections reached the router: it counts as in flight until its response has
     * ended (or its connection closed). Returns false for a connection of another port.
     */
    boolean started(RoutingContext ctx) {
        Tracked t = open.get(ctx.request().connection());
        if (t == null) {
            return false;
        }
        t.inFlight++;
        ctx.addEndHandler(v -> ended(t));
        return true;
    }

    /**
     * The connection from {@code remote} became an AMQP-over-WebSocket connection: it is the AMQP listener's from now
     * on (its connection cap and timeouts), and no longer tracked here. Vert.x replaces the HTTP connection's handler
     * on the upgrade, so its close handler would never run and the entry would stay counted.
     */
    void webSocket(SocketAddress remote) {
        Tracked t = byRemote.remove(key(remote));
        if (t != null) {
            open.remove(t.connection);
        }
    }

    private void ended(Tracked t) {
        t.inFlight = Math.max(0, t.inFlight - 1);
        t.quietSinceMs = clock.epochMillis();
    }

    /** Closes the connections that have had no request in flight for the idle timeout. */
    void sweep() {
        long now = clock.epochMillis();
        for (Iterator<Tracked> it = open.values().iterator(); it.hasNext(); ) {
            Tracked t = it.next();
            if (t.inFlight == 0 && now - t.quietSinceMs >= limits.idleTimeoutMs()) {
                it.remove();
                timedOut++;
                t.connection.close();
            }
        }
    }

    /** Requests in flight now, on all connections. */
    int inFlightCount() {
        int n = 0;
        for (Tracked t : open.values()) {
            n += t.inFlight;
        }
        return n;
    }

    /** Connections open now. */
    int openCount() {
        return open.size();
    }

    /** Connections refused for the cap, and closed for the idle timeout, since start. */
    long refusedCount() {
        return refused;
    }

    long timedOutCount() {
        return timedOut;
    }

    private static String key(SocketAddress a) {
        return a == null ? null : a.host() + ":" + a.port();
    }
}
