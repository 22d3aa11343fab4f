package io.buslane.management;

import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.AuthFailureThrottle;
import io.buslane.common.auth.AuthThrottledException;
import io.buslane.common.auth.Grant;
import io.buslane.common.auth.SasToken;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What every HTTP API on one router shares: one object, made by the composition root for the router
 * ({@link #install}) and passed to every API it mounts there (no registry: what is shared is wired in sight):
 * <ul>
 *   <li>The failed-authentication throttle ({@link AuthFailureThrottle}): a remote address that presents too many
 *       wrong SAS tokens or console keys is refused with 429 and {@code Retry-After} for a while, whichever API it
 *       tries. A request without a credential is not an attempt and is not counted.</li>
 *   <li>The router's error handlers: a failure that reaches the router (a malformed percent-escape in the path, a
 *       form body the decoder refuses, a body over a {@code BodyHandler} limit) is answered with its 4xx status and
 *       a short message in the format of the API that owns the path ({@link #errorFormat}), and logged as one
 *       WARN line at most once a second per status, with a count of the lines held back. Only 5xx, which are the
 *       broker's own bugs, log at ERROR with a stack trace (rate-limited too).</li>
 *   <li>{@link #refuseBeforeBody}: answering a request before its body was read (401 at request start, 413 as soon
 *       as a body is too large) without buffering the body.</li>
 * </ul>
 * Thread-safe.
 */
public final class HttpGuard {

    private static final Logger LOG = LoggerFactory.getLogger(HttpGuard.class);
    /** After an early answer, this much more of the refused body is read and dropped before the connection closes. */
    static final long DRAIN_BYTES = 1024 * 1024;
    private static final int MAX_LOGGED_CHARS = 200;

    /** Writes an error in one API's format. */
    public interface ErrorWriter {
        void write(RoutingContext ctx, int status, String message);
    }

    private record Format(String pathPrefix, ErrorWriter writer) {
    }

    private final Clock clock;
    private final AuthFailureThrottle throttle;
    private final RateLimitedLog log;
    private final List<Format> formats = new CopyOnWriteArrayList<>();

    HttpGuard(Clock clock, AuthFailureThrottle throttle) {
        this.clock = clock;
        this.throttle = throttle;
        this.log = new RateLimitedLog(LOG, clock, RateLimitedLog.DEFAULT_INTERVAL_MS);
    }

    /**
     * A guard for the APIs mounted on {@code router}, which installs the router's error handlers: the composition
     * root makes one per router and passes it to every API it mounts there, so that they share one throttle.
     */
    public static HttpGuard install(Router router, Clock clock) {
        HttpGuard guard = new HttpGuard(clock, new AuthFailureThrottle());
        guard.install(router);
        return guard;
    }

    private void install(Router router) {
        for (int status = 400; status < 600; status++) {
            int code = status;
            router.errorHandler(code, ctx -> routerError(ctx, code));
        }
        // BodyHandler fails with 200 when the request stream breaks (the client went away mid-body)
        router.errorHandler(200, ctx -> routerError(ctx, 400));
    }

    /** The failed-authentication throttle shared by the router's APIs. */
    public AuthFailureThrottle throttle() {
        return throttle;
    }

    /** Now on the throttle's timeline: the clock's monotonic milliseconds. */
    public long nowMs() {
        return clock.monotonicNanos() / 1_000_000;
    }

    /** The key the throttle counts a request under: its remote host, or null when unknown. */
    public static String remote(HttpServerRequest request) {
        SocketAddress address = request.remoteAddress();
        return address == null ? null : address.hostAddress() != null ? address.hostAddress() : address.host();
    }

    /**
     * Validates a request's SAS token, throttled: a valid token is accepted; a presented token that is not valid
     * counts against its (address, key name) pair ({@link AuthFailureThrottle#key}), and is answered 429 instead of
     * 401 while that pair is blocked.
     *
     * @throws AuthThrottledException (429) for an invalid token while its pair is blocked
     * @throws AuthException          (401) when the token is missing or invalid
     */
    public Grant validate(SasValidator validator, String authorization, String remote) {
        try {
            return validator.validate(authorization, clock.epochMillis()); // a valid signature is never refused
        } catch (AuthException e) {
            if (authorization != null && !authorization.isBlank()) {
                long now = nowMs();
                String key = AuthFailureThrottle.key(remote, SasToken.keyNameOf(authorization));
                throttle.check(key, now);
                throttle.failed(key, now);
            }
            throw e;
        }
    }

    /** {@link #validate(SasValidator, String, String)} with the request's header and address. */
    public Grant validate(SasValidator validator, HttpServerRequest request) {
        return validate(validator, request.getHeader("Authorization"), remote(request));
    }

    /** Adds {@code Retry-After} for a throttled request. */
    public static void retryAfter(HttpServerResponse response, AuthThrottledException e) {
        if (!response.headWritten()) {
            response.putHeader("Retry-After", Long.toString(e.retryAfterSeconds()));
        }
    }

    /**
     * Answers errors on paths starting with {@code pathPrefix} in an API's own format; other paths get the
     * service's XML ({@code <Error><Code>..</Code><Detail>..</Detail></Error>}).
     */
    public void errorFormat(String pathPrefix, ErrorWriter writer) {
        formats.add(new Format(pathPrefix, writer));
    }

    /**
     * Prepares a request that is answered before its body was read (or while it is being read): the rest of the
     * body is read and dropped (never buffered), and the connection is closed once more than {@link #DRAIN_BYTES}
     * of it arrived, so a client that keeps sending cannot hold the connection. Call before writing the answer.
     */
    public static void refuseBeforeBody(HttpServerRequest request) {
        if (request.isEnded() || !mayHaveBody(request)) {
            return;
        }
        HttpServerResponse response = request.response();
        if (!response.headWritten()) {
            response.putHeader("Connection", "close");
        }
        long[] dropped = {0};
        request.exceptionHandler(t -> { });
        request.endHandler(v -> { });
        request.handler(chunk -> {
            dropped[0] += chunk.length();
            if (dropped[0] > DRAIN_BYTES) {
                request.handler(null);
                close(request);
            }
        });
        request.resume();
    }

    private static boolean mayHaveBody(HttpServerRequest request) {
        if (request.version() == HttpVersion.HTTP_2 || request.getHeader("Transfer-Encoding") != null) {
            return true;
        }
        String length = request.getHeader("Content-Length");
        return length != null && !length.trim().equals("0");
    }

    private static void close(HttpServerRequest request) {
        if (request.version() == HttpVersion.HTTP_2) {
            request.response().reset();
        } else if (request.connection() != null) {
            request.connection().close();
        }
    }

    /** Logs a client's mistake: one WARN line at most once a second per kind. */
    public void clientError(HttpServerRequest request, int status, String message) {
        log.warn("HTTP " + status, "HTTP " + status + " for " + request.method() + " " + oneLine(request.path())
                + " from " + remote(request) + ": " + oneLine(message));
    }

    // ============================================================================================ router failures

    private void routerError(RoutingContext ctx, int status) {
        HttpServerRequest request = ctx.request();
        Throwable failure = ctx.failure();
        if (failure instanceof NullPointerException && failure.getMessage() == null && ctx.statusCode() > 0) {
            failure = null; // fail(status, null): Vert.x's placeholder, not a bug
        }
        String message;
        if (status < 500) {
            message = clientMessage(status, failure, request.path());
            clientError(request, status, message);
        } else {
            message = "The request could not be processed.";
            log.error("HTTP " + status, "HTTP " + status + " for " + request.method() + " " + oneLine(request.path())
                    + " from " + remote(request) + ": " + (failure == null ? "no cause" : oneLine(failure.toString())),
                    failure);
        }
        HttpServerResponse response = ctx.response();
        if (response.ended() || response.closed()) {
            return;
        }
        if (!request.isEnded()) {
            refuseBeforeBody(request);
        }
        ErrorWriter writer = null;
        String path = request.path() == null ? "" : request.path();
        for (Format f : formats) {
            if (path.startsWith(f.pathPrefix())) {
                writer = f.writer();
                break;
            }
        }
        if (writer == null) {
            writeXml(ctx, status, message);
        } else {
            writer.write(ctx, status, message);
        }
    }

    private static String clientMessage(int status, Throwable failure, String path) {
        if (status == 413) {
            return "The request body is larger than this endpoint accepts.";
        }
        Throwable cause = failure;
        while (cause != null && cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        if (status == 400 && cause == null && path != null && !decodable(path)) {
            return "The path '" + path + "' has an invalid percent-encoding."; // the router could not match it
        }
        if (status == 400 && cause instanceof IllegalArgumentException) {
            return "The request URI is malformed: " + cause.getMessage();
        }
        String reason = reason(status);
        return cause == null || cause.getMessage() == null ? reason + "." : reason + ": " + cause.getMessage();
    }

    /** The reason phrase of a status the router answers (a short fallback for the rare others). */
    public static String reason(int status) {
        return switch (status) {
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 408 -> "Request Timeout";
            case 413 -> "Payload Too Large";
            case 414 -> "URI Too Long";
            case 415 -> "Unsupported Media Type";
            case 417 -> "Expectation Failed";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 503 -> "Service Unavailable";
            default -> status < 500 ? "Client Error" : "Server Error";
        };
    }

    private static boolean decodable(String path) {
        try {
            URLDecoder.decode(path.replace("+", "%2B"), StandardCharsets.UTF_8);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static void writeXml(RoutingContext ctx, int status, String message) {
        String xml = "<Error><Code>" + status + "</Code><Detail>" + escapeXml(oneLine(message)) + "</Detail></Error>";
        ctx.response().setStatusCode(status).putHeader("Content-Type", "application/xml;charset=utf-8").end(xml);
    }

    /** Text for one log line or one error message: control characters as spaces, at most 200 characters. */
    public static String oneLine(String text) {
        if (text == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(Math.min(text.length(), MAX_LOGGED_CHARS + 3));
        for (int i = 0; i < text.length() && b.length() < MAX_LOGGED_CHARS; i++) {
            char c = text.charAt(i);
            b.append(Character.isISOControl(c) || Character.getType(c) == Character.FORMAT ? ' ' : c);
        }
        if (text.length() > MAX_LOGGED_CHARS) {
            b.append("...");
        }
        return b.toString();
    }

    private static String escapeXml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
