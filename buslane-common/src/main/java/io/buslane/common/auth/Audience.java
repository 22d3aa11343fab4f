package io.buslane.common.auth;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A normalised CBS audience, SAS resource ({@code sr}) or entity address, reduced to what authorisation compares:
 * a host and a path (wire protocol §2.4, §3.1).
 *
 * <p>Normalisation ({@link #parse(String)}, {@link #normalize(String)}):
 * <ul>
 *   <li>URL-decoding ({@code %XX} as UTF-8) is applied once; {@code +} is left as it is (entity names cannot hold
 *       spaces, and a literal {@code +} arrives as {@code %2B} from every SDK encoder);</li>
 *   <li>the scheme ({@code sb}, {@code amqp}, {@code amqps}, {@code wss}, {@code https}, any other) is ignored;
 *       a bare path ({@code queue.1}, {@code /queue.1}) has no host;</li>
 *   <li>the host is lower-cased; user-info and port are dropped (Java signs for the namespace name without the
 *       port while JS and .NET keep the Endpoint's port, and the SDKs reach the broker through aliases anyway);</li>
 *   <li>the path is lower-cased, query and fragment are dropped, empty segments (leading, trailing, doubled
 *       slashes) are removed, and one trailing {@code $management} segment is stripped.</li>
 * </ul>
 *
 * <p>The normalised string form ({@link #toString()}) is {@code //host/path} (or {@code //host} for the whole
 * namespace) when there is a host and {@code path} when there is none. Normalising that form again only repeats
 * the decoding, which is a no-op unless the entity name itself contains {@code %}.
 *
 * @param host lower-cased host without port, or {@code ""} when the input had none
 * @param path lower-cased {@code /}-separated path without leading or trailing slash, or {@code ""} for the
 *             namespace
 */
public record Audience(String host, String path) {

    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.\\-]*://");
    private static final String MANAGEMENT_SEGMENT = "$management";

    public Audience {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(path, "path");
    }

    /** Parses and normalises a URI or bare path, decoding it once (see the class comment). */
    public static Audience parse(String uriOrPath) {
        Objects.requireNonNull(uriOrPath, "uriOrPath");
        return parseStructure(PercentDecoding.decode(uriOrPath.trim(), false));
    }

    /** The normalised string form of {@code uriOrPath}: {@code parse(uriOrPath).toString()}. */
    public static String normalize(String uriOrPath) {
        return parse(uriOrPath).toString();
    }

    /**
     * Whether a grant on {@code scope} covers {@code target}. Both are taken as normalised forms (as returned by
     * {@link #normalize(String)}) or undecoded URIs/paths: they are re-normalised structurally (scheme, case,
     * slashes, {@code $management}) but <em>not</em> URL-decoded again.
     *
     * @see #covers(Audience)
     */
    public static boolean covers(String scope, String target) {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(target, "target");
        return parseStructure(scope.trim()).covers(parseStructure(target.trim()));
    }

    /**
     * Whether a grant on this scope covers {@code target}: the hosts match (compared only when both have one — an
     * entity path from a link address usually has none) and this path is empty (namespace-wide), equal to the
     * target's path, or a whole-segment prefix of it ({@code queue.1} covers {@code queue.1/$deadletterqueue} and
     * {@code topic} covers {@code topic/subscriptions/s}, but {@code queue.1} does not cover {@code queue.10}).
     */
    public boolean covers(Audience target) {
        if (!host.isEmpty() && !target.host.isEmpty() && !host.equals(target.host)) {
            return false;
        }
        return path.isEmpty() || path.equals(target.path) || target.path.startsWith(path + "/");
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

    private static Audience parseStructure(String text) {
        String rest;
        String host = "";
        var scheme = SCHEME.matcher(text);
        boolean hasAuthority;
        if (scheme.find()) {
            rest = text.substring(scheme.end());
            hasAuthority = true;
        } else if (text.startsWith("//")) {
            rest = text.substring(2);
            hasAuthority = true;
        } else {
            rest = text;
            hasAuthority = false;
        }
        if (hasAuthority) {
            int end = indexOfAny(rest, "/?#");
            host = hostOf(end < 0 ? rest : rest.substring(0, end));
            rest = end < 0 ? "" : rest.substring(end);
        }
        int queryOrFragment = indexOfAny(rest, "?#");
        if (queryOrFragment >= 0) {
            rest = rest.substring(0, queryOrFragment);
        }
        List<String> segments = new ArrayList<>();
        for (String segment : rest.toLowerCase(Locale.ROOT).split("/")) {
            if (!segment.isEmpty()) {
                segments.add(segment);
            }
        }
        if (!segments.isEmpty() && segments.get(segments.size() - 1).equals(MANAGEMENT_SEGMENT)) {
            segments.remove(segments.size() - 1);
        }
        return new Audience(host, String.join("/", segments));
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
        return host.toLowerCase(Locale.ROOT);
    }

    private static int indexOfAny(String text, String chars) {
        for (int i = 0; i < text.length(); i++) {
            if (chars.indexOf(text.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }
}
