package io.buslane.engine.api;

import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;

import java.util.Objects;

/**
 * A parsed address of something that can be sent to or received from: a queue or topic path, optionally a
 * subscription, and a sub-queue. Parsing is {@link CanonicalAddress}'s, which follows what the SDKs put on the wire
 * (a leading {@code /}, a {@code scheme://host[:port]/} prefix at the start, the keywords {@code Subscriptions},
 * {@code $DeadLetterQueue} and {@code $Transfer} in any letter case) and refuses what does not canonicalise.
 * Immutable.
 *
 * @param entityPath   the queue or topic path as given (case preserved)
 * @param subscription the subscription name, or null
 * @param subQueue     the sub-queue
 */
public record EntityAddress(String entityPath, String subscription, SubQueue subQueue) {

    public EntityAddress {
        Objects.requireNonNull(entityPath, "entityPath");
        Objects.requireNonNull(subQueue, "subQueue");
    }

    public static EntityAddress queueOrTopic(String path) {
        return new EntityAddress(path, null, SubQueue.MAIN);
    }

    public static EntityAddress subscription(String topic, String subscription) {
        return new EntityAddress(topic, subscription, SubQueue.MAIN);
    }

    public EntityAddress withSubQueue(SubQueue q) {
        return new EntityAddress(entityPath, subscription, q);
    }

    /**
     * Parses an address with the one canonical parser ({@link CanonicalAddress#parse}), so what is looked up is what
     * authorisation checked; returns null for an empty one (or the namespace's management node).
     *
     * @throws io.buslane.common.error.BrokerException (ARGUMENT) for an address that does not canonicalise, or
     *                                                 that names a management node or a rule
     */
    public static EntityAddress parse(String address) {
        if (address == null) {
            return null;
        }
        return of(CanonicalAddress.parse(address));
    }

    /**
     * The entity a canonical address names; null for the namespace.
     *
     * @throws io.buslane.common.error.BrokerException (ARGUMENT) for a management node or a rule
     */
    public static EntityAddress of(CanonicalAddress address) {
        if (address.isNamespace()) {
            return null;
        }
        if (address.management() || address.rule() != null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "The address '" + address.path()
                    + "' names a management node or a rule, not a queue, topic or subscription.");
        }
        SubQueue subQueue = switch (address.subQueue()) {
            case MAIN -> SubQueue.MAIN;
            case DEAD_LETTER -> SubQueue.DEAD_LETTER;
            case TRANSFER_DEAD_LETTER -> SubQueue.TRANSFER_DEAD_LETTER;
        };
        return new EntityAddress(address.entityPath(), address.subscription(), subQueue);
    }

    /** The receivable entity's path: {@code topic/Subscriptions/sub} or the queue/topic path. */
    public String entityName() {
        return subscription == null ? entityPath : entityPath + "/Subscriptions/" + subscription;
    }

    @Override
    public String toString() {
        return entityName() + subQueue.pathSuffix();
    }
}
