package io.buslane.management.atom;

import io.buslane.common.error.BrokerException;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Characters XML 1.0 cannot carry (U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+FFFE, U+FFFF, unpaired
 * surrogates) never make a document unparseable: they are refused where the service refuses them (descriptions and
 * rules, 400; rules however they are added), and written as U+FFFD wherever else they reach a document (text stored
 * by other paths, error details quoting the request); CR survives as {@code &#xD;}.
 */
class XmlCharactersApiTest {

    /** One of each kind of forbidden character, between allowed ones (tab, LF, CR, a pair, the last BMP ones). */
    private static final String EVERY_FORBIDDEN = "a\u0000b\u0008c\u000Bd\u000Ce\u000Ef\u001Fg\uFFFEh\uFFFFi"
            + "\uD800j\uDC00k\uDC00\uD800l";
    private static final String ALLOWED = "\t\n\r x\uD83D\uDE00\uFFFD\uFFFC";

    static AdminTestServer server;

    @BeforeAll
    static void start() throws Exception {
        server = AdminTestServer.acceptingAll();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void textStoredByAnotherPathIsWrittenParseablyWithCrIntact() throws Exception {
        String metadata = EVERY_FORBIDDEN + ALLOWED;
        server.engine.createQueue(QueueProperties.builder("xml-q").userMetadata(metadata).build())
                .get(10, TimeUnit.SECONDS);
        server.engine.createTopic(TopicProperties.builder("xml-t").userMetadata(metadata).build())
                .get(10, TimeUnit.SECONDS);
        server.engine.createSubscription(SubscriptionProperties.builder("xml-t", "s").userMetadata(metadata)
                .build(), List.of()).get(10, TimeUnit.SECONDS);
        String expected = "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf\uFFFDg\uFFFDh\uFFFDi\uFFFDj\uFFFDk\uFFFD\uFFFDl"
                + ALLOWED;

        for (String path : List.of("/xml-q", "/xml-t", "/xml-t/Subscriptions/s")) {
            HttpResponse<String> r = server.get(path);
            assertThat(r.statusCode()).as(path).isEqualTo(200);
            TestXml x = TestXml.parse(r.body()); // a strict XML 1.0 parser
            assertThat(x.text("//sb:UserMetadata")).as(path).isEqualTo(expected);
            assertThat(r.body()).as(path).contains("&#xD;");
        }
        for (String feed : List.of("/$Resources/queues", "/$Resources/topics", "/xml-t/Subscriptions")) {
            TestXml x = TestXml.parse(server.get(feed).body());
            assertThat(x.texts("//sb:UserMetadata")).as(feed).contains(expected);
        }
    }

    @Test
    void descriptionsAndRulesWithSuchCharactersAreRefusedWithAClearMessage() {
        for (String reference : List.of("&#x1;", "&#xB;", "&#x1F;", "&#xFFFE;", "&#xD800;")) {
            HttpResponse<String> r = server.put("/xml-bad", AdminTestServer.entry("QueueDescription",
                    "<UserMetadata>x" + reference + "</UserMetadata>"));
            assertThat(r.statusCode()).as(reference).isEqualTo(400);
            assertThat(TestXml.parse(r.body()).text("/Error/Detail")).as(reference)
                    .contains("a character XML 1.0 does not allow");
        }
        HttpResponse<String> literal = server.put("/xml-bad", AdminTestServer.entry("QueueDescription",
                "<UserMetadata>x\u0001</UserMetadata>"));
        assertThat(literal.statusCode()).isEqualTo(400);
        assertThat(server.engine.queue("xml-bad")).isNull();

        assertThat(server.put("/xml-rules", AdminTestServer.entry("TopicDescription", "")).statusCode())
                .isEqualTo(201);
        assertThat(server.put("/xml-rules/Subscriptions/s", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(201);
        HttpResponse<String> rule = server.put("/xml-rules/Subscriptions/s/Rules/r", AdminTestServer.entry(
                "RuleDescription", "<Filter i:type=\"SqlFilter\"><SqlExpression>a = '&#x7;'</SqlExpression>"
                        + "</Filter>"));
        assertThat(rule.statusCode()).isEqualTo(400);
        assertThat(TestXml.parse(rule.body()).text("/Error/Detail")).contains("XML 1.0 does not allow");
    }

    @Test
    void rulesAddedOtherwiseAreRefusedToo() {
        assertThat(server.put("/xml-engine", AdminTestServer.entry("TopicDescription", "")).statusCode())
                .isEqualTo(201);
        assertThat(server.put("/xml-engine/Subscriptions/s", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(201);
        List<RuleProperties> refused = List.of(
                new RuleProperties("sql", new RuleProperties.SqlFilter("a = '\u0001'"), null),
                new RuleProperties("action", RuleProperties.TrueFilter.INSTANCE, "SET a = '\uFFFF'"),
                new RuleProperties("corr", new RuleProperties.CorrelationFilter("c\uD800", null, null, null, null,
                        null, null, null, null), null),
                new RuleProperties("prop", new RuleProperties.CorrelationFilter(null, null, null, null, null, null,
                        null, null, Map.of("k", "v\u000C")), null));
        for (RuleProperties r : refused) {
            assertThatThrownBy(() -> await(server.engine.addRule("xml-engine", "s", r))).as(r.name())
                    .isInstanceOfSatisfying(BrokerException.class, e -> assertThat(e.description())
                            .contains("Rule '" + r.name() + "'").contains("XML 1.0 does not allow"));
        }
        TestXml x = TestXml.parse(server.get("/xml-engine/Subscriptions/s/Rules").body());
        assertThat(x.texts("//a:entry/a:title")).containsExactly("$Default");
    }

    @Test
    void errorDetailsQuotingTheRequestStayParseable() {
        for (String path : List.of("/nope%01", "/nope%0B/Subscriptions/s", "/t/Subscriptions/s%EF%BF%BE")) {
            HttpResponse<String> r = server.delete(path);
            assertThat(r.statusCode()).as(path).isBetween(400, 404);
            assertThat(TestXml.parse(r.body()).text("/Error/Code")).as(path).isEqualTo(
                    Integer.toString(r.statusCode()));
        }
    }

    private static void await(java.util.concurrent.CompletableFuture<?> f) throws Throwable {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause();
        }
    }
}
