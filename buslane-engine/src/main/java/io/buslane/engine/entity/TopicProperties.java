package io.buslane.engine.entity;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/** A topic's description, validated against the cloud's ranges. Immutable. */
public record TopicProperties(
        String name,
        Duration defaultMessageTimeToLive,
        boolean requiresDuplicateDetection,
        Duration duplicateDetectionHistoryTimeWindow,
        boolean enablePartitioning,
        long maxSizeInMegabytes,
        EntityStatus status,
        Duration autoDeleteOnIdle,
        boolean supportOrdering,
        boolean enableBatchedOperations,
        String userMetadata,
        int maxMessageSizeInKilobytes,
        List<AuthorizationRule> authorizationRules) {

    public TopicProperties {
        authorizationRules = AuthorizationRule.checkList(authorizationRules);
        EntityNames.requireValidPath(name);
        Limits.requireRange("DefaultMessageTimeToLive", defaultMessageTimeToLive, Limits.MIN_TTL,
                Limits.MAX_DURATION);
        Limits.requireRange("DuplicateDetectionHistoryTimeWindow", duplicateDetectionHistoryTimeWindow,
                Limits.MIN_DUPLICATE_DETECTION_WINDOW, Limits.MAX_DUPLICATE_DETECTION_WINDOW);
        Limits.requireRange("AutoDeleteOnIdle", autoDeleteOnIdle, Limits.MIN_AUTO_DELETE_ON_IDLE,
                Limits.MAX_DURATION);
        Limits.requireSizes(maxSizeInMegabytes, maxMessageSizeInKilobytes, userMetadata);
        Objects.requireNonNull(status, "status");
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    public Builder toBuilder() {
        Builder b = new Builder(name);
        b.defaultMessageTimeToLive = defaultMessageTimeToLive;
        b.requiresDuplicateDetection = requiresDuplicateDetection;
        b.duplicateDetectionHistoryTimeWindow = duplicateDetectionHistoryTimeWindow;
        b.enablePartitioning = enablePartitioning;
        b.maxSizeInMegabytes = maxSizeInMegabytes;
        b.status = status;
        b.autoDeleteOnIdle = autoDeleteOnIdle;
        b.supportOrdering = supportOrdering;
        b.enableBatchedOperations = enableBatchedOperations;
        b.userMetadata = userMetadata;
        b.maxMessageSizeInKilobytes = maxMessageSizeInKilobytes;
        b.authorizationRules = authorizationRules;
        return b;
    }

    /** Mutable builder starting from the cloud's defaults. Not thread-safe. */
    public static final class Builder {
        private String name;
        private Duration defaultMessageTimeToLive = Limits.DEFAULT_TTL;
        private boolean requiresDuplicateDetection;
        private Duration duplicateDetectionHistoryTimeWindow = Limits.DEFAULT_DUPLICATE_DETECTION_WINDOW;
        private boolean enablePartitioning;
        private long maxSizeInMegabytes = Limits.DEFAULT_MAX_SIZE_MB;
        private EntityStatus status = EntityStatus.ACTIVE;
        private Duration autoDeleteOnIdle = Limits.MAX_DURATION;
        private boolean supportOrdering = true;
        private boolean enableBatchedOperations = true;
        private String userMetadata;
        private int maxMessageSizeInKilobytes = Limits.DEFAULT_MAX_MESSAGE_SIZE_KB;
        private List<AuthorizationRule> authorizationRules = List.of();

        private Builder(String name) {
            this.name = name;
        }

        public Builder name(String v) { this.name = v; return this; }
        public Builder defaultMessageTimeToLive(Duration v) { this.defaultMessageTimeToLive = v; return this; }
        public Builder requiresDuplicateDetection(boolean v) { this.requiresDuplicateDetection = v; return this; }
        public Builder duplicateDetectionHistoryTimeWindow(Duration v) {
            this.duplicateDetectionHistoryTimeWindow = v; return this; }
        public Builder enablePartitioning(boolean v) { this.enablePartitioning = v; return this; }
        public Builder maxSizeInMegabytes(long v) { this.maxSizeInMegabytes = v; return this; }
        public Builder status(EntityStatus v) { this.status = v; return this; }
        public Builder autoDeleteOnIdle(Duration v) { this.autoDeleteOnIdle = v; return this; }
        public Builder supportOrdering(boolean v) { this.supportOrdering = v; return this; }
        public Builder enableBatchedOperations(boolean v) { this.enableBatchedOperations = v; return this; }
        public Builder userMetadata(String v) { this.userMetadata = v; return this; }
        public Builder maxMessageSizeInKilobytes(int v) { this.maxMessageSizeInKilobytes = v; return this; }
        public Builder authorizationRules(List<AuthorizationRule> v) {
            this.authorizationRules = v; return this; }

        public TopicProperties build() {
            return new TopicProperties(name, defaultMessageTimeToLive, requiresDuplicateDetection,
                    duplicateDetectionHistoryTimeWindow, enablePartitioning, maxSizeInMegabytes, status,
                    autoDeleteOnIdle, supportOrdering, enableBatchedOperations, userMetadata,
                    maxMessageSizeInKilobytes, authorizationRules);
        }
    }
}
