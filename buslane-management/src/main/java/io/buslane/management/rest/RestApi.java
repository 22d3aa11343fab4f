package io.buslane.management.rest;

import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.Grant;
import io.buslane.common.auth.Right;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.management.HttpGuard;
import io.vertx.core.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

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
 * Requests carry {@code Authorization: SharedAccessSignature ...}: sending needs Send, the rest Listen. The token
 * is checked when the request's headers arrive, before any of its body is read: a request that is not authorised
 * is answered at once (401, or 429 while its address is throttled, see {@link HttpGuard}) and its body is never
 * buffered. A send's body is then read as it arrives and refused as soon as it exceeds what the entity accepts
 * (403, as the service answers a message over the entity's size limit) or, for a batch, the HTTP limit (413). The
 * routes are ordinary routes, so they take precedence over the ATOM fallback route; work is asynchronous (engine
 * futures complete on shard threads and are answered back on the request's event loop), nothing blocks an event
 * loop.
 */
public final class RestApi {

    /** The content type of a batch send. */
    public static final String BATCH_CONTENT_TYPE = "application/vnd.microsoft.servicebus.json";
    /** A request body above this is refused with 413 before it reaches an entity (100 MB, Premium's ceiling). */
    public static final long DEFAULT_MAX_BODY_BYTES = 100L * 1024 * 1024 + 64 * 1024;
    /** The initial size of a send's body buffer; it grows as the body arrives. */
    private static final int INITIAL_BODY_BUFFER_BYTES = 64 * 1024;
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
    private final HttpGuard guard;
    private final long maxBodyBytes;

    private RestApi(Engine engine, SasValidator validator, Clock clock, Timeouts timeouts, HttpGuard guard,
                    long maxBodyBytes) {
        this.engine = engine;
        this.validator = validator;
        this.clock = clock;
        this.timeouts = timeouts;
        this.guard = guard;
        this.maxBodyBytes = maxBodyBytes;
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
    public static void mount(Router router, HttpGuard guard, Engine engine, SasValidator validator, Clock clock) {
        mount(router, guard, engine, validator, clock, DEFAULT_MAX_BODY_BYTES, Timeouts.VERTX);
    }

    static void mount(Router router, HttpGuard guard, Engine engine, SasValidator validator, Clock clock,
                      long maxBodyBytes, Timeouts timeouts) {
        RestApi api = new RestApi(engine, validator, clock, timeouts, guard, maxBodyBytes);
        router.routeWithRegex(HttpMethod.POST, SEND_PATH).handler(api::send);
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

    /**
     * The one parse of a request's entity part ({@link CanonicalAddress#parseHttpPath}: split, then each segment
     * decoded once), kept for the fuzz target.
     *
     * @throws BrokerException (400) when it does not canonicalise
     */
    static CanonicalAddress parse(String rawEntity) {
        return CanonicalAddress.parseHttpPath(rawEntity);
    }

    /**
     * Authenticates the request, then {@linkplain #resolve checks its grant against the one parse of its entity
     * part} and returns the entity of that parse: what is authorised is what is acted on.
     *
     * @param rawEntity the undecoded entity part of the request path
     */
    private EntityAddress authorize(HttpServerRequest req, Right right, String rawEntity) {
        return resolve(guard.validate(validator, req), right, rawEntity);
    }

    /**
     * Parses {@code rawEntity} once ({@link #parse}), checks that {@code grant} carries {@code right} and covers that
     * parse, and returns the entity of the same parse.
     *
     * @throws BrokerException (400) when the path does not canonicalise or names no entity
     * @throws AuthException   (401) when the grant lacks the right or does not cover the entity
     */
    static EntityAddress resolve(Grant grant, Right right, String rawEntity) {
        CanonicalAddress canonical = parse(rawEntity);
        EntityAddress address = EntityAddress.of(canonical);
        if (address == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "The request names no queue or subscription.");
        }
        if (!grant.has(right)) {
            throw new AuthException("Unauthorized access. '" + right.displayName() + "' claim(s) are required to "
                    + "perform this operation. Resource: '" + address + "'.");
        }
        if (!grant.covers(canonical)) {
            throw new AuthException("InvalidAudience: The token's signed resource does not cover '" + address
                    + "'.");
        }
        return address;
    }

    // ============================================================================================== send

    private void send(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        String entity;
        boolean batch;
        long limit;
        long entityLimit;
        try {
            entity = authorize(req, Right.SEND, rawEntity(req.path(), "/messages")).toString();
            String contentType = req.getHeader("Content-Type");
            batch = contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith(BATCH_CONTENT_TYPE);
            // also fails at once for an entity that does not exist or cannot be sent to
            entityLimit = engine.maxMessageSizeBytes(entity);
            // a body over the entity's limit holds a message over it (a message's size counts its body and more);
            // a batch's messages are checked one by one when it is sent
            limit = batch ? maxBodyBytes : Math.min(maxBodyBytes, entityLimit);
        } catch (RuntimeException e) {
            refuse(ctx, e);
            return;
        }
        String expect = req.getHeader("Expect");
        if (expect != null && !expect.equalsIgnoreCase("100-continue")) {
            HttpGuard.refuseBeforeBody(req);
            RestErrors.write(ctx, 417, "Only 'Expect: 100-continue' is supported.", clock.epochMillis());
            return;
        }
        long declared = contentLength(req);
        if (declared > limit) {
            refuseTooLarge(ctx, entity, declared, true, limit, entityLimit);
            return;
        }
        if (req.isEnded()) { // a route handler runs when the headers arrive, so this is not expected
            RestErrors.write(ctx, new IllegalStateException("The request body was consumed before the send route "
                    + "ran."), clock.epochMillis());
            return;
        }
        if (expect != null && req.version() != HttpVersion.HTTP_1_0) {
            ctx.response().writeContinue();
        }
        Buffer body = Buffer.buffer((int) Math.min(Math.max(declared, 0), INITIAL_BODY_BUFFER_BYTES));
        long[] received = {0};
        req.exceptionHandler(t -> { }); // the client went away: nothing to answer
        req.handler(chunk -> {
            received[0] += chunk.length();
            if (received[0] > limit) {
                refuseTooLarge(ctx, entity, received[0], false, limit, entityLimit);
            } else {
                body.appendBuffer(chunk);
            }
        });
        req.endHandler(v -> dispatch(ctx, entity, batch, body.getBytes()));
    }

    /** Sends the messages of a received body. */
    private void dispatch(RoutingContext ctx, String entity, boolean batch, byte[] bytes) {
        HttpServerRequest req = ctx.request();
        Context context = Vertx.currentContext();
        List<Message> messages;
        try {
            String contentType = req.getHeader("Content-Type");
            messages = batch ? batch(bytes) : List.of(single(req.headers(), contentType, bytes));
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

    /** Answers a request before its body was read; the rest of the body is dropped, never buffered. */
    private void refuse(RoutingContext ctx, Throwable failure) {
        HttpGuard.refuseBeforeBody(ctx.request());
        RestErrors.write(ctx, failure, clock.epochMillis());
    }

    /**
     * Refuses a body over {@code limit}, as soon as that is known: with the service's answer to a message over the
     * entity's size limit (403) when that is the limit that applies, else with 413.
     *
     * @param size     the body's declared size, or the bytes received so far
     * @param complete whether {@code size} is the whole body's
     */
    private void refuseTooLarge(RoutingContext ctx, String entity, long size, boolean complete, long limit,
                                long entityLimit) {
        String received = (complete ? "size " : "size at least ") + size + " bytes";
        if (limit == entityLimit) {
            refuse(ctx, new BrokerException(ErrorKind.MESSAGE_SIZE_EXCEEDED, "The received message (" + received
                    + ") exceeds the limit (" + limit + " bytes) currently allowed on the entity '" + entity + "'."));
        } else {
            HttpGuard.refuseBeforeBody(ctx.request());
            RestErrors.write(ctx, 413, "The request body (" + received + ") exceeds the limit of " + limit
                    + " bytes.", clock.epochMillis());
        }
    }

    /** The declared {@code Content-Length}, or -1 when there is none (a chunked body) or it is malformed. */
    private static long contentLength(HttpServerRequest req) {
        String value = req.getHeader("Content-Length");
        if (value == null) {
            return -1;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
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
            address = authorize(req, Right.LISTEN, rawEntity);
            timeoutSeconds = timeout(req.getParam("timeout"));
        } catch (RuntimeException e) {
            refuse(ctx, e);
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
            String rawEntity = entityAndMessages.substring(0, entityAndMessages.length() - "/messages".length());
            lockToken = RestProperties.lockToken(raw.substring(lockSlash + 1));
            address = authorize(req, Right.LISTEN, rawEntity);
        } catch (RuntimeException e) {
            refuse(ctx, e);
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
