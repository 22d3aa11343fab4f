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

    /**
     * The unit of credit just taken is used for a message of {@code sizeBytes} (encoded), about to be locked or
     * removed for this consumer; on the shard thread, before the message is handed over. A consumer that bounds what
     * it carries in bytes (a remote receiver's long poll) takes no more credit once it has enough.
     */
    default void taking(int sizeBytes) {
    }

    /** Hands over a message; called on the shard thread after the records behind it are durable. */
    void deliver(ReceivedMessage message);

    /** The engine ends the receiver (e.g. its session lock was lost). */
    void closedByEngine(BrokerException error);
}
