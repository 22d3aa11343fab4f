package io.buslane.amqp.link;

import org.apache.qpid.proton.engine.Delivery;

/** What a link does with its proton events. Confined to the connection's event loop. */
public interface LinkHandler {

    /** Credit or drain changed. */
    default void onFlow() {
    }

    /** A delivery arrived or its remote state changed. */
    default void onDelivery(Delivery delivery) {
    }

    /** The link or the connection closed: release engine resources. */
    default void onClosed() {
    }

    /** The client aborted a delivery: the connection has dropped it; the link may restore the credit it used. */
    default void onAborted() {
    }

    /**
     * Whether the connection's grants still allow this link (checked when a token expires; a link no longer
     * allowed is detached with {@code amqp:unauthorized-access}).
     */
    default boolean authorized() {
        return true;
    }
}
