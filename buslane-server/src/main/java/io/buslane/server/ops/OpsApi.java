package io.buslane.server.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.AuthThrottledException;
import io.buslane.common.auth.Grant;
import io.buslane.common.auth.Right;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.api.EntityAddress;
import io.buslane.management.HttpGuard;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.Callable;

/**
 * The operations endpoints on the HTTP port, next to {@code /health} and the ATOM management API (which owns every
 * other path; entity names cannot contain {@code $}, so {@code /$admin/...} never collides with one):
 * <ul>
 *   <li>{@code GET /metrics}: Prometheus text format, unauthenticated (as scrape targets usually are);</li>
 *   <li>{@code POST /$admin/purge/{entity path}}: empties a queue, subscription, topic or one sub-queue;</li>
 *   <li>{@code POST /$admin/reset}: deletes every entity and re-creates the configured topology.</li>
 * </ul>
 * The {@code /$admin} operations need a SAS token with the Manage right in {@code Authorization}, as the
 * management API does (a purge token may be scoped to the entity; a reset token must cover the namespace), and
 * answer JSON: the result, or {@code {"error":{"code":..,"message":..}}}. Failed tokens count against the remote
 * address like on the other HTTP APIs ({@link HttpGuard}: 429 with {@code Retry-After} once it is throttled), and
 * client mistakes answer 4xx without logging an error. Work runs on Vert.x worker threads.
 */
public final class OpsApi {

    private static final Logger LOG = LoggerFactory.getLogger(OpsApi.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String PURGE_PREFIX = "/$admin/purge/";

    private OpsApi() {
    }

    /**
     * Mounts the routes.
     *
     * @param router    the HTTP port's router
     * @param metrics   the registry scraped by {@code /metrics}
     * @param ops       purge and reset
     * @param validator validates {@code Authorization} headers ({@link SasValidator#acceptAll()} accepts anything)
     * @param clock     for token expiry and the failed-authentication throttle
     */
    public static void mount(Router router, HttpGuard guard, BrokerMetrics metrics, NamespaceOps ops,
                             SasValidator validator, Clock clock) {
        guard.errorFormat("/$admin/", OpsApi::error);
        router.get("/metrics").handler(ctx -> ctx.vertx().executeBlocking(metrics::scrape, false)
                .onComplete(r -> {
                    if (r.succeeded()) {
                        ctx.response().putHeader("content-type", BrokerMetrics.CONTENT_TYPE).end(r.result());
                    } else {
                        LOG.warn("Metrics scrape failed", r.cause());
                        error(ctx, 500, "The metrics could not be collected: " + r.cause());
                    }
                }));
        router.post("/$admin/reset").handler(ctx -> run(ctx, () -> {
            authorize(guard.validate(validator, ctx.request()), "");
            NamespaceOps.ResetResult r = ops.reset();
            ObjectNode body = JSON.createObjectNode();
            ObjectNode deleted = body.putObject("deleted");
            deleted.put("queues", r.deletedQueues());
            deleted.put("topics", r.deletedTopics());
            ObjectNode now = body.putObject("entities");
            now.put("queues", r.queues());
            now.put("topics", r.topics());
            now.put("subscriptions", r.subscriptions());
            return body;
        }));
        router.post("/$admin/purge/*").handler(ctx -> run(ctx, () -> {
            Grant grant = guard.validate(validator, ctx.request());
            String path = entityPath(ctx);
            EntityAddress address = EntityAddress.parse(path);
            authorize(grant, address == null ? "" : address.entityName());
            NamespaceOps.PurgeResult r = ops.purge(path);
            ObjectNode body = JSON.createObjectNode();
            body.put("entity", r.entity());
            body.put("purged", r.purged());
            body.put("active", r.active());
            body.put("deadLetter", r.deadLetter());
            body.put("transferDeadLetter", r.transferDeadLetter());
            body.put("scheduled", r.scheduled());
            return body;
        }));
        // anything else under /$admin is ours, not an entity path for the ATOM API
        router.route("/$admin/*").handler(ctx -> error(ctx, 404, "No operation at " + ctx.request().method() + " "
                + ctx.request().path() + "; use POST /$admin/purge/{entity} or POST /$admin/reset."));
    }

    /**
     * The purge path's entity, read once by the canonical address parser (each segment decoded once), in its
     * canonical form: what is authorised and what is purged are the same parse ({@code ""} for none).
     *
     * @throws BrokerException ARGUMENT (400) when the path does not canonicalise
     */
    private static String entityPath(RoutingContext ctx) {
        String raw = ctx.request().path();
        String rest = raw.length() > PURGE_PREFIX.length() ? raw.substring(PURGE_PREFIX.length()) : "";
        EntityAddress address = EntityAddress.of(CanonicalAddress.parseHttpPath(rest));
        return address == null ? "" : address.toString();
    }

    private static void authorize(Grant grant, String target) {
        if (!grant.has(Right.MANAGE)) {
            throw new AuthException("Unauthorized: the rule '" + grant.keyName()
                    + "' does not grant the Manage right, which the admin operations require.");
        }
        if (!grant.covers(target)) {
            throw new AuthException("InvalidAudience: the token's signed resource does not cover '"
                    + (target.isEmpty() ? "the namespace" : target) + "'.");
        }
    }

    private static void run(RoutingContext ctx, Callable<ObjectNode> work) {
        ctx.vertx().executeBlocking(work, false).onComplete(r -> {
            if (r.succeeded()) {
                ctx.response().setStatusCode(200).putHeader("content-type", "application/json")
                        .end(r.result().toString());
                return;
            }
            Throwable t = r.cause();
            if (t instanceof AuthException e) {
                error(ctx, e.statusCode(), e.description());
            } else if (t instanceof AuthThrottledException e) {
                HttpGuard.retryAfter(ctx.response(), e);
                error(ctx, AuthThrottledException.STATUS, e.description());
            } else if (t instanceof BrokerException e) {
                if (e.kind() == ErrorKind.INTERNAL) {
                    LOG.warn("{} {} failed", ctx.request().method(), ctx.request().path(), e);
                }
                error(ctx, e.kind().httpStatus(), e.description());
            } else if (t instanceof IllegalArgumentException e) {
                error(ctx, 400, e.getMessage());
            } else {
                LOG.error("{} {} failed", ctx.request().method(), ctx.request().path(), t);
                error(ctx, 500, "The request could not be processed: " + t);
            }
        });
    }

    private static void error(RoutingContext ctx, int status, String message) {
        if (ctx.response().ended() || ctx.response().closed()) {
            return;
        }
        ObjectNode body = JSON.createObjectNode();
        ObjectNode error = body.putObject("error");
        error.put("code", status);
        error.put("message", message);
        ctx.response().setStatusCode(status).putHeader("content-type", "application/json").end(body.toString());
    }
}
