package io.buslane.amqp.transport;

import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.auth.AuthFailureThrottle;
import io.buslane.common.error.BrokerException;
import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.common.auth.Grants;
import io.buslane.common.auth.Right;
import io.buslane.amqp.link.ConsumerLink;
import io.buslane.amqp.link.CoordinatorLink;
import io.buslane.amqp.link.LinkContext;
import io.buslane.amqp.link.LinkHandler;
import io.buslane.amqp.link.Links;
import io.buslane.amqp.link.ProducerLink;
import io.buslane.amqp.link.ReplyLink;
import io.buslane.amqp.link.RequestLink;
import io.buslane.amqp.mgmt.ManagementProcessor;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.txn.TimerScheduler;
import io.buslane.engine.txn.TransactionWork;
import io.buslane.engine.txn.Transactions;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.transaction.Coordinator;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.engine.Collector;
import org.apache.qpid.proton.engine.Connection;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.EndpointState;
import org.apache.qpid.proton.engine.Event;
import org.apache.qpid.proton.engine.Link;
import org.apache.qpid.proton.engine.Receiver;
import org.apache.qpid.proton.engine.Sasl;
import org.apache.qpid.proton.engine.Sender;
import org.apache.qpid.proton.engine.Session;
import org.apache.qpid.proton.engine.Transport;
import org.apache.qpid.proton.engine.TransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One AMQP connection: the proton-j transport pump for one socket and the dispatch of its events to link
 * handlers. Confined to the Vert.x event loop that owns the socket; engine completions hop back with
 * {@link #runOnLoop(Runnable)}.
 */
public final class AmqpConnection implements LinkContext {

    private static final Logger LOG = LoggerFactory.getLogger(AmqpConnection.class);
    private static final AtomicLong IDS = new AtomicLong();
    private static final String CBS = "$cbs";
    private static final String MANAGEMENT_SUFFIX = "/$management";
    static final String[] MECHANISMS = {"MSSBCBS", "ANONYMOUS", "PLAIN"};
    /** How long a client has to answer the broker's close with its own before its socket is dropped. */
    static final long CLOSE_GRACE_MS = 2_000;

    private final long id = IDS.incrementAndGet();
    private final Vertx vertx;
    private final Context context;
    /** Actions for the event loop from other threads (see {@link #runOnLoop}). */
    private final ConcurrentLinkedQueue<Runnable> loopActions = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean loopDrainScheduled = new AtomicBoolean();
    private final AmqpSocket socket;
    private final Engine engine;
    private final Clock clock;
    private final CbsAuthorizer authorizer;
    /** Failed authentications by remote address (SASL PLAIN and put-token), shared by the listener's connections. */
    private final AuthFailureThrottle throttle;
    private final String remoteHost;
    private final ManagementProcessor management;
    private final AmqpOptions options;
    private final Runnable onClosed;
    private final Transport transport = Proton.transport();
    private final Connection connection = Proton.connection();
    private final Collector collector = Proton.collector();
    private final Sasl sasl;
    private final Grants grants;
    private final List<ReplyLink> replyLinks = new ArrayList<>();
    private final Transactions transactions;
    private final FrameGuard guard;
    private final FrameGuard.Sink toProton = this::pushToProton;
    private long tickTimer = -1;
    private long tickDeadlineMs;
    private long handshakeTimer = -1;
    private long authTimer = -1;
    private long expiryTimer = -1;
    private long expiryAtMs = Long.MAX_VALUE;
    private boolean flushScheduled;
    /** When input last arrived (monotonic ns), for {@link #releaseIdleBuffers}. */
    private long lastInputNs;
    /** proton-j's buffers were dropped and nothing has arrived since. */
    private boolean buffersReleased;
    /** Input is no longer read: the connection broke a rule and is being closed. */
    private boolean rejected;
    /** The socket closes once pending output is written (after a failed SASL exchange or a violation). */
    private boolean closeAfterFlush;
    private boolean closed;
    /** Counts this connection's open links (ops metrics); set by the server before {@link #start()}. */
    AmqpStats.Links links = new AmqpStats().newLinks();

    AmqpConnection(Vertx vertx, Context context, AmqpSocket socket, Engine engine, Clock clock,
                   CbsAuthorizer authorizer, AuthFailureThrottle throttle, ManagementProcessor management,
                   AmqpOptions options, Runnable onClosed) {
        this.vertx = vertx;
        this.context = context;
        this.socket = socket;
        this.engine = engine;
        this.clock = clock;
        this.authorizer = authorizer;
        this.throttle = throttle;
        this.remoteHost = socket.remoteAddress() == null ? "unknown" : socket.remoteAddress().host();
        this.lastInputNs = clock.monotonicNanos();
        this.management = management;
        this.options = options;
        this.onClosed = onClosed;
        this.grants = authorizer.newGrants();
        TimerScheduler timers = new TimerScheduler() {
            @Override
            public long schedule(long delayMs, Runnable task) {
                return vertx.setTimer(delayMs, t -> runOnLoop(task));
            }

            @Override
            public void cancel(long handle) {
                vertx.cancelTimer(handle);
            }
        };
        this.transactions = new Transactions(TransactionWork.of(engine::commit), clock,
                "txn:" + id + ":", timers);
        transport.setMaxFrameSize(options.maxFrameSize());
        transport.setChannelMax(options.limits().channelMax());
        this.guard = new FrameGuard(options.limits(), options.maxFrameSize(), this::authenticated);
        transport.setIdleTimeout(options.idleTimeoutMs());
        ProtonTuning.encodePerPass(transport, options.maxFrameSize());
        connection.collect(collector);
        transport.bind(connection);
        sasl = transport.sasl();
        sasl.server();
        sasl.allowSkip(true);
        sasl.setMechanisms(MECHANISMS);
    }

    void start() {
        socket.handler(this::onData);
        socket.closeHandler(v -> onSocketClosed());
        socket.exceptionHandler(e -> {
            LOG.debug("connection {}: socket error", id, e);
            onSocketClosed();
        });
        scheduleTick();
        AmqpLimits limits = options.limits();
        handshakeTimer = vertx.setTimer(limits.handshakeTimeoutMs(), t -> runOnLoop(() -> {
            handshakeTimer = -1;
            if (connection.getRemoteState() == EndpointState.UNINITIALIZED) {
                LOG.debug("connection {}: closed, the handshake did not finish within {} ms", id,
                        limits.handshakeTimeoutMs());
                closeSocket();
            }
        }));
        authTimer = vertx.setTimer(limits.authTimeoutMs(), t -> runOnLoop(() -> {
            authTimer = -1;
            if (!authenticated()) {
                LOG.debug("connection {}: closed, no token within {} ms", id, limits.authTimeoutMs());
                reject("amqp:unauthorized-access", "The connection was closed: no valid token was put within "
                        + limits.authTimeoutMs() / 1000 + " seconds of opening it.");
            }
        }));
    }

    /** The client's address the throttle counts under (from the PROXY header when it is on). */
    String remoteHost() {
        return remoteHost;
    }

    /** True once the connection has put an accepted token or authenticated with SASL PLAIN (or auth is off). */
    @Override
    public boolean authenticated() {
        return !options.requireAuth() || grants.hasAcceptedToken();
    }

    /**
     * Drops proton-j's read and write buffers (256 KiB each) if no input has come for {@code quietNs} and they
     * hold nothing: an idle connection then costs a few KiB of heap. Called by the listener's periodic sweep, on
     * this connection's loop.
     */
    void releaseIdleBuffers(long nowNs, long quietNs) {
        if (!closed && !buffersReleased && nowNs - lastInputNs > quietNs) {
            ProtonTuning.releaseBuffers(transport);
            buffersReleased = true;
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** Bytes of unfinished multi-frame deliveries this connection has in flight (tests, metrics). */
    long bufferedBytes() {
        return guard.bufferedBytes();
    }

    // ------------------------------------------------------------------------------------------------ accessors

    @Override
    public Engine engine() {
        return engine;
    }

    @Override
    public ManagementProcessor management() {
        return management;
    }

    @Override
    // CHECKSTYLE:FQN proton's Receiver is imported
    public CompletableFuture<io.buslane.engine.receive.Receiver> receiverOfLink(
            String linkName) {
        for (Link link = connection.linkHead(null, null); link != null; link = link.next(null, null)) {
            if (!(link instanceof Sender) || !linkName.equals(link.getName())
                    || !(link.getContext() instanceof ConsumerLink consumer)) {
                continue;
            }
            if (link.getLocalState() == EndpointState.ACTIVE) {
                return CompletableFuture.completedFuture(consumer.engineReceiver());
            }
            if (link.getLocalState() == EndpointState.UNINITIALIZED && link.getRemoteState() != EndpointState.CLOSED) {
                return consumer.attachedReceiver(); // its session is being accepted: answered once it is decided
            }
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CbsAuthorizer authorizer() {
        return authorizer;
    }

    @Override
    public Grants grants() {
        return grants;
    }

    /** The transactions declared on this connection. */
    @Override
    public Transactions transactions() {
        return transactions;
    }

    @Override
    public long nowMs() {
        return clock.epochMillis();
    }

    @Override
    public long id() {
        return id;
    }

    /**
     * Runs an action on this connection's event loop (from engine completions), then flushes. Thread-safe. Actions
     * run in the order given; those given while a drain is pending join it, so the completions of one shard cycle
     * cost one event-loop task and one write, not one each.
     */
    @Override
    public void runOnLoop(Runnable action) {
        loopActions.offer(action);
        if (loopDrainScheduled.compareAndSet(false, true)) {
            context.runOnContext(v -> drainLoopActions());
        }
    }

    private void drainLoopActions() {
        loopDrainScheduled.set(false); // first: an action offered from now on schedules another drain
        Runnable action;
        while ((action = loopActions.poll()) != null) {
            if (closed) {
                continue; // dropped, as the connection's other work is
            }
            try {
                action.run();
            } catch (RuntimeException e) {
                LOG.error("connection {}: handler failed", id, e);
                closeWithError("amqp:internal-error", "Internal error: " + e.getMessage());
            }
            processEvents();
        }
        if (!closed) {
            requestFlush();
        }
    }

    /**
     * The connection's grants changed (a token was put): arms the check at the earliest expiry, which detaches the
     * links the remaining grants no longer allow (the service detaches a link whose token expired; the SDKs renew
     * their tokens ahead of expiry).
     */
    @Override
    public void grantsChanged() {
        long next = grants.nextExpiryMs();
        if (closed || next == Long.MAX_VALUE || (expiryTimer >= 0 && next >= expiryAtMs)) {
            return;
        }
        if (expiryTimer >= 0) {
            vertx.cancelTimer(expiryTimer);
        }
        expiryAtMs = next;
        expiryTimer = vertx.setTimer(Math.max(1, next - clock.epochMillis()), t -> runOnLoop(this::onTokenExpiry));
    }

    private void onTokenExpiry() {
        expiryTimer = -1;
        expiryAtMs = Long.MAX_VALUE;
        long now = clock.epochMillis();
        if (grants.nextExpiryMs() > now) {
            grantsChanged(); // renewed meanwhile
            return;
        }
        grants.removeExpired(now);
        Link link = connection.linkHead(null, null);
        while (link != null) {
            Link next = link.next(null, null);
            if (link.getLocalState() == EndpointState.ACTIVE && link.getContext() instanceof LinkHandler handler
                    && !handler.authorized()) {
                handler.onClosed();
                link.setCondition(new ErrorCondition(Symbol.valueOf("amqp:unauthorized-access"),
                        "The token authorizing this link has expired; put a new token and attach again."));
                link.close();
            }
            link = next;
        }
        grantsChanged();
    }

    /**
     * Detaches a sender's link whose unfinished delivery has grown past {@code max} bytes, with the service's
     * {@code amqp:link:message-size-exceeded}, and drops what it holds; later frames of it are dropped as they come.
     */
    @Override
    public void closeLinkForOversizedMessage(Receiver receiver, Delivery delivery, long max) {
        long size = delivery.pending();
        receiver.recv(new byte[delivery.pending()], 0, delivery.pending());
        if (receiver.getLocalState() == EndpointState.ACTIVE) {
            receiver.setCondition(new ErrorCondition(Symbol.valueOf("amqp:link:message-size-exceeded"),
                    "The received message (at least " + size + " bytes) exceeds the limit (" + max
                            + " bytes) currently allowed on the link."));
            receiver.close();
        }
    }

    /** True while this connection's address is refused for too many failed authentications. */
    @Override
    public boolean authThrottled(String keyName) {
        return !throttle.allowed(AuthFailureThrottle.key(remoteHost, keyName), clock.epochMillis());
    }

    /** Counts a failed authentication (wrong PLAIN credentials, a token refused) against this address. */
    @Override
    public void authFailed(String keyName) {
        throttle.failed(AuthFailureThrottle.key(remoteHost, keyName), clock.epochMillis());
    }

    /** True when the connection holds a token (or auth is off) allowing {@code right} on the address. */
    @Override
    public boolean allowed(String address, Right right) {
        return !options.requireAuth() || grants.allows(address, right, clock.epochMillis());
    }

    // ------------------------------------------------------------------------------------------------ pump

    private void onData(Buffer buffer) {
        if (closed || rejected) {
            return;
        }
        byte[] bytes = buffer.getBytes();
        lastInputNs = clock.monotonicNanos();
        buffersReleased = false;
        try {
            guard.feed(bytes, 0, bytes.length, toProton);
        } catch (FrameGuard.Violation v) {
            LOG.debug("connection {}: closed for a protocol violation: {}", id, v.getMessage());
            processEvents();
            reject(v.condition(), v.getMessage());
            return;
        } catch (TransportException e) {
            LOG.debug("connection {}: protocol error: {}", id, e.getMessage());
            // The transport is dead after a protocol error. In the AMQP layer proton-j queues a close frame and
            // then reports end of stream, but in the SASL layer it never does: write what is pending and drop
            // the socket, or a client sending garbage during SASL would hold the connection open forever.
            processEvents();
            flush();
            closeSocket();
            return;
        } catch (RuntimeException | StackOverflowError e) {
            LOG.warn("connection {}: closed, its input could not be processed: {}", id, e.toString());
            reject("amqp:internal-error", "Internal error: " + e);
            return;
        }
        processEvents();
        flush();
    }

    /** Hands checked bytes to proton-j and dispatches what they caused. */
    private void pushToProton(byte[] bytes, int offset, int length) {
        int off = offset;
        int end = offset + length;
        while (off < end && !rejected) {
            int capacity = transport.capacity();
            if (capacity <= 0) {
                throw new TransportException("the transport accepts no more input");
            }
            int n = Math.min(capacity, end - off);
            ByteBuffer tail = transport.tail();
            tail.put(bytes, off, n);
            off += n;
            transport.process();
            processSasl();
            processEvents();
        }
    }

    /**
     * Stops reading, closes the connection with an error, writes what is pending and drops the socket: the client
     * sees the close frame (or, before AMQP is open, just the end of the stream) and the broker keeps nothing.
     */
    private void reject(String condition, String description) {
        rejected = true;
        closeWithError(condition, description);
        processEvents();
        closeAfterFlush = true;
        flush();
    }

    private void processSasl() {
        // Not "state == IDLE": proton-j moves a server to PN_SASL_STEP as soon as it writes sasl-mechanisms, so a
        // client that waits for the mechanisms before sending sasl-init (rhea, .NET, Python, protonj2) would
        // never get an outcome. Only a finished negotiation (PASS/FAIL) is skipped.
        Sasl.SaslState state = sasl.getState();
        if (state == Sasl.SaslState.PN_SASL_PASS || state == Sasl.SaslState.PN_SASL_FAIL) {
            return;
        }
        String[] chosen = sasl.getRemoteMechanisms();
        if (chosen.length == 0) {
            return;
        }
        String mechanism = chosen[0];
        byte[] response = new byte[sasl.pending()];
        sasl.recv(response, 0, response.length);
        if (mechanism.equals("ANONYMOUS") || mechanism.equals("MSSBCBS")) {
            sasl.done(Sasl.SaslOutcome.PN_SASL_OK);
        } else if (mechanism.equals("PLAIN") && plainAuthenticated(response)) {
            sasl.done(Sasl.SaslOutcome.PN_SASL_OK); // the right pair is never refused, throttled or not
        } else {
            if (mechanism.equals("PLAIN")) {
                String user = plainUser(response);
                if (!authThrottled(user)) {
                    authFailed(user);
                }
            }
            // the outcome is written, then the socket is dropped: nothing follows a failed SASL exchange
            sasl.done(Sasl.SaslOutcome.PN_SASL_AUTH);
            rejected = true;
            closeAfterFlush = true;
        }
    }

    /** The user name (the SAS rule) of a SASL PLAIN response, or {@code ""}. */
    private static String plainUser(byte[] response) {
        String[] parts = new String(response, StandardCharsets.UTF_8).split("\u0000", -1);
        return parts.length == 3 ? parts[1] : "";
    }

    private boolean plainAuthenticated(byte[] response) {
        String s = new String(response, StandardCharsets.UTF_8);
        String[] parts = s.split("\u0000", -1);
        if (parts.length != 3) {
            return false;
        }
        return authorizer.authenticatePlain(grants, parts[1], parts[2], clock.epochMillis());
    }

    /** Dispatches every pending proton event. */
    void processEvents() {
        Event event;
        while ((event = collector.peek()) != null) {
            try {
                dispatch(event);
            } catch (RuntimeException | StackOverflowError e) {
                LOG.warn("connection {}: failed to handle {}: {}", id, event.getType(), e.toString());
                Link link = event.getLink();
                if (link != null && link.getLocalState() == EndpointState.ACTIVE) {
                    // contain the failure to the link that caused it
                    if (link.getContext() instanceof LinkHandler handler) {
                        handler.onClosed();
                    }
                    link.setCondition(new ErrorCondition(Symbol.valueOf("amqp:internal-error"),
                            "Internal error: " + e.getMessage()));
                    link.close();
                } else {
                    closeWithError("amqp:internal-error", "Internal error: " + e.getMessage());
                }
            }
            collector.pop();
        }
    }

    /** Writes pending output to the socket. */
    void flush() {
        if (closed) {
            return;
        }
        // Every head()/pending() call makes proton-j walk the connection's transport work list: one call per chunk
        // (head() computes what is pending), one more at the end to see whether the output is closed.
        int pending = 0;
        try {
            ByteBuffer head;
            while ((head = transport.head()).hasRemaining()) {
                // copied once, into the buffer the socket writes (not through a byte[] of our own:
                // Buffer.buffer(byte[]) copies again, and the array's zeroing was ~3 % of the broker's CPU in fan-out)
                ByteBuffer chunk = head.position() == 0 ? head : head.slice();
                int n = chunk.remaining();
                Buffer out = Buffer.buffer(n).setBytes(0, chunk);
                transport.pop(n);
                socket.write(out);
            }
            pending = transport.pending();
        } catch (TransportException e) {
            LOG.debug("connection {}: transport error on output: {}", id, e.getMessage());
        }
        if (transport.isClosed() || pending < 0 || closeAfterFlush) {
            closeSocket();
        } else {
            scheduleTick();
        }
    }

    /** Coalesces flushes requested from several completions into one. */
    @Override
    public void requestFlush() {
        if (flushScheduled) {
            return;
        }
        flushScheduled = true;
        context.runOnContext(v -> {
            flushScheduled = false;
            processEvents();
            flush();
        });
    }

    private void scheduleTick() {
        if (closed || transport.getRemoteIdleTimeout() < 0) {
            // an idle-time-out above 2^31-1 ms reads as negative in proton-j, whose tick would then send heartbeats
            // without end (the connection is being closed for it: CONNECTION_REMOTE_OPEN)
            return;
        }
        long nowMs = clock.monotonicNanos() / 1_000_000L;
        long deadline = transport.tick(nowMs);
        if (transport.pending() > 0) {
            // a heartbeat (or an idle-timeout close) was produced
            context.runOnContext(v -> flush());
        }
        if (deadline <= 0) {
            return;
        }
        if (tickTimer >= 0 && deadline >= tickDeadlineMs) {
            return;
        }
        if (tickTimer >= 0) {
            vertx.cancelTimer(tickTimer);
        }
        tickDeadlineMs = deadline;
        tickTimer = vertx.setTimer(Math.max(1, deadline - nowMs), t -> {
            tickTimer = -1;
            scheduleTick();
            flush();
        });
    }

    private void onSocketClosed() {
        if (closed) {
            return;
        }
        closed = true;
        for (long timer : new long[] {tickTimer, handshakeTimer, authTimer, expiryTimer}) {
            if (timer >= 0) {
                vertx.cancelTimer(timer);
            }
        }
        closeAllLinks();
        links.connectionClosed(); // ops (metrics)
        onClosed.run();
    }

    private void closeSocket() {
        if (!closed) {
            socket.close();
            onSocketClosed();
        }
    }

    /**
     * Closes the connection with an AMQP error (the client sees it in the close frame). A client that does not
     * answer with its own close within {@link #CLOSE_GRACE_MS} is dropped.
     */
    public void closeWithError(String condition, String description) {
        if (connection.getLocalState() != EndpointState.CLOSED) {
            connection.setCondition(new ErrorCondition(Symbol.valueOf(condition), description));
            if (connection.getLocalState() == EndpointState.UNINITIALIZED) {
                connection.open();
            }
            connection.close();
            vertx.setTimer(CLOSE_GRACE_MS, t -> runOnLoop(this::closeSocket));
        }
    }

    private void closeAllLinks() {
        Link link = connection.linkHead(null, null);
        while (link != null) {
            if (link.getContext() instanceof LinkHandler handler) {
                handler.onClosed();
            }
            link = link.next(null, null);
        }
    }

    // ------------------------------------------------------------------------------------------------ events

    private void dispatch(Event event) {
        switch (event.getType()) {
            case CONNECTION_REMOTE_OPEN -> {
                if (handshakeTimer >= 0) {
                    vertx.cancelTimer(handshakeTimer);
                    handshakeTimer = -1;
                }
                if (transport.getRemoteIdleTimeout() < 0) {
                    closeWithError("amqp:invalid-field", "The open frame's idle-time-out of "
                            + Integer.toUnsignedLong(transport.getRemoteIdleTimeout()) + " ms is larger than "
                            + Integer.MAX_VALUE + " ms, the most this broker supports.");
                    return;
                }
                connection.setContainer("buslane-" + id);
                connection.setProperties(Map.of(Symbol.valueOf("product"), "Buslane"));
                connection.open();
            }
            case CONNECTION_REMOTE_CLOSE -> {
                closeAllLinks();
                connection.close();
            }
            case SESSION_REMOTE_OPEN -> {
                Session s = event.getSession();
                if (s.getLocalState() == EndpointState.UNINITIALIZED) {
                    s.setIncomingCapacity(Integer.MAX_VALUE);
                    s.open();
                }
            }
            case SESSION_REMOTE_CLOSE -> {
                Session s = event.getSession();
                s.close();
            }
            case LINK_LOCAL_OPEN -> links.opened(event.getLink()); // ops (metrics)
            case LINK_LOCAL_CLOSE, LINK_LOCAL_DETACH -> links.closed(event.getLink()); // ops (metrics)
            case LINK_REMOTE_OPEN -> onLinkRemoteOpen(event.getLink());
            case LINK_REMOTE_DETACH, LINK_REMOTE_CLOSE -> onLinkRemoteClose(event.getLink());
            case LINK_FLOW -> {
                if (event.getLink().getContext() instanceof LinkHandler handler) {
                    handler.onFlow();
                }
            }
            case DELIVERY -> onDelivery(event.getDelivery());
            case TRANSPORT_ERROR -> LOG.debug("connection {}: transport error {}", id,
                    event.getTransport().getCondition());
            default -> {
                // other events need no action
            }
        }
    }

    private void onDelivery(Delivery d) {
        Link link = d.getLink();
        if (link instanceof Receiver receiver && (d.isAborted() || link.getLocalState() != EndpointState.ACTIVE
                || !(link.getContext() instanceof LinkHandler))) {
            // an aborted transfer, or one on a link the broker refused or closed: its bytes are dropped and the
            // link moves on to the next delivery (proton-j would otherwise keep them, and a link stuck on an
            // aborted delivery never delivers again)
            if (!d.isPartial() || d.isAborted()) {
                if (receiver.current() == d) {
                    receiver.advance();
                }
                d.settle();
                if (d.isAborted() && link.getContext() instanceof LinkHandler handler) {
                    handler.onAborted();
                }
            } else if (d.pending() > 0) {
                receiver.recv(new byte[d.pending()], 0, d.pending());
            }
            return;
        }
        if (link.getContext() instanceof LinkHandler handler) {
            handler.onDelivery(d);
        }
    }

    private void onLinkRemoteOpen(Link link) {
        if (link.getLocalState() != EndpointState.UNINITIALIZED) {
            return;
        }
        if (link instanceof Receiver receiver) {
            if (receiver.getRemoteTarget() instanceof Coordinator) {
                CoordinatorLink.attach(this, receiver, transactions);
                return;
            }
            String address = receiver.getRemoteTarget() instanceof Target t ? t.getAddress() : null;
            if (address == null) {
                Links.refuse(link, "amqp:invalid-field", "The attach has no target address.");
                return;
            }
            String node = Links.stripHost(address);
            if (node.equalsIgnoreCase(CBS)) {
                new RequestLink(this, receiver, RequestLink.Kind.CBS, null, address).open();
            } else if (node.toLowerCase(Locale.ROOT).endsWith(MANAGEMENT_SUFFIX)) {
                EntityAddress entity;
                try {
                    entity = EntityAddress.of(CanonicalAddress.parse(address).withoutManagement());
                } catch (BrokerException e) {
                    Links.refuse(link, e);
                    return;
                }
                new RequestLink(this, receiver, RequestLink.Kind.MANAGEMENT, entity, address).open();
            } else {
                ProducerLink.attach(this, receiver, address);
            }
        } else {
            Sender sender = (Sender) link;
            String address = sender.getRemoteSource() instanceof Source s ? s.getAddress() : null;
            if (address == null) {
                Links.refuse(link, "amqp:invalid-field", "The attach has no source address.");
                return;
            }
            String node = Links.stripHost(address);
            if (node.equalsIgnoreCase(CBS) || node.toLowerCase(Locale.ROOT).endsWith(MANAGEMENT_SUFFIX)) {
                ReplyLink reply = new ReplyLink(this, sender);
                replyLinks.add(reply);
                reply.open();
            } else {
                ConsumerLink.attach(this, sender, address);
            }
        }
    }

    private void onLinkRemoteClose(Link link) {
        if (link.getContext() instanceof LinkHandler handler) {
            handler.onClosed();
        }
        if (link.getContext() instanceof ReplyLink reply) {
            replyLinks.remove(reply);
        }
        if (link.getLocalState() != EndpointState.CLOSED) {
            link.close();
        }
    }

    /** The reply link for a request: by target address, else by link name, else by node within the session. */
    @Override
    public ReplyLink findReplyLink(String replyTo, Session session, String nodeAddress) {
        if (replyTo != null) {
            for (ReplyLink r : replyLinks) {
                if (replyTo.equals(r.targetAddress())) {
                    return r;
                }
            }
            for (ReplyLink r : replyLinks) {
                if (replyTo.equals(r.name())) {
                    return r;
                }
            }
        }
        for (ReplyLink r : replyLinks) {
            if (r.session() == session && nodeAddress != null && nodeAddress.equals(r.sourceAddress())) {
                return r;
            }
        }
        return null;
    }
}
