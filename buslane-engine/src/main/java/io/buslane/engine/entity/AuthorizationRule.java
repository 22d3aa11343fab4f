package io.buslane.engine.entity;

import io.buslane.common.auth.Right;

import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A shared access authorization rule of a queue or topic (the admin API's {@code SharedAccessAuthorizationRule}):
 * a key name with a primary and a secondary key, and the rights a token signed with either grants on that entity
 * only. Immutable.
 *
 * @param rights       as given, in the order given (not expanded: {@code Manage} is stored, and listed in its
 *                     place, as the service echoes it)
 * @param claimType    {@code SharedAccessKey} for the rules the SDKs create
 * @param claimValue   {@code None} for the rules the SDKs create
 * @param createdAtMs  when the rule was created (epoch ms)
 * @param modifiedAtMs when it was last changed (epoch ms)
 */
public record AuthorizationRule(String keyName, String primaryKey, String secondaryKey, Set<Right> rights,
                                String claimType, String claimValue, long createdAtMs, long modifiedAtMs) {

    public static final String SHARED_ACCESS_KEY = "SharedAccessKey";
    /** The service's limits: key names and keys of at most 256 characters. */
    public static final int MAX_LENGTH = 256;

    public AuthorizationRule {
        requireText("KeyName", keyName);
        requireText("PrimaryKey", primaryKey);
        if (secondaryKey != null && (secondaryKey.isEmpty() || secondaryKey.length() > MAX_LENGTH)) {
            throw new IllegalArgumentException("SecondaryKey must have 1 to " + MAX_LENGTH + " characters.");
        }
        Objects.requireNonNull(rights, "rights");
        if (rights.isEmpty()) {
            throw new IllegalArgumentException("The authorization rule '" + keyName + "' must grant at least one of "
                    + "Listen, Send and Manage.");
        }
        rights = Collections.unmodifiableSet(new LinkedHashSet<>(rights)); // the order given
        claimType = claimType == null || claimType.isEmpty() ? SHARED_ACCESS_KEY : claimType;
        claimValue = claimValue == null || claimValue.isEmpty() ? "None" : claimValue;
    }

    private static void requireText(String name, String value) {
        if (value == null || value.isEmpty() || value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(name + " of an authorization rule must have 1 to " + MAX_LENGTH
                    + " characters.");
        }
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new IllegalArgumentException(name + " of an authorization rule cannot contain control "
                        + "characters.");
            }
        }
    }

    /** Whether a token signed with {@code key} was signed by this rule (either key; constant time per key). */
    public boolean signedBy(Predicate<String> matchesKey) {
        boolean primary = matchesKey.test(primaryKey);
        boolean secondary = secondaryKey != null && matchesKey.test(secondaryKey);
        return primary | secondary;
    }

    /** Rejects more rules than the service allows on one entity (12) and key names used twice. */
    public static List<AuthorizationRule> checkList(List<AuthorizationRule> rules) {
        List<AuthorizationRule> list = rules == null ? List.of() : List.copyOf(rules);
        if (list.size() > Limits.MAX_AUTHORIZATION_RULES) {
            throw new IllegalArgumentException("An entity can have at most " + Limits.MAX_AUTHORIZATION_RULES
                    + " authorization rules, " + list.size() + " were given.");
        }
        Set<String> names = new HashSet<>();
        for (AuthorizationRule r : list) {
            if (!names.add(r.keyName().toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("The authorization rule name '" + r.keyName()
                        + "' is used twice.");
            }
        }
        return list;
    }
}
