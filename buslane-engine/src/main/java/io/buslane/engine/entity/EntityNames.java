package io.buslane.engine.entity;

import java.util.Locale;

/**
 * Entity name rules as the cloud applies them, not more strictly: queue and topic paths may have
 * {@code /}-separated segments and any of letters, digits, {@code . - _ ~} and other characters except the
 * few the service reserves; subscription and rule names are single segments.
 *
 * <p>Refused everywhere, because they make names that look alike or that a URL would rewrite: empty segments, the
 * segments {@code .} and {@code ..} and any {@code ..} sequence, control characters, white space of any kind
 * (including no-break spaces), invisible format characters (zero-width spaces and joiners {@code U+200B..U+200D},
 * {@code U+2060}, the byte-order mark {@code U+FEFF}, the bidirectional embeddings, overrides and isolates
 * {@code U+202A..U+202E}, {@code U+2066..U+2069}, soft hyphens), unpaired surrogates, private-use and unassigned
 * code points. Error messages show such characters as {@code U+XXXX}, never raw.
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
            throw new IllegalArgumentException("The entity path '" + printable(path)
                    + "' exceeds the maximum length of " + Limits.MAX_PATH_LENGTH + " characters.");
        }
        requireNoReserved(path, RESERVED_CHARACTERS, "entity path");
        if (path.startsWith("/") || path.endsWith("/")) {
            throw new IllegalArgumentException("The entity path '" + path
                    + "' cannot start or end with a slash '/'.");
        }
        if (path.contains("//")) {
            throw new IllegalArgumentException("The entity path '" + path + "' contains an empty segment '//'.");
        }
        requireNoDotSequence(path, "entity path");
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
            if (segment.equals(".")) {
                throw new IllegalArgumentException("The entity path '" + path + "' contains the segment '.', which "
                        + "is not allowed.");
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
            throw new IllegalArgumentException("The " + what + " '" + printable(name)
                    + "' exceeds the maximum length of " + Limits.MAX_SEGMENT_NAME_LENGTH + " characters.");
        }
        requireNoReserved(name, RESERVED_SEGMENT_CHARACTERS, what);
        if (name.startsWith("$")) {
            throw new IllegalArgumentException("The " + what + " '" + name + "' cannot start with '$'.");
        }
        if (name.equals(".")) {
            throw new IllegalArgumentException("The " + what + " '.' is not allowed.");
        }
        requireNoDotSequence(name, what);
        return name;
    }

    private static void requireNoDotSequence(String name, String what) {
        if (name.contains("..")) {
            throw new IllegalArgumentException("The " + what + " '" + name + "' contains the sequence '..', which "
                    + "is not allowed.");
        }
    }

    private static void requireNoReserved(String name, String reserved, String what) {
        for (int i = 0; i < name.length(); ) {
            int c = name.codePointAt(i);
            if (reserved.indexOf(c) >= 0 || !allowedCodePoint(c)) {
                String shown = c >= 0x20 && c < 0x7F ? "'" + (char) c + "'" : codePoint(c);
                throw new IllegalArgumentException("The " + what + " '" + printable(name) + "' contains the "
                        + "character " + shown + ", which is not allowed.");
            }
            i += Character.charCount(c);
        }
    }

    /** Whether a code point may appear in a name: visible and not an invisible formatting or spacing character. */
    static boolean allowedCodePoint(int c) {
        if (Character.isISOControl(c) || Character.isWhitespace(c) || Character.isSpaceChar(c)) {
            return false;
        }
        return switch (Character.getType(c)) {
            case Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE, Character.UNASSIGNED -> false;
            default -> true;
        };
    }

    /** The name with every character that is not allowed shown as {@code U+XXXX}, safe to echo in messages. */
    public static String printable(String name) {
        StringBuilder b = new StringBuilder(name.length() + 8);
        for (int i = 0; i < name.length(); ) {
            int c = name.codePointAt(i);
            if (allowedCodePoint(c) || c == ' ') {
                b.appendCodePoint(c);
            } else {
                b.append(codePoint(c));
            }
            i += Character.charCount(c);
        }
        return b.toString();
    }

    private static String codePoint(int c) {
        return String.format(Locale.ROOT, "U+%04X", c);
    }
}
