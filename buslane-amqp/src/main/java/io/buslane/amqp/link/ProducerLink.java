package io.buslane.amqp.link;

import io.buslane.common.auth.Right;
import io.buslane.amqp.codec.AmqpCodec;
import io.buslane.amqp.codec.AmqpDecodeException;
import io.buslane.common.error.BrokerException;
import io.buslane.engine.message.Message;
import io.buslane.engine.txn.TransactionFailure;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.transaction.TransactionalState;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.Receiver;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;

/**
 * A client's sender link to a queue or topic: each transfer (one message, or a batch in format
 * {@code 0x80013700}) is decoded, handed to the engine, and answered with {@code accepted} once durable, or with
 * {@code rejected} and the error. Credit is granted generously and topped up. Confined to the connection's event
 * loop.
 */
public final class ProducerLink implements LinkHandler {

    private static final int CREDIT_WINDOW = 1000;
    static final Symbol TRANSFER_DESTINATION = Symbol.valueOf("com.microsoft:transfer-destination-address");
    /**
     * The largest batch (message format {@code 0x80013700}) the link takes, advertised on the attach as the service
     * does: the .NET (7.20.2+), Java (7.18), Go and JavaScript SDKs size their batches by it rather than by the
     * link's max-message-size, which a large-message entity raises to 100 MB.
     */
    static final Symbol MAX_BATCH_SIZE = Symbol.valueOf("com.microsoft:max-message-batch-size");
    /** The service's batch ceiling whatever the entity's message size (Premium's 1 MB). */
    static final long MAX_BATCH_BYTES = 1024 * 1024;

    private final LinkContext connection;
    private final Receiver receiver;
    private final String entityPath;
    private final long maxMessageSize;
    private final long maxBatchSize;
    /** The via entity of a send-via link (its target; messages go to {@link #entityPath}), else null. */
    private final String viaPath;

    private ProducerLink(LinkContext connection, Receiver receiver, String entityPath, long maxMessageSize,
                         String viaPath) {
        this.connection = connection;
        this.receiver = receiver;
        this.entityPath = entityPath;
        this.maxMessageSize = maxMessageSize;
        this.maxBatchSize = maxBatchSize(maxMessageSize);
        this.viaPath = viaPath;
    }

    /** Answers a client's sender attach: opens the link, or refuses it with the SDK-visible error. */
    public static void attach(LinkContext connection, Receiver receiver, String address) {
        // send via (wire protocol §8): the target is the via entity, the destination travels as a link property
        Map<Symbol, Object> remoteProps = receiver.getRemoteProperties();
        Object destination = remoteProps == null ? null : remoteProps.get(TRANSFER_DESTINATION);
        String path;
        String via = null;
        try {
            // one canonical parse: the grant check and every lookup below read this path
            path = Links.canonical(address);
            if (destination != null) {
                via = path;
                path = Links.canonical(destination.toString());
            }
        } catch (BrokerException e) {
            Links.refuse(receiver, e);
            return;
        }
        // authorised first: a client without a token learns nothing, not even whether the entity exists
        for (String p : via == null ? List.of(path) : List.of(via, path)) {
            if (!connection.allowed(p, Right.SEND)) {
                Links.refuse(receiver, Links.unauthorized(p, Right.SEND));
                return;
            }
        }
        long max;
        try {
            if (via != null) {
                connection.engine().checkSendable(via);
            }
            connection.engine().checkSendable(path);
            max = connection.engine().maxMessageSizeBytes(path);
            connection.transactions().linkAttaching(receiver.getSession(), via != null ? via : path, false);
        } catch (BrokerException e) {
            Links.refuse(receiver, e);
            return;
        }
        ProducerLink link = new ProducerLink(connection, receiver, path, max, via);
        Map<Symbol, Object> properties = new LinkedHashMap<>();
        if (via != null) {
            properties.put(TRANSFER_DESTINATION, destination);
        }
        properties.put(MAX_BATCH_SIZE, UnsignedLong.valueOf(link.maxBatchSize));
        receiver.setProperties(properties);
        receiver.setSource(receiver.getRemoteSource());
        receiver.setTarget(receiver.getRemoteTarget());
        receiver.setSenderSettleMode(receiver.getRemoteSenderSettleMode());
        receiver.setReceiverSettleMode(ReceiverSettleMode.FIRST);
        receiver.setMaxMessageSize(UnsignedLong.valueOf(max));
        receiver.setContext(link);
        receiver.open();
        receiver.flow(CREDIT_WINDOW);
    }

    @Override
    public boolean authorized() {
        return connection.allowed(entityPath, Right.SEND) && (viaPath == null || connection.allowed(viaPath,
                Right.SEND));
    }

    @Override
    public void onAborted() {
        replenish();
    }

    @Override
    public void onDelivery(Delivery d) {
        if (d.isPartial() && d.pending() > maxMessageSize) {
            // refused as the frames arrive, not once the last one has: the link is detached (the service's answer
            // to an oversized message) and the connection drops the rest of the delivery
            connection.closeLinkForOversizedMessage(receiver, d, maxMessageSize);
            return;
        }
        if (!d.isReadable() || d.isPartial()) {
            return;
        }
        int size = d.pending();
        byte[] payload = new byte[size];
        receiver.recv(payload, 0, size);
        receiver.advance();
        replenish();
        long limit = (d.getMessageFormat() & 0xffffffffL) == AmqpCodec.BATCH_FORMAT ? maxBatchSize : maxMessageSize;
        if (size > limit) {
            String description = "The received message (delivery-id:"
                    + " size " + size + " bytes) exceeds the limit (" + limit + " bytes) currently allowed on"
                    + " the link.";
            doomIfTransactional(d, description);
            settle(d, rejected("amqp:link:message-size-exceeded", description));
            return;
        }
        List<Message> messages;
        try {
            messages = AmqpCodec.decodeTransfer(payload, 0, size, d.getMessageFormat() & 0xffffffffL);
        } catch (AmqpDecodeException e) {
            boolean overQuota = !"amqp:decode-error".equals(e.condition());
            String description = overQuota ? e.getMessage() : "The message could not be decoded: " + e.getMessage();
            doomIfTransactional(d, description);
            settle(d, rejected(e.condition(), description));
            return;
        } catch (StackOverflowError e) {
            doomIfTransactional(d, "The message could not be decoded: its values nest too deeply.");
            settle(d, rejected("amqp:decode-error", "The message could not be decoded: its values nest too deeply."));
            return;
        }
        if (d.getRemoteState() instanceof TransactionalState txn) {
            stage(d, txn, messages);
            return;
        }
        connection.engine().send(entityPath, messages).whenComplete((v, failure) -> connection.runOnLoop(() -> {
            if (failure == null) {
                settle(d, Accepted.getInstance());
            } else {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                if (cause instanceof BrokerException be) {
                    settle(d, rejected(be.kind().amqpCondition(), be.descriptionFor(Links.hostOf(receiver))));
                } else {
                    settle(d, rejected("amqp:internal-error", String.valueOf(cause)));
                }
            }
        }));
    }

    /** The batch limit of a link whose messages may have {@code maxMessageSize} bytes. */
    static long maxBatchSize(long maxMessageSize) {
        return Math.min(maxMessageSize, MAX_BATCH_BYTES);
    }

    private void replenish() {
        if (receiver.getCredit() < CREDIT_WINDOW / 2) {
            receiver.flow(CREDIT_WINDOW - receiver.getCredit());
        }
    }

    private void doomIfTransactional(Delivery d, String reason) {
        if (d.getRemoteState() instanceof TransactionalState txn) {
            connection.transactions().doom(CoordinatorLink.txnId(txn.getTxnId()), reason);
        }
    }

    /** A transfer under a transaction: staged until the commit, answered {@code transactional-state{accepted}}. */
    private void stage(Delivery d, TransactionalState txn, List<Message> messages) {
        String via = viaPath != null ? viaPath : connection.transactions().sessionVia(receiver.getSession());
        try {
            connection.transactions().stageSend(CoordinatorLink.txnId(txn.getTxnId()), via, entityPath,
                    messages);
        } catch (TransactionFailure f) {
            settle(d, rejected(f.condition(), f.description()));
            return;
        }
        TransactionalState answer = new TransactionalState();
        answer.setTxnId(txn.getTxnId());
        answer.setOutcome(Accepted.getInstance());
        settle(d, answer);
    }

    private void settle(Delivery d, DeliveryState outcome) {
        if (!d.remotelySettled()) {
            d.disposition(outcome);
        }
        d.settle();
        connection.requestFlush();
    }

    static Rejected rejected(String condition, String description) {
        Rejected r = new Rejected();
        r.setError(new ErrorCondition(Symbol.valueOf(condition), description));
        return r;
    }
}
