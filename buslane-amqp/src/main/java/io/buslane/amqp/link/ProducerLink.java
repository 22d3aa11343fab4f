package io.buslane.amqp.link;

import io.buslane.common.auth.Right;
import io.buslane.amqp.codec.AmqpCodec;
import io.buslane.amqp.codec.AmqpDecodeException;
import io.buslane.amqp.transport.AmqpConnection;
import io.buslane.common.error.BrokerException;
import io.buslane.engine.message.Message;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.transaction.TransactionalState;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.Receiver;

import java.util.List;
import java.util.concurrent.CompletionException;

/**
 * A client's sender link to a queue or topic: each transfer (one message, or a batch in format
 * {@code 0x80013700}) is decoded, handed to the engine, and answered with {@code accepted} once durable, or with
 * {@code rejected} and the error. Credit is granted generously and topped up. Confined to the connection's event
 * loop.
 */
public final class ProducerLink implements LinkHandler {

    private static final int CREDIT_WINDOW = 1000;

    private final AmqpConnection connection;
    private final Receiver receiver;
    private final String entityPath;
    private final long maxMessageSize;

    private ProducerLink(AmqpConnection connection, Receiver receiver, String entityPath, long maxMessageSize) {
        this.connection = connection;
        this.receiver = receiver;
        this.entityPath = entityPath;
        this.maxMessageSize = maxMessageSize;
    }

    /** Answers a client's sender attach: opens the link, or refuses it with the SDK-visible error. */
    public static void attach(AmqpConnection connection, Receiver receiver, String address) {
        String path = AmqpConnection.stripHost(address);
        long max;
        try {
            connection.engine().checkSendable(path);
            max = connection.engine().maxMessageSizeBytes(path);
        } catch (BrokerException e) {
            AmqpConnection.refuse(receiver, e);
            return;
        }
        if (!connection.allowed(path, Right.SEND)) {
            AmqpConnection.refuse(receiver, AmqpConnection.unauthorized(path, Right.SEND));
            return;
        }
        ProducerLink link = new ProducerLink(connection, receiver, path, max);
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
    public void onDelivery(Delivery d) {
        if (!d.isReadable() || d.isPartial()) {
            return;
        }
        int size = d.pending();
        byte[] payload = new byte[size];
        receiver.recv(payload, 0, size);
        receiver.advance();
        if (receiver.getCredit() < CREDIT_WINDOW / 2) {
            receiver.flow(CREDIT_WINDOW - receiver.getCredit());
        }
        if (d.getRemoteState() instanceof TransactionalState) {
            settle(d, rejected("amqp:not-implemented", "Transactions are not supported by this version of "
                    + "Buslane."));
            return;
        }
        if (size > maxMessageSize) {
            settle(d, rejected("amqp:link:message-size-exceeded", "The received message (delivery-id:"
                    + " size " + size + " bytes) exceeds the limit (" + maxMessageSize + " bytes) currently allowed on"
                    + " the link."));
            return;
        }
        List<Message> messages;
        try {
            messages = AmqpCodec.decodeTransfer(payload, 0, size, d.getMessageFormat() & 0xffffffffL);
        } catch (AmqpDecodeException e) {
            settle(d, rejected("amqp:decode-error", "The message could not be decoded: " + e.getMessage()));
            return;
        }
        connection.engine().send(entityPath, messages).whenComplete((v, failure) -> connection.runOnLoop(() -> {
            if (failure == null) {
                settle(d, Accepted.getInstance());
            } else {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                if (cause instanceof BrokerException be) {
                    settle(d, rejected(be.kind().amqpCondition(), be.description()));
                } else {
                    settle(d, rejected("amqp:internal-error", String.valueOf(cause)));
                }
            }
        }));
    }

    private void settle(Delivery d, org.apache.qpid.proton.amqp.transport.DeliveryState outcome) {
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
