package io.buslane.management.atom;

import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.error.BrokerException;

import java.util.List;
import java.util.Locale;

/**
 * What a request path names, read by the canonical address parser. Queue and topic paths may contain {@code /};
 * the keywords {@code $Resources}, {@code $namespaceinfo}, {@code Subscriptions} and {@code Rules} are matched in
 * any letter case (the SDKs send {@code subscriptions}, the service's docs {@code Subscriptions}). An entity path
 * cannot contain a {@code subscriptions} or {@code rules} segment, so the first such segment starts the
 * subscription part.
 *
 * @param kind         what is addressed
 * @param entity       the queue or topic path (null for namespace-level resources)
 * @param subscription the subscription name, or null
 * @param rule         the rule name, or null
 */
record AdminPath(Kind kind, String entity, String subscription, String rule) {

    enum Kind {
        /** {@code /}: nothing to manage. */
        ROOT,
        NAMESPACE_INFO,
        LIST_QUEUES,
        LIST_TOPICS,
        /** {@code /$Resources/<something else>}. */
        UNKNOWN_COLLECTION,
        /** A queue or a topic. */
        ENTITY,
        SUBSCRIPTIONS,
        SUBSCRIPTION,
        RULES,
        RULE
    }

    /**
     * Parses a raw (undecoded) request path with the canonical address parser ({@link CanonicalAddress}): each
     * segment decoded once, the entity part structured by the same rules every other reader of an address uses;
     * throws IllegalArgumentException for a path with an unsupported shape or one that does not canonicalise.
     */
    static AdminPath parse(String rawPath) {
        try {
            return parseSegments(CanonicalAddress.httpSegments(rawPath), rawPath);
        } catch (BrokerException e) {
            throw new IllegalArgumentException(e.description(), e);
        }
    }

    private static AdminPath parseSegments(List<String> seg, String rawPath) {
        if (seg.isEmpty()) {
            return new AdminPath(Kind.ROOT, null, null, null);
        }
        if (seg.size() == 1 && seg.get(0).equalsIgnoreCase("$namespaceinfo")) {
            return new AdminPath(Kind.NAMESPACE_INFO, null, null, null);
        }
        if (seg.get(0).equalsIgnoreCase("$Resources")) {
            String collection = seg.size() == 2 ? seg.get(1).toLowerCase(Locale.ROOT) : "";
            Kind kind = switch (collection) {
                case "queues" -> Kind.LIST_QUEUES;
                case "topics" -> Kind.LIST_TOPICS;
                default -> Kind.UNKNOWN_COLLECTION;
            };
            return new AdminPath(kind, null, null, null);
        }
        // an entity path has no "subscriptions" segment, so the first one starts the subscription part; what
        // follows it is counted, since a subscription or rule may itself be called "rules" or "subscriptions"
        int s = 1;
        while (s < seg.size() && !seg.get(s).equalsIgnoreCase("subscriptions")) {
            s++;
        }
        int rest = seg.size() - s - 1;
        if (s < seg.size() && rest == 0) {
            CanonicalAddress topic = CanonicalAddress.fromSegments(seg.subList(0, s), rawPath);
            if (topic.isNamespace() || !plain(topic) || topic.subscription() != null) {
                throw unsupported(rawPath);
            }
            return new AdminPath(Kind.SUBSCRIPTIONS, topic.entityPath(), null, null);
        }
        if (s < seg.size() && rest == 2 && seg.get(s + 2).equalsIgnoreCase("rules")) {
            CanonicalAddress subscription = CanonicalAddress.fromSegments(seg.subList(0, s + 2), rawPath);
            if (subscription.subscription() == null || !plain(subscription) || subscription.rule() != null) {
                throw unsupported(rawPath);
            }
            return new AdminPath(Kind.RULES, subscription.entityPath(), subscription.subscription(), null);
        }
        CanonicalAddress a = CanonicalAddress.fromSegments(seg, rawPath);
        if (a.isNamespace() || !plain(a)) {
            throw unsupported(rawPath);
        }
        if (a.subscription() == null) {
            return new AdminPath(Kind.ENTITY, a.entityPath(), null, null);
        }
        return a.rule() == null ? new AdminPath(Kind.SUBSCRIPTION, a.entityPath(), a.subscription(), null)
                : new AdminPath(Kind.RULE, a.entityPath(), a.subscription(), a.rule());
    }

    /** Not a sub-queue or management node: what the management API manages. */
    private static boolean plain(CanonicalAddress a) {
        return !a.management() && a.subQueue() == CanonicalAddress.SubQueueKind.MAIN;
    }

    private static IllegalArgumentException unsupported(String rawPath) {
        return new IllegalArgumentException("The path '" + rawPath + "' does not name a queue, topic, subscription "
                + "or rule (expected /{topic}/Subscriptions/{subscription}/Rules/{rule}).");
    }

    /** The path of the subscription ({@code topic/Subscriptions/sub}). */
    String subscriptionPath() {
        return entity + "/Subscriptions/" + subscription;
    }

    /**
     * The path a SAS token must cover for this request ({@code ""} for the whole namespace): the entity, or the
     * collection listed ({@code $Resources/Queues}, {@code $namespaceinfo}, {@code t/Subscriptions}, ...), which a
     * token for the namespace, for the owning topic or subscription, or for exactly that collection covers
     * ({@code Audience.parseScope}).
     */
    String audiencePath() {
        return switch (kind) {
            case ENTITY -> entity;
            case SUBSCRIPTIONS -> entity + "/Subscriptions";
            case SUBSCRIPTION -> subscriptionPath();
            case RULES -> subscriptionPath() + "/Rules";
            case RULE -> subscriptionPath() + "/Rules/" + rule;
            case LIST_QUEUES -> "$Resources/Queues";
            case LIST_TOPICS -> "$Resources/Topics";
            case NAMESPACE_INFO -> "$namespaceinfo";
            default -> "";
        };
    }
}
