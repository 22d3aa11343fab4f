package io.buslane.management.atom;

import java.util.Arrays;
import java.util.Locale;

/**
 * What a (percent-decoded) request path names. Queue and topic paths may contain {@code /}; the keywords
 * {@code $Resources}, {@code $namespaceinfo}, {@code Subscriptions} and {@code Rules} are matched in any letter
 * case (the SDKs send {@code subscriptions}, the service's docs {@code Subscriptions}). An entity path cannot
 * contain a {@code subscriptions} or {@code rules} segment, so the first such segment starts the subscription part.
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

    /** Parses a decoded path; throws IllegalArgumentException for a path with an unsupported shape. */
    static AdminPath parse(String decodedPath) {
        String p = decodedPath;
        while (p.startsWith("/")) {
            p = p.substring(1);
        }
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        if (p.isEmpty()) {
            return new AdminPath(Kind.ROOT, null, null, null);
        }
        String[] seg = p.split("/");
        if (seg.length == 1 && seg[0].equalsIgnoreCase("$namespaceinfo")) {
            return new AdminPath(Kind.NAMESPACE_INFO, null, null, null);
        }
        if (seg[0].equalsIgnoreCase("$Resources")) {
            String collection = seg.length == 2 ? seg[1].toLowerCase(Locale.ROOT) : "";
            Kind kind = switch (collection) {
                case "queues" -> Kind.LIST_QUEUES;
                case "topics" -> Kind.LIST_TOPICS;
                default -> Kind.UNKNOWN_COLLECTION;
            };
            return new AdminPath(kind, null, null, null);
        }
        int s = 1;
        while (s < seg.length && !seg[s].equalsIgnoreCase("subscriptions")) {
            s++;
        }
        if (s == seg.length) {
            return new AdminPath(Kind.ENTITY, p, null, null);
        }
        String topic = String.join("/", Arrays.copyOfRange(seg, 0, s));
        String[] rest = Arrays.copyOfRange(seg, s + 1, seg.length);
        if (rest.length == 0) {
            return new AdminPath(Kind.SUBSCRIPTIONS, topic, null, null);
        }
        if (rest.length == 1) {
            return new AdminPath(Kind.SUBSCRIPTION, topic, rest[0], null);
        }
        if (rest[1].equalsIgnoreCase("rules") && rest.length <= 3) {
            return rest.length == 2 ? new AdminPath(Kind.RULES, topic, rest[0], null)
                    : new AdminPath(Kind.RULE, topic, rest[0], rest[2]);
        }
        throw new IllegalArgumentException("The path '/" + p + "' does not name a queue, topic, subscription or "
                + "rule (expected /{topic}/Subscriptions/{subscription}/Rules/{rule}).");
    }

    /** The path of the subscription ({@code topic/Subscriptions/sub}). */
    String subscriptionPath() {
        return entity + "/Subscriptions/" + subscription;
    }

    /** The path a SAS token must cover for this request ({@code ""} for the whole namespace). */
    String audiencePath() {
        return switch (kind) {
            case ENTITY, SUBSCRIPTIONS -> entity;
            case SUBSCRIPTION, RULES -> subscriptionPath();
            case RULE -> subscriptionPath() + "/Rules/" + rule;
            default -> "";
        };
    }
}
