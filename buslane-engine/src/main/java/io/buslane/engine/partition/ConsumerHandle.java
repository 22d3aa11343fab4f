package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.ReceivedMessage;

/**
 * What a partition needs from a receiver: its mode, its credit (shared by every partition serving it, hence
 * atomic) and where its messages go. Implementations are thread-safe.
 */
public interface ConsumerHandle {

    ReceiveMode mode();

    /** Takes one unit of credit if any is left. */
    boolean tryAcquireCredit();

    /** Gives back a unit taken by {@link #tryAcquireCredit()} that was not used. */
    void releaseCredit();

    /** Hands over a message; called on the shard thread after the records behind it are durable. */
    void deliver(ReceivedMessage message);

    /** The engine ends the receiver (e.g. its session lock was lost). */
    void closedByEngine(BrokerException error);
}
