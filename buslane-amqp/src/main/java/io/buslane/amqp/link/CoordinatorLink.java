package io.buslane.amqp.link;

import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.transaction.Declare;
import org.apache.qpid.proton.amqp.transaction.Declared;
import org.apache.qpid.proton.amqp.transaction.Discharge;
import org.apache.qpid.proton.amqp.transport.DeliveryState;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.engine.Delivery;
import io.buslane.engine.txn.TransactionFailure;
import io.buslane.engine.txn.Transactions;
import io.buslane.engine.txn.TxnId;
import org.apache.qpid.proton.engine.Receiver;
import org.apache.qpid.proton.message.Message;

import java.util.concurrent.CompletionException;

/**
 * The broker end of a transaction controller's link (target {@code coordinator}): {@code declare} is answered with
 * {@code declared{txn-id}}, {@code discharge} with {@code accepted} or {@code rejected} carrying a transaction
 * error. Detaching the link rolls back the transactions it declared. The transaction rules live in the engine
 * ({@link Transactions}); this class and {@link #txnId}/{@link #binary} translate the wire's binary txn-id.
 * Confined to the connection's event loop.
 */
public final class CoordinatorLink implements LinkHandler {

    private static final int CREDIT = 100;
    /**
     * Open transactions a connection may hold before it has put a token (docs/limits.md). The Java SDK's
     * {@code createTransaction()} declares before any token is put, so this cannot be zero.
     */
    public static final int MAX_OPEN_BEFORE_TOKEN = 16;

    private final LinkContext connection;
    private final Receiver receiver;
    private final Transactions transactions;
    private boolean closed;

    private CoordinatorLink(LinkContext connection, Receiver receiver, Transactions transactions) {
        this.connection = connection;
        this.receiver = receiver;
        this.transactions = transactions;
    }

    /**
     * Opens a coordinator link. No token is needed to attach it or to declare (the SDKs put none for it, and the Java
     * SDK declares before its first token), but before a token only {@link #MAX_OPEN_BEFORE_TOKEN} transactions may
     * be open, and at most {@link Transactions#MAX_OPEN} after; the work itself is authorised.
     */
    public static void attach(LinkContext connection, Receiver receiver, Transactions transactions) {
        CoordinatorLink link = new CoordinatorLink(connection, receiver, transactions);
        transactions.coordinatorAttached(receiver.getSession());
        RequestReceivers.open(receiver, ReceiverSettleMode.FIRST, link, CREDIT);
    }

    @Override
    public void onDelivery(Delivery d) {
        if (!d.isReadable() || d.isPartial()) {
            return;
        }
        byte[] bytes = RequestReceivers.read(receiver, d);
        RequestReceivers.replenish(receiver, CREDIT);
        Object body;
        try {
            Message m = Proton.message();
            m.decode(bytes, 0, bytes.length);
            body = m.getBody() instanceof AmqpValue v ? v.getValue() : null;
        } catch (RuntimeException e) {
            reply(d, rejected("amqp:decode-error", "The transaction control message could not be decoded: "
                    + e.getMessage()));
            return;
        }
        if (body instanceof Declare) {
            if (!connection.authenticated() && transactions.openCount() >= MAX_OPEN_BEFORE_TOKEN) {
                // the Java SDK declares before it puts its first token, so a few are allowed; the connection is
                // closed anyway if no token comes within the authentication timeout
                reply(d, rejected("amqp:unauthorized-access", "Unauthorized access. Put a valid token on $cbs "
                        + "before declaring more than " + MAX_OPEN_BEFORE_TOKEN + " transactions."));
                return;
            }
            TxnId id;
            try {
                id = transactions.declare(this);
            } catch (TransactionFailure refused) {
                reply(d, rejected(refused));
                return;
            }
            Declared declared = new Declared();
            declared.setTxnId(binary(id));
            reply(d, declared);
        } else if (body instanceof Discharge discharge) {
            TxnId id = txnId(discharge.getTxnId());
            boolean fail = Boolean.TRUE.equals(discharge.getFail());
            transactions.discharge(id, fail).whenComplete((v, failure) -> connection.runOnLoop(() -> {
                if (failure == null) {
                    reply(d, Accepted.getInstance());
                } else {
                    reply(d, rejected(failure));
                }
            }));
        } else {
            reply(d, rejected("amqp:not-implemented", "The coordinator understands only declare and discharge; "
                    + "got " + (body == null ? "no amqp-value body" : body.getClass().getSimpleName()) + "."));
        }
    }

    /** The engine's id for an AMQP txn-id (its bytes); null for null. */
    static TxnId txnId(Binary id) {
        return id == null ? null : TxnId.of(id.getArray(), id.getArrayOffset(), id.getLength());
    }

    /** The AMQP txn-id of an engine transaction id. */
    static Binary binary(TxnId id) {
        return new Binary(id.bytes());
    }

    /** The outcome for a failed transaction operation. */
    static Rejected rejected(Throwable failure) {
        Throwable c = failure;
        while (c instanceof CompletionException && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof TransactionFailure tf) {
            return rejected(tf.condition(), tf.description());
        }
        return rejected("amqp:internal-error", String.valueOf(c));
    }

    static Rejected rejected(String condition, String description) {
        Rejected r = new Rejected();
        r.setError(new ErrorCondition(Symbol.valueOf(condition), description));
        return r;
    }

    private void reply(Delivery d, DeliveryState outcome) {
        if (closed) {
            return;
        }
        if (!d.remotelySettled()) {
            d.disposition(outcome);
        }
        d.settle();
        connection.requestFlush();
    }

    @Override
    public void onClosed() {
        if (!closed) {
            closed = true;
            transactions.ownerClosed(this);
        }
    }
}
