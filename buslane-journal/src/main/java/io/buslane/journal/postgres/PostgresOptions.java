package io.buslane.journal.postgres;

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
     * URL is accepted too. HOST:PORT may be a comma-separated list ({@code h1:5432,h2:5432}, pgjdbc's form for a
     * highly available PostgreSQL): pgjdbc then connects to the first that answers as the server type that
     * {@code targetServerType} asks for ({@code primary} follows a failover to the promoted standby).
     *
     * @throws IllegalArgumentException with what is wrong, never echoing the password
     */
    public static PostgresOptions parse(String url, String nodeId, Duration lease, Path cacheDir) {
        Objects.requireNonNull(url, "url");
        String u = url.startsWith("jdbc:") ? url.substring(5) : url;
        int schemeEnd = u.indexOf("://");
        if (schemeEnd <= 0) {
            throw new IllegalArgumentException("the storage URL is not a URL (expected postgresql://USER:PASSWORD@HOST"
                    + ":PORT/DATABASE): " + redact(url));
        }
        String scheme = u.substring(0, schemeEnd);
        if (!"postgresql".equals(scheme) && !"postgres".equals(scheme)) {
            throw new IllegalArgumentException("unsupported storage '" + scheme + "': only postgresql://USER:PASSWORD"
                    + "@HOST:PORT/DATABASE is known (without --storage the broker keeps its files in --data-dir)");
        }
        String rest = u.substring(schemeEnd + 3);
        int authorityEnd = indexOfAny(rest, "/?#");
        String authority = rest.substring(0, authorityEnd);
        String tail = rest.substring(authorityEnd);
        int at = authority.lastIndexOf('@');
        String info = at < 0 ? null : authority.substring(0, at);
        String hosts = hostList(authority.substring(at + 1), url);
        int queryStart = indexOfAny(tail, "?#");
        String path = tail.substring(0, queryStart);
        if (path.length() <= 1 || path.indexOf('/', 1) >= 0) {
            throw new IllegalArgumentException("the storage URL names no database (postgresql://USER:PASSWORD@HOST:"
                    + "PORT/DATABASE): " + redact(url));
        }
        String afterPath = tail.substring(queryStart);
        String query = afterPath.startsWith("?") ? afterPath.substring(1).split("#", 2)[0] : "";
        String user = null;
        String password = null;
        if (info != null) {
            int colon = info.indexOf(':');
            user = decode(colon < 0 ? info : info.substring(0, colon));
            password = colon < 0 ? null : decode(info.substring(colon + 1));
        }
        String jdbc = "jdbc:postgresql://" + hosts + path + (query.isEmpty() ? "" : "?" + query);
        return new PostgresOptions(jdbc, user, password, nodeId, lease, cacheDir);
    }

    /** {@code h1:p1,h2,[::1]:p3} as pgjdbc takes it, every host with its port (5432 when none is given). */
    private static String hostList(String hosts, String url) {
        StringBuilder out = new StringBuilder();
        for (String one : hosts.split(",", -1)) {
            String host;
            String port;
            if (one.startsWith("[")) {
                int close = one.indexOf(']');
                if (close < 0 || close + 1 < one.length() && one.charAt(close + 1) != ':') {
                    throw new IllegalArgumentException("the storage URL has a malformed IPv6 host: " + redact(url));
                }
                host = one.substring(0, close + 1);
                port = close + 1 < one.length() ? one.substring(close + 2) : "";
            } else {
                int colon = one.lastIndexOf(':');
                host = colon < 0 ? one : one.substring(0, colon);
                port = colon < 0 ? "" : one.substring(colon + 1);
            }
            if (host.isEmpty() || host.equals("[]")) {
                throw new IllegalArgumentException("the storage URL names no host: " + redact(url));
            }
            if (!port.isEmpty() && !isPort(port)) {
                throw new IllegalArgumentException("the storage URL has a port that is not a number from 1 to "
                        + "65535 (" + port + "): " + redact(url));
            }
            out.append(out.length() > 0 ? "," : "").append(host).append(':').append(port.isEmpty() ? "5432" : port);
        }
        return out.toString();
    }

    private static boolean isPort(String p) {
        return p.length() <= 5 && p.chars().allMatch(c -> c >= '0' && c <= '9') && Integer.parseInt(p) >= 1
                && Integer.parseInt(p) <= 65535;
    }

    private static int indexOfAny(String s, String chars) {
        for (int i = 0; i < s.length(); i++) {
            if (chars.indexOf(s.charAt(i)) >= 0) {
                return i;
            }
        }
        return s.length();
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
