package io.buslane.engine.routing;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.Limits;
import io.buslane.engine.message.Message;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.partition.Partition;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A sendable entity (a queue or a topic) as one send sees it, and the rules a message must pass before it is
 * routed: SessionId and MessageId lengths, PartitionKey equal to SessionId, the entity's maximum message size.
 */
public record SendTarget(String name, PartitionRef[] partitions, boolean partitioned, boolean dedup,
                         EntityStatus status, boolean requiresSession, int maxMessageSizeKb,
                         AtomicInteger roundRobin) {

    /** Fails as the service does when the entity does not accept messages (disabled, send-disabled). */
    public void requireSendable() {
        if (!status.canSend()) {
            throw status.error(name, true);
        }
    }

    public long maxMessageSizeBytes() {
        return (long) maxMessageSizeKb * 1024;
    }

    /** The checks every message passes before it is routed. */
    public void validate(Message m) {
        if (m.sessionId() != null && m.sessionId().length() > Limits.MAX_SESSION_ID_LENGTH) {
            throw new BrokerException(ErrorKind.ARGUMENT_OUT_OF_RANGE, "The SessionId exceeds the maximum length "
                    + "of " + Limits.MAX_SESSION_ID_LENGTH + " characters.");
        }
        if (m.messageId() instanceof String id && id.length() > Limits.MAX_MESSAGE_ID_LENGTH) {
            throw new BrokerException(ErrorKind.ARGUMENT_OUT_OF_RANGE, "The MessageId exceeds the maximum length "
                    + "of " + Limits.MAX_MESSAGE_ID_LENGTH + " characters.");
        }
        if (m.partitionKey() != null && m.sessionId() != null && !m.partitionKey().equals(m.sessionId())) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "The PartitionKey '" + m.partitionKey()
                    + "' does not match the SessionId '" + m.sessionId() + "'; when both are set they must be "
                    + "equal.");
        }
        long max = maxMessageSizeBytes();
        if (m.encodedSize() > max) {
            throw new BrokerException(ErrorKind.MESSAGE_SIZE_EXCEEDED, "The received message (size "
                    + m.encodedSize() + " bytes) exceeds the limit (" + max + " bytes) currently allowed on the "
                    + "entity '" + name + "'.");
        }
    }

    /**
     * The session requirement, checked up front by a transaction's commit (a plain send is checked by the
     * partition itself, {@link Partition#send}).
     */
    public void requireSessionIds(Iterable<Message> messages) {
        if (!requiresSession) {
            return;
        }
        for (Message m : messages) {
            if (m.sessionId() == null) {
                throw new BrokerException(ErrorKind.INVALID_OPERATION, Partition.SESSION_REQUIRED_TEXT);
            }
        }
    }
}
