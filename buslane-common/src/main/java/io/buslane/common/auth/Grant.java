package io.buslane.common.auth;

import io.buslane.common.address.CanonicalAddress;

import java.util.Objects;
import java.util.Set;

/**
 * What a valid token (or credential) grants.
 *
 * @param keyName     the rule that signed it
 * @param rights      the rule's rights, implications included
 * @param scope       the normalised signed resource ({@link Audience#ofResource(String)} of the {@code sr});
 *                    {@code ""} for namespace-wide grants without a host
 * @param expiresAtMs when it stops being valid (epoch ms; {@link Long#MAX_VALUE} for never)
 * @param entityRule  whether an entity's own rule signed it: it then covers exactly the scope's entity (its
 *                    subscriptions, sub-queues and management node included), not other entities under its path
 */
public record Grant(String keyName, Set<Right> rights, String scope, long expiresAtMs, boolean entityRule) {

    public Grant {
        Objects.requireNonNull(keyName, "keyName");
        Objects.requireNonNull(scope, "scope");
        rights = Right.expand(Objects.requireNonNull(rights, "rights"));
    }

    /** A grant of a namespace rule (or a credential). */
    public Grant(String keyName, Set<Right> rights, String scope, long expiresAtMs) {
        this(keyName, rights, scope, expiresAtMs, false);
    }

    /** Whether this grant carries {@code right}. */
    public boolean has(Right right) {
        return rights.contains(right);
    }

    /**
     * Whether this grant's scope covers {@code audienceOrPath} (a raw audience, URI or entity path, parsed with
     * {@link Audience#parse}).
     *
     * @throws io.buslane.common.error.BrokerException (ARGUMENT) if the address does not canonicalise
     */
    public boolean covers(String audienceOrPath) {
        return covers(Audience.parse(audienceOrPath));
    }

    /** Whether this grant's scope covers the canonical address {@code address}. */
    public boolean covers(CanonicalAddress address) {
        return covers(Audience.of(address));
    }

    /**
     * Whether this grant's scope covers the administration target {@code target}: an entity path or one of the
     * administration API's collections ({@link Audience#parseScope}).
     */
    public boolean coversScope(String target) {
        return covers(Audience.parseScope(target));
    }

    /** Whether this grant's scope covers {@code target}. */
    public boolean covers(Audience target) {
        Audience own = Audience.parseScope(scope);
        return entityRule ? own.coversEntity(target) : own.covers(target);
    }

    /** Whether the grant is still valid at {@code nowMs}. */
    public boolean isValidAt(long nowMs) {
        return expiresAtMs > nowMs;
    }
}
