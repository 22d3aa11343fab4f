package io.buslane.common.auth;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

import static io.buslane.common.auth.CbsAuthorizer.SAS_TOKEN_TYPE;
import static io.buslane.common.auth.SdkTokens.KEY;
import static io.buslane.common.auth.SdkTokens.KEY_NAME;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CbsAuthorizerTest {

    static final long NOW_MS = 1_700_000_000_000L;
    static final long SE = NOW_MS / 1000 + 3600;

    private final CbsAuthorizer authorizer = new CbsAuthorizer(new SasValidator(List.of(
            SasRule.emulatorDefault(),
            new SasRule("listen-only", "listen-key", Set.of(Right.LISTEN)),
            new SasRule("send-only", "send-key", Set.of(Right.SEND)))));
    private final Grants grants = authorizer.newGrants();

    private PutTokenResult put(String audience, String token) {
        return authorizer.putToken(grants, SAS_TOKEN_TYPE, audience, token, NOW_MS);
    }

    private static void assertAccepted(PutTokenResult result) {
        assertThat(result.statusCode()).as(result.statusDescription()).isEqualTo(202);
        assertThat(result.statusDescription()).isEqualTo("Accepted");
        assertThat(result.isSuccess()).isTrue();
        assertThat(result.errorCondition()).isNull();
    }

    private static void assertUnauthorized(PutTokenResult result, String description) {
        assertThat(result.statusCode()).isEqualTo(401);
        assertThat(result.statusDescription()).contains(description);
        assertThat(result.isSuccess()).isFalse();
        assertThat(result.errorCondition()).isEqualTo("amqp:unauthorized-access");
    }

    @Test
    void nothingIsAllowedBeforeAToken() {
        assertThat(authorizer.mode()).isEqualTo(AuthMode.VALIDATE);
        assertThat(grants.isUnrestricted()).isFalse();
        assertThat(grants.hasAcceptedToken()).isFalse();
        assertThat(grants.allows("queue.1", Right.LISTEN, NOW_MS)).isFalse();
        assertThat(grants.nextExpiryMs()).isEqualTo(Long.MAX_VALUE);
        assertThatThrownBy(() -> grants.check("queue.1", Right.LISTEN, NOW_MS))
                .isInstanceOf(AuthException.class)
                .hasMessageContaining("No token authorises 'queue.1'");
    }

    @Test
    void javaSdk() {
        String audience = "amqp://localhost/queue.1";

        assertAccepted(put(audience, SdkTokens.java(audience, KEY_NAME, KEY, SE)));

        assertThat(grants.hasAcceptedToken()).isTrue();
        assertThat(grants.allows("queue.1", Right.SEND, NOW_MS)).isTrue();
        assertThat(grants.allows("queue.1", Right.LISTEN, NOW_MS)).isTrue();
        assertThat(grants.allows("queue.1/$management", Right.MANAGE, NOW_MS)).isTrue();
        assertThat(grants.allows("queue.1/$deadletterqueue", Right.LISTEN, NOW_MS)).isTrue();
        assertThat(grants.allows("queue.1/$Transfer/$DeadLetterQueue", Right.LISTEN, NOW_MS)).isTrue();
    }

    @Test
    void jsSdkEntityAndManagementAudiences() {
        String entity = "sb://localhost/queue.1";
        String management = "sb://localhost/queue.1/$management";

        assertAccepted(put(entity, SdkTokens.js(entity, KEY_NAME, KEY, SE)));
        assertAccepted(put(management, SdkTokens.js(management, KEY_NAME, KEY, SE)));

        assertThat(grants.entries()).hasSize(1);
        assertThat(grants.entries().get(0).audience().toString()).isEqualTo("//localhost/queue.1");
        assertThat(grants.allows("queue.1", Right.SEND, NOW_MS)).isTrue();
        assertThat(grants.allows("queue.1/$management", Right.LISTEN, NOW_MS)).isTrue();
    }

    @Test
    void pythonSdk() {
        String audience = "sb://localhost/queue.1";

        assertAccepted(put(audience, SdkTokens.python(audience, KEY_NAME, KEY, SE)));

        // Python attaches with the full URI as address.
        assertThat(grants.allows("amqps://localhost/queue.1", Right.SEND, NOW_MS)).isTrue();
        assertThat(grants.allows("amqps://localhost/queue.1/$DeadLetterQueue", Right.LISTEN, NOW_MS)).isTrue();
    }

    @Test
    void dotnetConnectionLevelTokenAuthorisesEveryEntityAudience() {
        String token = SdkTokens.dotnet("amqps://localhost/", KEY_NAME, KEY, SE);

        assertAccepted(put("amqps://localhost/queue.1", token));
        assertAccepted(put("amqps://localhost/topic/Subscriptions/sub/$DeadLetterQueue", token));
        assertAccepted(put("amqps://localhost/queue.1/$management", token));

        // .NET attaches with Uri.AbsolutePath (leading slash).
        assertThat(grants.allows("/queue.1", Right.SEND, NOW_MS)).isTrue();
        assertThat(grants.allows("/topic/Subscriptions/sub/$DeadLetterQueue", Right.LISTEN, NOW_MS)).isTrue();
        // The grants are per audience: a topic audience was not put, only its DLQ.
        assertThat(grants.allows("/topic", Right.SEND, NOW_MS)).isFalse();
        assertThat(grants.allows("/topic/Subscriptions/sub", Right.LISTEN, NOW_MS)).isFalse();
    }

    @Test
    void namespaceAudienceAuthorisesEverything() {
        String token = SdkTokens.dotnet("amqps://localhost/", KEY_NAME, KEY, SE);

        assertAccepted(put("amqps://localhost/", token));

        assertThat(grants.allows("queue.1", Right.SEND, NOW_MS)).isTrue();
        assertThat(grants.allows("/topic/Subscriptions/sub/$DeadLetterQueue", Right.LISTEN, NOW_MS)).isTrue();
        assertThat(grants.allows("amqps://localhost/anything", Right.MANAGE, NOW_MS)).isTrue();
    }

    @Test
    void wrongKeyIs401() {
        String audience = "amqp://localhost/queue.1";

        assertUnauthorized(put(audience, SdkTokens.java(audience, KEY_NAME, "wrong", SE)),
                "InvalidSignature: The token has an invalid signature.");
        assertThat(grants.allows("queue.1", Right.SEND, NOW_MS)).isFalse();
        assertThat(grants.hasAcceptedToken()).isFalse();
    }

    @Test
    void expiredTokenIs401() {
        String audience = "sb://localhost/queue.1";

        assertUnauthorized(put(audience, SdkTokens.js(audience, KEY_NAME, KEY, NOW_MS / 1000 - 60)),
                "The token has expired.");
    }

    @Test
    void unknownKeyNameIs401() {
        String audience = "sb://localhost/queue.1";

        assertUnauthorized(put(audience, SdkTokens.js(audience, "x", KEY, SE)), "Unknown key name 'x'.");
    }

    @Test
    void tamperedResourceIs401() {
        String token = SdkTokens.java("amqp://localhost/queue.1", KEY_NAME, KEY, SE).replace("queue.1", "queue.2");

        assertUnauthorized(put("amqp://localhost/queue.2", token), "InvalidSignature");
    }

    @Test
    void malformedTokenIs401() {
        assertUnauthorized(put("sb://localhost/queue.1", "SharedAccessSignature sr=x"), "MalformedToken");
    }

    @Test
    void tokenForQueueADoesNotAuthoriseQueueB() {
        String a = "sb://localhost/queue.a";
        String tokenA = SdkTokens.js(a, KEY_NAME, KEY, SE);

        assertUnauthorized(put("sb://localhost/queue.b", tokenA), "InvalidAudience");
        assertUnauthorized(put("sb://localhost/queue.a2", tokenA), "InvalidAudience");
        assertAccepted(put(a, tokenA));

        assertThat(grants.allows("queue.a", Right.SEND, NOW_MS)).isTrue();
        assertThat(grants.allows("queue.b", Right.SEND, NOW_MS)).isFalse();
        assertThat(grants.allows("queue.a2", Right.SEND, NOW_MS)).isFalse();
        assertThatThrownBy(() -> grants.check("queue.b", Right.SEND, NOW_MS))
                .hasMessageContaining("No token authorises 'queue.b'");
    }

    @Test
    void entityTokenDoesNotCoverTheNamespaceOrAnotherHost() {
        String token = SdkTokens.java("amqp://localhost/queue.1", KEY_NAME, KEY, SE);

        assertUnauthorized(put("amqp://localhost/", token), "InvalidAudience");
        assertUnauthorized(put("amqp://otherhost/queue.1", token), "InvalidAudience");
    }

    @Test
    void audienceAndResourceMayDifferInSchemePortAndCase() {
        String token = SdkTokens.java("amqp://localhost/Queue.1", KEY_NAME, KEY, SE);

        assertAccepted(put("SB://LOCALHOST:5672/queue.1/", token));
    }

    @Test
    void tokenForTopicCoversItsSubscriptionsAndSubQueues() {
        String topic = "sb://localhost/topic.1";

        assertAccepted(put(topic, SdkTokens.js(topic, KEY_NAME, KEY, SE)));

        assertThat(grants.allows("topic.1/Subscriptions/x", Right.LISTEN, NOW_MS)).isTrue();
        assertThat(grants.allows("topic.1/Subscriptions/x/$DeadLetterQueue", Right.LISTEN, NOW_MS)).isTrue();
        assertThat(grants.allows("topic.1/subscriptions/x/$management", Right.MANAGE, NOW_MS)).isTrue();
        assertThat(grants.allows("topic.10/Subscriptions/x", Right.LISTEN, NOW_MS)).isFalse();
    }

    @Test
    void listenOnlyRuleCannotSend() {
        String audience = "sb://localhost/queue.1";

        assertAccepted(put(audience, SdkTokens.js(audience, "listen-only", "listen-key", SE)));

        assertThat(grants.allows("queue.1", Right.LISTEN, NOW_MS)).isTrue();
        assertThat(grants.allows("queue.1", Right.SEND, NOW_MS)).isFalse();
        assertThat(grants.allows("queue.1/$management", Right.MANAGE, NOW_MS)).isFalse();
        assertThatThrownBy(() -> grants.check("queue.1", Right.SEND, NOW_MS))
                .isInstanceOf(AuthException.class)
                .hasMessage("Unauthorized access. 'Send' claim(s) are required to perform this operation. "
                        + "Resource: 'queue.1'.")
                .satisfies(e -> assertThat(((AuthException) e).kind().amqpCondition())
                        .isEqualTo("amqp:unauthorized-access"));
    }

    @Test
    void rePutReplacesTheGrantForTheSameAudience() {
        String audience = "sb://localhost/queue.1";

        assertAccepted(put(audience, SdkTokens.js(audience, KEY_NAME, KEY, SE)));
        assertAccepted(put(audience, SdkTokens.js(audience, "listen-only", "listen-key", SE + 600)));

        assertThat(grants.entries()).singleElement().satisfies(entry -> {
            assertThat(entry.keyName()).isEqualTo("listen-only");
            assertThat(entry.rights()).containsExactly(Right.LISTEN);
            assertThat(entry.expiresAtMs()).isEqualTo((SE + 600) * 1000);
        });
        assertThat(grants.allows("queue.1", Right.SEND, NOW_MS)).isFalse();
        assertThat(grants.nextExpiryMs()).isEqualTo((SE + 600) * 1000);
    }

    @Test
    void refreshExtendsTheExpiry() {
        String audience = "amqp://localhost/queue.1";
        assertAccepted(put(audience, SdkTokens.java(audience, KEY_NAME, KEY, SE)));
        long later = SE * 1000 - 1000;

        assertAccepted(authorizer.putToken(grants, SAS_TOKEN_TYPE, audience,
                SdkTokens.java(audience, KEY_NAME, KEY, SE + 1200), later));

        assertThat(grants.allows("queue.1", Right.SEND, SE * 1000 + 1)).isTrue();
        assertThat(grants.nextExpiryMs()).isEqualTo((SE + 1200) * 1000);
    }

    @Test
    void failedPutKeepsTheEarlierGrant() {
        String audience = "sb://localhost/queue.1";
        assertAccepted(put(audience, SdkTokens.js(audience, KEY_NAME, KEY, SE)));

        assertUnauthorized(put(audience, SdkTokens.js(audience, KEY_NAME, "wrong", SE + 600)), "InvalidSignature");

        assertThat(grants.allows("queue.1", Right.SEND, NOW_MS)).isTrue();
        assertThat(grants.nextExpiryMs()).isEqualTo(SE * 1000);
    }

    @Test
    void expiryIsTracked() {
        String q1 = "sb://localhost/queue.1";
        String q2 = "sb://localhost/queue.2";
        assertAccepted(put(q1, SdkTokens.js(q1, KEY_NAME, KEY, SE)));
        assertAccepted(put(q2, SdkTokens.js(q2, KEY_NAME, KEY, SE + 60)));
        long expiry = SE * 1000;

        assertThat(grants.nextExpiryMs()).isEqualTo(expiry);
        assertThat(grants.allows("queue.1", Right.SEND, expiry - 1)).isTrue();
        assertThat(grants.allows("queue.1", Right.SEND, expiry)).isFalse();
        assertThat(grants.allows("queue.2", Right.SEND, expiry)).isTrue();
        assertThatThrownBy(() -> grants.check("queue.1", Right.SEND, expiry))
                .hasMessage("ExpiredToken: The token for 'queue.1' has expired.");

        assertThat(grants.removeExpired(expiry - 1)).isEmpty();
        assertThat(grants.removeExpired(expiry)).singleElement()
                .satisfies(entry -> assertThat(entry.audience().toString()).isEqualTo("//localhost/queue.1"));
        assertThat(grants.nextExpiryMs()).isEqualTo(expiry + 60_000);
        assertThat(grants.removeExpired(expiry + 60_000)).hasSize(1);
        assertThat(grants.nextExpiryMs()).isEqualTo(Long.MAX_VALUE);
        assertThat(grants.entries()).isEmpty();
    }

    @Test
    void jwtIsRejectedWith401() {
        PutTokenResult result = authorizer.putToken(grants, "jwt", "sb://localhost/queue.1", "eyJ0eXAi.x.y", NOW_MS);

        assertThat(result.statusCode()).isEqualTo(401);
        assertThat(result.statusDescription()).isEqualTo("JWT tokens are not supported; use a SAS token.");
    }

    /**
     * The Python SDK 7.x on its own AMQP stack (pyamqp) puts its SAS tokens with type "jwt" (its JWTTokenAuth's
     * default), and the service accepts them: a SAS token is validated as one whatever its type says, with the same
     * checks (a wrong signature is still refused).
     */
    @Test
    void aSasTokenPutWithTypeJwtIsValidatedAsASasToken() {
        String audience = "sb://localhost/queue.1";
        String token = SdkTokens.python(audience, KEY_NAME, KEY, SE);
        PutTokenResult result = authorizer.putToken(grants, "jwt", audience, token, NOW_MS);
        assertThat(result.statusCode()).isEqualTo(202);
        assertThat(grants.hasAcceptedToken()).isTrue();

        Grants other = authorizer.newGrants();
        String forged = SdkTokens.python(audience, KEY_NAME, "another-key", SE);
        assertThat(authorizer.putToken(other, "jwt", audience, forged, NOW_MS).statusCode()).isEqualTo(401);
        assertThat(other.hasAcceptedToken()).isFalse();
    }

    @Test
    void missingOrUnknownTypeIs400() {
        String audience = "sb://localhost/queue.1";
        String token = SdkTokens.js(audience, KEY_NAME, KEY, SE);

        for (String type : new String[] {null, "", "  ", "oauth", "servicebus.windows.net:other"}) {
            PutTokenResult result = authorizer.putToken(grants, type, audience, token, NOW_MS);
            assertThat(result.statusCode()).as(String.valueOf(type)).isEqualTo(400);
            assertThat(result.errorCondition()).isEqualTo("com.microsoft:argument-error");
        }
        assertThat(grants.hasAcceptedToken()).isFalse();
    }

    @Test
    void typeIsMatchedCaseInsensitively() {
        String audience = "sb://localhost/queue.1";

        assertAccepted(authorizer.putToken(grants, "ServiceBus.Windows.Net:SASToken", audience,
                SdkTokens.js(audience, KEY_NAME, KEY, SE), NOW_MS));
    }

    @Test
    void missingAudienceOrTokenIs400() {
        String token = SdkTokens.js("sb://localhost/queue.1", KEY_NAME, KEY, SE);

        assertThat(authorizer.putToken(grants, SAS_TOKEN_TYPE, null, token, NOW_MS).statusCode()).isEqualTo(400);
        assertThat(authorizer.putToken(grants, SAS_TOKEN_TYPE, " ", token, NOW_MS).statusCode()).isEqualTo(400);
        assertThat(authorizer.putToken(grants, SAS_TOKEN_TYPE, "sb://localhost/queue.1", null, NOW_MS)
                .statusCode()).isEqualTo(400);
    }

    @Test
    void saslPlainGrantsTheRuleNamespaceWide() {
        assertThat(authorizer.authenticatePlain(grants, "send-only", "wrong", NOW_MS)).isFalse();
        assertThat(grants.hasAcceptedToken()).isFalse();

        assertThat(authorizer.authenticatePlain(grants, "send-only", "send-key", NOW_MS)).isTrue();

        assertThat(grants.allows("any/queue", Right.SEND, Long.MAX_VALUE - 1)).isTrue();
        assertThat(grants.allows("any/queue", Right.LISTEN, NOW_MS)).isFalse();
        assertThat(grants.nextExpiryMs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void acceptAllModeAcceptsEverything() {
        CbsAuthorizer insecure = new CbsAuthorizer(SasValidator.acceptAll());
        Grants open = insecure.newGrants();

        assertThat(insecure.mode()).isEqualTo(AuthMode.ACCEPT_ALL);
        assertThat(open.isUnrestricted()).isTrue();
        assertThat(open.hasAcceptedToken()).isTrue();
        assertThat(open.allows("queue.1", Right.SEND, NOW_MS)).isTrue();
        assertThat(open.allows("/topic/Subscriptions/s/$DeadLetterQueue", Right.MANAGE, NOW_MS)).isTrue();
        open.check("anything", Right.LISTEN, NOW_MS);
        assertThat(open.nextExpiryMs()).isEqualTo(Long.MAX_VALUE);

        assertAccepted(insecure.putToken(open, "jwt", "sb://localhost/queue.1", "eyJ0eXAi.x.y", NOW_MS));
        assertAccepted(insecure.putToken(open, null, null, null, NOW_MS));
        assertAccepted(insecure.putToken(open, SAS_TOKEN_TYPE, "sb://localhost/queue.1",
                SdkTokens.js("sb://localhost/queue.1", "nobody", "wrong", 1), NOW_MS));
        assertThat(insecure.authenticatePlain(open, "who", "ever", NOW_MS)).isTrue();
    }

    @Test
    void grantsAreSafeToShareBetweenThreads() throws Exception {
        String token = SdkTokens.dotnet("amqps://localhost/", KEY_NAME, KEY, SE);
        int threads = 4;
        int perThread = 200;
        Thread[] workers = new Thread[threads];
        Throwable[] failure = new Throwable[1];
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers[t] = new Thread(() -> {
                try {
                    for (int i = 0; i < perThread; i++) {
                        String audience = "amqps://localhost/q" + id + "-" + i;
                        assertAccepted(authorizer.putToken(grants, SAS_TOKEN_TYPE, audience, token, NOW_MS));
                        assertThat(grants.allows("q" + id + "-" + i, Right.SEND, NOW_MS)).isTrue();
                        grants.nextExpiryMs();
                        grants.entries();
                    }
                } catch (Throwable e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                }
            });
            workers[t].start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        synchronized (failure) {
            assertThat(failure[0]).isNull();
        }
        assertThat(grants.entries()).hasSize(threads * perThread);
    }
}
