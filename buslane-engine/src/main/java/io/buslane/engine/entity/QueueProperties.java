package io.buslane.engine.entity;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A queue's description: every property the service exposes, validated against the cloud's ranges. Immutable.
 */
public record QueueProperties(
        String name,
        Duration lockDuration,
        int maxDeliveryCount,
        boolean requiresSession,
        Duration defaultMessageTimeToLive,
        boolean deadLetteringOnMessageExpiration,
        boolean requiresDuplicateDetection,
        Duration duplicateDetectionHistoryTimeWindow,
        boolean enablePartitioning,
        String forwardTo,
        String forwardDeadLetteredMessagesTo,
        long maxSizeInMegabytes,
        EntityStatus status,
        Duration autoDeleteOnIdle,
        boolean enableBatchedOperations,
        String userMetadata,
        int maxMessageSizeInKilobytes,
        List<AuthorizationRule> authorizationRules,
        String forwardToAddress,
        String forwardDeadLetteredMessagesToAddress) {

    public QueueProperties {
        authorizationRules = AuthorizationRule.checkList(authorizationRules);
        EntityNames.requireValidPath(name);
        Limits.requireRange("LockDuration", lockDuration, Limits.MIN_LOCK_DURATION, Limits.MAX_LOCK_DURATION);
        if (maxDeliveryCount < 1) {
            throw new IllegalArgumentException("MaxDeliveryCount must be at least 1, was " + maxDeliveryCount);
        }
        Limits.requireRange("DefaultMessageTimeToLive", defaultMessageTimeToLive, Limits.MIN_TTL,
                Limits.MAX_DURATION);
        Limits.requireRange("DuplicateDetectionHistoryTimeWindow", duplicateDetectionHistoryTimeWindow,
                Limits.MIN_DUPLICATE_DETECTION_WINDOW, Limits.MAX_DUPLICATE_DETECTION_WINDOW);
        Limits.requireRange("AutoDeleteOnIdle", autoDeleteOnIdle, Limits.MIN_AUTO_DELETE_ON_IDLE,
                Limits.MAX_DURATION);
        Limits.requireSizes(maxSizeInMegabytes, maxMessageSizeInKilobytes, userMetadata);
        Objects.requireNonNull(status, "status");
        forwardTo = emptyToNull(forwardTo);
        forwardDeadLetteredMessagesTo = emptyToNull(forwardDeadLetteredMessagesTo);
        forwardToAddress = ForwardAddress.keptFor(forwardToAddress, forwardTo);
        forwardDeadLetteredMessagesToAddress = ForwardAddress.keptFor(forwardDeadLetteredMessagesToAddress,
                forwardDeadLetteredMessagesTo);
        if (name.equalsIgnoreCase(forwardTo)) {
            throw new IllegalArgumentException("ForwardTo cannot name the queue itself ('" + name + "')");
        }
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    public Builder toBuilder() {
        Builder b = new Builder(name);
        b.lockDuration = lockDuration;
        b.maxDeliveryCount = maxDeliveryCount;
        b.requiresSession = requiresSession;
        b.defaultMessageTimeToLive = defaultMessageTimeToLive;
        b.deadLetteringOnMessageExpiration = deadLetteringOnMessageExpiration;
        b.requiresDuplicateDetection = requiresDuplicateDetection;
        b.duplicateDetectionHistoryTimeWindow = duplicateDetectionHistoryTimeWindow;
        b.enablePartitioning = enablePartitioning;
        b.forwardTo = forwardTo;
        b.forwardDeadLetteredMessagesTo = forwardDeadLetteredMessagesTo;
        b.maxSizeInMegabytes = maxSizeInMegabytes;
        b.status = status;
        b.autoDeleteOnIdle = autoDeleteOnIdle;
        b.enableBatchedOperations = enableBatchedOperations;
        b.userMetadata = userMetadata;
        b.maxMessageSizeInKilobytes = maxMessageSizeInKilobytes;
        b.authorizationRules = authorizationRules;
        b.forwardToAddress = forwardToAddress;
        b.forwardDeadLetteredMessagesToAddress = forwardDeadLetteredMessagesToAddress;
        return b;
    }

    static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    /** Mutable builder starting from the cloud's defaults. Not thread-safe. */
    public static final class Builder {
        private String name;
        private Duration lockDuration = Limits.DEFAULT_LOCK_DURATION;
        private int maxDeliveryCount = Limits.DEFAULT_MAX_DELIVERY_COUNT;
        private boolean requiresSession;
        private Duration defaultMessageTimeToLive = Limits.DEFAULT_TTL;
        private boolean deadLetteringOnMessageExpiration;
        private boolean requiresDuplicateDetection;
        private Duration duplicateDetectionHistoryTimeWindow = Limits.DEFAULT_DUPLICATE_DETECTION_WINDOW;
        private boolean enablePartitioning;
        private String forwardTo;
        private String forwardDeadLetteredMessagesTo;
        private long maxSizeInMegabytes = Limits.DEFAULT_MAX_SIZE_MB;
        private EntityStatus status = EntityStatus.ACTIVE;
        private Duration autoDeleteOnIdle = Limits.MAX_DURATION;
        private boolean enableBatchedOperations = true;
        private String userMetadata;
        private int maxMessageSizeInKilobytes = Limits.DEFAULT_MAX_MESSAGE_SIZE_KB;
        private List<AuthorizationRule> authorizationRules = List.of();
        private String forwardToAddress;
        private String forwardDeadLetteredMessagesToAddress;

        private Builder(String name) {
            this.name = name;
        }

        public Builder name(String v) { this.name = v; return this; }
        public Builder lockDuration(Duration v) { this.lockDuration = v; return this; }
        public Builder maxDeliveryCount(int v) { this.maxDeliveryCount = v; return this; }
        public Builder requiresSession(boolean v) { this.requiresSession = v; return this; }
        public Builder defaultMessageTimeToLive(Duration v) { this.defaultMessageTimeToLive = v; return this; }
        public Builder deadLetteringOnMessageExpiration(boolean v) {
            this.deadLetteringOnMessageExpiration = v; return this; }
        public Builder requiresDuplicateDetection(boolean v) { this.requiresDuplicateDetection = v; return this; }
        public Builder duplicateDetectionHistoryTimeWindow(Duration v) {
            this.duplicateDetectionHistoryTimeWindow = v; return this; }
        public Builder enablePartitioning(boolean v) { this.enablePartitioning = v; return this; }
        public Builder forwardTo(String v) { this.forwardTo = v; return this; }
        public Builder forwardDeadLetteredMessagesTo(String v) { this.forwardDeadLetteredMessagesTo = v; return this; }
        public Builder maxSizeInMegabytes(long v) { this.maxSizeInMegabytes = v; return this; }
        public Builder status(EntityStatus v) { this.status = v; return this; }
        public Builder autoDeleteOnIdle(Duration v) { this.autoDeleteOnIdle = v; return this; }
        public Builder enableBatchedOperations(boolean v) { this.enableBatchedOperations = v; return this; }
        public Builder userMetadata(String v) { this.userMetadata = v; return this; }
        public Builder maxMessageSizeInKilobytes(int v) { this.maxMessageSizeInKilobytes = v; return this; }
        public Builder authorizationRules(List<AuthorizationRule> v) {
            this.authorizationRules = v; return this; }
        /** {@code ForwardTo} as the client wrote it ({@link ForwardAddress}), or null. */
        public Builder forwardToAddress(String v) { this.forwardToAddress = v; return this; }
        /** {@code ForwardDeadLetteredMessagesTo} as the client wrote it ({@link ForwardAddress}), or null. */
        public Builder forwardDeadLetteredMessagesToAddress(String v) {
            this.forwardDeadLetteredMessagesToAddress = v; return this; }

        public QueueProperties build() {
            return new QueueProperties(name, lockDuration, maxDeliveryCount, requiresSession,
                    defaultMessageTimeToLive, deadLetteringOnMessageExpiration, requiresDuplicateDetection,
                    duplicateDetectionHistoryTimeWindow, enablePartitioning, forwardTo,
                    forwardDeadLetteredMessagesTo, maxSizeInMegabytes, status, autoDeleteOnIdle,
                    enableBatchedOperations, userMetadata, maxMessageSizeInKilobytes, authorizationRules,
                    forwardToAddress, forwardDeadLetteredMessagesToAddress);
        }
    }
}
