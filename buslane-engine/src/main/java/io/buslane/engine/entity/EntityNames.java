package io.buslane.engine.entity;

import java.util.Locale;

/**
 * Entity name rules as the cloud applies them, not more strictly: queue and topic paths may have
 * {@code /}-separated segments and any of letters, digits, {@code . - _ ~} and other characters except the
 * few the service reserves; subscription and rule names are single segments.
 */
public final class EntityNames {

    private static final String RESERVED_CHARACTERS = "@?#*";
    private static final String RESERVED_SEGMENT_CHARACTERS = "@?#*/\\";

    private EntityNames() {
    }

    /** Validates a queue or topic path; returns it unchanged. */
    public static String requireValidPath(String path) {
        if (path == null || path.isBlank()) {
            throw new IllegalArgumentException("The entity path must be a non-empty string.");
        }
        if (path.length() > Limits.MAX_PATH_LENGTH) {
            throw new IllegalArgumentException("The entity path '" + path + "' exceeds the maximum length of "
                    + Limits.MAX_PATH_LENGTH + " characters.");
        }
        if (path.startsWith("/") || path.endsWith("/")) {
            throw new IllegalArgumentException("The entity path '" + path
                    + "' cannot start or end with a slash '/'.");
        }
        if (path.contains("//")) {
            throw new IllegalArgumentException("The entity path '" + path + "' contains an empty segment '//'.");
        }
        requireNoReserved(path, RESERVED_CHARACTERS, "entity path");
        for (String segment : path.split("/")) {
            if (segment.startsWith("$")) {
                throw new IllegalArgumentException("The entity path '" + path + "' contains the reserved segment '"
                        + segment + "'; segments cannot start with '$'.");
            }
            String lower = segment.toLowerCase(Locale.ROOT);
            if (lower.equals("subscriptions") || lower.equals("rules")) {
                throw new IllegalArgumentException("The entity path '" + path + "' contains the reserved segment '"
                        + segment + "'.");
            }
        }
        return path;
    }

    /** Validates a subscription name; returns it unchanged. */
    public static String requireValidSubscriptionName(String name) {
        return requireValidSegment(name, "subscription name");
    }

    /** Validates a rule name; returns it unchanged. {@code $Default} is allowed. */
    public static String requireValidRuleName(String name) {
        if ("$Default".equals(name)) {
            return name;
        }
        return requireValidSegment(name, "rule name");
    }

    private static String requireValidSegment(String name, String what) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("The " + what + " must be a non-empty string.");
        }
        if (name.length() > Limits.MAX_SEGMENT_NAME_LENGTH) {
            throw new IllegalArgumentException("The " + what + " '" + name + "' exceeds the maximum length of "
                    + Limits.MAX_SEGMENT_NAME_LENGTH + " characters.");
        }
        requireNoReserved(name, RESERVED_SEGMENT_CHARACTERS, what);
        if (name.startsWith("$")) {
            throw new IllegalArgumentException("The " + what + " '" + name + "' cannot start with '$'.");
        }
        return name;
    }

    private static void requireNoReserved(String name, String reserved, String what) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (reserved.indexOf(c) >= 0 || Character.isISOControl(c) || Character.isWhitespace(c)) {
                throw new IllegalArgumentException("The " + what + " '" + name + "' contains the character '" + c
                        + "', which is not allowed.");
            }
        }
    }
}
