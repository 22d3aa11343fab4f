package io.buslane.management.rest;

import io.buslane.common.address.CanonicalAddress;
import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.CbsAuthorizer;
import io.buslane.common.auth.Grant;
import io.buslane.common.auth.Grants;
import io.buslane.common.auth.PutTokenResult;
import io.buslane.common.auth.Right;
import io.buslane.common.auth.SasRule;
import io.buslane.common.auth.SasValidator;
import io.buslane.common.error.BrokerException;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.EngineConfig;
import io.buslane.engine.ThreadingMode;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.engine.persist.Storage;
import io.buslane.journal.memory.InMemoryJournalFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The property behind docs/security.md's "One canonical address": <em>whenever a request is authorised, the entity
 * it acts on is covered by the token's {@code sr}</em>. Seeded random tokens (namespace and entity rules, every SDK
 * spelling of a resource, hostile resources) meet seeded random addresses made of entity names, keywords and the
 * pieces that made readers disagree before ({@code ://}, {@code ..}, encoded {@code /} and {@code \}, empty
 * segments, mixed case). The entity acted on is what a real engine's lookup finds for the address the API hands it;
 * the token's intended scope comes from the generator, not from any parser, so the check is independent of the
 * code under test. Runs the REST path ({@link RestApi#resolve}) and the AMQP path (a CBS {@code put-token} into
 * {@link Grants}, then a link address through {@link Grants#allows} and {@link EntityAddress#parse}).
 */
class AddressScopePropertyTest {

    private static final int CASES = 20_000;
    private static final long NOW_MS = 1_767_323_045_000L;
    private static final List<String> QUEUES = List.of("queue.1", "myqueue", "team", "team/secret", "a/b", "a",
            "Q");
    private static final List<String> TOPICS = List.of("t", "team/t");
    private static final List<String> SUBSCRIPTIONS = List.of("s", "S2");
    /** Entities with a rule of their own, key name {@code owner}, key {@code key-<entity>}. */
    private static final List<String> RULED = List.of("team", "a/b", "t");
    private static final List<String> PIECES = List.of(
            "queue.1", "myqueue", "team", "secret", "a", "b", "Q", "q", "t", "s", "S2", "QUEUE.1", "Team", "MyQueue",
            "Subscriptions", "subscriptions", "$DeadLetterQueue", "$Transfer", "%24DeadLetterQueue", "$management",
            "Rules", "$cbs", "", ".", "..", "%2e%2e", "%2E", "x:", "x:%2F%2Fy", "x://y", "%2F", "%2f",
            "queue.1%2Fmyqueue", "team%2Fsecret", "%5C", "a%2Fb", "a\\b", "%20", " ", "%zz", "%", "http:",
            "?x=1", "#f", "%3F", "İ", "K");
    private static final List<String> PREFIXES = List.of("", "/", "//", "sb://localhost/", "https://127.0.0.1:5300/",
            "amqps://LOCALHOST:5671/", "http://h/", "x://y/");

    private static Engine engine;
    private static SasValidator validator;

    @BeforeAll
    static void start() throws Exception {
        engine = Engine.start(new EngineConfig(new ManualClock(NOW_MS), Storage.of(new InMemoryJournalFactory()), 2,
                ThreadingMode.DEDICATED));
        for (String q : QUEUES) {
            engine.createQueue(QueueProperties.builder(q).build()).get();
        }
        for (String t : TOPICS) {
            engine.createTopic(TopicProperties.builder(t).build()).get();
            for (String s : SUBSCRIPTIONS) {
                engine.createSubscription(SubscriptionProperties.builder(t, s).build(), List.of()).get();
            }
        }
        validator = SasValidator.emulatorDefault();
        validator.entityRules((entity, keyName) -> RULED.contains(entity) && keyName.equalsIgnoreCase("owner")
                ? List.of(new SasRule("owner", "key-" + entity, Set.of(Right.MANAGE))) : List.of());
    }

    @AfterAll
    static void stop() throws Exception {
        engine.close();
    }

    /** What a generated token is meant to reach: the namespace, an entity (and under it), or one subscription. */
    private record Scope(String entity, String subscription, boolean entityRule) {

        /** Whether an entity found by the lookup ({@code topicOrQueue}, optional {@code sub}) is within scope. */
        boolean admits(String topicOrQueue, String sub) {
            if (entity.isEmpty()) {
                return true;
            }
            String e = fold(entity);
            String found = fold(topicOrQueue);
            boolean entityOk = entityRule ? found.equals(e) : found.equals(e) || found.startsWith(e + "/");
            if (subscription == null) {
                return entityOk;
            }
            return found.equals(e) && sub != null && fold(sub).equals(fold(subscription));
        }
    }

    private record Token(String text, Scope scope) {
    }

    @ParameterizedTest
    @ValueSource(longs = {1L, 20261201L, 0x5EED5EEDL})
    void anAuthorisedRestRequestActsOnlyOnWhatItsTokenCovers(long seed) {
        Random random = new Random(seed);
        int authorised = 0;
        for (int i = 0; i < CASES; i++) {
            Token token = token(random);
            String path = address(random, true, token.scope().entity());
            Grant grant;
            try {
                grant = validator.validate(token.text(), NOW_MS);
            } catch (AuthException refused) {
                continue;
            }
            EntityAddress address;
            try {
                address = RestApi.resolve(grant, Right.SEND, path);
            } catch (AuthException | BrokerException refused) {
                continue;
            }
            authorised++;
            check(seed, i, token, path, address);
        }
        assertThat(authorised).as("authorised cases").isGreaterThan(CASES / 100);
    }

    @ParameterizedTest
    @ValueSource(longs = {2L, 20261202L, 0xC0FFEEL})
    void anAuthorisedLinkActsOnlyOnWhatItsTokensCover(long seed) {
        Random random = new Random(seed);
        CbsAuthorizer cbs = new CbsAuthorizer(validator);
        int authorised = 0;
        for (int i = 0; i < CASES; i++) {
            Token token = token(random);
            Grants grants = cbs.newGrants();
            // the audience a client puts the token for: often the token's own resource, sometimes anything
            String audience = random.nextInt(3) == 0 ? address(random, false, "") : decodedResource(token);
            PutTokenResult put = cbs.putToken(grants, CbsAuthorizer.SAS_TOKEN_TYPE, audience, token.text(), NOW_MS);
            if (put.statusCode() != 202) {
                continue;
            }
            String link = address(random, false, token.scope().entity());
            if (!grants.allows(link, Right.SEND, NOW_MS)) {
                continue;
            }
            // the lookup's parse of an authorised address cannot fail: the grant check read the same parse (a
            // management node's requests act on its entity, as AmqpConnection routes them)
            EntityAddress address = EntityAddress.of(CanonicalAddress.parse(link).withoutManagement());
            if (address == null) {
                continue; // the namespace or its management node: no entity is acted on (the link is refused)
            }
            authorised++;
            check(seed, i, token, link, address);
        }
        assertThat(authorised).as("authorised cases").isGreaterThan(CASES / 100);
    }

    private static void check(long seed, int i, Token token, String path, EntityAddress address) {
        // what the engine re-reads from the address the API hands it is the same address
        assertThat(EntityAddress.parse(address.toString())).as("seed %d case %d: fixed point", seed, i)
                .isEqualTo(address);
        String found;
        String sub = null;
        if (address.subscription() == null) {
            QueueEntity q = engine.queue(address.entityPath());
            TopicEntity t = q == null ? engine.topic(address.entityPath()) : null;
            if (q == null && t == null) {
                return; // not found: nothing is acted on
            }
            found = q != null ? q.properties().name() : t.properties().name();
        } else {
            TopicEntity t = engine.topic(address.entityPath());
            SubscriptionEntity s = t == null ? null : t.subscription(address.subscription());
            if (s == null) {
                return;
            }
            found = t.properties().name();
            sub = s.properties().name();
        }
        assertThat(token.scope().admits(found, sub))
                .as("seed %d case %d: token %s (scope %s) authorised '%s', which acts on %s%s", seed, i,
                        token.text(), token.scope(), path, found, sub == null ? "" : "/Subscriptions/" + sub)
                .isTrue();
    }

    // ============================================================================================== generators

    private static Token token(Random random) {
        boolean entityRule = random.nextInt(3) == 0;
        String entity;
        String subscription = null;
        if (entityRule) {
            entity = pick(random, RULED);
        } else {
            int kind = random.nextInt(10);
            entity = kind == 0 ? "" : kind < 7 ? pick(random, QUEUES) : pick(random, TOPICS);
        }
        String resource = entity;
        if (!entity.isEmpty() && TOPICS.contains(entity) && random.nextInt(3) == 0) {
            subscription = pick(random, SUBSCRIPTIONS);
            resource = entity + "/" + (random.nextBoolean() ? "Subscriptions" : "subscriptions") + "/" + subscription;
        }
        resource = randomCase(random, resource);
        String suffix = switch (random.nextInt(8)) {
            case 0 -> "/";
            case 1 -> "/$management";
            case 2 -> "/$DeadLetterQueue";
            case 3, 4 -> "/" + String.join("/", pieces(random, 1 + random.nextInt(3)));
            default -> "";
        };
        String prefix = pick(random, List.of("sb://localhost/", "https://127.0.0.1:5300/", "amqps://LOCALHOST/",
                "/", "", "x://y/"));
        String sr = prefix + resource + (resource.isEmpty() && suffix.startsWith("/") ? suffix.substring(1) : suffix);
        String keyName = entityRule ? "owner" : SasRule.EMULATOR_KEY_NAME;
        String key = entityRule ? "key-" + entity : SasRule.EMULATOR_KEY;
        String encoded = URLEncoder.encode(sr, StandardCharsets.UTF_8);
        long se = NOW_MS / 1000 + 3600;
        String sig = URLEncoder.encode(SasValidator.sign(encoded + "\n" + se, key), StandardCharsets.UTF_8);
        return new Token("SharedAccessSignature sr=" + encoded + "&sig=" + sig + "&se=" + se + "&skn=" + keyName,
                new Scope(entity, subscription, entityRule));
    }

    private static String decodedResource(Token token) {
        String sr = token.text().substring("SharedAccessSignature sr=".length(), token.text().indexOf("&sig="));
        return java.net.URLDecoder.decode(sr, StandardCharsets.UTF_8);
    }

    /**
     * A request path (raw, as it arrives over HTTP) or a link address; a third of them start inside the token's own
     * entity ({@code tokenEntity}) and go on with other pieces, the shape of an escape attempt.
     */
    private static String address(Random random, boolean http, String tokenEntity) {
        List<String> parts = pieces(random, 1 + random.nextInt(5));
        if (!tokenEntity.isEmpty() && random.nextInt(3) == 0) {
            parts.add(0, randomCase(random, tokenEntity));
        }
        if (random.nextBoolean()) {
            // an entity as the SDKs address it, with at most one hostile or odd piece
            parts = new java.util.ArrayList<>();
            String entity = random.nextInt(4) == 0 ? pick(random, TOPICS) : pick(random, QUEUES);
            parts.add(randomCase(random, entity));
            if (TOPICS.contains(entity) && random.nextBoolean()) {
                parts.add(randomCase(random, "Subscriptions/" + pick(random, SUBSCRIPTIONS)));
            }
            if (random.nextInt(4) == 0) {
                parts.add(random.nextBoolean() ? "$DeadLetterQueue" : "$Transfer/$DeadLetterQueue");
            }
            if (random.nextBoolean()) {
                parts.add(random.nextInt(parts.size() + 1), pick(random, PIECES));
            }
        }
        if (random.nextInt(4) == 0) {
            parts.set(0, pick(random, QUEUES));
        }
        String prefix = http ? pick(random, List.of("/", "/", "/", "//", "/x://y/")) : pick(random, PREFIXES);
        return prefix + String.join("/", parts) + (random.nextInt(8) == 0 ? "/" : "");
    }

    private static List<String> pieces(Random random, int n) {
        List<String> out = new java.util.ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(random.nextInt(3) == 0 ? randomCase(random, pick(random, PIECES)) : pick(random, PIECES));
        }
        return out;
    }

    private static String randomCase(Random random, String text) {
        if (random.nextInt(3) != 0) {
            return text;
        }
        StringBuilder b = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            b.append(random.nextBoolean() ? Character.toUpperCase(c) : c);
        }
        return b.toString();
    }

    private static <T> T pick(Random random, List<T> from) {
        return from.get(random.nextInt(from.size()));
    }

    private static String fold(String s) {
        return s.toLowerCase(Locale.ROOT);
    }
}
