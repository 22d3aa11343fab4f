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
}
