package io.buslane.common.auth;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

import static io.buslane.common.auth.SdkTokens.KEY;
import static io.buslane.common.auth.SdkTokens.KEY_NAME;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SasValidatorTest {

    /** A fixed "now": 2023-11-14T22:13:20Z. */
    static final long NOW_MS = 1_700_000_000_000L;
    static final long SE = NOW_MS / 1000 + 3600;

    private final SasValidator validator = SasValidator.emulatorDefault();

    @Test
    void emulatorDefaultRule() {
        SasRule rule = SasRule.emulatorDefault();

        assertThat(rule.keyName()).isEqualTo("RootManageSharedAccessKey");
        assertThat(rule.key()).isEqualTo("SAS_KEY_VALUE");
        assertThat(rule.rights()).containsExactlyInAnyOrder(Right.MANAGE, Right.SEND, Right.LISTEN);
        assertThat(rule.toString()).doesNotContain("SAS_KEY_VALUE");
        assertThat(validator.rules()).containsExactly(rule);
        assertThat(validator.mode()).isEqualTo(AuthMode.VALIDATE);
    }

    @Test
    void commandLineRulesCarryAllRightsOrTheChosenOnes() {
        SasRule all = SasRule.parseSpec("admin=k=with=equals");
        assertThat(all.keyName()).isEqualTo("admin");
        assertThat(all.key()).isEqualTo("k=with=equals");
        assertThat(all.rights()).containsExactlyInAnyOrder(Right.MANAGE, Right.SEND, Right.LISTEN);
        SasRule chosen = SasRule.parseSpec("app:Send,listen=s3cr:et");
        assertThat(chosen.keyName()).isEqualTo("app");
        assertThat(chosen.key()).isEqualTo("s3cr:et");
        assertThat(chosen.rights()).containsExactlyInAnyOrder(Right.SEND, Right.LISTEN);
        assertThat(SasRule.parseSpec("sender:Send=k").rights()).containsExactly(Right.SEND);
        assertThatThrownBy(() -> SasRule.parseSpec("nokey")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SasRule.parseSpec("x:Read=k")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Read");
        // a Send-only rule's token grants Send, not Listen or Manage
        SasValidator v = new SasValidator(List.of(chosen, SasRule.parseSpec("sender:Send=k")));
        Grant g = v.authenticate("sender", "k").orElseThrow();
        assertThat(g.has(Right.SEND)).isTrue();
        assertThat(g.has(Right.LISTEN)).isFalse();
        assertThat(g.has(Right.MANAGE)).isFalse();
    }

    @Test
    void manageImpliesSendAndListen() {
        assertThat(new SasRule("m", "k", Set.of(Right.MANAGE)).rights())
                .containsExactlyInAnyOrder(Right.MANAGE, Right.SEND, Right.LISTEN);
        assertThat(new SasRule("s", "k", Set.of(Right.SEND)).rights()).containsExactly(Right.SEND);
        assertThat(Right.MANAGE.implies(Right.LISTEN)).isTrue();
        assertThat(Right.LISTEN.implies(Right.SEND)).isFalse();
        assertThat(Right.parse("listen")).isEqualTo(Right.LISTEN);
    }

    @Test
    void javaTokenValidates() {
        Grant grant = validator.validate(SdkTokens.java("amqp://localhost/queue.1", KEY_NAME, KEY, SE), NOW_MS);

        assertThat(grant.keyName()).isEqualTo(KEY_NAME);
        assertThat(grant.rights()).containsExactlyInAnyOrder(Right.MANAGE, Right.SEND, Right.LISTEN);
        assertThat(grant.scope()).isEqualTo("//localhost/queue.1");
        assertThat(grant.expiresAtMs()).isEqualTo(SE * 1000);
        assertThat(grant.covers("amqp://localhost/queue.1")).isTrue();
    }

    @Test
    void jsTokensValidate() {
        Grant entity = validator.validate(SdkTokens.js("sb://localhost/queue.1", KEY_NAME, KEY, SE), NOW_MS);
        Grant management = validator.validate(
                SdkTokens.js("sb://localhost/queue.1/$management", KEY_NAME, KEY, SE), NOW_MS);

        assertThat(entity.scope()).isEqualTo("//localhost/queue.1");
        assertThat(management.scope()).isEqualTo("//localhost/queue.1");
    }

    @Test
    void pythonTokenValidates() {
        Grant grant = validator.validate(SdkTokens.python("sb://localhost/queue.1", KEY_NAME, KEY, SE), NOW_MS);

        assertThat(grant.scope()).isEqualTo("//localhost/queue.1");
    }

    @Test
    void dotnetConnectionLevelTokenValidates() {
        String token = SdkTokens.dotnet("amqps://LocalHost/", KEY_NAME, KEY, SE);
        assertThat(token).contains("sr=amqps%3A%2F%2Flocalhost%2F&");

        Grant grant = validator.validate(token, NOW_MS);

        assertThat(grant.scope()).isEqualTo("//localhost");
        assertThat(grant.covers("amqps://localhost/queue.1")).isTrue();
        assertThat(grant.covers("/topic/Subscriptions/sub/$DeadLetterQueue")).isTrue();
    }

    @Test
    void encodersThatDisagreeAllValidateBecauseTheRawResourceIsSigned() {
        String audience = "sb://localhost/Orders_(EU)!~*'";
        String java = SdkTokens.java(audience, KEY_NAME, KEY, SE);
        String js = SdkTokens.js(audience, KEY_NAME, KEY, SE);
        String python = SdkTokens.python(audience, KEY_NAME, KEY, SE);
        String dotnet = SdkTokens.dotnet(audience, KEY_NAME, KEY, SE);
        assertThat(List.of(java, js, python, dotnet)).doesNotHaveDuplicates();

        for (String token : List.of(java, js, python, dotnet)) {
            assertThat(validator.validate(token, NOW_MS).scope()).isEqualTo("//localhost/orders_(eu)!~*'");
        }
    }

    @Test
    void lowerCaseHexInTheResourceValidates() {
        String token = SdkTokens.raw("amqps%3a%2f%2flocalhost%2fqueue.1", KEY_NAME, KEY, SE);

        assertThat(validator.validate(token, NOW_MS).scope()).isEqualTo("//localhost/queue.1");
    }

    @Test
    void nonAsciiEntityNamesValidate() {
        Grant java = validator.validate(SdkTokens.java("amqp://localhost/café", KEY_NAME, KEY, SE), NOW_MS);
        // .NET signs Uri.AbsoluteUri, which is already percent-encoded, then URL-encodes it again. The sr is decoded
        // once (a name may hold '%'), so its scope is the escaped name, which is also how .NET spells its link
        // address (Uri.AbsolutePath): the two agree (docs/security.md)
        Grant dotnet = validator.validate(SdkTokens.dotnet("amqps://localhost/caf%C3%A9", KEY_NAME, KEY, SE), NOW_MS);

        assertThat(java.scope()).isEqualTo("//localhost/café");
        assertThat(dotnet.scope()).isEqualTo("//localhost/caf%c3%a9");
        assertThat(dotnet.covers("/caf%C3%A9")).isTrue();
    }

    @Test
    void wrongKeyIsAnInvalidSignature() {
        String token = SdkTokens.java("amqp://localhost/queue.1", KEY_NAME, "not-the-key", SE);

        assertThatThrownBy(() -> validator.validate(token, NOW_MS))
                .isInstanceOf(AuthException.class)
                .hasMessage("InvalidSignature: The token has an invalid signature.");
    }

    @Test
    void base64DecodedKeyIsNotTheKey() {
        SasValidator base64Key = new SasValidator(List.of(new SasRule("k", "c2VjcmV0", Set.of(Right.SEND))));
        String signedWithDecodedBytes = SdkTokens.java("sb://h/q", "k", "secret", SE);
        String signedWithRawString = SdkTokens.java("sb://h/q", "k", "c2VjcmV0", SE);

        assertThatThrownBy(() -> base64Key.validate(signedWithDecodedBytes, NOW_MS))
                .hasMessageContaining("InvalidSignature");
        assertThat(base64Key.validate(signedWithRawString, NOW_MS).rights()).containsExactly(Right.SEND);
    }

    @Test
    void tamperedResourceIsAnInvalidSignature() {
        String token = SdkTokens.java("amqp://localhost/queue.1", KEY_NAME, KEY, SE);
        String otherQueue = token.replace("queue.1", "queue.2");
        String reEncoded = token.replace("%2F", "%2f");

        assertThatThrownBy(() -> validator.validate(otherQueue, NOW_MS))
                .hasMessage("InvalidSignature: The token has an invalid signature.");
        assertThatThrownBy(() -> validator.validate(reEncoded, NOW_MS))
                .hasMessage("InvalidSignature: The token has an invalid signature.");
    }

    @Test
    void tamperedExpiryIsAnInvalidSignature() {
        String token = SdkTokens.java("amqp://localhost/queue.1", KEY_NAME, KEY, SE)
                .replace("se=" + SE, "se=" + (SE + 100_000));

        assertThatThrownBy(() -> validator.validate(token, NOW_MS)).hasMessageContaining("InvalidSignature");
    }

    @Test
    void expiredTokenIsRejected() {
        long nowSeconds = NOW_MS / 1000;
        String expiresNow = SdkTokens.java("amqp://localhost/queue.1", KEY_NAME, KEY, nowSeconds);
        String expiredBefore = SdkTokens.js("sb://localhost/queue.1", KEY_NAME, KEY, nowSeconds - 1);
        String expiresNextSecond = SdkTokens.js("sb://localhost/queue.1", KEY_NAME, KEY, nowSeconds + 1);

        assertThatThrownBy(() -> validator.validate(expiresNow, NOW_MS))
                .isInstanceOf(AuthException.class)
                .hasMessageContaining("The token has expired.");
        assertThatThrownBy(() -> validator.validate(expiredBefore, NOW_MS))
                .hasMessageContaining("The token has expired.");
        assertThat(validator.validate(expiresNextSecond, NOW_MS + 999).expiresAtMs()).isEqualTo(NOW_MS + 1000);
    }

    @Test
    void unknownKeyNameIsRejected() {
        String token = SdkTokens.java("amqp://localhost/queue.1", "x", KEY, SE);

        assertThatThrownBy(() -> validator.validate(token, NOW_MS))
                .isInstanceOf(AuthException.class)
                .hasMessage("Unknown key name 'x'.")
                .satisfies(e -> assertThat(((AuthException) e).statusCode()).isEqualTo(401));
    }

    @Test
    void keyNamesMatchCaseInsensitively() {
        String token = SdkTokens.java("amqp://localhost/queue.1", "rootmanagesharedaccesskey", KEY, SE);

        assertThat(validator.validate(token, NOW_MS).keyName()).isEqualTo(KEY_NAME);
    }

    @Test
    void picksTheNamedRule() {
        SasValidator two = new SasValidator(List.of(SasRule.emulatorDefault(),
                new SasRule("listener", "listen-key", Set.of(Right.LISTEN))));

        Grant grant = two.validate(SdkTokens.js("sb://localhost/queue.1", "listener", "listen-key", SE), NOW_MS);

        assertThat(grant.keyName()).isEqualTo("listener");
        assertThat(grant.rights()).containsExactly(Right.LISTEN);
        assertThatThrownBy(() -> two.validate(SdkTokens.js("sb://localhost/q", "listener", KEY, SE), NOW_MS))
                .hasMessageContaining("InvalidSignature");
    }

    @Test
    void malformedTokenIsRejected() {
        assertThatThrownBy(() -> validator.validate("Bearer eyJ0eXAiOiJKV1QifQ", NOW_MS))
                .isInstanceOf(AuthException.class)
                .hasMessageStartingWith("MalformedToken");
    }

    @Test
    void rejectsBadRuleSets() {
        assertThatThrownBy(() -> new SasValidator(List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SasValidator(List.of(SasRule.emulatorDefault(),
                new SasRule("rootmanagesharedaccesskey", "other", Set.of(Right.SEND)))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Duplicate SAS key name");
        assertThatThrownBy(() -> new SasRule("k", "", Set.of(Right.SEND))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SasRule(" ", "k", Set.of(Right.SEND)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SasRule("k", "k", Set.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void signMatchesTheSdkSignature() {
        assertThat(SasValidator.sign("sb%3A%2F%2Fh%2Fq\n42", KEY))
                .isEqualTo(SdkTokens.hmac(KEY, "sb%3A%2F%2Fh%2Fq\n42"));
    }

    @Test
    void authenticatesPlainCredentials() {
        assertThat(validator.authenticate(KEY_NAME, KEY)).hasValueSatisfying(grant -> {
            assertThat(grant.scope()).isEmpty();
            assertThat(grant.expiresAtMs()).isEqualTo(Long.MAX_VALUE);
            assertThat(grant.has(Right.MANAGE)).isTrue();
        });
        assertThat(validator.authenticate(KEY_NAME, "wrong")).isEmpty();
        assertThat(validator.authenticate("nobody", KEY)).isEmpty();
        assertThat(validator.authenticate(null, null)).isEmpty();
    }

    @Test
    void acceptAllGrantsEverythingForAnyToken() {
        SasValidator insecure = SasValidator.acceptAll();

        assertThat(insecure.mode()).isEqualTo(AuthMode.ACCEPT_ALL);
        for (String token : new String[] {"garbage", "", null,
                SdkTokens.java("amqp://localhost/queue.1", "x", "wrong", 1)}) {
            Grant grant = insecure.validate(token, NOW_MS);
            assertThat(grant.rights()).containsExactlyInAnyOrder(Right.MANAGE, Right.SEND, Right.LISTEN);
            assertThat(grant.scope()).isEmpty();
            assertThat(grant.expiresAtMs()).isEqualTo(Long.MAX_VALUE);
        }
        assertThat(insecure.authenticate("any", "thing")).isPresent();
    }

    @Test
    void aTokenSignedWithAnEntitysOwnRuleGrantsItsRightsOnThatEntityOnly() {
        SasValidator v = SasValidator.emulatorDefault();
        v.entityRules((entity, keyName) -> entity.equals("orders") && keyName.equals("sender")
                ? List.of(new SasRule("sender", "primary-key", Set.of(Right.SEND)),
                        new SasRule("sender", "secondary-key", Set.of(Right.SEND)))
                : List.of());
        for (String key : List.of("primary-key", "secondary-key")) {
            Grant g = v.validate(SdkTokens.java("sb://ns.example/Orders", "sender", key, SE), NOW_MS);
            assertThat(g.has(Right.SEND)).isTrue();
            assertThat(g.has(Right.LISTEN)).isFalse();
            assertThat(g.covers("orders")).isTrue();
            assertThat(g.covers("orders/$deadletterqueue")).isTrue();
            assertThat(g.covers("invoices")).isFalse();
        }
        // the rule belongs to "orders": a token for the namespace or another entity is not signed by any rule
        assertThatThrownBy(() -> v.validate(SdkTokens.java("sb://ns.example/", "sender", "primary-key", SE),
                NOW_MS)).isInstanceOf(AuthException.class).hasMessageContaining("Unknown key name");
        assertThatThrownBy(() -> v.validate(SdkTokens.java("sb://ns.example/invoices", "sender", "primary-key", SE),
                NOW_MS)).isInstanceOf(AuthException.class).hasMessageContaining("Unknown key name");
        assertThatThrownBy(() -> v.validate(SdkTokens.java("sb://ns.example/orders", "sender", "wrong", SE),
                NOW_MS)).isInstanceOf(AuthException.class).hasMessageContaining("InvalidSignature");
        // a namespace rule of the same name wins
        assertThat(v.validate(SdkTokens.java("sb://ns.example/orders", KEY_NAME, KEY, SE), NOW_MS)
                .has(Right.MANAGE)).isTrue();
    }

    @Test
    void anEntityRuleGrantsExactlyItsEntityNotTheEntitiesUnderItsPath() {
        SasValidator v = SasValidator.emulatorDefault();
        v.entityRules((entity, keyName) -> switch (entity) {
            case "team" -> List.of(new SasRule("owner", "team-key", Set.of(Right.MANAGE)));
            case "a/b" -> List.of(new SasRule("owner", "ab-key", Set.of(Right.LISTEN)));
            default -> List.of();
        });
        Grant team = v.validate(SdkTokens.java("sb://ns.example/team", "owner", "team-key", SE), NOW_MS);
        assertThat(team.entityRule()).isTrue();
        assertThat(team.covers("team")).isTrue();
        assertThat(team.covers("team/$DeadLetterQueue")).isTrue();
        assertThat(team.covers("team/Subscriptions/s/$Transfer/$DeadLetterQueue")).isTrue();
        assertThat(team.covers("team/secret")).isFalse();
        assertThat(team.covers("team/secret/Subscriptions/s")).isFalse();
        // a token for team/secret is looked up on team/secret's own rules, not on team's
        assertThatThrownBy(() -> v.validate(SdkTokens.java("sb://ns.example/team/secret", "owner", "team-key", SE),
                NOW_MS)).isInstanceOf(AuthException.class).hasMessageContaining("Unknown key name");
        // an entity whose name has a slash has its own rules
        Grant ab = v.validate(SdkTokens.java("sb://ns.example/a/b", "owner", "ab-key", SE), NOW_MS);
        assertThat(ab.covers("a/b/$DeadLetterQueue")).isTrue();
        assertThat(ab.covers("a")).isFalse();
        assertThat(ab.covers("a/c")).isFalse();
        assertThatThrownBy(() -> v.validate(SdkTokens.java("sb://ns.example/a", "owner", "ab-key", SE), NOW_MS))
                .isInstanceOf(AuthException.class).hasMessageContaining("Unknown key name");
    }

    @Test
    void aResourceOfTheNamespacesManagementNodeIsNotTheNamespace() {
        SasValidator v = SasValidator.emulatorDefault();
        Grant g = v.validate(SdkTokens.java("sb://localhost/$management", KEY_NAME, KEY, SE), NOW_MS);

        assertThat(g.covers("queue.1")).isFalse();
        assertThat(g.covers("")).isFalse();
        // an entity's management node is the entity's, as the JS SDK signs for it
        Grant q = v.validate(SdkTokens.java("sb://localhost/queue.1/$management", KEY_NAME, KEY, SE), NOW_MS);
        assertThat(q.covers("queue.1")).isTrue();
        assertThat(q.covers("queue.2")).isFalse();
    }

    @Test
    void aResourceThatDoesNotCanonicaliseIsRefused() {
        SasValidator v = SasValidator.emulatorDefault();
        for (String sr : List.of("sb://localhost/queue.1/x://y/myqueue", "sb://localhost/queue.1/../myqueue",
                "sb://localhost/queue.1//myqueue")) {
            assertThatThrownBy(() -> v.validate(SdkTokens.java(sr, KEY_NAME, KEY, SE), NOW_MS)).as(sr)
                    .isInstanceOf(AuthException.class).hasMessageStartingWith("InvalidAudience: ");
        }
    }

    @Test
    void aResourceIsDecodedOnceSoANameHoldingAPercentEscapeKeepsIt() {
        // the Java SDK URL-encodes the audience sb://localhost/a%41 into its sr: decoded once it is a%41 again
        Grant grant = validator.validate(SdkTokens.java("sb://localhost/a%41", KEY_NAME, KEY, SE), NOW_MS);

        assertThat(grant.scope()).isEqualTo("//localhost/a%41");
        assertThat(grant.covers("a%41")).isTrue();
        assertThat(grant.covers("aA")).isFalse();
    }
}
