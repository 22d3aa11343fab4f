package io.buslane.common.auth;

import io.buslane.common.error.BrokerException;

import java.util.Objects;

/**
 * Handles CBS {@code put-token} requests (wire protocol §2.3–2.6) and SASL {@code PLAIN} credentials against a
 * {@link SasValidator}. Immutable and thread-safe: one per broker, used with one {@link Grants} per connection
 * (from {@link #newGrants()}).
 *
 * <p>In {@link AuthMode#VALIDATE}:
 * <ul>
 *   <li>type {@value #SAS_TOKEN_TYPE}: the token is validated (401 with the validator's description on
 *       failure) and its signed resource must cover the audience (401 {@code InvalidAudience} otherwise);</li>
 *   <li>type {@value #JWT_TOKEN_TYPE} with a SAS token ({@code SharedAccessSignature ...}): as a SAS token, as the
 *       service does (the Python SDK 7.x on its own AMQP stack puts every SAS token with this type);</li>
 *   <li>type {@value #JWT_TOKEN_TYPE} otherwise: 401 "JWT tokens are not supported; use a SAS token.";</li>
 *   <li>no type, another type, no audience ({@code name}) or no token: 400.</li>
 * </ul>
 * On success the grant is recorded in the connection's {@link Grants} under the audience and the answer is 202
 * "Accepted". A failed {@code put-token} leaves earlier grants untouched.
 *
 * <p>In {@link AuthMode#ACCEPT_ALL} every {@code put-token} gets 202 and {@link #newGrants()} is
 * {@link Grants#unrestricted() unrestricted}.
 */
public final class CbsAuthorizer {

    /** The {@code type} of a SAS token. */
    public static final String SAS_TOKEN_TYPE = "servicebus.windows.net:sastoken";
    /** The {@code type} of an Entra ID (AAD) token. */
    public static final String JWT_TOKEN_TYPE = "jwt";
    /** How a SAS token begins, whatever type it is put with. */
    private static final String SAS_TOKEN_PREFIX = "SharedAccessSignature ";

    private final SasValidator validator;

    public CbsAuthorizer(SasValidator validator) {
        this.validator = Objects.requireNonNull(validator, "validator");
    }

    public AuthMode mode() {
        return validator.mode();
    }

    public SasValidator validator() {
        return validator;
    }

    /** A fresh per-connection record: empty when validating, unrestricted in {@link AuthMode#ACCEPT_ALL}. */
    public Grants newGrants() {
        return mode() == AuthMode.ACCEPT_ALL ? Grants.unrestricted() : new Grants();
    }

    /**
     * Handles one {@code put-token}.
     *
     * @param grants   the connection's grants, updated on success
     * @param type     the {@code type} application property
     * @param audience the {@code name} application property (the audience)
     * @param token    the {@code amqp-value} body
     * @param nowMs    the current time (epoch ms)
     */
    public PutTokenResult putToken(Grants grants, String type, String audience, String token, long nowMs) {
        Objects.requireNonNull(grants, "grants");
        if (mode() == AuthMode.ACCEPT_ALL) {
            try {
                grants.record(audience == null ? "" : audience, validator.validate(token, nowMs));
            } catch (BrokerException notCanonical) {
                // an audience that names no entity: nothing to record, everything is allowed anyway
            }
            return PutTokenResult.accepted();
        }
        if (type == null || type.isBlank()) {
            return PutTokenResult.badRequest("The put-token request has no 'type' application property; expected '"
                    + SAS_TOKEN_TYPE + "'.");
        }
        String trimmedType = type.strip();
        boolean sasAsJwt = trimmedType.equalsIgnoreCase(JWT_TOKEN_TYPE) && token != null
                && token.strip().startsWith(SAS_TOKEN_PREFIX);
        if (trimmedType.equalsIgnoreCase(JWT_TOKEN_TYPE) && !sasAsJwt) {
            return PutTokenResult.unauthorized("JWT tokens are not supported; use a SAS token.");
        }
        if (!sasAsJwt && !trimmedType.equalsIgnoreCase(SAS_TOKEN_TYPE)) {
            return PutTokenResult.badRequest("Unsupported token type '" + type + "'; expected '" + SAS_TOKEN_TYPE
                    + "'.");
        }
        if (audience == null || audience.isBlank()) {
            return PutTokenResult.badRequest("The put-token request has no 'name' (audience) application property.");
        }
        if (token == null || token.isBlank()) {
            return PutTokenResult.badRequest("The put-token request has no token in its body.");
        }
        Grant grant;
        try {
            grant = validator.validate(token, nowMs);
        } catch (AuthException e) {
            return PutTokenResult.of(e);
        }
        Audience target;
        try {
            target = Audience.parse(audience);
        } catch (BrokerException notCanonical) {
            return PutTokenResult.badRequest(notCanonical.description());
        }
        if (!grant.covers(target)) {
            return PutTokenResult.unauthorized("InvalidAudience: The token's resource '" + grant.scope()
                    + "' does not cover the audience '" + audience + "'.");
        }
        grants.record(audience, grant);
        return PutTokenResult.accepted();
    }

    /**
     * Checks SASL {@code PLAIN} credentials (rule name as user name, key as password; wire protocol §1.3) and, if
     * they are right, records a namespace-wide grant of the rule's rights that never expires.
     *
     * @param nowMs the current time (epoch ms); the grant does not expire, so it is only for symmetry with
     *              {@link #putToken}
     * @return whether the credentials were accepted (always, in {@link AuthMode#ACCEPT_ALL})
     */
    public boolean authenticatePlain(Grants grants, String username, String password, long nowMs) {
        Objects.requireNonNull(grants, "grants");
        return validator.authenticate(username, password)
                .map(grant -> {
                    grants.record("", grant);
                    return true;
                })
                .orElse(false);
    }
}
