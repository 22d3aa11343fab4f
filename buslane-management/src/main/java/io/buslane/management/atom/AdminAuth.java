package io.buslane.management.atom;

import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.Grant;
import io.buslane.common.auth.Right;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.time.Clock;

/**
 * Authorises a management request: the {@code Authorization: SharedAccessSignature ...} header must be a valid
 * token whose rule grants Manage and whose signed resource covers the addressed entity (the namespace for lists
 * and {@code $namespaceinfo}). With {@link SasValidator#acceptAll()} every request passes, with or without a
 * header. The supplementary tokens of forwarding requests are validated here and checked by {@link Forwarding}.
 */
final class AdminAuth {

    private final SasValidator validator;
    private final Clock clock;

    AdminAuth(SasValidator validator, Clock clock) {
        this.validator = validator;
        this.clock = clock;
    }

    /**
     * @return the request's grant
     * @throws AuthException (401) when the request may not manage what it addresses
     */
    Grant check(AdminRequest request) {
        Grant grant = validator.validate(request.authorization(), clock.epochMillis());
        if (!grant.has(Right.MANAGE)) {
            throw new AuthException("Unauthorized: the rule '" + grant.keyName()
                    + "' does not grant the Manage right, which the management API requires.");
        }
        String target = request.path().audiencePath();
        if (!grant.coversScope(target)) {
            throw new AuthException("InvalidAudience: the token's signed resource does not cover '"
                    + (target.isEmpty() ? "the namespace" : target) + "'.");
        }
        return grant;
    }

    /** {@code request} with its supplementary tokens validated (each null when absent or not valid). */
    AdminRequest withSupplementaryGrants(AdminRequest request) {
        AdminRequest.Supplementary s = request.supplementary();
        return request.withSupplementary(new AdminRequest.Supplementary(s.forwardToHeader(),
                s.forwardDeadLetterHeader(), validOrNull(s.forwardToHeader()),
                validOrNull(s.forwardDeadLetterHeader())));
    }

    private Grant validOrNull(String header) {
        if (header == null || header.isBlank()) {
            return null;
        }
        try {
            return validator.validate(header, clock.epochMillis());
        } catch (AuthException e) {
            return null; // as absent: the target must then be covered by the request's own token
        }
    }
}
