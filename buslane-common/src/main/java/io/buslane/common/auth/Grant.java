package io.buslane.common.auth;

import java.util.Objects;
import java.util.Set;

/**
 * What a valid token (or credential) grants.
 *
 * @param keyName     the rule that signed it
 * @param rights      the rule's rights, implications included
 * @param scope       the normalised signed resource ({@link Audience#normalize(String)} of the decoded {@code sr});
 *                    {@code ""} for namespace-wide grants without a host
 * @param expiresAtMs when it stops being valid (epoch ms; {@link Long#MAX_VALUE} for never)
 */
public record Grant(String keyName, Set<Right> rights, String scope, long expiresAtMs) {

    public Grant {
        Objects.requireNonNull(keyName, "keyName");
        Objects.requireNonNull(scope, "scope");
        rights = Right.expand(Objects.requireNonNull(rights, "rights"));
    }

    /** Whether this grant carries {@code right}. */
    public boolean has(Right right) {
        return rights.contains(right);
    }

    /** Whether this grant's scope covers {@code audienceOrPath} (a raw audience, URI or entity path). */
    public boolean covers(String audienceOrPath) {
        return Audience.covers(scope, Audience.normalize(audienceOrPath));
    }

    /** Whether the grant is still valid at {@code nowMs}. */
    public boolean isValidAt(long nowMs) {
        return expiresAtMs > nowMs;
    }
}
