package io.buslane.management.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.AuthThrottledException;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.management.HttpGuard;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * Mounts the web console on the HTTP port's router: the static front end at {@code /console/} (and a redirect from
 * {@code /} for browsers) and its JSON API at {@code /console/api/}. API calls run on Vert.x worker threads.
 *
 * <p>Bodies are read only once a request may send one: a log-in from a throttled address (see {@link HttpGuard}) is
 * refused with 429 before its (small) body is read, and the other POST calls are authorised when their headers
 * arrive, so an unauthorised request is answered with 401 before any of its body is buffered.
 */
public final class ConsoleApi {

    private static final Logger LOG = LoggerFactory.getLogger(ConsoleApi.class);

    static final String API = "/console/api";
    static final long MAX_BODY_BYTES = 2L * 1024 * 1024;
    /** A log-in body is a key name and a key. */
    static final long MAX_LOGIN_BODY_BYTES = 16 * 1024;
    private static final String CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; "
            + "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

    private final ConsoleService service;
    private final ConsoleSessions sessions;
    private final HttpGuard guard;
    private final ObjectMapper json = new ObjectMapper();

    private ConsoleApi(Engine engine, SasValidator validator, Clock clock, HttpGuard guard) {
        this.service = new ConsoleService(engine, clock, json);
        this.sessions = new ConsoleSessions(validator, clock, guard.throttle());
        this.guard = guard;
    }

    /**
     * Mounts the console. Its routes are ordinary ones, so they come before the admin API's fallback route.
     *
     * @param validator checks log-ins and {@code Authorization} headers ({@link SasValidator#acceptAll()} opens it)
     */
    public static void mount(Router router, HttpGuard guard, Engine engine, SasValidator validator, Clock clock) {
        mount(router, guard, engine, validator, clock, null);
    }

    /**
     * Mounts the console of a cluster node: as {@link #mount(Router, Engine, SasValidator, Clock)}, and
     * {@code GET /console/api/cluster} shows the nodes and who serves which shard.
     *
     * @param cluster the cluster as this node sees it, or null for a single broker
     */
    public static void mount(Router router, HttpGuard guard, Engine engine, SasValidator validator, Clock clock,
                             ClusterView cluster) {
        ConsoleApi api = new ConsoleApi(engine, validator, clock, guard);
        guard.errorFormat(API + "/", (ctx, status, message) -> api.writeError(ctx, status,
                HttpGuard.reason(status).replace(" ", ""), message));
        router.get("/").handler(ctx -> {
            String accept = ctx.request().getHeader("Accept");
            if (accept != null && accept.contains("text/html")) {
                ctx.redirect("/console/");
            } else {
                ctx.next(); // not a browser: the admin API answers as the service does
            }
        });
        router.get("/console").handler(ctx -> {
            if ("/console".equals(ctx.request().path())) {
                ctx.redirect("/console/");
            } else {
                ctx.next(); // Vert.x also matches "/console/" here
            }
        });
        router.route(API + "/*").handler(ctx -> {
            ctx.response().putHeader("Cache-Control", "no-store").putHeader("X-Content-Type-Options", "nosniff");
            ctx.next();
        });
        // checks before a body is read are routes of their own: Vert.x wants a route's body handler first
        router.post(API + "/login").handler(BodyHandler.create(false).setBodyLimit(MAX_LOGIN_BODY_BYTES))
                .handler(api::login);
        router.post(API + "/logout").handler(api::logout);
        router.get(API + "/whoami").handler(ctx -> api.run(ctx, () -> {
            ObjectNode out = api.json.createObjectNode();
            out.put("keyName", api.sessions.authorize(api.cookie(ctx), ctx.request().getHeader("Authorization"),
                    HttpGuard.remote(ctx.request())));
            out.put("open", api.sessions.open());
            return out;
        }));
        router.get(API + "/namespace").handler(ctx -> api.authorized(ctx, api.service::namespace));
        router.get(API + "/cluster").handler(ctx -> api.authorized(ctx, () -> api.service.cluster(cluster)));
        router.get(API + "/messages").handler(ctx -> api.authorized(ctx, () -> api.service.browse(
                ctx.request().getParam("entity"), ctx.request().getParam("subQueue"),
                number(ctx.request().getParam("from"), 0), (int) number(ctx.request().getParam("max"), 50))));
        router.get(API + "/sessions").handler(ctx -> api.authorized(ctx,
                () -> api.service.sessions(ctx.request().getParam("entity"))));
        api.postVoid(router, "entities/create", api.service::create);
        api.postVoid(router, "entities/delete", api.service::delete);
        api.post(router, "send", api.service::send);
        api.postVoid(router, "cancel-scheduled", api.service::cancelScheduled);
        api.postVoid(router, "dead-letter", api.service::deadLetter);
        api.post(router, "resubmit", api.service::resubmit);
        api.postVoid(router, "delete-message", api.service::deleteMessage);
        api.post(router, "purge", api.service::purge);
        router.route(API + "/*").handler(ctx -> api.writeError(ctx, 404, "NotFound", "No such console API call."));
        router.route("/console/*").handler(ctx -> {
            ctx.response().putHeader("Content-Security-Policy", CSP).putHeader("X-Frame-Options", "DENY")
                    .putHeader("X-Content-Type-Options", "nosniff").putHeader("Referrer-Policy", "no-referrer");
            ctx.next();
        });
        router.route("/console/*").handler(StaticHandler.create("console").setCachingEnabled(false)
                .setDefaultContentEncoding("UTF-8").setIndexPage("index.html"));
    }

    private interface JsonCall {
        Object call(JsonNode body);
    }

    private interface VoidJsonCall {
        void call(JsonNode body);
    }

    /**
     * A POST taking a JSON object; CSRF-safe: needs an application/json body, which forms cannot send. Authorised
     * before its body is read.
     */
    private void post(Router router, String name, JsonCall call) {
        router.post(API + "/" + name).handler(this::authorizedBeforeBody);
        router.post(API + "/" + name).handler(BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES)).handler(ctx -> {
            JsonNode body;
            try {
                body = jsonBody(ctx);
            } catch (BrokerException e) {
                writeError(ctx, 400, "BadRequest", e.getMessage());
                return;
            }
            authorized(ctx, () -> call.call(body));
        });
    }

    /** A {@link #post} for a call that returns nothing: answered as a call returning null. */
    private void postVoid(Router router, String name, VoidJsonCall call) {
        post(router, name, body -> {
            call.call(body);
            return null;
        });
    }

    private JsonNode jsonBody(RoutingContext ctx) {
        String type = ctx.request().getHeader("Content-Type");
        if (type == null || !type.toLowerCase(Locale.ROOT).startsWith("application/json")) {
            throw new BrokerException(ErrorKind.ARGUMENT, "The request body must be application/json.");
        }
        try {
            JsonNode node = ctx.body() == null || ctx.body().buffer() == null ? null
                    : json.readTree(ctx.body().buffer().getBytes());
            if (node == null || !node.isObject()) {
                throw new BrokerException(ErrorKind.ARGUMENT, "The request body must be a JSON object.");
            }
            return node;
        } catch (IOException e) {
            throw new BrokerException(ErrorKind.ARGUMENT, "The request body is not valid JSON.");
        }
    }

    /** Checks the session or Authorization header when the headers arrive (cheap: a lookup or one HMAC). */
    private void authorizedBeforeBody(RoutingContext ctx) {
        try {
            sessions.authorize(cookie(ctx), ctx.request().getHeader("Authorization"), HttpGuard.remote(ctx.request()));
        } catch (AuthException | AuthThrottledException e) {
            HttpGuard.refuseBeforeBody(ctx.request());
            fail(ctx, e);
            return;
        }
        ctx.next();
    }

    private void login(RoutingContext ctx) {
        JsonNode body;
        try {
            body = jsonBody(ctx);
        } catch (BrokerException e) {
            writeError(ctx, 400, "BadRequest", e.getMessage());
            return;
        }
        String keyName = body.path("keyName").asText(null);
        String key = body.path("key").asText(null);
        // runs on a worker: the key comparison is cheap, but keep the event loop free of anything per request
        String remote = HttpGuard.remote(ctx.request());
        ctx.vertx().executeBlocking(() -> sessions.login(keyName, key, remote), false).onComplete(r -> {
            if (r.failed()) {
                fail(ctx, r.cause());
                return;
            }
            Cookie cookie = Cookie.cookie(ConsoleSessions.COOKIE, r.result()).setPath("/console")
                    .setHttpOnly(true).setSameSite(CookieSameSite.STRICT)
                    .setMaxAge(ConsoleSessions.SESSION_MILLIS / 1000);
            if ("https".equals(ctx.request().scheme())) {
                cookie.setSecure(true);
            }
            ctx.response().addCookie(cookie);
            ObjectNode out = json.createObjectNode();
            out.put("keyName", keyName);
            writeJson(ctx, 200, out);
        });
    }

    private void logout(RoutingContext ctx) {
        sessions.logout(cookie(ctx));
        ctx.response().addCookie(Cookie.cookie(ConsoleSessions.COOKIE, "").setPath("/console").setHttpOnly(true)
                .setSameSite(CookieSameSite.STRICT).setMaxAge(0));
        ctx.response().setStatusCode(204).end();
    }

    private String cookie(RoutingContext ctx) {
        Cookie c = ctx.request().getCookie(ConsoleSessions.COOKIE);
        return c == null || c.getValue().isEmpty() ? null : c.getValue();
    }

    private void authorized(RoutingContext ctx, Callable<Object> work) {
        String cookie = cookie(ctx);
        String authorization = ctx.request().getHeader("Authorization");
        String remote = HttpGuard.remote(ctx.request());
        run(ctx, () -> {
            sessions.authorize(cookie, authorization, remote);
            return work.call();
        });
    }

    private void run(RoutingContext ctx, Callable<Object> work) {
        ctx.vertx().executeBlocking(work, false).onComplete(r -> {
            if (r.failed()) {
                fail(ctx, r.cause());
            } else if (r.result() == null) {
                if (!ctx.response().ended()) {
                    ctx.response().setStatusCode(204).end();
                }
            } else {
                writeJson(ctx, 200, r.result());
            }
        });
    }

    private void fail(RoutingContext ctx, Throwable cause) {
        if (cause instanceof AuthException a) {
            writeError(ctx, a.statusCode(), a.statusCode() == 401 ? "Unauthorized" : "BadRequest", a.getMessage());
        } else if (cause instanceof AuthThrottledException t) {
            HttpGuard.retryAfter(ctx.response(), t);
            writeError(ctx, AuthThrottledException.STATUS, "TooManyRequests", t.description());
        } else if (cause instanceof BrokerException b) {
            writeError(ctx, b.kind().httpStatus(), b.kind().name(), b.getMessage());
        } else if (cause instanceof IllegalArgumentException e) {
            writeError(ctx, 400, ErrorKind.ARGUMENT.name(), e.getMessage());
        } else {
            LOG.error("Console API call {} failed", ctx.request().path(), cause);
            writeError(ctx, 500, ErrorKind.INTERNAL.name(), "Internal error: " + cause);
        }
    }

    private void writeError(RoutingContext ctx, int status, String code, String message) {
        ObjectNode out = json.createObjectNode();
        out.put("error", code);
        out.put("message", message);
        writeJson(ctx, status, out);
    }

    private void writeJson(RoutingContext ctx, int status, Object value) {
        if (ctx.response().ended() || ctx.response().closed()) {
            return;
        }
        String text;
        try {
            text = json.writeValueAsString(value);
        } catch (Exception e) {
            status = 500;
            text = "{\"error\":\"INTERNAL\",\"message\":\"Could not write the reply.\"}";
        }
        ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json; charset=utf-8")
                .end(text);
    }

    private static long number(String value, long fallback) {
        if (value == null || value.isEmpty()) {
            return fallback;
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new BrokerException(ErrorKind.ARGUMENT, "'" + value + "' is not a whole number.");
        }
    }

}
