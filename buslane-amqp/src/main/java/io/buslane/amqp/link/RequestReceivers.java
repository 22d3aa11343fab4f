package io.buslane.amqp.link;

import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.Receiver;

/**
 * The receiving end of the broker's request links ({@code $cbs}, {@code $management}, the transaction coordinator):
 * how they attach, read a request and keep their credit up. Confined to the connection's event loop.
 */
public final class RequestReceivers {

    private RequestReceivers() {
    }

    /**
     * Answers the peer's attach: echoes its source, target and sender settle mode, settles with {@code settleMode},
     * routes the link's events to {@code handler} and grants {@code credit}.
     */
    public static void open(Receiver receiver, ReceiverSettleMode settleMode, LinkHandler handler, int credit) {
        receiver.setSource(receiver.getRemoteSource());
        receiver.setTarget(receiver.getRemoteTarget());
        receiver.setSenderSettleMode(receiver.getRemoteSenderSettleMode());
        receiver.setReceiverSettleMode(settleMode);
        receiver.setContext(handler);
        receiver.open();
        receiver.flow(credit);
    }

    /** The bytes of the complete delivery {@code d}, after which the receiver moves on to the next one. */
    public static byte[] read(Receiver receiver, Delivery d) {
        byte[] bytes = new byte[d.pending()];
        receiver.recv(bytes, 0, bytes.length);
        receiver.advance();
        return bytes;
    }

    /** Tops the credit back up to {@code credit} once less than half of it is left. */
    public static void replenish(Receiver receiver, int credit) {
        if (receiver.getCredit() < credit / 2) {
            receiver.flow(credit - receiver.getCredit());
        }
    }
}
