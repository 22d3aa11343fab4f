package io.buslane.engine.entity;

import java.time.Duration;
import java.util.Objects;

/** A subscription's description (rules are kept beside it, see {@link RuleProperties}). Immutable. */
public record SubscriptionProperties(
        String topicName,
        String name,
        Duration lockDuration,
        int maxDeliveryCount,
        boolean requiresSession,
        Duration defaultMessageTimeToLive,
        boolean deadLetteringOnMessageExpiration,
        boolean deadLetteringOnFilterEvaluationExceptions,
        String forwardTo,
        String forwardDeadLetteredMessagesTo,
        EntityStatus status,
        Duration autoDeleteOnIdle,
        boolean enableBatchedOperations,
        String userMetadata,
        String forwardToAddress,
        String forwardDeadLetteredMessagesToAddress) {

    public SubscriptionProperties {
        EntityNames.requireValidPath(topicName);
        EntityNames.requireValidSubscriptionName(name);
        Limits.requireRange("LockDuration", lockDuration, Limits.MIN_LOCK_DURATION, Limits.MAX_LOCK_DURATION);
        if (maxDeliveryCount < 1) {
            throw new IllegalArgumentException("MaxDeliveryCount must be at least 1, was " + maxDeliveryCount);
        }
        Limits.requireRange("DefaultMessageTimeToLive", defaultMessageTimeToLive, Limits.MIN_TTL,
                Limits.MAX_DURATION);
        Limits.requireRange("AutoDeleteOnIdle", autoDeleteOnIdle, Limits.MIN_AUTO_DELETE_ON_IDLE,
                Limits.MAX_DURATION);
        Objects.requireNonNull(status, "status");
        Limits.requireUserMetadata(userMetadata);
        forwardTo = QueueProperties.emptyToNull(forwardTo);
        forwardDeadLetteredMessagesTo = QueueProperties.emptyToNull(forwardDeadLetteredMessagesTo);
        forwardToAddress = ForwardAddress.keptFor(forwardToAddress, forwardTo);
        forwardDeadLetteredMessagesToAddress = ForwardAddress.keptFor(forwardDeadLetteredMessagesToAddress,
                forwardDeadLetteredMessagesTo);
    }

    /** The subscription's path: {@code <topic>/Subscriptions/<name>}. */
    public String path() {
        return topicName + "/Subscriptions/" + name;
    }

    public static Builder builder(String topicName, String name) {
        return new Builder(topicName, name);
    }

    public Builder toBuilder() {
        Builder b = new Builder(topicName, name);
        b.lockDuration = lockDuration;
        b.maxDeliveryCount = maxDeliveryCount;
        b.requiresSession = requiresSession;
        b.defaultMessageTimeToLive = defaultMessageTimeToLive;
        b.deadLetteringOnMessageExpiration = deadLetteringOnMessageExpiration;
        b.deadLetteringOnFilterEvaluationExceptions = deadLetteringOnFilterEvaluationExceptions;
        b.forwardTo = forwardTo;
        b.forwardDeadLetteredMessagesTo = forwardDeadLetteredMessagesTo;
        b.status = status;
        b.autoDeleteOnIdle = autoDeleteOnIdle;
        b.enableBatchedOperations = enableBatchedOperations;
        b.userMetadata = userMetadata;
        b.forwardToAddress = forwardToAddress;
        b.forwardDeadLetteredMessagesToAddress = forwardDeadLetteredMessagesToAddress;
        return b;
    }

    /** Mutable builder starting from the cloud's defaults. Not thread-safe. */
    public static final class Builder {
        private final String topicName;
        private final String name;
        private Duration lockDuration = Limits.DEFAULT_LOCK_DURATION;
        private int maxDeliveryCount = Limits.DEFAULT_MAX_DELIVERY_COUNT;
        private boolean requiresSession;
        private Duration defaultMessageTimeToLive = Limits.DEFAULT_TTL;
        private boolean deadLetteringOnMessageExpiration;
        private boolean deadLetteringOnFilterEvaluationExceptions = true;
        private String forwardTo;
        private String forwardDeadLetteredMessagesTo;
        private EntityStatus status = EntityStatus.ACTIVE;
        private Duration autoDeleteOnIdle = Limits.MAX_DURATION;
        private boolean enableBatchedOperations = true;
        private String userMetadata;
        private String forwardToAddress;
        private String forwardDeadLetteredMessagesToAddress;

        private Builder(String topicName, String name) {
            this.topicName = topicName;
            this.name = name;
        }

        public Builder lockDuration(Duration v) { this.lockDuration = v; return this; }
        public Builder maxDeliveryCount(int v) { this.maxDeliveryCount = v; return this; }
        public Builder requiresSession(boolean v) { this.requiresSession = v; return this; }
        public Builder defaultMessageTimeToLive(Duration v) { this.defaultMessageTimeToLive = v; return this; }
        public Builder deadLetteringOnMessageExpiration(boolean v) {
            this.deadLetteringOnMessageExpiration = v; return this; }
        public Builder deadLetteringOnFilterEvaluationExceptions(boolean v) {
            this.deadLetteringOnFilterEvaluationExceptions = v; return this; }
        public Builder forwardTo(String v) { this.forwardTo = v; return this; }
        public Builder forwardDeadLetteredMessagesTo(String v) { this.forwardDeadLetteredMessagesTo = v; return this; }
        public Builder status(EntityStatus v) { this.status = v; return this; }
        public Builder autoDeleteOnIdle(Duration v) { this.autoDeleteOnIdle = v; return this; }
        public Builder enableBatchedOperations(boolean v) { this.enableBatchedOperations = v; return this; }
        public Builder userMetadata(String v) { this.userMetadata = v; return this; }
        /** {@code ForwardTo} as the client wrote it ({@link ForwardAddress}), or null. */
        public Builder forwardToAddress(String v) { this.forwardToAddress = v; return this; }
        /** {@code ForwardDeadLetteredMessagesTo} as the client wrote it ({@link ForwardAddress}), or null. */
        public Builder forwardDeadLetteredMessagesToAddress(String v) {
            this.forwardDeadLetteredMessagesToAddress = v; return this; }

        public SubscriptionProperties build() {
            return new SubscriptionProperties(topicName, name, lockDuration, maxDeliveryCount, requiresSession,
                    defaultMessageTimeToLive, deadLetteringOnMessageExpiration,
                    deadLetteringOnFilterEvaluationExceptions, forwardTo, forwardDeadLetteredMessagesTo, status,
                    autoDeleteOnIdle, enableBatchedOperations, userMetadata, forwardToAddress,
                    forwardDeadLetteredMessagesToAddress);
        }
    }
}
