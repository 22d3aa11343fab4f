package io.buslane.common.auth;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * A shared access authorisation rule (policy): a key name, its key and the rights it grants.
 *
 * <p>The key is used as the HMAC-SHA256 key as the raw UTF-8 bytes of the string, <em>not</em> base64-decoded —
 * all four SDKs do that (wire protocol §1.1). {@link #rights()} always holds the implied rights too
 * ({@code Manage} ⇒ {@code Send} and {@code Listen}).
 */
public record SasRule(String keyName, String key, Set<Right> rights) {

    /** The emulator's well-known rule name. */
    public static final String EMULATOR_KEY_NAME = "RootManageSharedAccessKey";
    /** The emulator's well-known (public) key. */
    public static final String EMULATOR_KEY = "SAS_KEY_VALUE";

    public SasRule {
        Objects.requireNonNull(keyName, "keyName");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(rights, "rights");
        if (keyName.isBlank()) {
            throw new IllegalArgumentException("The SAS key name must be a non-empty string.");
        }
        if (key.isEmpty()) {
            throw new IllegalArgumentException("The SAS key of rule '" + keyName + "' must be a non-empty string.");
        }
        if (rights.isEmpty()) {
            throw new IllegalArgumentException("The SAS rule '" + keyName + "' must grant at least one right.");
        }
        rights = Right.expand(rights);
    }

    /** {@code RootManageSharedAccessKey} / {@code SAS_KEY_VALUE} with Manage, Send and Listen. */
    public static SasRule emulatorDefault() {
        return new SasRule(EMULATOR_KEY_NAME, EMULATOR_KEY, Set.of(Right.MANAGE));
    }

    /**
     * A rule from the command line: {@code NAME=KEY} (all rights) or {@code NAME:RIGHTS=KEY}, {@code RIGHTS} being
     * {@code Manage}, {@code Send} and {@code Listen} separated by commas (rule names cannot hold {@code :} or
     * {@code =}; the key is everything after the first {@code =}, so it may hold any character).
     */
    public static SasRule parseSpec(String spec) {
        int eq = spec == null ? -1 : spec.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("A SAS rule must be NAME=KEY or NAME:RIGHTS=KEY, was '" + spec + "'.");
        }
        String head = spec.substring(0, eq);
        String key = spec.substring(eq + 1);
        int colon = head.indexOf(':');
        if (colon < 0) {
            return new SasRule(head, key, Set.of(Right.MANAGE));
        }
        EnumSet<Right> rights = EnumSet.noneOf(Right.class);
        for (String r : head.substring(colon + 1).split(",", -1)) {
            rights.add(Right.parse(r));
        }
        return new SasRule(head.substring(0, colon), key, rights);
    }

    /** Whether this rule grants {@code right}. */
    public boolean has(Right right) {
        return rights.contains(right);
    }

    /** Keeps the key out of logs. */
    @Override
    public String toString() {
        return "SasRule[keyName=" + keyName + ", rights=" + rights + "]";
    }
}
