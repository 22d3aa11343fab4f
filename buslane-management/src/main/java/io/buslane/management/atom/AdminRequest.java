package io.buslane.management.atom;

import io.buslane.common.auth.Grant;

import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * One management request, independent of the HTTP server that received it. Immutable.
 *
 * @param method        the HTTP method, upper case
 * @param rawPath       the request path as received (still percent-encoded), echoed in links
 * @param path          what the decoded path names
 * @param query         query parameters, decoded; looked up case-insensitively
 * @param authorization the {@code Authorization} header, or null
 * @param ifMatch       the {@code If-Match} header, or null (present on updates)
 * @param body          the request body (empty when none)
 * @param scheme        {@code http} or {@code https}
 * @param host          the {@code Host} header (host and port)
 * @param grant         what the request's token grants, once {@link AdminAuth} has checked it; null before
 * @param supplementary the tokens a create or update that sets forwarding targets carries for them
 */
record AdminRequest(String method, String rawPath, AdminPath path, Map<String, String> query, String authorization,
                    String ifMatch, byte[] body, String scheme, String host, Grant grant,
                    Supplementary supplementary) {

    /**
     * The {@code ServiceBusSupplementaryAuthorization} and {@code ServiceBusDlqSupplementaryAuthorization} headers
     * (tokens for the {@code ForwardTo} and {@code ForwardDeadLetteredMessagesTo} targets, sent by the SDKs whose
     * request token covers only the entity written), and what they grant once {@link AdminAuth} has checked them
     * (null when absent or not valid).
     */
    record Supplementary(String forwardToHeader, String forwardDeadLetterHeader, Grant forwardTo,
                         Grant forwardDeadLetter) {
        static final Supplementary NONE = new Supplementary(null, null, null, null);
    }

    AdminRequest {
        method = method.toUpperCase(Locale.ROOT);
        TreeMap<String, String> q = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        q.putAll(query);
        query = Collections.unmodifiableMap(q);
        body = body == null ? new byte[0] : body;
        supplementary = supplementary == null ? Supplementary.NONE : supplementary;
    }

    AdminRequest(String method, String rawPath, AdminPath path, Map<String, String> query, String authorization,
                 String ifMatch, byte[] body, String scheme, String host) {
        this(method, rawPath, path, query, authorization, ifMatch, body, scheme, host, null, null);
    }

    /** This request, authorised with {@code g}. */
    AdminRequest authorised(Grant g) {
        return new AdminRequest(method, rawPath, path, query, authorization, ifMatch, body, scheme, host, g,
                supplementary);
    }

    /** This request with {@code s} as its supplementary tokens. */
    AdminRequest withSupplementary(Supplementary s) {
        return new AdminRequest(method, rawPath, path, query, authorization, ifMatch, body, scheme, host, grant, s);
    }

    String queryParam(String name) {
        return query.get(name);
    }

    String apiVersion() {
        return query.get("api-version");
    }

    /** {@code scheme://host}: the base of the URIs in ATOM ids and links. */
    String baseUri() {
        return scheme + "://" + host;
    }

    /** A link to {@code relativePath} (no leading slash) carrying this request's api-version. */
    String link(String relativePath) {
        String v = apiVersion();
        return baseUri() + "/" + relativePath + (v == null ? "" : "?api-version=" + v);
    }

    /**
     * The absolute URL by which the service names an entity of this namespace in {@code ForwardTo} and
     * {@code ForwardDeadLetteredMessagesTo}: {@code https://{host}/{entity}}, the host as addressed without a port
     * (what the Java and JavaScript SDKs send and compare against: {@code https://} and the namespace's host).
     */
    String entityUrl(String entityName) {
        return "https://" + hostName() + "/" + entityName;
    }

    /** The host without a port ({@code [::1]} keeps its brackets). */
    String hostName() {
        String h = host;
        if (h.startsWith("[")) {
            int close = h.indexOf(']');
            return close > 0 ? h.substring(0, close + 1) : h;
        }
        int colon = h.lastIndexOf(':');
        return colon >= 0 ? h.substring(0, colon) : h;
    }

    /**
     * The namespace name the service would report: the first label of the host name, or the whole host when it is
     * an IP address or a single label ({@code localhost}).
     */
    String namespaceName() {
        String h = host;
        if (h.startsWith("[")) {
            int close = h.indexOf(']');
            return close > 0 ? h.substring(0, close + 1) : h;
        }
        int colon = h.lastIndexOf(':');
        if (colon >= 0) {
            h = h.substring(0, colon);
        }
        if (h.chars().noneMatch(Character::isLetter)) {
            return h;
        }
        int dot = h.indexOf('.');
        return dot > 0 ? h.substring(0, dot) : h;
    }
}
