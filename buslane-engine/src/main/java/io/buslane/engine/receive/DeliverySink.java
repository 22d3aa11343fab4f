package io.buslane.engine.receive;

import io.buslane.common.error.BrokerException;
import io.buslane.engine.message.ReceivedMessage;

/**
 * Where a receiver's messages go. The engine calls these methods on a shard thread, after the records behind the
 * delivery are durable; an implementation must not block and should hop to its own thread (a front end's event
 * loop) before doing real work.
 */
public interface DeliverySink {

    /** A message for the receiver; it consumed one unit of the receiver's credit. */
    void onMessage(Receiver receiver, ReceivedMessage message);

    /**
     * The engine closed the receiver (session lock lost, entity deleted or disabled). No more messages follow.
     *
     * @param error why, never null
     */
    void onClosed(Receiver receiver, BrokerException error);
}
