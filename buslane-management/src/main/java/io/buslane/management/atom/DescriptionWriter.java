package io.buslane.management.atom;

import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.entity.Limits;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.TopicProperties;

import java.util.function.UnaryOperator;

/**
 * Queue, topic and subscription descriptions, element by element in the order the service writes them (its data
 * contracts' order, which strict parsers such as {@code DataContractSerializer} require). Properties the broker
 * does not model are written with the service's values for a Standard namespace ({@code IsAnonymousAccessible}
 * false, {@code EntityAvailabilityStatus} Available, {@code EnableExpress} false, no authorization rules).
 */
final class DescriptionWriter {

    private static final String AVAILABLE = "Available";

    private DescriptionWriter() {
    }

    /**
     * A queue.
     *
     * @param url the absolute URL the service reports for a forwarding target's entity name
     */
    static void queue(XmlOut o, QueueEntity q, RuntimeCounts c, UnaryOperator<String> url) {
        QueueProperties p = q.properties();
        root(o, "QueueDescription");
        o.leaf("LockDuration", XmlDurations.format(p.lockDuration()));
        o.leaf("MaxSizeInMegabytes", reportedSize(p.enablePartitioning(), p.maxSizeInMegabytes()));
        o.leaf("RequiresDuplicateDetection", p.requiresDuplicateDetection());
        o.leaf("RequiresSession", p.requiresSession());
        o.leaf("DefaultMessageTimeToLive", XmlDurations.format(p.defaultMessageTimeToLive()));
        o.leaf("DeadLetteringOnMessageExpiration", p.deadLetteringOnMessageExpiration());
        o.leaf("DuplicateDetectionHistoryTimeWindow", XmlDurations.format(p.duplicateDetectionHistoryTimeWindow()));
        o.leaf("MaxDeliveryCount", p.maxDeliveryCount());
        o.leaf("EnableBatchedOperations", p.enableBatchedOperations());
        o.leaf("SizeInBytes", c.sizeInBytes());
        o.leaf("MessageCount", c.messageCount());
        o.leaf("IsAnonymousAccessible", false);
        AuthorizationRulesXml.write(o, p.authorizationRules());
        o.leaf("Status", p.status().serviceName());
        o.leaf("ForwardTo", target(p.forwardTo(), p.forwardToAddress(), url));
        o.leaf("UserMetadata", p.userMetadata());
        times(o, q.createdAtMs(), q.updatedAtMs());
        o.leaf("SupportOrdering", true);
        countDetails(o, c);
        o.leaf("AutoDeleteOnIdle", XmlDurations.format(p.autoDeleteOnIdle()));
        o.leaf("EnablePartitioning", p.enablePartitioning());
        o.leaf("EntityAvailabilityStatus", AVAILABLE);
        o.leaf("ForwardDeadLetteredMessagesTo", target(p.forwardDeadLetteredMessagesTo(),
                p.forwardDeadLetteredMessagesToAddress(), url));
        o.leaf("EnableExpress", false);
        o.leaf("MaxMessageSizeInKilobytes", p.maxMessageSizeInKilobytes());
        o.close();
    }

    /** The partitions of a partitioned entity, each holding up to MaxSizeInMegabytes. */
    static final int PARTITIONS = Limits.PARTITION_COUNT;
    /** The sizes the service offers per partition (1 to 5 GB), whose sums it reports for a partitioned entity. */
    static final long[] PARTITIONED_SIZES = {1024, 2048, 3072, 4096, 5120};

    /**
     * MaxSizeInMegabytes as the service reports it: a partitioned entity's is the sum of its partitions' (each holds
     * up to the size given, here as there: 1,024 MB given on a partitioned queue is reported as 16,384).
     */
    static long reportedSize(boolean partitioned, long maxSizeInMegabytes) {
        return partitioned ? maxSizeInMegabytes * PARTITIONS : maxSizeInMegabytes;
    }

    /** The first api-version whose topic descriptions carry SqlFilterCount and CorrelationFilterCount. */
    static final String FILTER_COUNTS_SINCE = "2024-05";

    /**
     * Whether a topic description for {@code apiVersion} carries the filter counts: from 2024-05 on (the default
     * of .NET 7.21 and Java 7.18), as the service does; versions are dates, compared as text.
     */
    static boolean hasFilterCounts(String apiVersion) {
        return apiVersion != null && apiVersion.length() >= FILTER_COUNTS_SINCE.length()
                && apiVersion.compareTo(FILTER_COUNTS_SINCE) >= 0;
    }

    static void topic(XmlOut o, TopicEntity t, RuntimeCounts c, boolean filterCounts) {
        TopicProperties p = t.properties();
        root(o, "TopicDescription");
        o.leaf("DefaultMessageTimeToLive", XmlDurations.format(p.defaultMessageTimeToLive()));
        o.leaf("MaxSizeInMegabytes", reportedSize(p.enablePartitioning(), p.maxSizeInMegabytes()));
        o.leaf("RequiresDuplicateDetection", p.requiresDuplicateDetection());
        o.leaf("DuplicateDetectionHistoryTimeWindow", XmlDurations.format(p.duplicateDetectionHistoryTimeWindow()));
        o.leaf("EnableBatchedOperations", p.enableBatchedOperations());
        o.leaf("SizeInBytes", c.sizeInBytes());
        o.leaf("FilteringMessagesBeforePublishing", false);
        o.leaf("IsAnonymousAccessible", false);
        AuthorizationRulesXml.write(o, p.authorizationRules());
        o.leaf("Status", p.status().serviceName());
        o.leaf("UserMetadata", p.userMetadata());
        times(o, t.createdAtMs(), t.updatedAtMs());
        o.leaf("SupportOrdering", p.supportOrdering());
        countDetails(o, c);
        o.leaf("SubscriptionCount", t.subscriptions().size());
        o.leaf("AutoDeleteOnIdle", XmlDurations.format(p.autoDeleteOnIdle()));
        o.leaf("EnablePartitioning", p.enablePartitioning());
        o.leaf("EntityAvailabilityStatus", AVAILABLE);
        o.leaf("EnableSubscriptionPartitioning", false);
        o.leaf("EnableExpress", false);
        o.leaf("MaxMessageSizeInKilobytes", p.maxMessageSizeInKilobytes());
        if (filterCounts) {
            // last, as the service emits them; over every subscription's rules, $Default (a TrueFilter) and the
            // other true and false filters counted as SQL filters
            int correlation = 0;
            int sql = 0;
            for (SubscriptionEntity s : t.subscriptions()) {
                for (RuleProperties rule : s.rules()) {
                    if (rule.filter() instanceof RuleProperties.CorrelationFilter) {
                        correlation++;
                    } else {
                        sql++;
                    }
                }
            }
            o.leaf("SqlFilterCount", sql);
            o.leaf("CorrelationFilterCount", correlation);
        }
        o.close();
    }

    static void subscription(XmlOut o, SubscriptionEntity s, RuntimeCounts c, UnaryOperator<String> url) {
        SubscriptionProperties p = s.properties();
        root(o, "SubscriptionDescription");
        o.leaf("LockDuration", XmlDurations.format(p.lockDuration()));
        o.leaf("RequiresSession", p.requiresSession());
        o.leaf("DefaultMessageTimeToLive", XmlDurations.format(p.defaultMessageTimeToLive()));
        o.leaf("DeadLetteringOnMessageExpiration", p.deadLetteringOnMessageExpiration());
        o.leaf("DeadLetteringOnFilterEvaluationExceptions", p.deadLetteringOnFilterEvaluationExceptions());
        o.leaf("MessageCount", c.messageCount());
        o.leaf("MaxDeliveryCount", p.maxDeliveryCount());
        o.leaf("EnableBatchedOperations", p.enableBatchedOperations());
        o.leaf("Status", p.status().serviceName());
        o.leaf("ForwardTo", target(p.forwardTo(), p.forwardToAddress(), url));
        times(o, s.createdAtMs(), s.updatedAtMs());
        countDetails(o, c);
        o.leaf("UserMetadata", p.userMetadata());
        o.leaf("ForwardDeadLetteredMessagesTo", target(p.forwardDeadLetteredMessagesTo(),
                p.forwardDeadLetteredMessagesToAddress(), url));
        o.leaf("AutoDeleteOnIdle", XmlDurations.format(p.autoDeleteOnIdle()));
        o.leaf("EntityAvailabilityStatus", AVAILABLE);
        o.close();
    }

    /**
     * A forwarding target as the service reports it: the address as the client that set it wrote it (scheme and
     * host in lower case), else the entity's absolute URL; null stays null.
     */
    private static String target(String entityName, String asSent, UnaryOperator<String> url) {
        return entityName == null ? null : asSent != null ? asSent : url.apply(entityName);
    }

    /** {@code NamespaceInfo}: a Standard-tier messaging namespace. */
    static void namespace(XmlOut o, String name, long createdMs, long modifiedMs) {
        root(o, "NamespaceInfo");
        o.leaf("CreatedTime", XmlTimes.format(createdMs));
        o.leaf("MessagingSKU", "Standard");
        o.leaf("ModifiedTime", XmlTimes.format(modifiedMs));
        o.leaf("Name", name);
        o.leaf("NamespaceType", "Messaging");
        o.close();
    }

    /** Opens a description with the service's namespace as default and {@code i} for XML Schema instance. */
    static void root(XmlOut o, String element) {
        o.open(element).defaultNamespace(Xmlns.SB).namespace("i", Xmlns.XSI);
    }

    private static void times(XmlOut o, long createdMs, long updatedMs) {
        o.leaf("CreatedAt", XmlTimes.format(createdMs));
        o.leaf("UpdatedAt", XmlTimes.format(updatedMs));
        o.leaf("AccessedAt", XmlTimes.NEVER);
    }

    private static void countDetails(XmlOut o, RuntimeCounts c) {
        o.open("CountDetails").namespace("d2p1", Xmlns.COUNTS);
        o.leaf("d2p1", Xmlns.COUNTS, "ActiveMessageCount", c.activeMessageCount());
        o.leaf("d2p1", Xmlns.COUNTS, "DeadLetterMessageCount", c.deadLetterMessageCount());
        o.leaf("d2p1", Xmlns.COUNTS, "ScheduledMessageCount", c.scheduledMessageCount());
        o.leaf("d2p1", Xmlns.COUNTS, "TransferMessageCount", c.transferMessageCount());
        o.leaf("d2p1", Xmlns.COUNTS, "TransferDeadLetterMessageCount", c.transferDeadLetterMessageCount());
        o.close();
    }
}
