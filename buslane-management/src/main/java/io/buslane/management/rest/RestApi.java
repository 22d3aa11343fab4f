package io.buslane.management.rest;

import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.Grant;
import io.buslane.common.auth.Right;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.EntityAddress;
import io.buslane.engine.ReceiveMode;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.vertx.core.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * The Service Bus runtime REST API (the data plane over HTTP), mounted on a Vert.x {@link Router}:
 * <ul>
 *   <li>{@code POST /{queue|topic}/messages}: send one message (body = payload, {@code BrokerProperties} JSON
 *       header, user properties as headers) or, with {@code Content-Type: application/vnd.microsoft.servicebus.json},
 *       a batch (JSON array of {@code {Body, BrokerProperties, UserProperties}}); 201</li>
 *   <li>{@code POST /{entity}/messages/head?timeout=s}: peek-lock; 201 with the message and a {@code Location}
 *       lock URI, 204 when none arrives within the timeout</li>
 *   <li>{@code DELETE /{entity}/messages/head?timeout=s}: receive-and-delete; 200 or 204</li>
 *   <li>{@code PUT|DELETE|POST /{entity}/messages/{messageId|sequenceNumber}/{lockToken}}: unlock, complete
 *       (delete), renew lock; 200</li>
 * </ul>
 * {@code {entity}} is a queue, {@code {topic}/subscriptions/{sub}}, or either's {@code /$DeadLetterQueue}.
 * Requests carry {@code Authorization: SharedAccessSignature ...}: sending needs Send, the rest Listen. The routes
 * are ordinary routes, so they take precedence over the ATOM fallback route; work is asynchronous (engine futures
 * complete on shard threads and are answered back on the request's event loop), nothing blocks an event loop.
 */
public final class RestApi {

    /** The content type of a batch send. */
    public static final String BATCH_CONTENT_TYPE = "application/vnd.microsoft.servicebus.json";
    /** A request body above this is refused with 413 before it reaches an entity (100 MB, Premium's ceiling). */
    public static final long DEFAULT_MAX_BODY_BYTES = 100L * 1024 * 1024 + 64 * 1024;
    /** How long a receive waits for a message when the request names no {@code timeout}. */
    static final int DEFAULT_TIMEOUT_SECONDS = 60;

    private static final String SEND_PATH = "(?i)^/.+/messages/?$";
    private static final String HEAD_PATH = "(?i)^/.+/messages/head/?$";
    private static final String LOCK_PATH = "(?i)^/.+/messages/[^/]+/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}"
            + "-[0-9a-f]{12}/?$";

    /** Schedules a receive's timeout; swapped in tests to fire timeouts without waiting. */
    interface Timeouts {
        /** Runs {@code task} on the current context after {@code delayMs}; returns a handle for {@link #cancel}. */
        long schedule(Vertx vertx, long delayMs, Runnable task);

        void cancel(Vertx vertx, long handle);

        Timeouts VERTX = new Timeouts() {
            @Override
            public long schedule(Vertx vertx, long delayMs, Runnable task) {
                return vertx.setTimer(Math.max(1, delayMs), id -> task.run());
            }

            @Override
            public void cancel(Vertx vertx, long handle) {
                vertx.cancelTimer(handle);
            }
        };
    }

    private final Engine engine;
    private final SasValidator validator;
    private final Clock clock;
    private final Timeouts timeouts;

    private RestApi(Engine engine, SasValidator validator, Clock clock, Timeouts timeouts) {
        this.engine = engine;
        this.validator = validator;
        this.clock = clock;
        this.timeouts = timeouts;
    }

    /**
     * Mounts the API. Call before (or after) {@code AdminApi.mount}: these routes are ordinary routes and the
     * ATOM API's is a fallback, so message paths reach this API either way.
     *
     * @param router    the HTTP port's router
     * @param engine    the engine holding the entities
     * @param validator validates {@code Authorization} headers ({@link SasValidator#acceptAll()} accepts anything)
     * @param clock     for token expiry and dates
     */
    public static void mount(Router router, Engine engine, SasValidator validator, Clock clock) {
        mount(router, engine, validator, clock, DEFAULT_MAX_BODY_BYTES, Timeouts.VERTX);
    }

    static void mount(Router router, Engine engine, SasValidator validator, Clock clock, long maxBodyBytes,
                      Timeouts timeouts) {
        RestApi api = new RestApi(engine, validator, clock, timeouts);
        BodyHandler body = BodyHandler.create(false).setBodyLimit(maxBodyBytes);
        router.routeWithRegex(HttpMethod.POST, SEND_PATH).handler(body).handler(api::send);
        router.routeWithRegex(HttpMethod.POST, HEAD_PATH).handler(ctx -> api.receive(ctx, ReceiveMode.PEEK_LOCK));
        router.routeWithRegex(HttpMethod.DELETE, HEAD_PATH)
                .handler(ctx -> api.receive(ctx, ReceiveMode.RECEIVE_AND_DELETE));
        router.routeWithRegex(LOCK_PATH).handler(api::lockOperation);
    }

    // ============================================================================================== paths and auth

    /** The raw path without the leading slash, the trailing slash and the {@code /messages...} suffix. */
    private static String rawEntity(String rawPath, String suffix) {
        String p = rawPath.startsWith("/") ? rawPath.substring(1) : rawPath;
        if (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p.regionMatches(true, p.length() - suffix.length(), suffix, 0, suffix.length())
                ? p.substring(0, p.length() - suffix.length()) : p;
    }

    static String decode(String raw) {
        try {
            return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("The path '" + raw + "' has an invalid percent-encoding.");
        }
    }

    private void authorize(HttpServerRequest req, Right right, String entity) {
        Grant grant = validator.validate(req.getHeader("Authorization"), clock.epochMillis());
        if (!grant.has(right)) {
            throw new AuthException("Unauthorized access. '" + right.displayName() + "' claim(s) are required to "
                    + "perform this operation. Resource: '" + entity + "'.");
        }
        if (!grant.covers(entity)) {
            throw new AuthException("InvalidAudience: The token's signed resource does not cover '" + entity
                    + "'.");
        }
    }

    private static EntityAddress address(String entity) {
        EntityAddress address = EntityAddress.parse(entity);
        if (address == null) {
            throw new IllegalArgumentException("The request names no queue or subscription.");
        }
        return address;
    }

    // ============================================================================================== send

    private void send(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        Context context = Vertx.currentContext();
        List<Message> messages;
        String entity;
        try {
            entity = decode(rawEntity(req.path(), "/messages"));
            authorize(req, Right.SEND, entity);
            Buffer body = ctx.body() == null ? null : ctx.body().buffer();
            byte[] bytes = body == null ? new byte[0] : body.getBytes();
            String contentType = req.getHeader("Content-Type");
            if (contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith(BATCH_CONTENT_TYPE)) {
                messages = batch(bytes);
            } else {
                messages = List.of(single(req.headers(), contentType, bytes));
            }
        } catch (RuntimeException e) {
            RestErrors.write(ctx, e, clock.epochMillis());
            return;
        }
        engine.send(entity, messages).whenComplete((v, failure) -> context.runOnContext(x -> {
            if (failure != null) {
                RestErrors.write(ctx, failure, clock.epochMillis());
            } else if (!ctx.response().ended()) {
                ctx.response().setStatusCode(201).end();
            }
        }));
    }

    private static Message single(MultiMap headers, String contentType, byte[] body) {
        Message.Builder b = Message.builder().body(body);
        if (contentType != null && !contentType.isBlank()) {
            b.contentType(contentType);
        }
        RestProperties.apply(RestProperties.parseBrokerProperties(headers.get("BrokerProperties")), b);
        b.applicationProperties(RestProperties.userProperties(headers));
        return b.build();
    }

    private static List<Message> batch(byte[] bytes) {
        JsonArray array;
        try {
            array = new JsonArray(Buffer.buffer(bytes));
        } catch (DecodeException | ClassCastException e) {
            throw new IllegalArgumentException("The batch body must be a JSON array of {\"Body\", "
                    + "\"BrokerProperties\", \"UserProperties\"} objects.");
        }
        if (array.isEmpty()) {
            throw new IllegalArgumentException("The batch contains no messages.");
        }
        List<Message> messages = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            if (!(array.getValue(i) instanceof JsonObject o)) {
                throw new IllegalArgumentException("Batch entry " + i + " is not a JSON object.");
            }
            Object bodyValue = o.getValue("Body");
            byte[] body = bodyValue == null ? new byte[0]
                    : (bodyValue instanceof String s ? s : bodyValue.toString()).getBytes(StandardCharsets.UTF_8);
            Message.Builder b = Message.builder().body(body);
            Object bp = o.getValue("BrokerProperties");
            if (bp != null) {
                if (!(bp instanceof JsonObject bpo)) {
                    throw new IllegalArgumentException("The BrokerProperties of batch entry " + i
                            + " must be a JSON object.");
                }
                RestProperties.apply(bpo, b);
            }
            Object up = o.getValue("UserProperties");
            if (up != null) {
                if (!(up instanceof JsonObject upo)) {
                    throw new IllegalArgumentException("The UserProperties of batch entry " + i
                            + " must be a JSON object.");
                }
                for (Map.Entry<String, Object> e : upo) {
                    if (e.getValue() != null) {
                        b.applicationProperty(e.getKey(), RestProperties.fromJson(e.getValue()));
                    }
                }
            }
            messages.add(b.build());
        }
        return messages;
    }

    // ============================================================================================== receive

    private void receive(RoutingContext ctx, ReceiveMode mode) {
        HttpServerRequest req = ctx.request();
        String rawEntity = rawEntity(req.path(), "/messages/head");
        int timeoutSeconds;
        EntityAddress address;
        try {
            String entity = decode(rawEntity);
            authorize(req, Right.LISTEN, entity);
            timeoutSeconds = timeout(req.getParam("timeout"));
            address = address(entity);
        } catch (RuntimeException e) {
            RestErrors.write(ctx, e, clock.epochMillis());
            return;
        }
        new RestReceive(this, ctx, address, mode, rawEntity).start(timeoutSeconds * 1000L);
    }

    static int timeout(String text) {
        if (text == null || text.isBlank()) {
            return DEFAULT_TIMEOUT_SECONDS;
        }
        try {
            int t = Integer.parseInt(text.trim());
            if (t < 0) {
                throw new NumberFormatException();
            }
            return t;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("The timeout '" + text + "' is invalid: it must be a whole number "
                    + "of seconds, 0 or more.");
        }
    }

    Engine engine() {
        return engine;
    }

    Clock clock() {
        return clock;
    }

    Timeouts timeouts() {
        return timeouts;
    }

    /** Answers a receive with the message: 201 and a lock URI for peek-lock, 200 for receive-and-delete. */
    static void writeMessage(RoutingContext ctx, ReceivedMessage r, ReceiveMode mode, String rawEntity) {
        HttpServerResponse res = ctx.response();
        if (res.ended() || res.closed()) {
            return;
        }
        Message m = r.message();
        res.setStatusCode(mode == ReceiveMode.PEEK_LOCK ? 201 : 200);
        res.putHeader("BrokerProperties", RestProperties.brokerProperties(r, true).encode());
        if (mode == ReceiveMode.PEEK_LOCK && r.lockToken() != null) {
            res.putHeader("Location", lockUri(ctx.request(), rawEntity, r));
        }
        if (m.contentType() != null) {
            putHeader(res, "Content-Type", m.contentType());
        }
        for (Map.Entry<String, Object> e : m.applicationProperties().entrySet()) {
            if (RestProperties.isUserPropertyHeader(e.getKey())) {
                putHeader(res, e.getKey(), RestProperties.formatHeaderValue(e.getValue()));
            }
        }
        res.end(Buffer.buffer(RestBody.bytes(m)));
    }

    /** Headers that HTTP cannot carry (names with separators, values with line breaks) are left out. */
    private static void putHeader(HttpServerResponse res, String name, String value) {
        try {
            res.putHeader(name, value);
        } catch (IllegalArgumentException e) {
            // not representable as an HTTP header
        }
    }

    static String lockUri(HttpServerRequest req, String rawEntity, ReceivedMessage r) {
        String host = req.getHeader("Host");
        if (host == null || host.isBlank()) {
            host = req.authority() != null ? req.authority().toString() : "localhost";
        }
        String scheme = req.scheme() == null ? "http" : req.scheme();
        Object id = r.message().messageId();
        String idSegment = id == null ? Long.toString(r.sequenceNumber())
                : URLEncoder.encode(id.toString(), StandardCharsets.UTF_8).replace("+", "%20");
        return scheme + "://" + host + "/" + rawEntity + "/messages/" + idSegment + "/" + r.lockToken();
    }

    // ============================================================================================== lock operations

    private void lockOperation(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        HttpMethod method = req.method();
        if (!method.equals(HttpMethod.PUT) && !method.equals(HttpMethod.DELETE) && !method.equals(HttpMethod.POST)) {
            ctx.next();
            return;
        }
        Context context = Vertx.currentContext();
        EntityAddress address;
        UUID lockToken;
        try {
            String raw = req.path().startsWith("/") ? req.path().substring(1) : req.path();
            if (raw.endsWith("/")) {
                raw = raw.substring(0, raw.length() - 1);
            }
            int lockSlash = raw.lastIndexOf('/');
            int idSlash = raw.lastIndexOf('/', lockSlash - 1);
            String entityAndMessages = raw.substring(0, idSlash);
            String entity = decode(entityAndMessages.substring(0, entityAndMessages.length() - "/messages".length()));
            lockToken = RestProperties.lockToken(raw.substring(lockSlash + 1));
            authorize(req, Right.LISTEN, entity);
            address = address(entity);
        } catch (RuntimeException e) {
            RestErrors.write(ctx, e, clock.epochMillis());
            return;
        }
        CompletableFuture<?> op;
        if (method.equals(HttpMethod.DELETE)) {
            op = engine.complete(address, lockToken);
        } else if (method.equals(HttpMethod.PUT)) {
            op = engine.abandon(address, lockToken, Map.of());
        } else {
            op = engine.renewLock(address, lockToken);
        }
        op.whenComplete((result, failure) -> context.runOnContext(x -> {
            if (failure != null) {
                RestErrors.write(ctx, failure, clock.epochMillis());
                return;
            }
            HttpServerResponse res = ctx.response();
            if (res.ended()) {
                return;
            }
            res.setStatusCode(200);
            if (result instanceof Long lockedUntil) {
                res.putHeader("BrokerProperties", new JsonObject().put("LockToken", lockToken.toString())
                        .put("LockedUntilUtc", RestProperties.formatDate(lockedUntil)).encode());
            }
            res.end();
        }));
    }
}
