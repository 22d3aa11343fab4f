package io.buslane.common.auth;

import io.buslane.common.address.PercentDecoding;

import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.error.BrokerException;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A normalised CBS audience, SAS resource ({@code sr}) or entity address, reduced to what authorisation compares:
 * a host, a path and the entity the path lies in (wire protocol §2.4, §3.1). It is read from the one parse of
 * addresses, {@link CanonicalAddress}, which the entity lookup reads too, so a scope check and the entity acted on
 * cannot disagree.
 *
 * <p>Normalisation:
 * <ul>
 *   <li>{@link #parse(String)} (link addresses, CBS audiences, management targets) decodes nothing;
 *       {@link #ofResource(String)} (a token's {@code sr} as it appears in the token) URL-decodes the whole resource
 *       once ({@code %XX} as UTF-8, {@code +} as a space, as the SDKs' form encoders write it) and then parses it
 *       the same way; it is never decoded a second time, so a name holding {@code %41} stays {@code %41};</li>
 *   <li>the scheme ({@code sb}, {@code amqp}, {@code amqps}, {@code wss}, {@code https}, any other) is ignored, and
 *       recognised at the very start only; a bare path ({@code queue.1}, {@code /queue.1}) has no host;</li>
 *   <li>the host is lower-cased; user-info and port are dropped (Java signs for the namespace name without the
 *       port while JS and .NET keep the Endpoint's port, and the SDKs reach the broker through aliases anyway);</li>
 *   <li>the path is lower-cased, query and fragment are dropped, one leading and one trailing slash are dropped,
 *       and a trailing {@code $management} segment after an entity is stripped (a grant for an entity covers its
 *       management node); a lone {@code $management} is the namespace's management node, not the namespace;</li>
 *   <li>what does not canonicalise (an empty segment, {@code ://} inside the path, {@code .} or {@code ..}, a
 *       misplaced keyword) is refused with a {@link io.buslane.common.error.BrokerException} of kind
 *       {@code ARGUMENT}; {@link #ofResource} refuses it with {@link AuthException} (401 {@code InvalidAudience}).</li>
 * </ul>
 *
 * <p>The normalised string form ({@link #toString()}) is {@code //host/path} (or {@code //host} for the whole
 * namespace) when there is a host and {@code path} when there is none; parsing it again gives the same audience.
 *
 * @param host   lower-cased host without port, or {@code ""} when the input had none
 * @param path   lower-cased {@code /}-separated path without leading or trailing slash, or {@code ""} for the
 *               namespace
 * @param entity     the lower-cased queue or topic path the address lies in ({@code ""} for the namespace)
 * @param collection whether it is an administration collection ({@link #parseScope}), not an entity address
 */
public record Audience(String host, String path, String entity, boolean collection) {

    public Audience {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(entity, "entity");
    }

    /** An audience that is not an administration collection. */
    public Audience(String host, String path, String entity) {
        this(host, path, entity, false);
    }

    /** The audience of a canonical address. */
    public static Audience of(CanonicalAddress address) {
        return new Audience(address.host(), address.scopePath(), address.entityKey());
    }

    /**
     * A scope or an administration target: {@link #parse}, or else one of the administration API's collections,
     * which name no entity: {@code $Resources/Queues}, {@code $Resources/Topics}, {@code $namespaceinfo},
     * {@code <topic>/Subscriptions} (the topic's subscriptions) and {@code <topic>/Subscriptions/<sub>/Rules}. The
     * JavaScript administration client signs each request for its own URL, so a token may be scoped to one of them:
     * such a scope covers exactly that collection and nothing else ({@link #covers}), and the collections are
     * covered by the namespace and (a topic's) by the scopes that cover the topic or subscription, as any path.
     * Link addresses and CBS audiences are read with {@link #parse} only: an AMQP link cannot name a collection.
     *
     * @throws BrokerException (ARGUMENT) when it is neither
     */
    public static Audience parseScope(String uriOrPath) {
        try {
            return parse(uriOrPath);
        } catch (BrokerException notAnEntity) {
            Audience c = collection(uriOrPath);
            if (c == null) {
                throw notAnEntity;
            }
            return c;
        }
    }

    private static Audience collection(String text) {
        String node = CanonicalAddress.nodeOf(text);
        if (node.isEmpty()) {
            return null;
        }
        List<String> segments = List.of(node.split("/", -1));
        String first = fold(segments.get(0));
        if (segments.size() == 1 && first.equals("$namespaceinfo")) {
            return new Audience("", "$namespaceinfo", "", true);
        }
        if (segments.size() == 2 && first.equals("$resources")
                && (fold(segments.get(1)).equals("queues") || fold(segments.get(1)).equals("topics"))) {
            return new Audience("", "$resources/" + fold(segments.get(1)), "", true);
        }
        String last = fold(segments.get(segments.size() - 1));
        if (segments.size() < 2 || !(last.equals("subscriptions") || last.equals("rules"))) {
            return null;
        }
        CanonicalAddress owner;
        try {
            owner = CanonicalAddress.fromSegments(segments.subList(0, segments.size() - 1), text);
        } catch (BrokerException e) {
            return null;
        }
        boolean subscriptions = last.equals("subscriptions") && owner.subscription() == null;
        boolean rules = last.equals("rules") && owner.subscription() != null && owner.rule() == null;
        if (owner.isNamespace() || owner.management() || owner.subQueue() != CanonicalAddress.SubQueueKind.MAIN
                || !(subscriptions || rules)) {
            return null;
        }
        return new Audience("", owner.scopePath() + "/" + last, owner.entityKey(), true);
    }

    private static String fold(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    /** Parses and normalises a URI or bare path without decoding it (see the class comment). */
    public static Audience parse(String uriOrPath) {
        return of(CanonicalAddress.parse(Objects.requireNonNull(uriOrPath, "uriOrPath")));
    }

    /**
     * The scope of a token's signed resource: {@code sr} as it appears in the token, URL-decoded once and parsed.
     *
     * @throws AuthException (401 {@code InvalidAudience}) when the decoded resource does not canonicalise
     */
    public static Audience ofResource(String srAsInToken) {
        // decoded once, as the SDKs' form encoders wrote it ('+' is a space; a literal '+' arrives as %2B)
        String decoded = PercentDecoding.decode(Objects.requireNonNull(srAsInToken, "srAsInToken").trim(), true);
        try {
            return parseScope(decoded);
        } catch (BrokerException e) {
            throw new AuthException("InvalidAudience: The token's signed resource is not a valid address. "
                    + e.description());
        }
    }

    /** The normalised string form of {@code uriOrPath}: {@code parse(uriOrPath).toString()}. */
    public static String normalize(String uriOrPath) {
        return parse(uriOrPath).toString();
    }

    /**
     * Whether a grant on {@code scope} covers {@code target}, both parsed with {@link #parse} (not decoded).
     *
     * @see #covers(Audience)
     */
    public static boolean covers(String scope, String target) {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(target, "target");
        return parse(scope).covers(parse(target));
    }

    /**
     * Whether a grant on this scope covers {@code target}: the hosts match (compared only when both have one — an
     * entity path from a link address usually has none) and this path is empty (namespace-wide), equal to the
     * target's path, or a whole-segment prefix of it ({@code queue.1} covers {@code queue.1/$deadletterqueue} and
     * {@code topic} covers {@code topic/subscriptions/s}, but {@code queue.1} does not cover {@code queue.10}).
     * This is how a namespace rule's token covers; an entity rule's token covers by {@link #coversEntity}.
     */
    public boolean covers(Audience target) {
        if (!sameHost(target)) {
            return false;
        }
        if (collection) {
            return target.collection && path.equals(target.path); // a collection's token: that collection only
        }
        return path.isEmpty() || path.equals(target.path) || target.path.startsWith(path + "/");
    }

    /**
     * Whether an entity rule's grant on this scope covers {@code target}: exactly the scope's entity, with its
     * subscriptions, rules, sub-queues and management node, and nothing else (not {@code team/secret} for the
     * entity {@code team}). A scope that names no entity covers nothing this way.
     */
    public boolean coversEntity(Audience target) {
        return sameHost(target) && !entity.isEmpty() && entity.equals(target.entity) && covers(target);
    }

    private boolean sameHost(Audience target) {
        return host.isEmpty() || target.host.isEmpty() || host.equals(target.host);
    }

    /** Whether this is the whole namespace (empty path). */
    public boolean isNamespace() {
        return path.isEmpty();
    }

    /** The normalised string form: {@code //host/path}, {@code //host} or {@code path}. */
    @Override
    public String toString() {
        if (host.isEmpty()) {
            return path;
        }
        return path.isEmpty() ? "//" + host : "//" + host + "/" + path;
    }
}
