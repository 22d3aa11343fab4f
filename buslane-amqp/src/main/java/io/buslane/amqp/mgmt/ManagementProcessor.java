package io.buslane.amqp.mgmt;

import io.buslane.amqp.codec.AmqpCodec;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.Engine;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.txn.TransactionFailure;
import io.buslane.engine.txn.TransactionScope;
import io.buslane.engine.txn.TransactionalBatch.SettleKind;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.txn.TransactionalBatch;
import org.apache.qpid.proton.amqp.Binary;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Serves the request/response operations of an entity's {@code $management} node ({@code amqp-wire-protocol.md}
 * §6) on top of the {@link Engine}: reads the request's arguments tolerantly (clients send numbers as int, long,
 * uint, ubyte ...), calls the engine, and answers with exactly the AMQP types of §6.2 (arrays as Java arrays so
 * proton encodes AMQP arrays; timestamps as {@link Date}; binaries as {@link Binary}; uuids as {@link UUID}).
 *
 * <p>Never throws and never blocks: every failure becomes an error response (§7): a {@link BrokerException} keeps
 * its kind's status and condition; a missing or ill-typed argument is 400 {@code com.microsoft:argument-error};
 * anything unexpected is 500 {@code amqp:internal-error}. An unknown operation is 501 {@code amqp:not-implemented}
 * (the condition every SDK maps to a non-transient "not supported" error); a request without an {@code operation}
 * is 400 {@code com.microsoft:argument-error}.
 *
 * <p>Thread-safe and stateless; futures complete on whichever thread finishes the engine work (a shard thread).
 */
public final class ManagementProcessor {

    private static final Logger LOG = LoggerFactory.getLogger(ManagementProcessor.class);

    // ------------------------------------------------------------------------------------------ operations
    public static final String OPERATION = "operation";
    public static final String RENEW_LOCK = "com.microsoft:renew-lock";
    public static final String RECEIVE_BY_SEQUENCE_NUMBER = "com.microsoft:receive-by-sequence-number";
    public static final String UPDATE_DISPOSITION = "com.microsoft:update-disposition";
    public static final String RENEW_SESSION_LOCK = "com.microsoft:renew-session-lock";
    public static final String SET_SESSION_STATE = "com.microsoft:set-session-state";
    public static final String GET_SESSION_STATE = "com.microsoft:get-session-state";
    public static final String GET_MESSAGE_SESSIONS = "com.microsoft:get-message-sessions";
    public static final String PEEK_MESSAGE = "com.microsoft:peek-message";
    public static final String SCHEDULE_MESSAGE = "com.microsoft:schedule-message";
    public static final String CANCEL_SCHEDULED_MESSAGE = "com.microsoft:cancel-scheduled-message";
    public static final String BATCH_DELETE_MESSAGES = "com.microsoft:batch-delete-messages";
    public static final String ADD_RULE = "com.microsoft:add-rule";
    public static final String REMOVE_RULE = "com.microsoft:remove-rule";
    public static final String ENUMERATE_RULES = "com.microsoft:enumerate-rules";

    // ------------------------------------------------------------------------------------------ body keys
    public static final String LOCK_TOKENS = "lock-tokens";
    public static final String LOCK_TOKEN = "lock-token";
    public static final String EXPIRATIONS = "expirations";
    public static final String EXPIRATION = "expiration";
    public static final String SEQUENCE_NUMBERS = "sequence-numbers";
    public static final String RECEIVER_SETTLE_MODE = "receiver-settle-mode";
    public static final String SESSION_ID = "session-id";
    public static final String MESSAGES = "messages";
    public static final String MESSAGE = "message";
    public static final String MESSAGE_ID = "message-id";
    public static final String PARTITION_KEY = "partition-key";
    public static final String VIA_PARTITION_KEY = "via-partition-key";
    public static final String DISPOSITION_STATUS = "disposition-status";
    public static final String DEADLETTER_REASON = "deadletter-reason";
    public static final String DEADLETTER_DESCRIPTION = "deadletter-description";
    public static final String PROPERTIES_TO_MODIFY = "properties-to-modify";
    public static final String SESSION_STATE = "session-state";
    public static final String LAST_UPDATED_TIME = "last-updated-time";
    public static final String LAST_SESSION_ID = "last-session-id";
    /** Peek's flag (sent by the JavaScript SDK) for messages without their bodies. */
    public static final String OMIT_MESSAGE_BODY = "omit-message-body";
    /**
     * .NET's {@code DateTime.MaxValue} as an AMQP timestamp (253402300800000, 23:59:59.9999999 of 31 December 9999
     * rounded up): what the SDKs send to list every session. Any time from its last millisecond on counts.
     */
    static final long DATE_TIME_MAX_VALUE_MS = 253_402_300_799_999L;
    public static final String SKIP = "skip";
    public static final String TOP = "top";
    public static final String SESSIONS_IDS = "sessions-ids";
    public static final String FROM_SEQUENCE_NUMBER = "from-sequence-number";
    public static final String MESSAGE_COUNT = "message-count";
    public static final String ENQUEUED_TIME_UTC = "enqueued-time-utc";
    public static final String RULES = "rules";
    public static final String RULE_DESCRIPTION = "rule-description";
    public static final String RULE_NAME = "rule-name";

    // ------------------------------------------------------------------------------------------ disposition-status
    public static final String DISPOSITION_COMPLETED = "completed";
    public static final String DISPOSITION_ABANDONED = "abandoned";
    /** Sic: every SDK spells it with one "r". */
    public static final String DISPOSITION_DEFERRED = "defered";
    /** Dead-letter. */
    public static final String DISPOSITION_SUSPENDED = "suspended";

    /** The application property naming the receive link a request acts for (session operations). */
    public static final String ASSOCIATED_LINK_NAME = "associated-link-name";

    /**
     * Resolves the name of a receive link of the requesting connection to its engine receiver: completes with it
     * once the link is attached (at once when it is; when its attach is still being answered, a session being
     * accepted, once that is decided), with null when no receive link of that name is open or attaching, or when
     * its attach failed.
     */
    @FunctionalInterface
    public interface LinkReceivers {
        CompletableFuture<Receiver> receiverOf(String linkName);
    }

    /** Who a request acts for: the link it names, on the connection it came from. */
    private record Caller(LinkReceivers links, String associatedLinkName) {

        /**
         * The receiver that must hold a session for this request: null when the request names no link (any holder
         * will do); fails as a lost session lock when the named link is not an open receive link of the connection.
         * A link whose attach is still being answered (the SDK may use it as soon as it sent the attach) is waited
         * for.
         */
        CompletableFuture<Receiver> sessionHolder() {
            if (links == null || associatedLinkName == null) {
                return CompletableFuture.completedFuture(null);
            }
            return links.receiverOf(associatedLinkName).thenApply(r -> {
                if (r == null) {
                    throw new BrokerException(ErrorKind.SESSION_LOCK_LOST, "The session lock was lost: the link '"
                            + associatedLinkName + "' named by the request's associated-link-name is not an open "
                            + "receive link of this connection. Accept the session again.");
                }
                return r;
            });
        }
    }

    private final Engine engine;

    public ManagementProcessor(Engine engine) {
        this.engine = Objects.requireNonNull(engine, "engine");
    }

    /**
     * One request to the {@code $management} node of {@code entity} (the address without {@code /$management}).
     *
     * @param entity                the entity the node belongs to
     * @param applicationProperties the request's application properties (String keys, proton-j values)
     * @param body                  the decoded {@code amqp-value} (usually a Map with String keys), or null
     * @return the response; never completes exceptionally
     */
    public CompletableFuture<ManagementResponse> process(EntityAddress entity,
                                                         Map<String, Object> applicationProperties, Object body) {
        return process(entity, applicationProperties, body, (LinkReceivers) null);
    }

    /**
     * One request to the {@code $management} node of {@code entity}, from a connection whose receive links
     * {@code links} resolves: a session operation that names its {@code associated-link-name} succeeds only while
     * that link holds the session's lock, as on the service (null {@code links}: any holder will do).
     */
    public CompletableFuture<ManagementResponse> process(EntityAddress entity,
                                                         Map<String, Object> applicationProperties, Object body,
                                                         LinkReceivers links) {
        CompletableFuture<ManagementResponse> result;
        String operation = null;
        try {
            operation = ManagementArgs.operation(applicationProperties);
            Object associated = applicationProperties == null ? null
                    : applicationProperties.get(ASSOCIATED_LINK_NAME);
            result = dispatch(operation, entity, ManagementArgs.args(body),
                    new Caller(links, associated instanceof String s ? s : null));
        } catch (Throwable t) {
            return CompletableFuture.completedFuture(failure(t, operation, entity));
        }
        String op = operation;
        return result.handle((response, error) -> {
            if (error != null) {
                return failure(error, op, entity);
            }
            return response != null ? response
                    : ManagementResponse.error(ErrorKind.INTERNAL, "The operation '" + op + "' produced no result.");
        });
    }

    private CompletableFuture<ManagementResponse> dispatch(String operation, EntityAddress entity,
                                                           Map<String, Object> args, Caller caller) {
        if (entity == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "The $management request names no entity.");
        }
        return switch (operation) {
            case RENEW_LOCK -> renewLock(entity, args);
            case RECEIVE_BY_SEQUENCE_NUMBER -> receiveBySequenceNumber(entity, args, caller);
            case UPDATE_DISPOSITION -> updateDisposition(entity, args);
            case RENEW_SESSION_LOCK -> renewSessionLock(entity, args, caller);
            case SET_SESSION_STATE -> setSessionState(entity, args, caller);
            case GET_SESSION_STATE -> getSessionState(entity, args, caller);
            case GET_MESSAGE_SESSIONS -> getMessageSessions(entity, args);
            case PEEK_MESSAGE -> peekMessage(entity, args);
            case SCHEDULE_MESSAGE -> scheduleMessage(entity, args);
            case CANCEL_SCHEDULED_MESSAGE -> cancelScheduledMessage(entity, args);
            case BATCH_DELETE_MESSAGES -> batchDeleteMessages(entity, args);
            case ENUMERATE_RULES -> enumerateRules(entity, args);
            case ADD_RULE -> addRule(entity, args);
            case REMOVE_RULE -> removeRule(entity, args);
            default -> CompletableFuture.completedFuture(ManagementResponse.error(ErrorKind.NOT_IMPLEMENTED,
                    "The operation '" + operation + "' is not supported."));
        };
    }

    // ============================================================================================ message locks

    private CompletableFuture<ManagementResponse> renewLock(EntityAddress entity, Map<String, Object> args) {
        UUID[] tokens = ManagementArgs.uuids(args, LOCK_TOKENS);
        List<CompletableFuture<Long>> all = new ArrayList<>(tokens.length);
        for (UUID token : tokens) {
            all.add(engine.renewLock(entity, token));
        }
        return allOf(all).thenApply(x -> {
            Date[] expirations = new Date[all.size()];
            for (int i = 0; i < expirations.length; i++) {
                expirations[i] = new Date(all.get(i).join());
            }
            return ManagementResponse.ok(EXPIRATIONS, expirations);
        });
    }

    private CompletableFuture<ManagementResponse> receiveBySequenceNumber(EntityAddress entity,
                                                                          Map<String, Object> args, Caller caller) {
        long[] sequenceNumbers = ManagementArgs.longs(args, SEQUENCE_NUMBERS);
        ReceiveMode mode = ManagementArgs.receiveMode(args);
        String sessionId = ManagementArgs.optionalSessionId(args);
        CompletableFuture<Receiver> holder = sessionId == null
                ? CompletableFuture.completedFuture(null) : caller.sessionHolder();
        return holder.thenCompose(h -> engine.receiveDeferred(entity, sequenceNumbers, mode, sessionId, h))
                .thenApply(received -> {
            List<Object> messages = new ArrayList<>(received.size());
            for (ReceivedMessage m : received) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put(MESSAGE, new Binary(AmqpCodec.encode(m, AmqpCodec.Purpose.RECEIVE_BY_SEQUENCE)));
                if (mode == ReceiveMode.PEEK_LOCK && m.lockToken() != null) {
                    entry.put(LOCK_TOKEN, m.lockToken());
                }
                messages.add(entry);
            }
            return ManagementResponse.ok(MESSAGES, messages);
        });
    }

    private CompletableFuture<ManagementResponse> updateDisposition(EntityAddress entity, Map<String, Object> args) {
        Disposition d = disposition(args);
        List<CompletableFuture<Void>> all = new ArrayList<>(d.tokens().length);
        for (UUID token : d.tokens()) {
            all.add(switch (d.kind()) {
                case COMPLETE -> engine.complete(entity, token);
                case ABANDON -> engine.abandon(entity, token, d.props());
                case DEAD_LETTER -> engine.deadLetter(entity, token, d.reason(), d.description(), d.props());
                case DEFER -> engine.defer(entity, token, d.props());
            });
        }
        return allOf(all).thenApply(x -> ManagementResponse.ok());
    }

    /** The arguments of an update-disposition request (outside or inside a transaction). */
    private record Disposition(UUID[] tokens, SettleKind kind, String reason, String description,
                               Map<String, Object> props) {
    }

    private static Disposition disposition(Map<String, Object> args) {
        UUID[] tokens = ManagementArgs.uuids(args, LOCK_TOKENS);
        String status = ManagementArgs.string(args, DISPOSITION_STATUS, true);
        String reason = ManagementArgs.string(args, DEADLETTER_REASON, false);
        String description = ManagementArgs.string(args, DEADLETTER_DESCRIPTION, false);
        Map<String, Object> props = ManagementArgs.propertiesToModify(args);
        // session-id is accepted and not needed: lock tokens identify the message and the engine checks the
        // session lock of session messages itself.
        ManagementArgs.string(args, SESSION_ID, false);
        SettleKind kind = switch (status.toLowerCase(Locale.ROOT)) {
            case DISPOSITION_COMPLETED -> SettleKind.COMPLETE;
            case DISPOSITION_ABANDONED -> SettleKind.ABANDON;
            case DISPOSITION_SUSPENDED -> SettleKind.DEAD_LETTER;
            case DISPOSITION_DEFERRED, "deferred" -> SettleKind.DEFER;
            default -> throw new BrokerException(ErrorKind.ARGUMENT, "The '" + DISPOSITION_STATUS + "' value '"
                    + status + "' is not one of completed, abandoned, defered, suspended.");
        };
        return new Disposition(tokens, kind, reason, description, props);
    }

    // ============================================================================================ sessions

    private CompletableFuture<ManagementResponse> renewSessionLock(EntityAddress entity, Map<String, Object> args,
                                                                   Caller caller) {
        String sessionId = ManagementArgs.requiredSessionId(args);
        return caller.sessionHolder().thenCompose(h -> engine.renewSessionLock(entity, sessionId, h))
                .thenApply(until -> ManagementResponse.ok(EXPIRATION, new Date(until)));
    }

    private CompletableFuture<ManagementResponse> setSessionState(EntityAddress entity, Map<String, Object> args,
                                                                  Caller caller) {
        String sessionId = ManagementArgs.requiredSessionId(args);
        byte[] given = ManagementArgs.binary(args, SESSION_STATE);
        // an empty state is no state, as on the service: the Go SDK clears a session's state by setting nil, which
        // go-amqp sends as a binary of length 0 (and the service then answers get-session-state with null)
        byte[] state = given != null && given.length == 0 ? null : given;
        return caller.sessionHolder().thenCompose(h -> engine.checkSessionLocked(entity, sessionId, h))
                .thenCompose(x -> engine.setSessionState(entity, sessionId, state))
                .thenApply(x -> ManagementResponse.ok());
    }

    private CompletableFuture<ManagementResponse> getSessionState(EntityAddress entity, Map<String, Object> args,
                                                                  Caller caller) {
        String sessionId = ManagementArgs.requiredSessionId(args);
        return caller.sessionHolder().thenCompose(h -> engine.checkSessionLocked(entity, sessionId, h))
                .thenCompose(x -> engine.getSessionState(entity, sessionId)).thenApply(state -> {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put(SESSION_STATE, state == null ? null : new Binary(state.clone()));
            return ManagementResponse.ok(body);
        });
    }

    private CompletableFuture<ManagementResponse> getMessageSessions(EntityAddress entity, Map<String, Object> args) {
        Long lastUpdated = ManagementArgs.timestamp(args, LAST_UPDATED_TIME, false);
        int skip = ManagementArgs.nonNegativeInt(args, SKIP, 0);
        int top = ManagementArgs.nonNegativeInt(args, TOP, Integer.MAX_VALUE);
        Object last = args.get(LAST_SESSION_ID);
        String lastSessionId = last instanceof String s && !s.isEmpty() ? s : null;
        // DateTime.MaxValue (and no time at all) asks for every session with messages or state; a real time for
        // the sessions whose state changed since
        long since = lastUpdated == null || lastUpdated >= DATE_TIME_MAX_VALUE_MS ? Engine.ALL_ACTIVE_SESSIONS
                : lastUpdated;
        return engine.listSessions(entity, since, skip, top, lastSessionId).thenApply(ids -> {
            if (ids.isEmpty()) {
                return ManagementResponse.noContent();
            }
            Map<String, Object> body = new LinkedHashMap<>();
            // The position of the next page, so a client feeding it back as skip pages forward.
            body.put(SKIP, (int) Math.min(Integer.MAX_VALUE, (long) skip + ids.size()));
            body.put(SESSIONS_IDS, ids.toArray(new String[0]));
            return ManagementResponse.ok(body);
        });
    }

    // ============================================================================================ browsing

    private CompletableFuture<ManagementResponse> peekMessage(EntityAddress entity, Map<String, Object> args) {
        long from = ManagementArgs.longValue(args, FROM_SEQUENCE_NUMBER);
        int count = ManagementArgs.intValue(args, MESSAGE_COUNT, null);
        String sessionId = ManagementArgs.optionalSessionId(args);
        AmqpCodec.Purpose purpose = Boolean.TRUE.equals(args.get(OMIT_MESSAGE_BODY))
                ? AmqpCodec.Purpose.PEEK_WITHOUT_BODY : AmqpCodec.Purpose.PEEK;
        return engine.peek(entity, from, count, sessionId).thenApply(peeked -> {
            if (peeked.isEmpty()) {
                return ManagementResponse.noContent();
            }
            List<Object> messages = new ArrayList<>(peeked.size());
            for (ReceivedMessage m : peeked) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put(MESSAGE, new Binary(AmqpCodec.encode(m, purpose)));
                messages.add(entry);
            }
            return ManagementResponse.ok(MESSAGES, messages);
        });
    }

    // ============================================================================================ scheduling

    private CompletableFuture<ManagementResponse> scheduleMessage(EntityAddress entity, Map<String, Object> args) {
        String path = sendPath(entity, SCHEDULE_MESSAGE);
        List<Message> messages = scheduledMessages(args);
        return engine.schedule(path, messages)
                .thenApply(seqs -> ManagementResponse.ok(SEQUENCE_NUMBERS, boxed(seqs)));
    }

    /** The messages of a schedule-message request. */
    private static List<Message> scheduledMessages(Map<String, Object> args) {
        Object raw = args.get(MESSAGES);
        if (raw == null) {
            throw ManagementArgs.missing(MESSAGES);
        }
        List<Object> entries = ManagementArgs.elements(raw, MESSAGES);
        List<Message> messages = new ArrayList<>(entries.size());
        for (int i = 0; i < entries.size(); i++) {
            if (!(entries.get(i) instanceof Map<?, ?> entry)) {
                throw new BrokerException(ErrorKind.ARGUMENT, "Element " + i + " of '" + MESSAGES
                        + "' must be a map.");
            }
            messages.add(scheduledMessage(ManagementArgs.stringKeys(entry), i));
        }
        return messages;
    }

    /**
     * A {@code long[]} as a {@code Long[]}: proton-j 0.34.1 writes a primitive array only at the top level; inside
     * a map its {@code MapType} sizes values through {@code ArrayType.getEncoding(Object[])} and fails with a
     * ClassCastException on {@code long[]}. A {@code Long[]} encodes as the very same AMQP array of {@code long}
     * (and decodes to a {@code long[]} on the client, which is what Java/.NET require).
     */
    static Long[] boxed(long[] values) {
        Long[] out = new Long[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = values[i];
        }
        return out;
    }

    private static Message scheduledMessage(Map<String, Object> entry, int index) {
        Object encoded = entry.get(MESSAGE);
        Message m;
        try {
            if (encoded instanceof Binary b) {
                m = AmqpCodec.decodeMessage(b.getArray(), b.getArrayOffset(), b.getLength());
            } else if (encoded instanceof byte[] bytes) {
                m = AmqpCodec.decodeMessage(bytes, 0, bytes.length);
            } else {
                throw new BrokerException(ErrorKind.ARGUMENT, "Element " + index + " of '" + MESSAGES + "' needs a '"
                        + MESSAGE + "' of type binary (an encoded AMQP message).");
            }
        } catch (BrokerException e) {
            throw e;
        } catch (Exception e) {
            throw new BrokerException(ErrorKind.ARGUMENT, "Element " + index + " of '" + MESSAGES
                    + "': the message could not be decoded: " + e.getMessage(), e);
        }
        // The envelope repeats values the encoded message normally carries; use them only to fill gaps.
        String messageId = ManagementArgs.string(entry, MESSAGE_ID, false);
        String sessionId = ManagementArgs.string(entry, SESSION_ID, false);
        String partitionKey = ManagementArgs.string(entry, PARTITION_KEY, false);
        String viaPartitionKey = ManagementArgs.string(entry, VIA_PARTITION_KEY, false);
        boolean fill = (m.messageId() == null && messageId != null)
                || (m.sessionId() == null && sessionId != null && !sessionId.isEmpty())
                || (m.partitionKey() == null && partitionKey != null && !partitionKey.isEmpty())
                || (m.viaPartitionKey() == null && viaPartitionKey != null && !viaPartitionKey.isEmpty());
        if (!fill) {
            return m;
        }
        Message.Builder b = m.toBuilder().encodedSize(m.encodedSize());
        if (m.messageId() == null && messageId != null) {
            b.messageId(messageId);
        }
        if (m.sessionId() == null && sessionId != null && !sessionId.isEmpty()) {
            b.sessionId(sessionId);
        }
        if (m.partitionKey() == null && partitionKey != null && !partitionKey.isEmpty()) {
            b.partitionKey(partitionKey);
        }
        if (m.viaPartitionKey() == null && viaPartitionKey != null && !viaPartitionKey.isEmpty()) {
            b.viaPartitionKey(viaPartitionKey);
        }
        return b.build();
    }

    private CompletableFuture<ManagementResponse> cancelScheduledMessage(EntityAddress entity,
                                                                         Map<String, Object> args) {
        String path = sendPath(entity, CANCEL_SCHEDULED_MESSAGE);
        long[] sequenceNumbers = ManagementArgs.longs(args, SEQUENCE_NUMBERS);
        return engine.cancelScheduled(path, sequenceNumbers).thenApply(x -> ManagementResponse.ok());
    }

    /** Schedule and cancel target the queue or topic itself. */
    private static String sendPath(EntityAddress entity, String operation) {
        if (entity.subscription() != null || entity.subQueue() != SubQueue.MAIN) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "The operation '" + operation
                    + "' applies to a queue or topic, not to '" + entity + "'.");
        }
        return entity.entityPath();
    }

    // ============================================================================================ deletion

    private CompletableFuture<ManagementResponse> batchDeleteMessages(EntityAddress entity, Map<String, Object> args) {
        int count = ManagementArgs.intValue(args, MESSAGE_COUNT, null);
        if (count <= 0) {
            throw new BrokerException(ErrorKind.ARGUMENT_OUT_OF_RANGE, "'" + MESSAGE_COUNT
                    + "' must be positive, was " + count + ".");
        }
        long before = Objects.requireNonNull(ManagementArgs.timestamp(args, ENQUEUED_TIME_UTC, true));
        String sessionId = ManagementArgs.optionalSessionId(args);
        return engine.deleteMessages(entity, count, before, sessionId)
                .thenApply(n -> ManagementResponse.ok(MESSAGE_COUNT, Integer.valueOf(n)));
    }

    // ============================================================================================ rules

    /** {@code add-rule}: 200; 409 entity-already-exists for a duplicate name; 400 argument-error for bad SQL. */
    private CompletableFuture<ManagementResponse> addRule(EntityAddress entity, Map<String, Object> args) {
        SubscriptionEntity sub = ruleSubscription(entity);
        String name = ManagementArgs.string(args, RULE_NAME, true);
        Object description = args.get(RULE_DESCRIPTION);
        if (description == null) {
            throw ManagementArgs.missing(RULE_DESCRIPTION);
        }
        if (!(description instanceof Map<?, ?> map)) {
            throw ManagementArgs.illTyped(RULE_DESCRIPTION, description, "a map");
        }
        RuleProperties rule = RuleDescriptions.fromRequest(name, ManagementArgs.stringKeys(map));
        return engine.addRule(sub.topic().properties().name(), sub.properties().name(), rule)
                .thenApply(s -> ManagementResponse.ok());
    }

    /** {@code remove-rule}: 200; 404 amqp:not-found when the subscription has no such rule. */
    private CompletableFuture<ManagementResponse> removeRule(EntityAddress entity, Map<String, Object> args) {
        SubscriptionEntity sub = ruleSubscription(entity);
        String name = ManagementArgs.string(args, RULE_NAME, true);
        return engine.removeRule(sub.topic().properties().name(), sub.properties().name(), name)
                .thenApply(s -> ManagementResponse.ok());
    }

    private SubscriptionEntity ruleSubscription(EntityAddress entity) {
        if (entity.subscription() == null) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "Rules belong to subscriptions; '" + entity
                    + "' is not a subscription.");
        }
        TopicEntity topic = engine.topic(entity.entityPath());
        SubscriptionEntity sub = topic == null ? null : topic.subscription(entity.subscription());
        if (sub == null) {
            throw BrokerException.entityNotFound(entity.entityName());
        }
        return sub;
    }

    private CompletableFuture<ManagementResponse> enumerateRules(EntityAddress entity, Map<String, Object> args) {
        int skip = ManagementArgs.nonNegativeInt(args, SKIP, 0);
        int top = ManagementArgs.nonNegativeInt(args, TOP, Integer.MAX_VALUE);
        SubscriptionEntity sub = ruleSubscription(entity);
        List<RuleProperties> rules = sub.rules();
        int from = Math.min(skip, rules.size());
        int to = (int) Math.min(rules.size(), (long) from + top);
        if (from >= to) {
            return CompletableFuture.completedFuture(ManagementResponse.noContent());
        }
        // The engine keeps no creation time per rule; the subscription's is the best available.
        long createdAt = sub.createdAtMs();
        List<Object> out = new ArrayList<>(to - from);
        for (RuleProperties rule : rules.subList(from, to)) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put(RULE_DESCRIPTION, RuleDescriptions.ruleDescription(rule, createdAt));
            out.add(entry);
        }
        return CompletableFuture.completedFuture(ManagementResponse.ok(RULES, out));
    }

    // ============================================================================================ failures

    private static ManagementResponse failure(Throwable t, String operation, EntityAddress entity) {
        Throwable cause = unwrap(t);
        if (cause instanceof BrokerException be) {
            return ManagementResponse.error(be);
        }
        LOG.warn("$management operation '{}' on '{}' failed unexpectedly", operation, entity, cause);
        return ManagementResponse.error(ErrorKind.INTERNAL, "The operation '" + operation
                + "' failed: " + cause);
    }

    private static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }

    private static <T> CompletableFuture<Void> allOf(List<CompletableFuture<T>> all) {
        return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
    }

    // ============================================================================================ transactions
    // (AMQP transactions, branch txn: this section only)

    /**
     * A request whose transfer carried {@code transactional-state{txn-id}}: {@code update-disposition} and
     * {@code cancel-scheduled-message} are staged in the transaction, {@code schedule-message} is checked against
     * it, numbered at once and stored at commit; other operations are not transactional and run as usual.
     */
    public CompletableFuture<ManagementResponse> process(EntityAddress entity,
                                                         Map<String, Object> applicationProperties, Object body,
                                                         TransactionScope txn) {
        return process(entity, applicationProperties, body, txn, null);
    }

    /** As {@link #process(EntityAddress, Map, Object, TransactionScope)}, from a connection whose links resolve. */
    public CompletableFuture<ManagementResponse> process(EntityAddress entity,
                                                         Map<String, Object> applicationProperties, Object body,
                                                         TransactionScope txn, LinkReceivers links) {
        if (txn == null) {
            return process(entity, applicationProperties, body, links);
        }
        String operation = null;
        try {
            operation = ManagementArgs.operation(applicationProperties);
            if (entity == null || !(operation.equals(UPDATE_DISPOSITION) || operation.equals(SCHEDULE_MESSAGE)
                    || operation.equals(CANCEL_SCHEDULED_MESSAGE))) {
                return process(entity, applicationProperties, body, links);
            }
            Map<String, Object> args = ManagementArgs.args(body);
            if (operation.equals(UPDATE_DISPOSITION)) {
                return CompletableFuture.completedFuture(updateDispositionInTransaction(entity, args, txn));
            }
            if (operation.equals(CANCEL_SCHEDULED_MESSAGE)) {
                txn.stageCancel(sendPath(entity, CANCEL_SCHEDULED_MESSAGE), ManagementArgs.longs(args,
                        SEQUENCE_NUMBERS));
                return CompletableFuture.completedFuture(ManagementResponse.ok());
            }
            String op = operation;
            return scheduleMessageInTransaction(entity, args, txn).handle((response, error) ->
                    error == null ? response : failure(error, op, entity));
        } catch (TransactionFailure f) {
            return CompletableFuture.completedFuture(transactionError(f));
        } catch (Throwable t) {
            return CompletableFuture.completedFuture(failure(t, operation, entity));
        }
    }

    private ManagementResponse updateDispositionInTransaction(EntityAddress entity, Map<String, Object> args,
                                                              TransactionScope txn) {
        Disposition d = disposition(args);
        for (UUID token : d.tokens()) {
            txn.stageSettlement(new TransactionalBatch.Settle(entity, token, d.kind(), d.props(),
                    d.reason(), d.description()));
        }
        return ManagementResponse.ok();
    }

    private CompletableFuture<ManagementResponse> scheduleMessageInTransaction(
            EntityAddress entity, Map<String, Object> args, TransactionScope txn) {
        String path = sendPath(entity, SCHEDULE_MESSAGE);
        List<Message> messages = scheduledMessages(args);
        txn.beforeSchedule(path, messages.size());
        return engine.reserveScheduled(path, messages).thenApply(seqs -> {
            txn.scheduled(path, messages, seqs);
            return ManagementResponse.ok(SEQUENCE_NUMBERS, boxed(seqs));
        });
    }

    private static ManagementResponse transactionError(TransactionFailure f) {
        int status = 400;
        for (ErrorKind kind : ErrorKind.values()) {
            if (kind.amqpCondition().equals(f.condition())) {
                status = kind.httpStatus();
                break;
            }
        }
        return new ManagementResponse(status, f.description(), f.condition(), null);
    }
}
