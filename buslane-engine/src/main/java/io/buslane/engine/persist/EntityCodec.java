package io.buslane.engine.persist;

import io.buslane.common.auth.Right;
import io.buslane.engine.entity.AuthorizationRule;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;

import java.time.Duration;
import java.util.Set;
import java.util.List;
import java.util.EnumSet;
import java.util.ArrayList;
import java.util.LinkedHashSet;

/**
 * Stateless and thread-safe. Encodes entity descriptions (queues, topics, subscriptions, rules) for the journal;
 * decoding goes through the records' builders and constructors, so a decoded description is validated like any
 * other.
 *
 * <p>Every record starts with the version byte {@value #VERSION} and a kind byte (1 queue, 2 topic,
 * 3 subscription, 4 rule), then the record's components in declaration order. Primitives are as in
 * {@link RecordWriter}: strings nullable, ints signed var-ints, longs signed var-longs, booleans one byte. A
 * duration is a signed var-long of seconds and a var-int of nanoseconds (so {@code Limits.MAX_DURATION} is exact).
 * A status is one byte (0 Active, 1 Disabled, 2 SendDisabled, 3 ReceiveDisabled), independent of the enum's
 * declaration order. A rule filter is a kind byte (0 true, 1 false, 2 SQL, 3 correlation) followed, for SQL, by the
 * expression and, for correlation, by its eight nullable strings in declaration order and its properties as a
 * {@link ValueCodec#writeStringMap string map}; the rule's SQL action (nullable string) follows the filter. A SQL
 * filter with parameters is kind 4: the expression, then its parameters as a string map; a rule whose action has
 * parameters is record kind 5, its action followed by them as a string map (records without parameters are written
 * as before, so older journals read unchanged).
 *
 * <p>Malformed input, another version or the wrong kind fails with an {@link IllegalArgumentException}.
 */
public final class EntityCodec {

    /** The format version this codec writes and reads. */
    public static final int VERSION = 1;

    static final byte KIND_QUEUE = 1;
    static final byte KIND_TOPIC = 2;
    static final byte KIND_SUBSCRIPTION = 3;
    static final byte KIND_RULE = 4;
    static final byte KIND_RULE_WITH_ACTION_PARAMETERS = 5;

    static final byte FILTER_TRUE = 0;
    static final byte FILTER_FALSE = 1;
    static final byte FILTER_SQL = 2;
    static final byte FILTER_CORRELATION = 3;
    static final byte FILTER_SQL_WITH_PARAMETERS = 4;

    private EntityCodec() {
    }

    public static void writeQueue(RecordWriter w, QueueProperties q) {
        writeHeader(w, KIND_QUEUE);
        w.writeString(q.name());
        writeDuration(w, q.lockDuration());
        w.writeSignedVarInt(q.maxDeliveryCount());
        w.writeBoolean(q.requiresSession());
        writeDuration(w, q.defaultMessageTimeToLive());
        w.writeBoolean(q.deadLetteringOnMessageExpiration());
        w.writeBoolean(q.requiresDuplicateDetection());
        writeDuration(w, q.duplicateDetectionHistoryTimeWindow());
        w.writeBoolean(q.enablePartitioning());
        w.writeString(q.forwardTo());
        w.writeString(q.forwardDeadLetteredMessagesTo());
        w.writeSignedVarLong(q.maxSizeInMegabytes());
        writeStatus(w, q.status());
        writeDuration(w, q.autoDeleteOnIdle());
        w.writeBoolean(q.enableBatchedOperations());
        w.writeString(q.userMetadata());
        w.writeSignedVarInt(q.maxMessageSizeInKilobytes());
        writeAuthorizationRules(w, q.authorizationRules());
        writeForwardAddresses(w, q.forwardToAddress(), q.forwardDeadLetteredMessagesToAddress());
    }

    public static QueueProperties readQueue(RecordReader r) {
        readHeader(r, KIND_QUEUE);
        QueueProperties.Builder b = QueueProperties.builder(r.readString());
        b.lockDuration(readDuration(r));
        b.maxDeliveryCount(r.readSignedVarInt());
        b.requiresSession(r.readBoolean());
        b.defaultMessageTimeToLive(readDuration(r));
        b.deadLetteringOnMessageExpiration(r.readBoolean());
        b.requiresDuplicateDetection(r.readBoolean());
        b.duplicateDetectionHistoryTimeWindow(readDuration(r));
        b.enablePartitioning(r.readBoolean());
        b.forwardTo(r.readString());
        b.forwardDeadLetteredMessagesTo(r.readString());
        b.maxSizeInMegabytes(r.readSignedVarLong());
        b.status(readStatus(r));
        b.autoDeleteOnIdle(readDuration(r));
        b.enableBatchedOperations(r.readBoolean());
        b.userMetadata(r.readString());
        b.maxMessageSizeInKilobytes(r.readSignedVarInt());
        b.authorizationRules(readAuthorizationRules(r));
        if (r.hasRemaining()) {
            b.forwardToAddress(r.readString());
            b.forwardDeadLetteredMessagesToAddress(r.readString());
        }
        return b.build();
    }

    /**
     * Appended after everything else (a description written before has none, nothing follows): the forwarding
     * targets as the client wrote them, shown back by the administration API.
     */
    private static void writeForwardAddresses(RecordWriter w, String forwardTo, String forwardDeadLettered) {
        w.writeString(forwardTo);
        w.writeString(forwardDeadLettered);
    }

    /** Appended after the first format's last field: a description written before has none (nothing follows). */
    private static void writeAuthorizationRules(RecordWriter w, List<AuthorizationRule> rules) {
        w.writeVarInt(rules.size());
        for (AuthorizationRule a : rules) {
            w.writeString(a.keyName());
            w.writeString(a.primaryKey());
            w.writeString(a.secondaryKey());
            int mask = 0;
            for (Right right : a.rights()) {
                mask |= rightBit(right);
            }
            w.writeByte(mask);
            w.writeString(a.claimType());
            w.writeString(a.claimValue());
            w.writeLong(a.createdAtMs());
            w.writeLong(a.modifiedAtMs());
        }
        // appended: each rule's rights in the order given (the mask above keeps none); a description written before
        // has none, its rights come back in the mask's order
        for (AuthorizationRule a : rules) {
            w.writeVarInt(a.rights().size());
            for (Right right : a.rights()) {
                w.writeByte(rightBit(right));
            }
        }
    }

    /** A right's bit in the stored mask: Manage 1, Send 2, Listen 4 (fixed, whatever the enum's order). */
    private static int rightBit(Right right) {
        return switch (right) {
            case MANAGE -> 1;
            case SEND -> 2;
            case LISTEN -> 4;
        };
    }

    private static List<AuthorizationRule> readAuthorizationRules(RecordReader r) {
        if (!r.hasRemaining()) {
            return List.of();
        }
        int n = r.readVarInt();
        List<AuthorizationRule> rules = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String keyName = r.readString();
            String primary = r.readString();
            String secondary = r.readString();
            int mask = r.readUnsignedByte();
            Set<Right> rights = EnumSet.noneOf(Right.class);
            for (Right right : Right.values()) {
                if ((mask & rightBit(right)) != 0) {
                    rights.add(right);
                }
            }
            rules.add(new AuthorizationRule(keyName, primary, secondary, rights, r.readString(), r.readString(),
                    r.readLong(), r.readLong()));
        }
        if (!r.hasRemaining()) {
            return rules;
        }
        List<AuthorizationRule> ordered = new ArrayList<>(n);
        for (AuthorizationRule a : rules) {
            int count = r.readVarInt();
            Set<Right> inOrder = new LinkedHashSet<>();
            for (int k = 0; k < count; k++) {
                int bit = r.readUnsignedByte();
                for (Right right : Right.values()) {
                    if (rightBit(right) == bit) {
                        inOrder.add(right);
                    }
                }
            }
            ordered.add(inOrder.equals(a.rights()) ? new AuthorizationRule(a.keyName(), a.primaryKey(),
                    a.secondaryKey(), inOrder, a.claimType(), a.claimValue(), a.createdAtMs(), a.modifiedAtMs()) : a);
        }
        return ordered;
    }

    public static void writeTopic(RecordWriter w, TopicProperties t) {
        writeHeader(w, KIND_TOPIC);
        w.writeString(t.name());
        writeDuration(w, t.defaultMessageTimeToLive());
        w.writeBoolean(t.requiresDuplicateDetection());
        writeDuration(w, t.duplicateDetectionHistoryTimeWindow());
        w.writeBoolean(t.enablePartitioning());
        w.writeSignedVarLong(t.maxSizeInMegabytes());
        writeStatus(w, t.status());
        writeDuration(w, t.autoDeleteOnIdle());
        w.writeBoolean(t.supportOrdering());
        w.writeBoolean(t.enableBatchedOperations());
        w.writeString(t.userMetadata());
        w.writeSignedVarInt(t.maxMessageSizeInKilobytes());
        writeAuthorizationRules(w, t.authorizationRules());
    }

    public static TopicProperties readTopic(RecordReader r) {
        readHeader(r, KIND_TOPIC);
        TopicProperties.Builder b = TopicProperties.builder(r.readString());
        b.defaultMessageTimeToLive(readDuration(r));
        b.requiresDuplicateDetection(r.readBoolean());
        b.duplicateDetectionHistoryTimeWindow(readDuration(r));
        b.enablePartitioning(r.readBoolean());
        b.maxSizeInMegabytes(r.readSignedVarLong());
        b.status(readStatus(r));
        b.autoDeleteOnIdle(readDuration(r));
        b.supportOrdering(r.readBoolean());
        b.enableBatchedOperations(r.readBoolean());
        b.userMetadata(r.readString());
        b.maxMessageSizeInKilobytes(r.readSignedVarInt());
        b.authorizationRules(readAuthorizationRules(r));
        return b.build();
    }

    public static void writeSubscription(RecordWriter w, SubscriptionProperties s) {
        writeHeader(w, KIND_SUBSCRIPTION);
        w.writeString(s.topicName());
        w.writeString(s.name());
        writeDuration(w, s.lockDuration());
        w.writeSignedVarInt(s.maxDeliveryCount());
        w.writeBoolean(s.requiresSession());
        writeDuration(w, s.defaultMessageTimeToLive());
        w.writeBoolean(s.deadLetteringOnMessageExpiration());
        w.writeBoolean(s.deadLetteringOnFilterEvaluationExceptions());
        w.writeString(s.forwardTo());
        w.writeString(s.forwardDeadLetteredMessagesTo());
        writeStatus(w, s.status());
        writeDuration(w, s.autoDeleteOnIdle());
        w.writeBoolean(s.enableBatchedOperations());
        w.writeString(s.userMetadata());
    }

    /**
     * A subscription's forwarding targets as the client wrote them. Not part of {@link #writeSubscription}: the meta
     * record of a subscription carries its rules right after it, so these follow the rules, at the record's end
     * (a reader of before ignores them; one of now finds none in a record of before).
     */
    public static void writeSubscriptionAddresses(RecordWriter w, SubscriptionProperties s) {
        writeForwardAddresses(w, s.forwardToAddress(), s.forwardDeadLetteredMessagesToAddress());
    }

    /** {@code s} with the addresses {@link #writeSubscriptionAddresses} wrote, when the record holds them. */
    public static SubscriptionProperties readSubscriptionAddresses(RecordReader r, SubscriptionProperties s) {
        if (!r.hasRemaining()) {
            return s;
        }
        return s.toBuilder().forwardToAddress(r.readString()).forwardDeadLetteredMessagesToAddress(r.readString())
                .build();
    }

    public static SubscriptionProperties readSubscription(RecordReader r) {
        readHeader(r, KIND_SUBSCRIPTION);
        String topicName = r.readString();
        SubscriptionProperties.Builder b = SubscriptionProperties.builder(topicName, r.readString());
        b.lockDuration(readDuration(r));
        b.maxDeliveryCount(r.readSignedVarInt());
        b.requiresSession(r.readBoolean());
        b.defaultMessageTimeToLive(readDuration(r));
        b.deadLetteringOnMessageExpiration(r.readBoolean());
        b.deadLetteringOnFilterEvaluationExceptions(r.readBoolean());
        b.forwardTo(r.readString());
        b.forwardDeadLetteredMessagesTo(r.readString());
        b.status(readStatus(r));
        b.autoDeleteOnIdle(readDuration(r));
        b.enableBatchedOperations(r.readBoolean());
        b.userMetadata(r.readString());
        return b.build();
    }

    public static void writeRule(RecordWriter w, RuleProperties rule) {
        boolean actionParameters = !rule.actionParameters().isEmpty();
        writeHeader(w, actionParameters ? KIND_RULE_WITH_ACTION_PARAMETERS : KIND_RULE);
        w.writeString(rule.name());
        writeFilter(w, rule.filter());
        w.writeString(rule.sqlAction());
        if (actionParameters) {
            ValueCodec.writeStringMap(w, rule.actionParameters());
        }
    }

    public static RuleProperties readRule(RecordReader r) {
        boolean actionParameters = readHeader(r, KIND_RULE, KIND_RULE_WITH_ACTION_PARAMETERS)
                == KIND_RULE_WITH_ACTION_PARAMETERS;
        String name = r.readString();
        RuleProperties.Filter filter = readFilter(r);
        String action = r.readString();
        return new RuleProperties(name, filter, action, actionParameters ? ValueCodec.readStringMap(r) : null);
    }

    private static void writeFilter(RecordWriter w, RuleProperties.Filter filter) {
        if (filter instanceof RuleProperties.TrueFilter) {
            w.writeByte(FILTER_TRUE);
        } else if (filter instanceof RuleProperties.FalseFilter) {
            w.writeByte(FILTER_FALSE);
        } else if (filter instanceof RuleProperties.SqlFilter sql && !sql.parameters().isEmpty()) {
            w.writeByte(FILTER_SQL_WITH_PARAMETERS);
            w.writeString(sql.expression());
            ValueCodec.writeStringMap(w, sql.parameters());
        } else if (filter instanceof RuleProperties.SqlFilter sql) {
            w.writeByte(FILTER_SQL);
            w.writeString(sql.expression());
        } else if (filter instanceof RuleProperties.CorrelationFilter c) {
            w.writeByte(FILTER_CORRELATION);
            w.writeString(c.correlationId());
            w.writeString(c.messageId());
            w.writeString(c.to());
            w.writeString(c.replyTo());
            w.writeString(c.subject());
            w.writeString(c.sessionId());
            w.writeString(c.replyToSessionId());
            w.writeString(c.contentType());
            ValueCodec.writeStringMap(w, c.properties());
        } else {
            throw new IllegalArgumentException("unsupported filter type "
                    + (filter == null ? "null" : filter.getClass().getName()));
        }
    }

    private static RuleProperties.Filter readFilter(RecordReader r) {
        byte kind = r.readByte();
        switch (kind) {
            case FILTER_TRUE:
                return RuleProperties.TrueFilter.INSTANCE;
            case FILTER_FALSE:
                return RuleProperties.FalseFilter.INSTANCE;
            case FILTER_SQL:
            case FILTER_SQL_WITH_PARAMETERS: {
                String expression = r.readString();
                if (expression == null) {
                    throw new IllegalArgumentException("malformed record: SQL filter without expression");
                }
                return new RuleProperties.SqlFilter(expression,
                        kind == FILTER_SQL_WITH_PARAMETERS ? ValueCodec.readStringMap(r) : null);
            }
            case FILTER_CORRELATION: {
                String correlationId = r.readString();
                String messageId = r.readString();
                String to = r.readString();
                String replyTo = r.readString();
                String subject = r.readString();
                String sessionId = r.readString();
                String replyToSessionId = r.readString();
                String contentType = r.readString();
                return new RuleProperties.CorrelationFilter(correlationId, messageId, to, replyTo, subject,
                        sessionId, replyToSessionId, contentType, ValueCodec.readStringMap(r));
            }
            default:
                throw new IllegalArgumentException("malformed record: unknown filter kind " + kind);
        }
    }

    private static void writeHeader(RecordWriter w, byte kind) {
        w.writeByte(VERSION);
        w.writeByte(kind);
    }

    private static void readHeader(RecordReader r, byte expectedKind) {
        readHeader(r, expectedKind, expectedKind);
    }

    /** Reads the header; returns its kind, which must be one of the two. */
    private static byte readHeader(RecordReader r, byte expectedKind, byte alternativeKind) {
        int version = r.readUnsignedByte();
        if (version != VERSION) {
            throw new IllegalArgumentException("unsupported entity record version " + version + " (expected "
                    + VERSION + ")");
        }
        byte kind = r.readByte();
        if (kind != expectedKind && kind != alternativeKind) {
            throw new IllegalArgumentException("malformed record: entity kind " + kind + " where "
                    + expectedKind + " was expected");
        }
        return kind;
    }

    private static void writeDuration(RecordWriter w, Duration d) {
        w.writeSignedVarLong(d.getSeconds());
        w.writeVarInt(d.getNano());
    }

    private static Duration readDuration(RecordReader r) {
        long seconds = r.readSignedVarLong();
        int nanos = r.readVarInt();
        if (nanos < 0 || nanos > 999_999_999) {
            throw new IllegalArgumentException("malformed record: duration nanoseconds " + nanos);
        }
        return Duration.ofSeconds(seconds, nanos);
    }

    private static void writeStatus(RecordWriter w, EntityStatus status) {
        switch (status) {
            case ACTIVE:
                w.writeByte(0);
                break;
            case DISABLED:
                w.writeByte(1);
                break;
            case SEND_DISABLED:
                w.writeByte(2);
                break;
            case RECEIVE_DISABLED:
                w.writeByte(3);
                break;
            default:
                throw new IllegalArgumentException("unsupported entity status " + status);
        }
    }

    private static EntityStatus readStatus(RecordReader r) {
        byte code = r.readByte();
        switch (code) {
            case 0:
                return EntityStatus.ACTIVE;
            case 1:
                return EntityStatus.DISABLED;
            case 2:
                return EntityStatus.SEND_DISABLED;
            case 3:
                return EntityStatus.RECEIVE_DISABLED;
            default:
                throw new IllegalArgumentException("malformed record: entity status " + code);
        }
    }
}
