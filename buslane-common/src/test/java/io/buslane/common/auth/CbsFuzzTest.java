package io.buslane.common.auth;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.charset.StandardCharsets;

/**
 * Coverage-guided fuzzing of CBS {@code put-token} handling: {@link CbsAuthorizer#putToken} (in both auth modes),
 * {@link SasToken#parse}, audience normalisation and the grants a token leaves, and SASL {@code PLAIN}
 * ({@link CbsAuthorizer#authenticatePlain}) with the same strings.
 *
 * <p>Input: UTF-8 text, the {@code type} application property, the {@code name} (audience) and the token (the
 * {@code amqp-value} body, the rest of the input), one per line. Invariants: {@code putToken} never throws and
 * answers 202, 400 or 401 with a description; {@link SasToken#parse} throws nothing but {@link AuthException};
 * what an accepted token records can be queried; PLAIN never throws.
 *
 * <p>Seeds: the put-token requests of the recorded Java and JavaScript SDK conversations (see
 * {@code docs/fuzzing.md}) plus tokens built as each SDK builds them ({@link SdkTokens}), in
 * {@code CbsFuzzTestInputs/putToken/}.
 */
class CbsFuzzTest {

    /** 2026-01-01, before the expiry of the recorded tokens. */
    private static final long NOW = 1_767_225_600_000L;
    private static final CbsAuthorizer VALIDATING = new CbsAuthorizer(SasValidator.emulatorDefault());
    private static final CbsAuthorizer ACCEPT_ALL = new CbsAuthorizer(SasValidator.acceptAll());

    @FuzzTest(maxDuration = "8s")
    void putToken(byte[] input) {
        String[] lines = new String(input, StandardCharsets.UTF_8).split("\n", 3);
        String type = lines.length > 0 ? lines[0] : null;
        String audience = lines.length > 1 ? lines[1] : null;
        String token = lines.length > 2 ? lines[2] : null;

        try {
            SasToken parsed = SasToken.parse(token);
            parsed.resource();
            parsed.stringToSign();
            parsed.expiresAtMs();
            parsed.toString();
        } catch (AuthException refused) {
            // a malformed token: 401 on put-token
        }
        for (CbsAuthorizer authorizer : new CbsAuthorizer[] {VALIDATING, ACCEPT_ALL}) {
            Grants grants = authorizer.newGrants();
            PutTokenResult result = authorizer.putToken(grants, type, audience, token, NOW);
            int status = result.statusCode();
            if ((status != 202 && status != 400 && status != 401) || result.statusDescription() == null) {
                throw new AssertionError("put-token answered " + result);
            }
            if (status == 202) {
                for (Right right : Right.values()) {
                    grants.allows(audience == null ? "" : audience, right, NOW);
                    grants.allows("q", right, NOW + 1);
                }
                grants.nextExpiryMs();
                grants.removeExpired(Long.MAX_VALUE);
                grants.entries();
            }
            authorizer.authenticatePlain(authorizer.newGrants(), type, audience, NOW);
        }
    }
}
