package io.buslane.management.atom;

import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.error.BrokerException;

import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.ForwardAddress;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import org.w3c.dom.Element;

import java.util.Arrays;
import java.util.List;

/**
 * Queue, topic and subscription descriptions to engine properties. Elements that are absent keep the base value:
 * the cloud's defaults on create, the current description on update. Read-only and unsupported elements
 * ({@code CreatedAt}, {@code CountDetails}, {@code EnableExpress}, ...) are ignored; {@code AuthorizationRules}
 * always replaces the entity's rules (absent: none, as the SDKs omit the element for an empty list).
 */
final class DescriptionReader {

    private DescriptionReader() {
    }

    /** Builds the queue's description; {@code base} is the current one for an update, null for a create. */
    static QueueProperties queue(String name, Element d, QueueProperties base) {
        requireKind(d, "QueueDescription");
        Fields f = new Fields(d);
        QueueProperties.Builder b = base == null ? QueueProperties.builder(name) : base.toBuilder();
        f.ifDuration("LockDuration", b::lockDuration);
        f.ifLong("MaxSizeInMegabytes", b::maxSizeInMegabytes);
        f.ifBoolean("RequiresDuplicateDetection", b::requiresDuplicateDetection);
        f.ifBoolean("RequiresSession", b::requiresSession);
        f.ifDuration("DefaultMessageTimeToLive", b::defaultMessageTimeToLive);
        f.ifBoolean("DeadLetteringOnMessageExpiration", b::deadLetteringOnMessageExpiration);
        f.ifDuration("DuplicateDetectionHistoryTimeWindow", b::duplicateDetectionHistoryTimeWindow);
        f.ifInt("MaxDeliveryCount", b::maxDeliveryCount);
        f.ifBoolean("EnableBatchedOperations", b::enableBatchedOperations);
        f.ifText("Status", v -> b.status(EntityStatus.parse(v.trim())));
        f.ifText("ForwardTo", v -> b.forwardTo(entityName(v)).forwardToAddress(ForwardAddress.asSent(v)));
        f.ifText("UserMetadata", b::userMetadata);
        f.ifDuration("AutoDeleteOnIdle", b::autoDeleteOnIdle);
        f.ifBoolean("EnablePartitioning", b::enablePartitioning);
        f.ifText("ForwardDeadLetteredMessagesTo", v -> b.forwardDeadLetteredMessagesTo(entityName(v))
                .forwardDeadLetteredMessagesToAddress(ForwardAddress.asSent(v)));
        f.ifInt("MaxMessageSizeInKilobytes", b::maxMessageSizeInKilobytes);
        Element rules = AtomReader.child(d, "AuthorizationRules");
        // a description replaces the rules: the SDKs leave the element out when there is none
        b.authorizationRules(rules == null ? List.of()
                : AuthorizationRulesXml.read(rules, System.currentTimeMillis()));
        QueueProperties read = b.build();
        long perPartition = perPartitionSize(read.enablePartitioning(), read.maxSizeInMegabytes(),
                base == null ? -1 : base.maxSizeInMegabytes());
        return perPartition == read.maxSizeInMegabytes() ? read : read.toBuilder().maxSizeInMegabytes(perPartition)
                .build();
    }

    /**
     * The service reports a partitioned entity's size as its 16 partitions' sum (1,024 MB given: 16,384 reported),
     * and the SDKs send that back when they update a description they read: on a partitioned entity, the sum of
     * its current size ({@code currentMegabytes}, -1 for a new one) or one of the service's sums
     * ({@link DescriptionWriter#PARTITIONED_SIZES}) means its sixteenth, so that reading and updating never
     * changes the size.
     */
    static long perPartitionSize(boolean partitioned, long maxSizeInMegabytes, long currentMegabytes) {
        if (!partitioned || maxSizeInMegabytes % DescriptionWriter.PARTITIONS != 0) {
            return maxSizeInMegabytes;
        }
        long sixteenth = maxSizeInMegabytes / DescriptionWriter.PARTITIONS;
        boolean echo = currentMegabytes > 0 && sixteenth == currentMegabytes;
        boolean serviceSum = Arrays.stream(DescriptionWriter.PARTITIONED_SIZES)
                .anyMatch(v -> v == sixteenth);
        return echo || serviceSum ? sixteenth : maxSizeInMegabytes;
    }

    static TopicProperties topic(String name, Element d, TopicProperties base) {
        requireKind(d, "TopicDescription");
        Fields f = new Fields(d);
        TopicProperties.Builder b = base == null ? TopicProperties.builder(name) : base.toBuilder();
        f.ifDuration("DefaultMessageTimeToLive", b::defaultMessageTimeToLive);
        f.ifLong("MaxSizeInMegabytes", b::maxSizeInMegabytes);
        f.ifBoolean("RequiresDuplicateDetection", b::requiresDuplicateDetection);
        f.ifDuration("DuplicateDetectionHistoryTimeWindow", b::duplicateDetectionHistoryTimeWindow);
        f.ifBoolean("EnableBatchedOperations", b::enableBatchedOperations);
        f.ifText("Status", v -> b.status(EntityStatus.parse(v.trim())));
        f.ifText("UserMetadata", b::userMetadata);
        f.ifBoolean("SupportOrdering", b::supportOrdering);
        f.ifDuration("AutoDeleteOnIdle", b::autoDeleteOnIdle);
        f.ifBoolean("EnablePartitioning", b::enablePartitioning);
        f.ifInt("MaxMessageSizeInKilobytes", b::maxMessageSizeInKilobytes);
        Element rules = AtomReader.child(d, "AuthorizationRules");
        // a description replaces the rules: the SDKs leave the element out when there is none
        b.authorizationRules(rules == null ? List.of()
                : AuthorizationRulesXml.read(rules, System.currentTimeMillis()));
        TopicProperties read = b.build();
        long perPartition = perPartitionSize(read.enablePartitioning(), read.maxSizeInMegabytes(),
                base == null ? -1 : base.maxSizeInMegabytes());
        return perPartition == read.maxSizeInMegabytes() ? read : read.toBuilder().maxSizeInMegabytes(perPartition)
                .build();
    }

    static SubscriptionProperties subscription(String topic, String name, Element d, SubscriptionProperties base) {
        requireKind(d, "SubscriptionDescription");
        Fields f = new Fields(d);
        SubscriptionProperties.Builder b = base == null ? SubscriptionProperties.builder(topic, name)
                : base.toBuilder();
        f.ifDuration("LockDuration", b::lockDuration);
        f.ifBoolean("RequiresSession", b::requiresSession);
        f.ifDuration("DefaultMessageTimeToLive", b::defaultMessageTimeToLive);
        f.ifBoolean("DeadLetteringOnMessageExpiration", b::deadLetteringOnMessageExpiration);
        f.ifBoolean("DeadLetteringOnFilterEvaluationExceptions", b::deadLetteringOnFilterEvaluationExceptions);
        f.ifInt("MaxDeliveryCount", b::maxDeliveryCount);
        f.ifBoolean("EnableBatchedOperations", b::enableBatchedOperations);
        f.ifText("Status", v -> b.status(EntityStatus.parse(v.trim())));
        f.ifText("ForwardTo", v -> b.forwardTo(entityName(v)).forwardToAddress(ForwardAddress.asSent(v)));
        f.ifText("UserMetadata", b::userMetadata);
        f.ifText("ForwardDeadLetteredMessagesTo", v -> b.forwardDeadLetteredMessagesTo(entityName(v))
                .forwardDeadLetteredMessagesToAddress(ForwardAddress.asSent(v)));
        f.ifDuration("AutoDeleteOnIdle", b::autoDeleteOnIdle);
        return b.build();
    }

    /** The rules a new subscription starts with: its {@code DefaultRuleDescription}, or none (the engine's default). */
    static List<RuleProperties> defaultRules(Element subscriptionDescription) {
        Element rule = AtomReader.child(subscriptionDescription, "DefaultRuleDescription");
        if (rule == null || AtomReader.isNil(rule)) {
            return List.of();
        }
        String name = new Fields(rule).text("Name");
        return List.of(RuleReader.rule(rule, name == null || name.isBlank() ? RuleProperties.DEFAULT_RULE_NAME
                : name.trim()));
    }

    /**
     * The entity name in a {@code ForwardTo} value: the SDKs send an absolute URL ({@code https://ns/queue} from
     * Java and JavaScript, {@code sb://ns/queue} from .NET), older clients the bare name. Empty (or the bare
     * namespace) means "none". Read by the canonical address parser, as every address is; a value that does not
     * canonicalise or names something other than a queue or topic is a bad request.
     */
    static String entityName(String value) {
        String v = value.trim();
        if (v.isEmpty()) {
            return null;
        }
        CanonicalAddress a;
        try {
            a = CanonicalAddress.parse(v);
        } catch (BrokerException e) {
            throw new IllegalArgumentException(e.description(), e);
        }
        if (a.isNamespace() && !a.management()) {
            return null;
        }
        if (a.isNamespace() || a.subscription() != null || a.subQueue() != CanonicalAddress.SubQueueKind.MAIN
                || a.management()) {
            throw new IllegalArgumentException("A forwarding target must be a queue or a topic, not '" + v + "'.");
        }
        return a.entityPath();
    }

    static void requireKind(Element d, String expected) {
        if (!expected.equals(d.getLocalName())) {
            throw new IllegalArgumentException("Expected a " + expected + " in the ATOM entry's content, found "
                    + d.getLocalName() + ".");
        }
    }
}
