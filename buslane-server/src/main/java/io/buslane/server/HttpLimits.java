package io.buslane.server;

/**
 * What the HTTP and HTTPS ports let connections hold (docs/limits.md#http).
 *
 * @param maxConnections connections open at once on one port ({@code --http-max-connections})
 * @param idleTimeoutMs  how long a connection may have no request in flight, since it opened or its last response
 *                       ended ({@code --http-idle-timeout}, seconds): also how long a request's headers may take
 */
public record HttpLimits(int maxConnections, long idleTimeoutMs) {

    /** 1,000 connections, 30 seconds. */
    public static final HttpLimits DEFAULTS = new HttpLimits(1_000, 30_000);

    public HttpLimits {
        if (maxConnections < 1) {
            throw new IllegalArgumentException("--http-max-connections must be at least 1, was " + maxConnections);
        }
        if (idleTimeoutMs < 1_000) {
            throw new IllegalArgumentException("--http-idle-timeout must be at least 1 second, was "
                    + idleTimeoutMs + " ms");
        }
    }
}
