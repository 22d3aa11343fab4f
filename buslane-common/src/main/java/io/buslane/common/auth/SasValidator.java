package io.buslane.common.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Validates SAS tokens against the namespace's {@link SasRule}s (wire protocol §2.5). Immutable and thread-safe.
 *
 * <p>A token is valid when its key name ({@code skn}) names a rule (matched case-insensitively), its signature is
 * {@code Base64(HMAC-SHA256(key = UTF-8(rule key), data = UTF-8(sr_as_in_token + "\n" + se_as_in_token)))}
 * (compared in constant time), and its expiry {@code se} is after now. The key is the raw UTF-8 of the key string,
 * not base64-decoded. Checks run in that order, so an unsigned token learns nothing about expiry.
 *
 * <p>{@link #acceptAll()} builds the insecure validator of {@link AuthMode#ACCEPT_ALL}: every token — even one
 * that is not a SAS token — yields a namespace-wide grant with all rights that never expires.
 */
public final class SasValidator {

    private static final String HMAC_SHA256 = "HmacSHA256";
    private static final Set<Right> ALL_RIGHTS = Right.expand(List.of(Right.MANAGE));

    private final AuthMode mode;
    private final List<SasRule> rules;
    private final Map<String, SasRule> rulesByKeyName;
    private volatile EntityRules entityRules = (entity, keyName) -> List.of();

    /**
     * The shared access rules of queues and topics (entity-level rules): the rules with key name {@code keyName}
     * on the entity {@code entityName} (the queue or topic path a token's resource lies in, lower-cased), one
     * {@link SasRule} per key (primary, secondary); empty when there is none.
     */
    @FunctionalInterface
    public interface EntityRules {
        List<SasRule> find(String entityName, String keyName);
    }

    /**
     * A validating ({@link AuthMode#VALIDATE}) validator.
     *
     * @throws IllegalArgumentException if there is no rule or two rules share a key name (ignoring case)
     */
    public SasValidator(List<SasRule> rules) {
        this(AuthMode.VALIDATE, rules);
        if (rules.isEmpty()) {
            throw new IllegalArgumentException("A validating SAS validator needs at least one SAS rule.");
        }
    }

    private SasValidator(AuthMode mode, List<SasRule> rules) {
        this.mode = mode;
        this.rules = List.copyOf(Objects.requireNonNull(rules, "rules"));
        Map<String, SasRule> byName = new LinkedHashMap<>();
        for (SasRule rule : this.rules) {
            if (byName.putIfAbsent(fold(rule.keyName()), rule) != null) {
                throw new IllegalArgumentException("Duplicate SAS key name '" + rule.keyName() + "'.");
            }
        }
        this.rulesByKeyName = Collections.unmodifiableMap(byName);
    }

    /** Validates against the emulator's well-known rule only ({@link SasRule#emulatorDefault()}). */
    public static SasValidator emulatorDefault() {
        return new SasValidator(List.of(SasRule.emulatorDefault()));
    }

    /**
     * The insecure validator ({@link AuthMode#ACCEPT_ALL}, an {@code --insecure}-style option): accepts any token
     * and grants everything. Never use it on an untrusted network.
     */
    public static SasValidator acceptAll() {
        return new SasValidator(AuthMode.ACCEPT_ALL, List.of());
    }

    /**
     * Lets tokens signed with an entity's own rules in: such a token grants the rule's rights on that entity only
     * (its subscriptions and sub-queues included; {@link Grant#entityRule()}), within the token's resource. A
     * namespace rule of the same name takes precedence. Set once, when the namespace is up.
     */
    public void entityRules(EntityRules rules) {
        this.entityRules = Objects.requireNonNull(rules, "rules");
    }

    public AuthMode mode() {
        return mode;
    }

    /** The configured rules (empty for {@link #acceptAll()}). */
    public List<SasRule> rules() {
        return rules;
    }

    /**
     * Validates {@code token} at {@code nowMs}.
     *
     * @return the grant: the rule's key name and rights, the normalised decoded {@code sr} as scope, the expiry
     * @throws AuthException (401) if the token is malformed, names an unknown key, has an invalid signature or
     *                       has expired
     */
    public Grant validate(String token, long nowMs) {
        if (mode == AuthMode.ACCEPT_ALL) {
            return new Grant(acceptedKeyName(token), ALL_RIGHTS, "", Long.MAX_VALUE);
        }
        SasToken sas = SasToken.parse(token);
        SasRule rule = rulesByKeyName.get(fold(sas.keyName()));
        byte[] presented = sas.signature().getBytes(StandardCharsets.UTF_8);
        boolean entityRule = rule == null;
        if (entityRule) {
            rule = entityRule(sas, presented);
        } else if (!signedWith(sas, rule.key(), presented)) {
            throw new AuthException("InvalidSignature: The token has an invalid signature.");
        }
        long expiresAtMs = sas.expiresAtMs();
        if (expiresAtMs <= nowMs) {
            throw new AuthException("ExpiredToken: The token has expired.");
        }
        return new Grant(rule.keyName(), rule.rights(), Audience.ofResource(sas.resourceRaw()).toString(), expiresAtMs,
                entityRule);
    }

    private static boolean signedWith(SasToken sas, String key, byte[] presented) {
        byte[] expected = sign(sas.stringToSign(), key).getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(expected, presented);
    }

    /**
     * The entity-level rule that signed the token (either of its keys), for a token whose resource lies in an
     * entity: the rules of exactly that entity (the whole queue or topic path, {@code a/b} included), never of an
     * entity whose path is a prefix of it.
     */
    private SasRule entityRule(SasToken sas, byte[] presented) {
        Audience resource;
        try {
            resource = Audience.ofResource(sas.resourceRaw());
        } catch (AuthException notCanonical) {
            throw new AuthException("Unknown key name '" + sas.keyName() + "'.");
        }
        List<SasRule> candidates = resource.entity().isEmpty() ? List.of()
                : entityRules.find(resource.entity(), sas.keyName());
        if (candidates.isEmpty()) {
            throw new AuthException("Unknown key name '" + sas.keyName() + "'.");
        }
        boolean signed = false;
        for (SasRule candidate : candidates) {
            signed |= signedWith(sas, candidate.key(), presented); // every key is checked: no early exit
        }
        if (!signed) {
            throw new AuthException("InvalidSignature: The token has an invalid signature.");
        }
        return candidates.get(0);
    }

    /**
     * Checks a rule name and key presented directly (SASL {@code PLAIN}: rule name as user name, key as password;
     * wire protocol §1.3). The key is compared in constant time.
     *
     * @return a namespace-wide grant of the rule's rights that never expires, or empty if the pair is wrong
     */
    public Optional<Grant> authenticate(String keyName, String key) {
        if (mode == AuthMode.ACCEPT_ALL) {
            return Optional.of(new Grant(keyName == null ? "" : keyName, ALL_RIGHTS, "", Long.MAX_VALUE));
        }
        if (keyName == null || key == null) {
            return Optional.empty();
        }
        SasRule rule = rulesByKeyName.get(fold(keyName));
        if (rule == null || !MessageDigest.isEqual(rule.key().getBytes(StandardCharsets.UTF_8),
                key.getBytes(StandardCharsets.UTF_8))) {
            return Optional.empty();
        }
        return Optional.of(new Grant(rule.keyName(), rule.rights(), "", Long.MAX_VALUE));
    }

    /**
     * {@code Base64(HMAC-SHA256(UTF-8(key), UTF-8(stringToSign)))}: the SAS signature of {@code stringToSign}
     * ({@code sr_as_in_token + "\n" + se}).
     */
    public static String sign(String stringToSign, String key) {
        try {
            Mac mac = Mac.getInstance(HMAC_SHA256);
            mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), HMAC_SHA256));
            return Base64.getEncoder().encodeToString(mac.doFinal(stringToSign.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available in this JVM.", e);
        }
    }

    private static String acceptedKeyName(String token) {
        try {
            return SasToken.parse(token).keyName();
        } catch (AuthException notSas) {
            return "";
        }
    }

    private static String fold(String keyName) {
        return keyName.toLowerCase(Locale.ROOT);
    }
}
