package io.buslane.engine.entity;

import java.time.Duration;

/** The cloud's ranges and defaults for entity properties (service-bus-behaviour.md §2.1, §2.2). */
public final class Limits {

    /** .NET {@code TimeSpan.MaxValue}: the service's "never" for TTL and auto-delete. */
    public static final Duration MAX_DURATION = Duration.ofSeconds(922_337_203_685L, 477_580_700L);

    public static final Duration MIN_LOCK_DURATION = Duration.ofSeconds(5);
    public static final Duration MAX_LOCK_DURATION = Duration.ofMinutes(5);
    public static final Duration DEFAULT_LOCK_DURATION = Duration.ofMinutes(1);

    public static final int DEFAULT_MAX_DELIVERY_COUNT = 10;

    public static final Duration MIN_TTL = Duration.ofSeconds(1);
    public static final Duration DEFAULT_TTL = MAX_DURATION;

    /** The cloud's minimum is 20 s; the emulator's Config.json schema allows 5 s, and such files are accepted. */
    public static final Duration MIN_DUPLICATE_DETECTION_WINDOW = Duration.ofSeconds(5);
    public static final Duration MAX_DUPLICATE_DETECTION_WINDOW = Duration.ofDays(7);
    public static final Duration DEFAULT_DUPLICATE_DETECTION_WINDOW = Duration.ofMinutes(10);

    public static final Duration MIN_AUTO_DELETE_ON_IDLE = Duration.ofMinutes(5);

    public static final long DEFAULT_MAX_SIZE_MB = 1024;
    /** The largest entity the service offers: 80 GB (Premium, or Standard with partitioning). */
    public static final long MAX_SIZE_MB = 81_920;
    public static final int DEFAULT_MAX_MESSAGE_SIZE_KB = 256;
    /** The largest message the service accepts: 100 MB (Premium's {@code MaxMessageSizeInKilobytes} ceiling). */
    public static final int MAX_MESSAGE_SIZE_KB = 102_400;
    /** The longest {@code UserMetadata} the service keeps, in characters. */
    public static final int MAX_USER_METADATA_LENGTH = 1024;

    /** Standard-tier partitioned entities have 16 partitions. */
    public static final int PARTITION_COUNT = 16;

    public static final int MAX_PATH_LENGTH = 260;
    public static final int MAX_SEGMENT_NAME_LENGTH = 50;
    public static final int MAX_SESSION_ID_LENGTH = 128;
    public static final int MAX_MESSAGE_ID_LENGTH = 128;
    public static final int MAX_SUBSCRIPTIONS_PER_TOPIC = 2000;
    /** Shared access authorization rules on one queue or topic (the service's quota). */
    public static final int MAX_AUTHORIZATION_RULES = 12;

    private Limits() {
    }

    /** Milliseconds of a duration, saturating at {@code Long.MAX_VALUE} for {@link #MAX_DURATION}. */
    public static long toMillisSaturated(Duration d) {
        if (d.compareTo(MAX_DURATION) >= 0) {
            return Long.MAX_VALUE; // MAX_DURATION is only ~9.2e14 ms, so toMillis() alone would not saturate
        }
        try {
            return d.toMillis();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** Checks the size and metadata properties queues and topics share. */
    static void requireSizes(long maxSizeInMegabytes, int maxMessageSizeInKilobytes, String userMetadata) {
        if (maxSizeInMegabytes < 1) {
            throw new IllegalArgumentException("MaxSizeInMegabytes must be positive, was " + maxSizeInMegabytes);
        }
        if (maxSizeInMegabytes > MAX_SIZE_MB) {
            throw new IllegalArgumentException("MaxSizeInMegabytes must be at most " + MAX_SIZE_MB + ", was "
                    + maxSizeInMegabytes);
        }
        if (maxMessageSizeInKilobytes < 1) {
            throw new IllegalArgumentException("MaxMessageSizeInKilobytes must be positive, was "
                    + maxMessageSizeInKilobytes);
        }
        if (maxMessageSizeInKilobytes > MAX_MESSAGE_SIZE_KB) {
            throw new IllegalArgumentException("MaxMessageSizeInKilobytes must be at most " + MAX_MESSAGE_SIZE_KB
                    + ", was " + maxMessageSizeInKilobytes);
        }
        requireUserMetadata(userMetadata);
    }

    /** Checks a {@code UserMetadata} length (null is none). */
    static void requireUserMetadata(String userMetadata) {
        if (userMetadata != null && userMetadata.length() > MAX_USER_METADATA_LENGTH) {
            throw new IllegalArgumentException("UserMetadata must be at most " + MAX_USER_METADATA_LENGTH
                    + " characters, was " + userMetadata.length());
        }
    }

    static Duration requireRange(String property, Duration value, Duration min, Duration max) {
        if (value == null) {
            throw new IllegalArgumentException(property + " must be set");
        }
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(property + " must be between " + min + " and " + max + ", was "
                    + value);
        }
        return value;
    }
}
