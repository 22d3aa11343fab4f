package io.buslane.amqp.transport;

import org.apache.qpid.proton.engine.Link;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Connection and link counters of one AMQP listener, for metrics (no metrics library here: the server exposes them
 * as Prometheus gauges and counters). Open counts are gauges; "opened" counts only grow. Thread-safe to read.
 */
public final class AmqpStats {

    private final LongAdder connectionsOpened = new LongAdder();
    private final LongAdder connectionsRefused = new LongAdder();
    private final AtomicLong linksOpen = new AtomicLong();
    private final LongAdder linksOpened = new LongAdder();

    /** Connections accepted since start. */
    public long connectionsOpened() {
        return connectionsOpened.sum();
    }

    /** Connections refused since start because the connection limit was reached. */
    public long connectionsRefused() {
        return connectionsRefused.sum();
    }

    /** Links attached (opened by the broker) and not yet detached, on every connection. */
    public long linksOpen() {
        return linksOpen.get();
    }

    /** Links the broker opened since start (a refused attach is opened and closed at once, so it counts). */
    public long linksOpened() {
        return linksOpened.sum();
    }

    void connectionOpened() {
        connectionsOpened.increment();
    }

    void connectionRefused() {
        connectionsRefused.increment();
    }

    /** A tracker for one connection's links. */
    public Links newLinks() {
        return new Links();
    }

    /**
     * The links of one connection that are open, so that a link is counted once however its end arrives (local
     * close, detach, or the socket dropping). Confined to the connection's event loop.
     */
    public final class Links {

        private final Set<Link> open = Collections.newSetFromMap(new IdentityHashMap<>());

        private Links() {
        }

        /** The broker opened (attached) the link. */
        public void opened(Link link) {
            if (open.add(link)) {
                linksOpen.incrementAndGet();
                linksOpened.increment();
            }
        }

        /** The broker closed or detached the link. */
        public void closed(Link link) {
            if (open.remove(link)) {
                linksOpen.decrementAndGet();
            }
        }

        /** The connection is gone: every link it still had is closed. */
        public void connectionClosed() {
            linksOpen.addAndGet(-open.size());
            open.clear();
        }

        /** Links of this connection counted as open. */
        public int size() {
            return open.size();
        }
    }
}
