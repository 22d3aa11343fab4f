package io.buslane.management.rest;

import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.AuthThrottledException;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.management.HttpGuard;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Failures of the runtime REST API as the service reports them: {@code <Error><Code>410</Code><Detail>...</Detail>
 * </Error>} with the documented status: 410 for a queue, topic or subscription that does not exist, 404 for a
 * lock that is not (or no longer) held, 401 for authorisation failures, 429 (with {@code Retry-After}) for an address
 * throttled after too many of them, 400 for malformed requests, 403 for a message over the entity's size limit or a
 * full entity; otherwise the status of the broker's error table.
 */
final class RestErrors {

    private static final Logger LOG = LoggerFactory.getLogger(RestErrors.class);
    static final String CONTENT_TYPE = "application/xml;charset=utf-8";

    private RestErrors() {
    }

    /** The status for a failure of a REST data-plane operation. */
    static int status(Throwable t) {
        Throwable e = unwrap(t);
        if (e instanceof AuthException a) {
            return a.statusCode();
        }
        if (e instanceof AuthThrottledException) {
            return AuthThrottledException.STATUS;
        }
        if (e instanceof BrokerException b) {
            return switch (b.kind()) {
                case ENTITY_NOT_FOUND -> 410;
                case MESSAGE_LOCK_LOST, MESSAGE_NOT_FOUND -> 404;
                default -> b.kind().httpStatus();
            };
        }
        if (e instanceof IllegalArgumentException) {
            return 400;
        }
        return 500;
    }

    static String detail(Throwable t) {
        Throwable e = unwrap(t);
        if (e instanceof AuthException a) {
            return a.description();
        }
        if (e instanceof AuthThrottledException throttled) {
            return throttled.description();
        }
        if (e instanceof BrokerException b) {
            return b.description();
        }
        if (e instanceof IllegalArgumentException) {
            return e.getMessage();
        }
        return "The request could not be processed: " + e;
    }

    static Throwable unwrap(Throwable t) {
        Throwable e = t;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /** Answers the request with the failure (on the request's event loop). */
    static void write(RoutingContext ctx, Throwable t, long nowMs) {
        Throwable e = unwrap(t);
        int status = status(e);
        if (status >= 500 && !(e instanceof BrokerException b && b.kind() != ErrorKind.INTERNAL)) {
            LOG.error("REST request {} {} failed", ctx.request().method(), ctx.request().path(), e);
        }
        if (e instanceof AuthThrottledException throttled) {
            HttpGuard.retryAfter(ctx.response(), throttled);
        }
        write(ctx, status, detail(e), nowMs);
    }

    static void write(RoutingContext ctx, int status, String detail, long nowMs) {
        HttpServerResponse res = ctx.response();
        if (res.ended() || res.closed()) {
            return;
        }
        String full = detail + " TrackingId:" + UUID.randomUUID() + ", SystemTracker:" + ctx.request().path()
                + ", Timestamp:" + RestProperties.formatDate(nowMs);
        String xml = "<Error><Code>" + status + "</Code><Detail>" + escape(full) + "</Detail></Error>";
        res.setStatusCode(status).putHeader("Content-Type", CONTENT_TYPE).end(xml);
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                default -> {
                    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                        b.append(' ');
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }
}
