package io.buslane.common.address;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The one parse of an entity address. Every place that reads an address (an AMQP link address, a CBS audience, a
 * SAS token's {@code sr}, a REST or admin path, a console or ops path) parses it here, and authorisation and the
 * entity lookup both read the result, so they cannot disagree about what an address names (docs/security.md,
 * "One canonical address").
 *
 * <p>Grammar, after an optional {@code scheme://authority} or {@code //authority} at the very start (its host is
 * kept, lower-cased, without user-info or port), one optional leading and one optional trailing {@code /}, and a
 * query or fragment (dropped):
 * <pre>
 *   address   = entity [ "/Subscriptions/" sub [ "/Rules/" rule ] ] [ subqueue ] [ "/$management" ]
 *                      (sub and rule are any names not starting with "$", or "$Default" for a rule; a rule has
 *                       no sub-queue; so a subscription may be called "Rules")
 *             | "$management" | ""            (the namespace's management node; the namespace)
 *   entity    = segment *( "/" segment )      (no segment is a keyword or starts with "$")
 *   subqueue  = "/$DeadLetterQueue" | "/$Transfer/$DeadLetterQueue"
 * </pre>
 * Keywords match in any letter case, and so do entity names: the service treats them case-insensitively, so
 * mixed case is folded (by {@link Locale#ROOT} lower-casing, as the namespace's own lookup folds), not refused.
 *
 * <p>Refused with a {@link BrokerException} of kind {@link ErrorKind#ARGUMENT} (400,
 * {@code com.microsoft:argument-error}),
 * because some reader could take them for another entity: an empty
 * segment ({@code a//b}, so also {@code ://} inside a path), the segments {@code .} and {@code ..} and any
 * {@code ..} sequence, a segment with a control character or white space, a {@code $} segment that is not a keyword
 * in its place, a keyword without its name ({@code t/Subscriptions}), and in the HTTP form a bad percent-encoding
 * or an encoded {@code ?} or {@code #} (names cannot hold them, and the canonical text of the address would read
 * them as a query or fragment).
 *
 * <p>Percent-decoding belongs to the transport, so it is chosen by the entry point: {@link #parse(String)} decodes
 * nothing (AMQP addresses and audiences are not URL-encoded; entity names may contain {@code %});
 * {@link #parseHttpPath(String)} decodes the raw request path once and reads it without an authority. A SAS
 * {@code sr} is decoded whole by its reader (the SDKs encode the whole URI) and then parsed with {@link #parse}.
 *
 * @param host         lower-cased host without port, or {@code ""} when the address had none
 * @param entityPath   the queue or topic path, case preserved, {@code ""} for the namespace
 * @param subscription the subscription name, case preserved, or null
 * @param rule         the rule name, case preserved, or null (admin paths only)
 * @param subQueue     the sub-queue
 * @param management   whether the address is the {@code $management} node of what it names
 */
public record CanonicalAddress(String host, String entityPath, String subscription, String rule, SubQueueKind subQueue,
                               boolean management) {

    /** The sub-queues an address can name. */
    public enum SubQueueKind {
        MAIN(""), DEAD_LETTER("/$DeadLetterQueue"), TRANSFER_DEAD_LETTER("/$Transfer/$DeadLetterQueue");

        private final String suffix;

        SubQueueKind(String suffix) {
            this.suffix = suffix;
        }

        /** The path suffix in the SDKs' spelling ({@code ""} for the main queue). */
        public String suffix() {
            return suffix;
        }
    }

    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.\\-]*://");
    private static final String SUBSCRIPTIONS = "subscriptions";
    private static final String RULES = "rules";
    private static final String DLQ = "$deadletterqueue";
    private static final String TRANSFER = "$transfer";
    private static final String MANAGEMENT = "$management";

    public CanonicalAddress {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(entityPath, "entityPath");
        Objects.requireNonNull(subQueue, "subQueue");
        if (entityPath.isEmpty() && (subscription != null || subQueue != SubQueueKind.MAIN)) {
            throw new IllegalArgumentException("A namespace address has no subscription or sub-queue.");
        }
        if (rule != null && subscription == null) {
            throw new IllegalArgumentException("A rule belongs to a subscription.");
        }
    }

    /** Parses an address that is not URL-encoded: an AMQP link address, a CBS audience, a decoded {@code sr}. */
    public static CanonicalAddress parse(String address) {
        Objects.requireNonNull(address, "address");
        return parse(address, false);
    }

    /**
     * Parses the raw (undecoded) path of an HTTP request, or the part of it that names an entity: the query dropped,
     * the path percent-decoded once as a whole ({@code +} stays {@code +}; {@code %2F} is a separator, as the service
     * reads the Java administration client's paths), then read like any address but with no authority: a path is
     * never a URL, so {@code /x://y/q} is an empty segment, not host {@code y}. A bad {@code %} sequence, bytes that
     * are not UTF-8 and a decoded {@code ?} or {@code #} are refused.
     */
    public static CanonicalAddress parseHttpPath(String rawPath) {
        Objects.requireNonNull(rawPath, "rawPath");
        return parse(rawPath, true);
    }

    /**
     * The segments of a raw HTTP path as {@link #parseHttpPath} reads them (a query dropped, the path decoded once,
     * one leading and one trailing {@code /} dropped, each segment checked), for readers that handle their own
     * collection keywords first ({@code $Resources/queues}, {@code {topic}/Subscriptions}) and pass the rest to
     * {@link #fromSegments}. Empty for the root.
     */
    public static List<String> httpSegments(String rawPath) {
        Objects.requireNonNull(rawPath, "rawPath");
        String rest = trimmed(decodeHttpPath(rawPath.trim(), rawPath));
        List<String> segments = new ArrayList<>();
        if (rest.isEmpty()) {
            return segments;
        }
        for (String segment : rest.split("/", -1)) {
            requireValidSegment(segment, rawPath);
            segments.add(segment);
        }
        return segments;
    }

    /** The address that decoded, checked segments ({@link #httpSegments}) name; {@code text} is shown in errors. */
    public static CanonicalAddress fromSegments(List<String> segments, String text) {
        if (segments.isEmpty()) {
            return new CanonicalAddress("", "", null, null, SubQueueKind.MAIN, false);
        }
        for (String segment : segments) {
            requireValidSegment(segment, text);
        }
        return structure("", List.copyOf(segments), text);
    }

    /**
     * The path of an address without its {@code scheme://authority} (recognised at the very start only), query,
     * fragment and leading {@code /}, not otherwise checked: for recognising the nodes that are not entities
     * ({@code $cbs}) before an address is parsed.
     */
    public static String nodeOf(String address) {
        return trimmed(withoutAuthority(address.trim())[1]);
    }

    /**
     * {@code text} split at a {@code scheme://authority} or {@code //authority} at its very start: the authority (null
     * when there is none) and the rest.
     */
    private static String[] withoutAuthority(String text) {
        String rest = text;
        var scheme = SCHEME.matcher(rest);
        if (scheme.find()) {
            rest = rest.substring(scheme.end());
        } else if (rest.startsWith("//")) {
            rest = rest.substring(2);
        } else {
            return new String[] {null, rest};
        }
        int end = indexOfAny(rest, "/?#");
        return end < 0 ? new String[] {rest, ""} : new String[] {rest.substring(0, end), rest.substring(end)};
    }

    /** Whether this is the whole namespace (or its management node). */
    public boolean isNamespace() {
        return entityPath.isEmpty();
    }

    /** The queue or topic path folded for comparison ({@code ""} for the namespace). */
    public String entityKey() {
        return fold(entityPath);
    }

    /**
     * The folded canonical path that scopes compare, without {@code $management} (a grant for an entity covers its
     * management node): {@code queue.1}, {@code t/subscriptions/s/$deadletterqueue}, {@code ""} for the namespace,
     * {@code $management} for the namespace's management node.
     */
    public String scopePath() {
        if (entityPath.isEmpty()) {
            return management ? MANAGEMENT : "";
        }
        return fold(pathWithoutManagement());
    }

    /** The receivable or sendable entity's path: {@code topic/Subscriptions/sub} or the queue or topic path. */
    public String entityName() {
        return subscription == null ? entityPath : entityPath + "/Subscriptions/" + subscription;
    }

    /**
     * The canonical text of this address, without host: parsing it again gives the same address (host aside).
     * {@code queue.1}, {@code t/Subscriptions/s/Rules/r}, {@code q/$DeadLetterQueue/$management}.
     */
    public String path() {
        if (entityPath.isEmpty()) {
            return management ? MANAGEMENT : "";
        }
        return management ? pathWithoutManagement() + "/$management" : pathWithoutManagement();
    }

    /** This address without its {@code $management} node. */
    public CanonicalAddress withoutManagement() {
        return management ? new CanonicalAddress(host, entityPath, subscription, rule, subQueue, false) : this;
    }

    private String pathWithoutManagement() {
        String p = entityName();
        if (rule != null) {
            p += "/Rules/" + rule;
        }
        return p + subQueue.suffix();
    }

    @Override
    public String toString() {
        return host.isEmpty() ? path() : "//" + host + (isNamespace() && !management ? "" : "/" + path());
    }

    // ================================================================================================= parsing

    private static CanonicalAddress parse(String text, boolean http) {
        String rest = text.trim();
        String host = "";
        if (http) {
            rest = decodeHttpPath(rest, text);
        } else {
            String[] split = withoutAuthority(rest);
            host = split[0] == null ? "" : hostOf(split[0]);
            rest = split[1];
        }
        rest = trimmed(rest);
        if (rest.isEmpty()) {
            return new CanonicalAddress(host, "", null, null, SubQueueKind.MAIN, false);
        }
        List<String> segments = new ArrayList<>();
        for (String segment : rest.split("/", -1)) {
            requireValidSegment(segment, text);
            segments.add(segment);
        }
        return structure(host, segments, text);
    }

    /**
     * An HTTP request path without its query, decoded once as a whole. {@code %2F} becomes a separator: the Java
     * administration client escapes the {@code /} of an entity name so ({@code /app%2Forders}), and the service
     * accepts it; the decoded path is then checked like any other, so {@code %2F..%2F} is a {@code ..} segment. A
     * decoded {@code ?} or {@code #} is refused (the canonical text would read it as a query or fragment).
     */
    private static String decodeHttpPath(String raw, String text) {
        int queryOrFragment = indexOfAny(raw, "?#");
        String path = queryOrFragment < 0 ? raw : raw.substring(0, queryOrFragment);
        String decoded = percentDecode(path, text);
        if (decoded.indexOf('?') >= 0 || decoded.indexOf('#') >= 0) {
            throw invalid(text, "it has an encoded '?' or '#'");
        }
        return decoded;
    }

    /** Without query, fragment, one leading and one trailing slash. */
    private static String trimmed(String path) {
        String rest = path;
        int queryOrFragment = indexOfAny(rest, "?#");
        if (queryOrFragment >= 0) {
            rest = rest.substring(0, queryOrFragment);
        }
        if (rest.startsWith("/")) {
            rest = rest.substring(1);
        }
        if (rest.endsWith("/")) {
            rest = rest.substring(0, rest.length() - 1);
        }
        return rest;
    }

    private static CanonicalAddress structure(String host, List<String> segments, String text) {
        int end = segments.size();
        boolean management = false;
        if (fold(segments.get(end - 1)).equals(MANAGEMENT)) {
            management = true;
            end--;
            if (end == 0) {
                return new CanonicalAddress(host, "", null, null, SubQueueKind.MAIN, true);
            }
        }
        SubQueueKind subQueue = SubQueueKind.MAIN;
        if (fold(segments.get(end - 1)).equals(DLQ)) {
            end--;
            subQueue = SubQueueKind.DEAD_LETTER;
            if (end > 0 && fold(segments.get(end - 1)).equals(TRANSFER)) {
                end--;
                subQueue = SubQueueKind.TRANSFER_DEAD_LETTER;
            }
        }
        int entityEnd = 0;
        while (entityEnd < end && !isKeyword(segments.get(entityEnd))) {
            entityEnd++;
        }
        if (entityEnd == 0) {
            throw invalid(text, "it names no queue or topic before '" + (end > 0 ? segments.get(0)
                    : segments.get(segments.size() - 1)) + "'");
        }
        String subscription = null;
        String rule = null;
        int i = entityEnd;
        if (i < end) {
            if (!fold(segments.get(i)).equals(SUBSCRIPTIONS)) {
                throw invalid(text, "'" + segments.get(i) + "' is not allowed there");
            }
            if (i + 1 >= end || segments.get(i + 1).startsWith("$")) {
                throw invalid(text, "'Subscriptions' is not followed by a subscription name");
            }
            subscription = segments.get(i + 1);
            i += 2;
            if (i < end) {
                if (!fold(segments.get(i)).equals(RULES) || i + 1 >= end || !isRuleName(segments.get(i + 1))) {
                    throw invalid(text, "'" + segments.get(i) + "' is not allowed after the subscription");
                }
                rule = segments.get(i + 1);
                i += 2;
                if (i < end) {
                    throw invalid(text, "'" + segments.get(i) + "' is not allowed after the rule");
                }
                if (subQueue != SubQueueKind.MAIN) {
                    throw invalid(text, "a rule has no sub-queue");
                }
            }
        }
        String entityPath = String.join("/", segments.subList(0, entityEnd));
        return new CanonicalAddress(host, entityPath, subscription, rule, subQueue, management);
    }

    /**
     * A rule's name: any name in its place (a subscription or rule may be called {@code rules}), and
     * {@code $Default} is the one {@code $} name a rule may have.
     */
    private static boolean isRuleName(String segment) {
        return !segment.startsWith("$") || fold(segment).equals("$default");
    }

    /** Keywords, and any {@code $} segment: none of them can be part of an entity's name. */
    private static boolean isKeyword(String segment) {
        String f = fold(segment);
        return f.startsWith("$") || f.equals(SUBSCRIPTIONS) || f.equals(RULES);
    }

    private static void requireValidSegment(String segment, String text) {
        if (segment.isEmpty()) {
            throw invalid(text, "it has an empty segment, which is not allowed");
        }
        if (segment.contains("..") || segment.equals(".")) {
            throw invalid(text, "it has a '.' or '..' segment or sequence, which is not allowed");
        }
        if (segment.indexOf('?') >= 0 || segment.indexOf('#') >= 0) {
            // only a decoded segment can hold them; its canonical text would read them as a query or fragment
            throw invalid(text, "it has an encoded '?' or '#'");
        }
        for (int i = 0; i < segment.length(); ) {
            int c = segment.codePointAt(i);
            if (Character.isISOControl(c) || Character.isWhitespace(c) || Character.isSpaceChar(c)
                    || Character.getType(c) == Character.FORMAT || Character.getType(c) == Character.SURROGATE) {
                throw invalid(text, "it has a control, space or invisible character, which is not allowed");
            }
            i += Character.charCount(c);
        }
    }

    private static String percentDecode(String raw, String text) {
        try {
            return PercentDecoding.decodeStrict(raw);
        } catch (IllegalArgumentException e) {
            throw invalid(text, e.getMessage());
        }
    }

    private static BrokerException invalid(String text, String why) {
        return new BrokerException(ErrorKind.ARGUMENT, "The address '" + printable(text)
                + "' is not a valid entity address: " + why + ".");
    }

    /** The text with control and invisible characters shown as {@code U+XXXX}, cut to 300 characters. */
    static String printable(String text) {
        StringBuilder b = new StringBuilder(Math.min(text.length(), 300) + 8);
        for (int i = 0; i < text.length() && b.length() < 300; ) {
            int c = text.codePointAt(i);
            if (Character.isISOControl(c) || Character.getType(c) == Character.FORMAT
                    || Character.getType(c) == Character.SURROGATE || (Character.isSpaceChar(c) && c != ' ')) {
                b.append(String.format(Locale.ROOT, "U+%04X", c));
            } else {
                b.appendCodePoint(c);
            }
            i += Character.charCount(c);
        }
        return b.length() >= 300 ? b + "..." : b.toString();
    }

    private static String hostOf(String authority) {
        String host = authority;
        int at = host.lastIndexOf('@');
        if (at >= 0) {
            host = host.substring(at + 1);
        }
        if (host.startsWith("[")) {
            int close = host.indexOf(']');
            if (close > 0) {
                host = host.substring(0, close + 1);
            }
        } else {
            int colon = host.lastIndexOf(':');
            if (colon >= 0) {
                host = host.substring(0, colon);
            }
        }
        return fold(host);
    }

    private static int indexOfAny(String text, String chars) {
        for (int i = 0; i < text.length(); i++) {
            if (chars.indexOf(text.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }

    static String fold(String s) {
        return s.toLowerCase(Locale.ROOT);
    }
}
