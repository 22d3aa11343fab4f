package io.buslane.management.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.api.SubQueue;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.message.Decimal;
import io.buslane.engine.message.Described;
import io.buslane.engine.message.Message;
import io.buslane.engine.message.MessageState;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.message.Symbol;
import io.buslane.engine.message.Unsigned;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.management.Await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * The console's operations on the engine, JSON in and JSON out. Runs on Vert.x worker threads: waits for the
 * engine's futures (entity changes and messages are durable when they complete).
 */
final class ConsoleService {

    /** The most messages one browse returns. */
    static final int MAX_BROWSE = 500;
    /** The most sessions one listing returns. */
    static final int MAX_SESSIONS = 500;
    /** The reason written on messages the console dead-letters. */
    static final String CONSOLE_DEAD_LETTER_REASON = "DeadLetteredFromConsole";
    /** On entities with duplicate detection a resubmitted copy gets a new MessageId and keeps the old one here. */
    static final String ORIGINAL_MESSAGE_ID = "ResubmittedFromMessageId";

    private final Engine engine;
    private final Clock clock;
    private final ObjectMapper json;
    private final MessageLocker locker;

    ConsoleService(Engine engine, Clock clock, ObjectMapper json) {
        this.engine = engine;
        this.clock = clock;
        this.json = json;
        this.locker = new MessageLocker(engine);
    }

    // ------------------------------------------------------------------------------------------------ namespace

    /** Every queue and topic (with subscriptions and rules), sorted by name, with message counts. */
    ObjectNode namespace() {
        ObjectNode out = json.createObjectNode();
        ArrayNode queues = out.putArray("queues");
        List<QueueEntity> qs = new ArrayList<>(engine.queues());
        qs.sort(Comparator.comparing(q -> q.properties().name().toLowerCase(Locale.ROOT)));
        for (QueueEntity q : qs) {
            QueueProperties p = q.properties();
            ObjectNode n = queues.addObject();
            n.put("name", p.name());
            n.put("path", p.name());
            n.put("status", p.status().serviceName());
            n.put("requiresSession", p.requiresSession());
            n.put("maxDeliveryCount", p.maxDeliveryCount());
            n.put("partitioned", p.enablePartitioning());
            putShards(n, q.partitions());
            putCounts(n, p.name());
        }
        ArrayNode topics = out.putArray("topics");
        List<TopicEntity> ts = new ArrayList<>(engine.topics());
        ts.sort(Comparator.comparing(t -> t.properties().name().toLowerCase(Locale.ROOT)));
        for (TopicEntity t : ts) {
            TopicProperties p = t.properties();
            ObjectNode n = topics.addObject();
            n.put("name", p.name());
            n.put("path", p.name());
            n.put("status", p.status().serviceName());
            n.put("partitioned", p.enablePartitioning());
            putShards(n, t.partitions());
            putCounts(n, p.name());
            ArrayNode subs = n.putArray("subscriptions");
            List<SubscriptionEntity> ss = new ArrayList<>(t.subscriptions());
            ss.sort(Comparator.comparing(s -> s.properties().name().toLowerCase(Locale.ROOT)));
            for (SubscriptionEntity s : ss) {
                SubscriptionProperties sp = s.properties();
                ObjectNode sn = subs.addObject();
                sn.put("name", sp.name());
                sn.put("path", sp.path());
                sn.put("status", sp.status().serviceName());
                sn.put("requiresSession", sp.requiresSession());
                sn.put("maxDeliveryCount", sp.maxDeliveryCount());
                putCounts(sn, sp.path());
                ArrayNode rules = sn.putArray("rules");
                for (RuleProperties r : s.rules()) {
                    ObjectNode rn = rules.addObject();
                    rn.put("name", r.name());
                    rn.put("filter", describe(r.filter()));
                    rn.put("action", r.sqlAction());
                }
            }
        }
        return out;
    }

    /** The shard of each partition (a cluster serves an entity's partitions where their shards are served). */
    private static void putShards(ObjectNode n, PartitionRef[] partitions) {
        ArrayNode shards = n.putArray("shards");
        for (PartitionRef ref : partitions) {
            shards.add(ref.shardIndex());
        }
    }

    /** The cluster as this node sees it; {@code {"clustered":false}} for a single broker. */
    ObjectNode cluster(ClusterView view) {
        ObjectNode out = json.createObjectNode();
        out.put("clustered", view != null);
        out.put("shardCount", engine.shardCount());
        if (view == null) {
            return out;
        }
        out.put("node", view.node());
        ArrayNode live = out.putArray("liveNodes");
        view.liveNodes().forEach(live::add);
        ArrayNode shards = out.putArray("shards");
        Map<Integer, String> owners = view.shardOwners();
        for (int k = 0; k < engine.shardCount(); k++) {
            ObjectNode s = shards.addObject();
            s.put("shard", k);
            if (owners.get(k) != null) {
                s.put("node", owners.get(k));
            } else {
                s.putNull("node");
            }
        }
        return out;
    }

    private void putCounts(ObjectNode n, String path) {
        RuntimeCounts c;
        try {
            c = Await.result(engine.counts(path));
        } catch (BrokerException e) {
            c = RuntimeCounts.ZERO; // deleted while listing
        }
        ObjectNode counts = n.putObject("counts");
        counts.put("active", c.activeMessageCount());
        counts.put("deadLetter", c.deadLetterMessageCount());
        counts.put("scheduled", c.scheduledMessageCount());
        counts.put("transfer", c.transferMessageCount());
        counts.put("transferDeadLetter", c.transferDeadLetterMessageCount());
        counts.put("sizeInBytes", c.sizeInBytes());
    }

    static String describe(RuleProperties.Filter f) {
        if (f instanceof RuleProperties.TrueFilter) {
            return "TrueFilter (1=1)";
        }
        if (f instanceof RuleProperties.FalseFilter) {
            return "FalseFilter (1=0)";
        }
        if (f instanceof RuleProperties.SqlFilter sql) {
            return "SQL: " + sql.expression();
        }
        RuleProperties.CorrelationFilter c = (RuleProperties.CorrelationFilter) f;
        StringBuilder sb = new StringBuilder("Correlation:");
        appendIf(sb, "CorrelationId", c.correlationId());
        appendIf(sb, "MessageId", c.messageId());
        appendIf(sb, "To", c.to());
        appendIf(sb, "ReplyTo", c.replyTo());
        appendIf(sb, "Subject", c.subject());
        appendIf(sb, "SessionId", c.sessionId());
        appendIf(sb, "ReplyToSessionId", c.replyToSessionId());
        appendIf(sb, "ContentType", c.contentType());
        c.properties().forEach((k, v) -> appendIf(sb, k, String.valueOf(v)));
        return sb.toString();
    }

    private static void appendIf(StringBuilder sb, String name, String value) {
        if (value != null) {
            sb.append(' ').append(name).append('=').append(value);
        }
    }

    // ------------------------------------------------------------------------------------------------ entities

    /** Creates a queue, topic, subscription or rule from {@code {kind, name, topic?, subscription?, ...}}. */
    void create(JsonNode req) {
        String kind = text(req, "kind", true);
        String name = text(req, "name", true);
        switch (kind) {
            case "queue" -> {
                QueueProperties.Builder b = QueueProperties.builder(name)
                        .requiresSession(req.path("requiresSession").asBoolean(false));
                if (req.hasNonNull("maxDeliveryCount")) {
                    b.maxDeliveryCount(req.get("maxDeliveryCount").asInt());
                }
                if (req.hasNonNull("lockDurationSeconds")) {
                    b.lockDuration(Duration.ofSeconds(req.get("lockDurationSeconds").asLong()));
                }
                Await.result(engine.createQueue(b.build()));
            }
            case "topic" -> Await.result(engine.createTopic(TopicProperties.builder(name).build()));
            case "subscription" -> {
                SubscriptionProperties.Builder b = SubscriptionProperties.builder(text(req, "topic", true), name)
                        .requiresSession(req.path("requiresSession").asBoolean(false));
                if (req.hasNonNull("maxDeliveryCount")) {
                    b.maxDeliveryCount(req.get("maxDeliveryCount").asInt());
                }
                Await.result(engine.createSubscription(b.build(), List.of()));
            }
            case "rule" -> Await.result(engine.addRule(text(req, "topic", true), text(req, "subscription", true),
                    new RuleProperties(name, filter(req), text(req, "action", false))));
            default -> throw new BrokerException(ErrorKind.ARGUMENT, "Unknown entity kind '" + kind
                    + "': expected queue, topic, subscription or rule.");
        }
    }

    private static RuleProperties.Filter filter(JsonNode req) {
        String sql = text(req, "sqlFilter", false);
        String correlationId = text(req, "correlationId", false);
        if (sql != null && correlationId != null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "Give a SQL filter or a correlation id, not both.");
        }
        if (correlationId != null) {
            return new RuleProperties.CorrelationFilter(correlationId, null, null, null, null, null, null, null,
                    null);
        }
        if (sql == null || sql.strip().equals("1=1")) {
            return RuleProperties.TrueFilter.INSTANCE;
        }
        if (sql.strip().equals("1=0")) {
            return RuleProperties.FalseFilter.INSTANCE;
        }
        return new RuleProperties.SqlFilter(sql);
    }

    /** Deletes a queue, topic, subscription or rule named like {@link #create}. */
    void delete(JsonNode req) {
        String kind = text(req, "kind", true);
        String name = text(req, "name", true);
        switch (kind) {
            case "queue" -> {
                requireQueue(name);
                Await.result(engine.deleteQueue(name));
            }
            case "topic" -> {
                if (engine.topic(name) == null) {
                    throw BrokerException.entityNotFound(name);
                }
                Await.result(engine.deleteTopic(name));
            }
            case "subscription" -> Await.result(engine.deleteSubscription(text(req, "topic", true), name));
            case "rule" -> Await.result(engine.removeRule(text(req, "topic", true), text(req, "subscription", true),
                    name));
            default -> throw new BrokerException(ErrorKind.ARGUMENT, "Unknown entity kind '" + kind
                    + "': expected queue, topic, subscription or rule.");
        }
    }

    private void requireQueue(String name) {
        if (engine.queue(name) == null) {
            throw BrokerException.entityNotFound(name);
        }
    }

    // ------------------------------------------------------------------------------------------------ messages

    /**
     * Browses a queue, subscription or dead-letter queue ({@code entity} is its path; {@code subQueue} is
     * {@code main}, {@code deadletter} or {@code transferdeadletter}); a topic's path browses its scheduled
     * messages.
     */
    ObjectNode browse(String entity, String subQueue, long fromSeq, int max) {
        EntityAddress address = address(entity, subQueue);
        int n = Math.max(1, Math.min(max, MAX_BROWSE));
        List<ReceivedMessage> messages = Await.result(engine.peek(address, Math.max(0, fromSeq), n, null));
        ObjectNode out = json.createObjectNode();
        out.put("entity", address.entityName());
        out.put("subQueue", subQueueName(address.subQueue()));
        ArrayNode list = out.putArray("messages");
        for (ReceivedMessage m : messages) {
            list.add(view(m));
        }
        if (messages.size() == n) {
            out.put("next", messages.get(messages.size() - 1).sequenceNumber() + 1);
        }
        return out;
    }

    ObjectNode view(ReceivedMessage r) {
        Message m = r.message();
        ObjectNode n = json.createObjectNode();
        n.put("sequenceNumber", r.sequenceNumber());
        n.put("state", stateName(r));
        n.put("enqueuedTime", iso(r.enqueuedTimeMs()));
        n.put("deliveryCount", r.deliveryCount());
        if (r.expiresAtMs() != Long.MAX_VALUE) {
            n.put("expiresAt", iso(r.expiresAtMs()));
        }
        Long scheduled = r.scheduledEnqueueTimeMs() != null ? r.scheduledEnqueueTimeMs() : m.scheduledEnqueueTimeMs();
        if (scheduled != null) {
            n.put("scheduledEnqueueTime", iso(scheduled));
        }
        if (r.lockedUntilMs() > 0 && r.lockedUntilMs() != Long.MAX_VALUE) {
            n.put("lockedUntil", iso(r.lockedUntilMs()));
        }
        if (r.deadLetterSource() != null) {
            n.put("deadLetterSource", r.deadLetterSource());
        }
        ObjectNode sys = n.putObject("system");
        putIf(sys, "MessageId", m.messageId());
        putIf(sys, "CorrelationId", m.correlationId());
        putIf(sys, "SessionId", m.sessionId());
        putIf(sys, "Subject", m.subject());
        putIf(sys, "To", m.to());
        putIf(sys, "ReplyTo", m.replyTo());
        putIf(sys, "ReplyToSessionId", m.replyToSessionId());
        putIf(sys, "ContentType", m.contentType());
        putIf(sys, "ContentEncoding", m.contentEncoding());
        putIf(sys, "PartitionKey", m.partitionKey());
        if (m.timeToLiveMs() != null) {
            sys.put("TimeToLive", Duration.ofMillis(m.timeToLiveMs()).toString());
        }
        ArrayNode props = n.putArray("properties");
        for (Map.Entry<String, Object> e : m.applicationProperties().entrySet()) {
            ObjectNode p = props.addObject();
            p.put("name", e.getKey());
            p.put("type", typeName(e.getValue()));
            p.put("value", display(e.getValue()));
        }
        BodyView.render(m.bodyFormat(), m.body(), m.contentType(), n.putObject("body"));
        return n;
    }

    private static String stateName(ReceivedMessage r) {
        return switch (r.state()) {
            case ACTIVE -> "Active";
            case DEFERRED -> "Deferred";
            case SCHEDULED -> "Scheduled";
        };
    }

    private static void putIf(ObjectNode n, String name, Object value) {
        if (value != null) {
            n.put(name, display(value));
        }
    }

    static String typeName(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof byte[]) {
            return "binary";
        }
        if (v instanceof Instant) {
            return "timestamp";
        }
        if (v instanceof Decimal d) {
            return "decimal" + d.width() * 8;
        }
        if (v instanceof Map) {
            return "map";
        }
        if (v instanceof List) {
            return "list";
        }
        return v.getClass().getSimpleName().toLowerCase(Locale.ROOT);
    }

    static String display(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof byte[] b) {
            return HexFormat.of().formatHex(b);
        }
        if (v instanceof Symbol || v instanceof Unsigned || v instanceof Described) {
            return v.toString();
        }
        return String.valueOf(v);
    }

    /**
     * Sends a message: {@code {entity, body, contentType?, sessionId?, messageId?, subject?, correlationId?,
     * properties?: {name: string|number|boolean}, scheduledEnqueueTime?: ISO-8601}}. A future scheduled time
     * schedules the message; the reply carries its sequence number then.
     */
    ObjectNode send(JsonNode req) {
        String entity = text(req, "entity", true);
        String body = req.path("body").asText("");
        Message.Builder b = Message.builder()
                .body(body.getBytes(StandardCharsets.UTF_8))
                .contentType(text(req, "contentType", false))
                .sessionId(text(req, "sessionId", false))
                .subject(text(req, "subject", false))
                .correlationId(text(req, "correlationId", false))
                .durable(true);
        String messageId = text(req, "messageId", false);
        b.messageId(messageId != null ? messageId : UUID.randomUUID().toString().replace("-", ""));
        JsonNode props = req.path("properties");
        if (props.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = props.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                b.applicationProperty(e.getKey(), propertyValue(e.getKey(), e.getValue()));
            }
        }
        ObjectNode out = json.createObjectNode();
        String scheduled = text(req, "scheduledEnqueueTime", false);
        if (scheduled != null) {
            long at;
            try {
                at = Instant.parse(scheduled).toEpochMilli();
            } catch (DateTimeParseException e) {
                throw new BrokerException(ErrorKind.ARGUMENT, "scheduledEnqueueTime '" + scheduled
                        + "' is not an ISO-8601 UTC time such as 2030-01-01T12:00:00Z.");
            }
            b.scheduledEnqueueTimeMs(at);
            if (at > clock.epochMillis()) {
                long[] seqs = Await.result(engine.schedule(entity, List.of(b.build())));
                out.put("scheduled", true);
                out.put("sequenceNumber", seqs[0]);
                return out;
            }
        }
        Await.result(engine.send(entity, List.of(b.build())));
        out.put("scheduled", false);
        return out;
    }

    private static Object propertyValue(String name, JsonNode v) {
        if (v.isTextual()) {
            return v.asText();
        }
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        if (v.isIntegralNumber()) {
            return v.canConvertToInt() ? (Object) v.asInt() : (Object) v.asLong();
        }
        if (v.isNumber()) {
            return v.asDouble();
        }
        if (v.isNull()) {
            return null;
        }
        throw new BrokerException(ErrorKind.ARGUMENT, "Property '" + name
                + "' must be a string, a number or a boolean.");
    }

    /** Cancels a scheduled message of a queue or topic. */
    void cancelScheduled(JsonNode req) {
        String entity = text(req, "entity", true);
        long seq = longValue(req, "sequenceNumber");
        List<ReceivedMessage> found = Await.result(engine.peek(EntityAddress.queueOrTopic(entity), seq, 1, null));
        if (found.isEmpty() || found.get(0).sequenceNumber() != seq
                || found.get(0).state() != MessageState.SCHEDULED) {
            throw new BrokerException(ErrorKind.MESSAGE_NOT_FOUND, "No scheduled message with sequence number "
                    + seq + " exists in '" + entity + "'.");
        }
        Await.result(engine.cancelScheduled(entity, new long[] {seq}));
    }

    /** Moves an active or deferred message of a queue or subscription to its dead-letter queue. */
    void deadLetter(JsonNode req) {
        EntityAddress address = address(text(req, "entity", true), "main");
        long seq = longValue(req, "sequenceNumber");
        String reason = text(req, "reason", false);
        String description = text(req, "description", false);
        locker.withLocked(address, seq, locked -> Await.result(engine.deadLetter(address,
                locked.message().lockToken(), reason == null ? CONSOLE_DEAD_LETTER_REASON : reason,
                description == null ? "Dead-lettered from the Buslane console." : description, null)));
    }

    /**
     * Sends a copy of a dead-lettered message back to its entity (a subscription's to its topic) without the
     * dead-letter reason and description, then completes the dead-lettered one: the copy is durable before the
     * original goes, so a failure in between leaves a duplicate, never a loss. On an entity with duplicate
     * detection the copy gets a new MessageId (the old one is kept in {@value #ORIGINAL_MESSAGE_ID}), since the
     * entity would otherwise drop it as a duplicate inside its detection window.
     */
    ObjectNode resubmit(JsonNode req) {
        EntityAddress address = address(text(req, "entity", true), text(req, "subQueue", false) == null
                ? "deadletter" : text(req, "subQueue", false));
        if (address.subQueue() == SubQueue.MAIN) {
            throw new BrokerException(ErrorKind.INVALID_OPERATION, "Only dead-lettered messages can be resubmitted.");
        }
        long seq = longValue(req, "sequenceNumber");
        String target = address.entityPath();
        boolean dedup = duplicateDetection(target);
        Object newId = locker.withLocked(address, seq, locked -> {
            Message original = locked.message().message();
            Map<String, Object> props = new LinkedHashMap<>(original.applicationProperties());
            props.remove("DeadLetterReason");
            props.remove("DeadLetterErrorDescription");
            // a new send: none of the broker's own marks of the original's history (forwarded, scheduled) carry over
            Map<String, Object> annotations = new LinkedHashMap<>(original.annotations());
            annotations.remove(Message.ENQUEUED_SEQUENCE_NUMBER);
            annotations.remove(Message.WAS_SCHEDULED);
            Message.Builder copy = original.toBuilder().applicationProperties(props).annotations(annotations)
                    .scheduledEnqueueTimeMs(null).encodedSize(0);
            Object id = original.messageId();
            if (dedup) {
                // the entity would drop a copy with the same MessageId inside its detection window, and the
                // original is completed next: a fresh id keeps the resubmission from being lost
                id = UUID.randomUUID().toString().replace("-", "");
                copy.messageId(id);
                if (original.messageId() != null) {
                    copy.applicationProperty(ORIGINAL_MESSAGE_ID, display(original.messageId()));
                }
            }
            Await.result(engine.send(target, List.of(copy.build())));
            Await.result(engine.complete(address, locked.message().lockToken()));
            return id;
        });
        ObjectNode out = json.createObjectNode();
        out.put("resubmittedTo", target);
        out.put("messageId", newId == null ? null : display(newId));
        out.put("newMessageId", dedup);
        return out;
    }

    private boolean duplicateDetection(String entityPath) {
        QueueEntity q = engine.queue(entityPath);
        if (q != null) {
            return q.properties().requiresDuplicateDetection();
        }
        TopicEntity t = engine.topic(entityPath);
        if (t == null) {
            throw BrokerException.entityNotFound(entityPath);
        }
        return t.properties().requiresDuplicateDetection();
    }

    /** Deletes one message: a scheduled one is cancelled, others are locked and completed. */
    void deleteMessage(JsonNode req) {
        EntityAddress address = address(text(req, "entity", true), text(req, "subQueue", false));
        long seq = longValue(req, "sequenceNumber");
        if (address.subQueue() == SubQueue.MAIN) {
            List<ReceivedMessage> found = Await.result(engine.peek(address, seq, 1, null));
            if (!found.isEmpty() && found.get(0).sequenceNumber() == seq
                    && found.get(0).state() == MessageState.SCHEDULED) {
                Await.result(engine.cancelScheduled(address.entityPath(), new long[] {seq}));
                return;
            }
        }
        locker.withLocked(address, seq, locked -> Await.result(engine.complete(address,
                locked.message().lockToken())));
    }

    /** Deletes every message of a queue's, subscription's or dead-letter queue's; replies with how many. */
    ObjectNode purge(JsonNode req) {
        EntityAddress address = address(text(req, "entity", true), text(req, "subQueue", false));
        int n = Await.result(engine.purge(address));
        ObjectNode out = json.createObjectNode();
        out.put("deleted", n);
        return out;
    }

    // ------------------------------------------------------------------------------------------------ sessions

    /** The sessions of a session-enabled queue or subscription with their state and whether they are locked. */
    ObjectNode sessions(String entity) {
        EntityAddress address = address(entity, "main");
        ObjectNode out = json.createObjectNode();
        ArrayNode list = out.putArray("sessions");
        if (!engine.requiresSession(address)) {
            out.put("requiresSession", false);
            return out;
        }
        out.put("requiresSession", true);
        List<String> ids = Await.result(engine.listSessions(address, Engine.ALL_ACTIVE_SESSIONS, 0, MAX_SESSIONS,
                null));
        for (String id : ids) {
            ObjectNode s = list.addObject();
            s.put("sessionId", id);
            byte[] state = Await.result(engine.getSessionState(address, id));
            if (state == null) {
                s.putNull("state");
            } else {
                BodyView.render(0, state, null, s.putObject("state"));
            }
            boolean locked;
            try {
                Await.result(engine.checkSessionLocked(address, id, null));
                locked = true;
            } catch (BrokerException e) {
                locked = false;
            }
            s.put("locked", locked);
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------------ helpers

    static EntityAddress address(String entity, String subQueue) {
        EntityAddress parsed = EntityAddress.parse(entity);
        if (parsed == null) {
            throw new BrokerException(ErrorKind.ARGUMENT, "An entity path is required.");
        }
        SubQueue q = switch (subQueue == null ? "main" : subQueue.toLowerCase(Locale.ROOT)) {
            case "main", "active", "" -> parsed.subQueue();
            case "deadletter", "dlq", "$deadletterqueue" -> SubQueue.DEAD_LETTER;
            case "transferdeadletter" -> SubQueue.TRANSFER_DEAD_LETTER;
            default -> throw new BrokerException(ErrorKind.ARGUMENT, "Unknown sub-queue '" + subQueue
                    + "': expected main, deadletter or transferdeadletter.");
        };
        return parsed.withSubQueue(q);
    }

    private static String subQueueName(SubQueue q) {
        return switch (q) {
            case MAIN -> "main";
            case DEAD_LETTER -> "deadletter";
            case TRANSFER_DEAD_LETTER -> "transferdeadletter";
        };
    }

    private static String text(JsonNode req, String field, boolean required) {
        JsonNode v = req.get(field);
        if (v == null || v.isNull() || (v.isTextual() && v.asText().isEmpty())) {
            if (required) {
                throw new BrokerException(ErrorKind.ARGUMENT, "'" + field + "' is required.");
            }
            return null;
        }
        return v.asText();
    }

    private static long longValue(JsonNode req, String field) {
        JsonNode v = req.get(field);
        if (v == null || !(v.isIntegralNumber() || (v.isTextual() && v.asText().matches("\\d+")))) {
            throw new BrokerException(ErrorKind.ARGUMENT, "'" + field + "' must be a whole number.");
        }
        return v.asLong();
    }

    static String iso(long epochMs) {
        return Instant.ofEpochMilli(epochMs).toString();
    }
}
