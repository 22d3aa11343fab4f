package io.buslane.amqp.link;

import io.buslane.common.auth.Right;
import io.buslane.amqp.codec.AmqpCodec;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.Engine;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.txn.TransactionFailure;
import io.buslane.engine.txn.TransactionalBatch;
import io.buslane.engine.message.ReceivedMessage;
import org.apache.qpid.proton.amqp.DescribedType;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnknownDescribedType;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Outcome;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.transaction.TransactionalState;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.codec.ReadableBuffer;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.EndpointState;
import org.apache.qpid.proton.engine.Sender;
import org.apache.qpid.proton.engine.impl.SenderImpl;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A client's receiver link on a queue, a subscription, a dead-letter queue or a session: translates link credit
 * into engine credit, engine deliveries into transfers (the lock token as the delivery tag), and the client's
 * dispositions into settlements answered with the same outcome type. Confined to the connection's event loop,
 * except {@link #onMessage}/{@link #onClosed(Receiver, BrokerException)}, which the engine calls from a shard
 * thread and which only enqueue and hop.
 */
public final class ConsumerLink implements LinkHandler, DeliverySink {

    static final Symbol SESSION_FILTER = Symbol.valueOf("com.microsoft:session-filter");
    /**
     * The filter of a non-exclusive session receiver (.NET 7.21's opt-in; a list of the session id and a lock
     * token to take over), which the service does not offer yet: never echoed, so that the client sees no lock
     * token assigned (and throws NotSupportedException, as against the service); on a session entity, where it
     * comes instead of the session filter, the attach is refused as any non-session receiver there is.
     */
    static final Symbol NON_EXCLUSIVE_SESSION_FILTER =
            Symbol.valueOf("com.microsoft:non-exclusive-session-filter:list");
    static final Symbol LOCKED_UNTIL_UTC = Symbol.valueOf("com.microsoft:locked-until-utc");
    static final Symbol TIMEOUT = Symbol.valueOf("com.microsoft:timeout");
    static final long DEFAULT_SESSION_WAIT_MS = 60_000;
    /** .NET ticks at the Unix epoch. */
    static final long EPOCH_TICKS = 621_355_968_000_000_000L;

    private final LinkContext connection;
    private final Sender sender;
    private final EntityAddress address;
    private final ReceiveMode mode;
    private final ConcurrentLinkedQueue<ReceivedMessage> arrivals = new ConcurrentLinkedQueue<>();
    /**
     * Hands an encoded delivery to proton-j as an exact copy it keeps ({@code sendNoCopy}): one copy of the bytes, as
     * with {@code Sender.send(byte[], ...)}, without the composite buffer proton-j wraps a copied delivery in.
     */
    private final AmqpCodec.EncodedSink toSender = this::sendEncoded;
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private Receiver receiver;
    /**
     * The engine receiver once the attach is answered, or null when it was refused: what a {@code $management}
     * request naming this link while its session is still being accepted waits for.
     */
    private final CompletableFuture<Receiver> attached =
            new CompletableFuture<>();
    private long granted;
    private long arrived;
    private boolean draining;
    private boolean closed;
    private long nextTag;

    /** What the broker remembers of an unsettled transfer. */
    private static final class Sent {
        final UUID lockToken;
        boolean handled;

        Sent(UUID lockToken) {
            this.lockToken = lockToken;
        }
    }

    private ConsumerLink(LinkContext connection, Sender sender, EntityAddress address, ReceiveMode mode) {
        this.connection = connection;
        this.sender = sender;
        this.address = address;
        this.mode = mode;
    }

    /** Answers a client's receiver attach (possibly after waiting for a session). */
    public static void attach(LinkContext connection, Sender sender, String rawAddress) {
        EntityAddress address;
        try {
            address = EntityAddress.parse(rawAddress); // the one canonical parse, read by the grant check too
        } catch (BrokerException e) {
            Links.refuse(sender, e);
            return;
        }
        if (address == null) {
            Links.refuse(sender, "amqp:invalid-field", "The attach has an empty source address.");
            return;
        }
        Engine engine = connection.engine();
        // authorised first: a client without a token learns nothing, not even whether the entity exists
        if (!connection.allowed(address.toString(), Right.LISTEN)) {
            Links.refuse(sender, Links.unauthorized(address.toString(), Right.LISTEN));
            return;
        }
        try {
            engine.checkReceivable(address);
            connection.transactions().linkAttaching(sender.getSession(), address.toString(), true);
        } catch (BrokerException e) {
            Links.refuse(sender, e);
            return;
        }
        ReceiveMode mode = sender.getRemoteSenderSettleMode() == SenderSettleMode.SETTLED
                ? ReceiveMode.RECEIVE_AND_DELETE : ReceiveMode.PEEK_LOCK;
        ConsumerLink link = new ConsumerLink(connection, sender, address, mode);
        Source source = sender.getRemoteSource() instanceof Source s ? s : null;
        Map<?, ?> filter = source == null ? null : source.getFilter();
        if (filter != null && filter.containsKey(SESSION_FILTER)) {
            Object value = filter.get(SESSION_FILTER);
            if (value instanceof DescribedType dt) {
                value = dt.getDescribed();
            }
            String sessionId = value == null ? null : value.toString();
            link.attachSession(source, sessionId, timeoutMs(sender));
            return;
        }
        try {
            link.receiver = engine.createReceiver(address, mode, link);
        } catch (BrokerException e) {
            Links.refuse(sender, e);
            return;
        }
        link.attached.complete(link.receiver);
        link.openLink(source, null, null);
        link.onFlow();
    }

    private static long timeoutMs(Sender sender) {
        Map<Symbol, Object> props = sender.getRemoteProperties();
        Object t = props == null ? null : props.get(TIMEOUT);
        if (t instanceof Number n && n.longValue() > 0) {
            return n.longValue();
        }
        return DEFAULT_SESSION_WAIT_MS;
    }

    private void attachSession(Source source, String sessionId, long timeoutMs) {
        sender.setContext(this);
        connection.engine().acceptSession(address, sessionId, mode, timeoutMs, this)
                .whenComplete((r, failure) -> connection.runOnLoop(() -> {
                    if (failure != null) {
                        BrokerException e = brokerError(failure);
                        if (sender.getLocalState() == EndpointState.UNINITIALIZED) {
                            sender.setContext(null);
                            Links.refuse(sender, e);
                        }
                        attached.complete(null);
                        return;
                    }
                    if (closed || sender.getRemoteState() == EndpointState.CLOSED) {
                        r.close();
                        attached.complete(null);
                        return;
                    }
                    receiver = r;
                    Map<Symbol, Object> props = new HashMap<>();
                    props.put(LOCKED_UNTIL_UTC, r.sessionLockedUntilMs() * 10_000L + EPOCH_TICKS);
                    openLink(source, r.sessionId(), props);
                    attached.complete(r); // after the attach answer: a waiting request is answered after it
                    onFlow();
                }));
    }

    private void openLink(Source remote, String sessionId, Map<Symbol, Object> properties) {
        Source local = null;
        if (remote != null) {
            local = new Source();
            local.setAddress(remote.getAddress());
            local.setDurable(remote.getDurable());
            local.setExpiryPolicy(remote.getExpiryPolicy());
            local.setTimeout(remote.getTimeout());
            local.setDynamic(remote.getDynamic());
            local.setDistributionMode(remote.getDistributionMode());
            local.setDefaultOutcome(remote.getDefaultOutcome());
            local.setOutcomes(remote.getOutcomes());
            local.setCapabilities(remote.getCapabilities());
            if (remote.getFilter() != null) {
                Map<Symbol, Object> filter = new LinkedHashMap<>();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) remote.getFilter()).entrySet()) {
                    if (!NON_EXCLUSIVE_SESSION_FILTER.equals(e.getKey())) {
                        filter.put((Symbol) e.getKey(), e.getValue());
                    }
                }
                if (sessionId != null) {
                    // echoed in the form the client sent it: a described value (the Go SDK's go-amqp, which
                    // decodes only described filter values) or a bare string (the Java and JavaScript SDKs)
                    filter.put(SESSION_FILTER, filter.get(SESSION_FILTER) instanceof DescribedType sent
                            ? new UnknownDescribedType(sent.getDescriptor(), sessionId) : sessionId);
                }
                local.setFilter(filter);
            }
        }
        sender.setSource(local);
        sender.setTarget(sender.getRemoteTarget());
        sender.setSenderSettleMode(sender.getRemoteSenderSettleMode());
        sender.setReceiverSettleMode(sender.getRemoteReceiverSettleMode());
        if (properties != null) {
            sender.setProperties(properties);
        }
        sender.setContext(this);
        sender.open();
    }

    private static BrokerException brokerError(Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof BrokerException be) {
            return be;
        }
        return new BrokerException(ErrorKind.INTERNAL, String.valueOf(cause));
    }

    /** The engine receiver behind this link (null until it is attached, or while its session is being accepted). */
    public Receiver engineReceiver() {
        return receiver;
    }

    /**
     * The engine receiver once this link's attach is answered (completed on the connection's loop), or null when
     * the attach was refused or abandoned.
     */
    public CompletableFuture<Receiver> attachedReceiver() {
        return attached;
    }

    @Override
    public boolean authorized() {
        return connection.allowed(address.toString(), Right.LISTEN);
    }

    // ------------------------------------------------------------------------------------------------ credit

    @Override
    public void onFlow() {
        if (receiver == null || closed) {
            return;
        }
        long linkCredit = sender.getCredit();
        long outstanding = granted - arrived;
        long deficit = linkCredit - outstanding;
        if (deficit > 0 && !draining) {
            granted += deficit;
            receiver.addCredit((int) Math.min(Integer.MAX_VALUE, deficit));
        }
        if (sender.getDrain() && !draining && linkCredit > 0) {
            draining = true;
            receiver.drain().whenComplete((returned, failure) -> connection.runOnLoop(() -> {
                draining = false;
                if (returned != null) {
                    granted -= returned;
                }
                if (!closed && sender.getDrain()) {
                    if (sender.getCredit() == 0 && sender instanceof SenderImpl s) {
                        // transfers used the credit up: proton-j writes a drain's flow only when it drains some
                        // credit, and AMQP (2.6.7) still owes the receiver that flow; one local unit to drain
                        // makes it write the flow (link-credit 0, delivery-count from the transport's own count)
                        s.setCredit(1);
                    }
                    sender.drained();
                }
            }));
        }
    }

    // ------------------------------------------------------------------------------------------------ deliveries

    @Override
    public void onMessage(Receiver from, ReceivedMessage message) {
        arrivals.add(message);
        if (drainScheduled.compareAndSet(false, true)) {
            connection.runOnLoop(this::sendArrivals);
        }
    }

    private void sendArrivals() {
        drainScheduled.set(false);
        ReceivedMessage m;
        while ((m = arrivals.poll()) != null) {
            arrived++;
            send(m);
        }
    }

    private void send(ReceivedMessage m) {
        if (closed || sender.getLocalState() != EndpointState.ACTIVE) {
            if (m.lockToken() != null) {
                connection.engine().release(address, m.lockToken());
            }
            return;
        }
        byte[] tag = m.lockToken() != null ? AmqpCodec.deliveryTag(m.lockToken())
                : ByteBuffer.allocate(8).putLong(nextTag++).array();
        Delivery d = sender.delivery(tag);
        d.setMessageFormat(0);
        AmqpCodec.encode(m, AmqpCodec.Purpose.DELIVERY, toSender);
        if (mode == ReceiveMode.RECEIVE_AND_DELETE) {
            d.settle();
        } else {
            d.setContext(new Sent(m.lockToken()));
        }
        sender.advance();
    }

    private void sendEncoded(byte[] bytes, int offset, int length) {
        sender.sendNoCopy(ReadableBuffer.ByteBufferReader.wrap(Arrays.copyOfRange(bytes, offset, offset + length)));
    }

    // ------------------------------------------------------------------------------------------------ settlement

    @Override
    public void onDelivery(Delivery d) {
        if (!(d.getContext() instanceof Sent sent) || sent.handled) {
            if (d.remotelySettled() && !d.isSettled()) {
                d.settle();
            }
            return;
        }
        DeliveryState state = d.getRemoteState();
        if (state == null && !d.remotelySettled()) {
            return;
        }
        sent.handled = true;
        if (state instanceof TransactionalState txn) {
            stageSettlement(d, sent.lockToken, txn);
            return;
        }
        if (state == null && sender.getLocalState() == EndpointState.CLOSED) {
            // settled without an outcome as the link went away (the Java SDK's client does so when it closes a
            // receive link): the message stays locked, as on the service, so its lock can still be renewed and the
            // message settled through $management until the lock runs out (#32 cause 14)
            d.settle();
            return;
        }
        if (state == null) {
            // settled without an outcome on an open link: treat as released
            state = Released.getInstance();
        }
        Engine engine = connection.engine();
        UUID token = sent.lockToken;
        CompletableFuture<Void> op;
        DeliveryState answer;
        if (state instanceof Accepted) {
            op = engine.complete(address, token);
            answer = Accepted.getInstance();
        } else if (state instanceof Modified modified) {
            Map<String, Object> props = toProperties(modified.getMessageAnnotations());
            if (Boolean.TRUE.equals(modified.getUndeliverableHere())) {
                op = engine.defer(address, token, props);
            } else {
                op = engine.abandon(address, token, props);
            }
            Modified echo = new Modified();
            echo.setDeliveryFailed(modified.getDeliveryFailed());
            echo.setUndeliverableHere(modified.getUndeliverableHere());
            answer = echo;
        } else if (state instanceof Rejected rejected) {
            op = deadLetter(engine, token, rejected.getError());
            answer = new Rejected();
        } else {
            op = engine.release(address, token);
            answer = Released.getInstance();
        }
        if (d.remotelySettled()) {
            // The client settled first (pre-settled disposition): it expects no outcome back, so there is nothing to
            // answer. proton-j's state for the delivery goes now, while it is hot, and the settlement completes in
            // the engine (durably, as any other) without an event-loop task of its own.
            d.settle();
            return;
        }
        DeliveryState success = answer;
        op.whenComplete((v, failure) -> connection.runOnLoop(() -> {
            if (failure == null) {
                reply(d, success);
            } else {
                BrokerException e = brokerError(failure);
                reply(d, ProducerLink.rejected(e.kind().amqpCondition(), e.description()));
            }
        }));
    }

    private CompletableFuture<Void> deadLetter(Engine engine, UUID token, ErrorCondition error) {
        TransactionalBatch.Settle s = deadLetterSettlement(token, error);
        return engine.deadLetter(address, token, s.deadLetterReason(), s.deadLetterDescription(), s.properties());
    }

    /**
     * A disposition under a transaction: the settlement is staged until the commit (the message stays locked) and
     * answered at once with {@code transactional-state{txn-id, outcome}} echoing the requested outcome type.
     */
    private void stageSettlement(Delivery d, UUID token, TransactionalState txn) {
        Object outcome = txn.getOutcome();
        TransactionalBatch.Settle settle;
        Outcome echo;
        if (outcome instanceof Accepted) {
            settle = new TransactionalBatch.Settle(address, token, TransactionalBatch.SettleKind.COMPLETE, null,
                    null, null);
            echo = Accepted.getInstance();
        } else if (outcome instanceof Modified modified) {
            boolean defer = Boolean.TRUE.equals(modified.getUndeliverableHere());
            settle = new TransactionalBatch.Settle(address, token, defer ? TransactionalBatch.SettleKind.DEFER
                    : TransactionalBatch.SettleKind.ABANDON, toProperties(modified.getMessageAnnotations()), null,
                    null);
            Modified m = new Modified();
            m.setDeliveryFailed(modified.getDeliveryFailed());
            m.setUndeliverableHere(modified.getUndeliverableHere());
            echo = m;
        } else if (outcome instanceof Rejected rejected) {
            settle = deadLetterSettlement(token, rejected.getError());
            echo = new Rejected();
        } else {
            reply(d, ProducerLink.rejected(ErrorKind.INVALID_OPERATION.amqpCondition(), "Only complete, abandon, "
                    + "defer and dead-letter can be part of a transaction; got " + outcome + "."));
            return;
        }
        try {
            connection.transactions().stageSettlement(CoordinatorLink.txnId(txn.getTxnId()),
                    connection.transactions().sessionVia(sender.getSession()), settle);
        } catch (TransactionFailure f) {
            reply(d, ProducerLink.rejected(f.condition(), f.description()));
            return;
        }
        TransactionalState answer = new TransactionalState();
        answer.setTxnId(txn.getTxnId());
        answer.setOutcome(echo);
        reply(d, answer);
    }

    private TransactionalBatch.Settle deadLetterSettlement(UUID token, ErrorCondition error) {
        String reason = null;
        String description = null;
        Map<String, Object> props = new LinkedHashMap<>();
        if (error != null) {
            description = error.getDescription();
            if (error.getInfo() != null) {
                for (Map.Entry<?, ?> e : ((Map<?, ?>) error.getInfo()).entrySet()) {
                    String key = String.valueOf(e.getKey());
                    if (key.equals("DeadLetterReason")) {
                        reason = e.getValue() == null ? null : e.getValue().toString();
                    } else if (key.equals("DeadLetterErrorDescription")) {
                        description = e.getValue() == null ? null : e.getValue().toString();
                    } else {
                        props.put(key, AmqpCodec.toEngine(e.getValue()));
                    }
                }
            }
        }
        return new TransactionalBatch.Settle(address, token, TransactionalBatch.SettleKind.DEAD_LETTER, props,
                reason, description);
    }

    /**
     * The "properties to modify" of an abandon/defer. The map is typed {@code Map<Symbol, Object>} by proton, but
     * the Java SDK puts its {@code Map<String, Object>} there as is, so the keys arrive as AMQP strings: accept both.
     */
    private static Map<String, Object> toProperties(Map<?, ?> annotations) {
        if (annotations == null || annotations.isEmpty()) {
            return null;
        }
        Map<String, Object> props = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : annotations.entrySet()) {
            props.put(String.valueOf(e.getKey()), AmqpCodec.toEngine(e.getValue()));
        }
        return props;
    }

    private void reply(Delivery d, DeliveryState outcome) {
        if (!d.remotelySettled()) {
            d.disposition(outcome);
        }
        d.settle();
        connection.requestFlush();
    }

    // ------------------------------------------------------------------------------------------------ closing

    @Override
    public void onClosed(Receiver from, BrokerException error) {
        connection.runOnLoop(() -> {
            if (!closed) {
                closed = true;
                Links.detach(sender, error);
            }
        });
    }

    @Override
    public void onClosed() {
        closed = true;
        attached.complete(null); // a request waiting for this link's attach is answered now (no-op once attached)
        if (receiver != null) {
            receiver.close();
        }
    }
}
