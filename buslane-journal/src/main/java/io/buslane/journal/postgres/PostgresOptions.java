package io.buslane.journal.postgres;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Where and how the broker keeps its journals in PostgreSQL.
 *
 * @param jdbcUrl   the pgjdbc URL of the database (without user and password)
 * @param user      the database user (null: pgjdbc's default, the OS user)
 * @param password  the user's password (null: none)
 * @param nodeId    this broker's name in the ownership rows; a broker restarted with the same name takes its journals
 *                  back at once, another waits for their leases to expire
 * @param lease     how long a journal's ownership lasts without renewal (renewed by every commit and every third of
 *                  the lease)
 * @param cacheDir  a local directory for caches rebuilt on every start (null: keep them in the heap)
 */
public record PostgresOptions(String jdbcUrl, String user, String password, String nodeId, Duration lease,
                              Path cacheDir) {

    /**
     * How much of a lease a node uses: once the statement that last extended a journal's lease was sent longer ago
     * than this share of the lease, the node delivers nothing more from it and gives it up (another node can take it
     * only once the whole lease has run out, measured by the database). The rest is the margin for the two clocks'
     * rates and for a delivery already on its way.
     */
    public static final int SAFE_LEASE_PERCENT = 70;

    /** Default lease: a node that stops renewing loses its journals within this time. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    public PostgresOptions {
        Objects.requireNonNull(jdbcUrl, "jdbcUrl");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(lease, "lease");
        if (lease.toMillis() < 300) {
            throw new IllegalArgumentException("the lease must be at least 300 ms, was " + lease.toMillis() + " ms");
        }
    }

    /**
     * Parses Buslane's storage URL, {@code postgresql://USER:PASSWORD@HOST:PORT/DATABASE?PARAMS} (also
     * {@code postgres://}; the port defaults to 5432; percent-encoding is decoded in the user and the password; the
     * query parameters are handed to pgjdbc as they are, e.g. {@code sslmode=require}). A {@code jdbc:postgresql:}
     * URL is accepted too.
     *
     * @throws IllegalArgumentException with what is wrong, never echoing the password
     */
    public static PostgresOptions parse(String url, String nodeId, Duration lease, Path cacheDir) {
        Objects.requireNonNull(url, "url");
        String u = url.startsWith("jdbc:") ? url.substring(5) : url;
        URI uri;
        try {
            uri = new URI(u);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("the storage URL is not a URL (expected postgresql://USER:PASSWORD@HOST"
                    + ":PORT/DATABASE): " + redact(url));
        }
        String scheme = uri.getScheme();
        if (!"postgresql".equals(scheme) && !"postgres".equals(scheme)) {
            throw new IllegalArgumentException("unsupported storage '" + scheme + "': only postgresql://USER:PASSWORD"
                    + "@HOST:PORT/DATABASE is known (without --storage the broker keeps its files in --data-dir)");
        }
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("the storage URL names no host: " + redact(url));
        }
        String path = uri.getRawPath();
        if (path == null || path.length() <= 1) {
            throw new IllegalArgumentException("the storage URL names no database (postgresql://USER:PASSWORD@HOST:"
                    + "PORT/DATABASE): " + redact(url));
        }
        String user = null;
        String password = null;
        String info = uri.getRawUserInfo();
        if (info != null) {
            int colon = info.indexOf(':');
            user = decode(colon < 0 ? info : info.substring(0, colon));
            password = colon < 0 ? null : decode(info.substring(colon + 1));
        }
        int port = uri.getPort() < 0 ? 5432 : uri.getPort();
        String host = uri.getHost().contains(":") && !uri.getHost().startsWith("[") ? "[" + uri.getHost() + "]"
                : uri.getHost();
        String jdbc = "jdbc:postgresql://" + host + ":" + port + path
                + (uri.getRawQuery() != null ? "?" + uri.getRawQuery() : "");
        return new PostgresOptions(jdbc, user, password, nodeId, lease, cacheDir);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /**
     * The URL with every secret replaced by {@code ***}, for messages and logs: the password of the user-info and
     * the values of the query parameters that carry secrets in libpq and pgjdbc URLs ({@code password},
     * {@code sslpassword}, {@code sslkey}).
     */
    public static String redact(String url) {
        return url.replaceAll("(://[^:/@]*:)[^@/]*@", "$1***@")
                .replaceAll("(?i)([?&](?:password|sslpassword|sslkey)=)[^&#]*", "$1***");
    }

    /**
     * The database as logs show it: {@code host:port/database} only. Never the query (a libpq URL may carry
     * {@code ?password=}), never the user or the password (docs/security.md).
     */
    public String describe() {
        String rest = jdbcUrl.substring("jdbc:postgresql://".length());
        int query = rest.indexOf('?');
        return query < 0 ? rest : rest.substring(0, query);
    }
}
