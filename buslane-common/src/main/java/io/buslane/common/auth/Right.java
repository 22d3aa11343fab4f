package io.buslane.common.auth;

import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * A Shared Access Signature right (a "claim"). {@link #MANAGE} implies {@link #SEND} and {@link #LISTEN}.
 */
public enum Right {
    MANAGE("Manage"),
    SEND("Send"),
    LISTEN("Listen");

    private final String displayName;

    Right(String displayName) {
        this.displayName = displayName;
    }

    /** The name the service uses in descriptions and configuration ({@code Manage}, {@code Send}, {@code Listen}). */
    public String displayName() {
        return displayName;
    }

    /** Whether holding this right grants {@code other} (a right implies itself; Manage implies all). */
    public boolean implies(Right other) {
        return this == other || this == MANAGE;
    }

    /**
     * The rights with their implications added ({@code Manage} adds {@code Send} and {@code Listen}), as an
     * unmodifiable set.
     */
    public static Set<Right> expand(Collection<Right> rights) {
        EnumSet<Right> expanded = EnumSet.noneOf(Right.class);
        for (Right right : rights) {
            if (right == null) {
                throw new IllegalArgumentException("A right cannot be null.");
            }
            expanded.add(right);
            if (right == MANAGE) {
                expanded.add(SEND);
                expanded.add(LISTEN);
            }
        }
        return Collections.unmodifiableSet(expanded);
    }

    /** Parses {@code Manage}, {@code Send} or {@code Listen}, case-insensitively. */
    public static Right parse(String name) {
        for (Right right : values()) {
            if (right.displayName.equalsIgnoreCase(name == null ? "" : name.trim())) {
                return right;
            }
        }
        throw new IllegalArgumentException("Unknown right '" + name + "'; expected Manage, Send or Listen.");
    }
}
