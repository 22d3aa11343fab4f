package io.buslane.engine.api;

import java.util.Locale;
import java.util.Objects;

/**
 * A parsed address of something that can be sent to or received from: a queue or topic path, optionally a
 * subscription, and a sub-queue. Parsing follows what the SDKs put on the wire: a leading {@code /}, a full
 * {@code scheme://host[:port]/} prefix, and the keywords {@code Subscriptions}, {@code $DeadLetterQueue} and
 * {@code $Transfer} in any letter case. Immutable.
 *
 * @param entityPath   the queue or topic path as given (case preserved)
 * @param subscription the subscription name, or null
 * @param subQueue     the sub-queue
 */
public record EntityAddress(String entityPath, String subscription, SubQueue subQueue) {

    private static final String DLQ = "/$deadletterqueue";
    private static final String TRANSFER_DLQ = "/$transfer/$deadletterqueue";
    private static final String SUBSCRIPTIONS = "/subscriptions/";

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

    /** Parses an address; returns null for an empty one. */
    public static EntityAddress parse(String address) {
        if (address == null) {
            return null;
        }
        String path = stripSchemeAndHost(address.trim());
        while (path.startsWith("/")) {
            path = path.substring(1);
        }
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        if (path.isEmpty()) {
            return null;
        }
        SubQueue subQueue = SubQueue.MAIN;
        String lower = path.toLowerCase(Locale.ROOT);
        if (lower.endsWith(TRANSFER_DLQ)) {
            subQueue = SubQueue.TRANSFER_DEAD_LETTER;
            path = path.substring(0, path.length() - TRANSFER_DLQ.length());
        } else if (lower.endsWith(DLQ)) {
            subQueue = SubQueue.DEAD_LETTER;
            path = path.substring(0, path.length() - DLQ.length());
        }
        lower = path.toLowerCase(Locale.ROOT);
        int sub = lower.lastIndexOf(SUBSCRIPTIONS);
        if (sub > 0) {
            String topic = path.substring(0, sub);
            String subscription = path.substring(sub + SUBSCRIPTIONS.length());
            if (!subscription.isEmpty() && subscription.indexOf('/') < 0) {
                return new EntityAddress(topic, subscription, subQueue);
            }
        }
        return new EntityAddress(path, null, subQueue);
    }

    private static String stripSchemeAndHost(String address) {
        int scheme = address.indexOf("://");
        if (scheme < 0) {
            return address;
        }
        int pathStart = address.indexOf('/', scheme + 3);
        return pathStart < 0 ? "" : address.substring(pathStart);
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
