package io.buslane.management.atom;

import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.AuthThrottledException;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.management.HttpGuard;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.util.HashMap;
import java.util.Map;

/**
 * Mounts the ATOM entity management API on a Vert.x {@link Router}: one fallback route that comes after every
 * other route of the router (whatever their registration order), so {@code /health} and any later endpoint keep
 * their paths and every other path is an entity path, as on the service. The SAS token is validated when the
 * request's headers arrive, so a request without a valid one is answered (401, or 429 while its address is
 * throttled, see {@link HttpGuard}) before any of its body is read; the rights it grants are checked with the
 * request. Requests are handled on Vert.x worker threads (entity changes are synced to disk) and answered on the
 * event loop.
 */
public final class AdminApi {

    /** The route order: after every route registered in the usual way. */
    static final int ROUTE_ORDER = 1_000_000;
    /** Descriptions are small; a body above this is refused with 413. */
    static final long MAX_BODY_BYTES = 1024 * 1024;

    private AdminApi() {
    }

    /**
     * Mounts the API.
     *
     * @param router    the HTTP port's router
     * @param engine    the engine whose namespace is managed
     * @param validator validates {@code Authorization} headers ({@link SasValidator#acceptAll()} accepts anything)
     * @param clock     for token expiry and timestamps
     */
    public static void mount(Router router, HttpGuard guard, Engine engine, SasValidator validator, Clock clock) {
        AdminService service = new AdminService(engine, validator, clock);
        // a route of its own: Vert.x wants a route's body handler before its other handlers
        router.route().order(ROUTE_ORDER - 1).handler(ctx -> authenticate(ctx, guard, validator, clock));
        router.route().order(ROUTE_ORDER)
                .handler(BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES))
                .handler(ctx -> handle(ctx, service, clock));
    }

    /** Validates the token before the body is read; the service checks its rights with the whole request. */
    private static void authenticate(RoutingContext ctx, HttpGuard guard, SasValidator validator, Clock clock) {
        try {
            guard.validate(validator, ctx.request());
        } catch (AuthException | AuthThrottledException e) {
            HttpGuard.refuseBeforeBody(ctx.request());
            if (e instanceof AuthThrottledException t) {
                HttpGuard.retryAfter(ctx.response(), t);
            }
            AdminRequest request;
            try {
                request = request(ctx);
            } catch (RuntimeException invalidPathOrQuery) {
                request = null; // the error then has no tracker
            }
            write(ctx, AdminErrors.of(e, request, clock.epochMillis()));
            return;
        }
        ctx.next();
    }

    private static void handle(RoutingContext ctx, AdminService service, Clock clock) {
        AdminRequest request;
        try {
            request = request(ctx);
        } catch (IllegalArgumentException e) {
            write(ctx, AdminErrors.error(400, e.getMessage(), null, clock.epochMillis()));
            return;
        }
        ctx.vertx().executeBlocking(() -> service.handle(request), false).onComplete(result -> write(ctx,
                result.succeeded() ? result.result()
                        : AdminErrors.of(result.cause(), request, clock.epochMillis())));
    }

    private static AdminRequest request(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        String rawPath = req.path() == null ? "/" : req.path();
        AdminPath path = AdminPath.parse(rawPath);
        Map<String, String> query = new HashMap<>();
        ctx.queryParams().forEach(e -> query.putIfAbsent(e.getKey(), e.getValue()));
        String host = req.getHeader("Host");
        if (host == null || host.isBlank()) {
            host = req.authority() != null ? req.authority().toString() : "localhost";
        }
        byte[] body = ctx.body() == null || ctx.body().buffer() == null ? new byte[0]
                : ctx.body().buffer().getBytes();
        return new AdminRequest(req.method().name(), rawPath, path, query, req.getHeader("Authorization"),
                req.getHeader("If-Match"), body, req.scheme() == null ? "http" : req.scheme(), host)
                .withSupplementary(new AdminRequest.Supplementary(
                        req.getHeader("ServiceBusSupplementaryAuthorization"),
                        req.getHeader("ServiceBusDlqSupplementaryAuthorization"), null, null));
    }

    private static void write(RoutingContext ctx, AdminResponse response) {
        HttpServerResponse res = ctx.response();
        if (res.ended() || res.closed()) {
            return;
        }
        res.setStatusCode(response.status());
        if (response.body() == null) {
            res.end();
        } else {
            res.putHeader("Content-Type", response.contentType()).end(response.body());
        }
    }
}
