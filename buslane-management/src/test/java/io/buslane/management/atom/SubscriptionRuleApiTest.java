package io.buslane.management.atom;

import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SubscriptionRuleApiTest {

    private static final String S = "/a:entry/a:content/sb:SubscriptionDescription/";
    private static final String R = "/a:entry/a:content/sb:RuleDescription/";
    /** Awkward SQL: XML metacharacters, CR LF, a tab, leading and trailing blanks. */
    private static final String SQL = "  user.region = 'eu & <us>' AND\r\n\tsys.Label <> \"x\" OR amount >= 10 ";

    static AdminTestServer server;

    @BeforeAll
    static void start() throws Exception {
        server = AdminTestServer.acceptingAll();
        assertThat(server.put("/shop", AdminTestServer.entry("TopicDescription", "")).statusCode()).isEqualTo(201);
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    private static String escapedSql() {
        return SQL.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#xD;");
    }

    @Test
    void subscriptionsRoundTripWithTheirProperties() {
        HttpResponse<String> created = server.put("/shop/Subscriptions/audit", AdminTestServer.entry(
                "SubscriptionDescription", "<LockDuration>PT30S</LockDuration><RequiresSession>true</RequiresSession>"
                        + "<DefaultMessageTimeToLive>PT1H</DefaultMessageTimeToLive>"
                        + "<DeadLetteringOnMessageExpiration>true</DeadLetteringOnMessageExpiration>"
                        + "<DeadLetteringOnFilterEvaluationExceptions>false</DeadLetteringOnFilterEvaluationExceptions>"
                        + "<MaxDeliveryCount>4</MaxDeliveryCount><EnableBatchedOperations>false"
                        + "</EnableBatchedOperations><Status>ReceiveDisabled</Status><UserMetadata>u</UserMetadata>"
                        + "<AutoDeleteOnIdle>PT10M</AutoDeleteOnIdle>"));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        TestXml x = TestXml.parse(server.get("/shop/subscriptions/audit").body());
        assertThat(x.text("/a:entry/a:title")).isEqualTo("audit");
        assertThat(x.text(S + "sb:LockDuration")).isEqualTo("PT30S");
        assertThat(x.text(S + "sb:RequiresSession")).isEqualTo("true");
        assertThat(x.text(S + "sb:DefaultMessageTimeToLive")).isEqualTo("PT1H");
        assertThat(x.text(S + "sb:DeadLetteringOnFilterEvaluationExceptions")).isEqualTo("false");
        assertThat(x.text(S + "sb:MaxDeliveryCount")).isEqualTo("4");
        assertThat(x.text(S + "sb:Status")).isEqualTo("ReceiveDisabled");
        assertThat(x.text(S + "sb:AutoDeleteOnIdle")).isEqualTo("PT10M");
        assertThat(x.childNames("/a:entry/a:content/sb:SubscriptionDescription")).containsExactly("LockDuration",
                "RequiresSession", "DefaultMessageTimeToLive", "DeadLetteringOnMessageExpiration",
                "DeadLetteringOnFilterEvaluationExceptions", "MessageCount", "MaxDeliveryCount",
                "EnableBatchedOperations", "Status", "CreatedAt", "UpdatedAt", "AccessedAt", "CountDetails",
                "UserMetadata", "AutoDeleteOnIdle", "EntityAvailabilityStatus");
        assertThat(server.put("/shop/Subscriptions/audit", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(409);
        assertThat(server.update("/shop/Subscriptions/audit", AdminTestServer.entry("SubscriptionDescription",
                "<MaxDeliveryCount>9</MaxDeliveryCount>")).statusCode()).isEqualTo(200);
        assertThat(server.engine.topic("shop").subscription("audit").properties().maxDeliveryCount()).isEqualTo(9);
        assertThat(server.get("/shop/Subscriptions/nope").statusCode()).isEqualTo(404);
        assertThat(server.get("/nope/Subscriptions/audit").statusCode()).isEqualTo(404);
        assertThat(server.put("/nope/Subscriptions/x", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(404);
    }

    @Test
    void subscriptionCountsComeFromTheEngine() throws Exception {
        assertThat(server.put("/shop/Subscriptions/counted", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(201);
        server.engine.send("shop", List.of(Message.builder().messageId("1").body(new byte[] {1}).build(),
                Message.builder().messageId("2").body(new byte[] {2}).build())).get();
        TestXml x = TestXml.parse(server.get("/shop/Subscriptions/counted?enrich=true").body());
        assertThat(x.text(S + "sb:CountDetails/c:ActiveMessageCount")).isEqualTo("2");
        assertThat(x.text(S + "sb:MessageCount")).isEqualTo("2");
    }

    @Test
    void aDefaultRuleDescriptionReplacesTheDefaultRule() {
        HttpResponse<String> created = server.put("/shop/Subscriptions/eu", AdminTestServer.entry(
                "SubscriptionDescription", "<DefaultRuleDescription><Filter i:type=\"SqlFilter\"><SqlExpression>"
                        + escapedSql() + "</SqlExpression><CompatibilityLevel>20</CompatibilityLevel></Filter>"
                        + "<Action i:type=\"EmptyRuleAction\"/><Name>eu-only</Name></DefaultRuleDescription>"));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        SubscriptionEntity s = server.engine.topic("shop").subscription("eu");
        assertThat(s.rules()).extracting(RuleProperties::name).containsExactly("eu-only");
        assertThat(((RuleProperties.SqlFilter) s.rules().get(0).filter()).expression()).isEqualTo(SQL);

        TestXml x = TestXml.parse(server.get("/shop/Subscriptions/eu/Rules/eu-only").body());
        assertThat(x.text(R + "sb:Filter/sb:SqlExpression")).isEqualTo(SQL);
        assertThat(x.text(R + "sb:Filter/sb:CompatibilityLevel")).isEqualTo("20");
        assertThat(x.text(R + "sb:Filter/@i:type")).isEqualTo("SqlFilter");
        assertThat(x.text(R + "sb:Action/@i:type")).isEqualTo("EmptyRuleAction");
        assertThat(x.text(R + "sb:Name")).isEqualTo("eu-only");
        assertThat(x.childNames("/a:entry/a:content/sb:RuleDescription"))
                .containsExactly("Filter", "Action", "CreatedAt", "Name");
    }

    @Test
    void rulesOfEveryKindRoundTrip() {
        assertThat(server.put("/shop/Subscriptions/rules", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(201);
        String base = "/shop/Subscriptions/rules/Rules/";
        HttpResponse<String> sql = server.put(base + "sql", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"SqlFilter\"><SqlExpression>" + escapedSql() + "</SqlExpression></Filter>"
                        + "<Action i:type=\"SqlRuleAction\"><SqlExpression>SET sys.Label = 'x'</SqlExpression>"
                        + "</Action><Name>sql</Name>"));
        assertThat(sql.statusCode()).as(sql.body()).isEqualTo(201);
        assertThat(TestXml.parse(sql.body()).text(R + "sb:Filter/sb:SqlExpression")).isEqualTo(SQL);
        assertThat(sql.body()).contains("&#xD;");

        HttpResponse<String> corr = server.put(base + "corr", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"CorrelationFilter\"><CorrelationId>c-1</CorrelationId><Label>lbl</Label>"
                        + "<ContentType>application/json</ContentType><Properties>"
                        + kv("region", "string", "eu") + kv("priority", "int", "5")
                        + kv("vip", "boolean", "true") + kv("when", "dateTime", "2024-01-02T03:04:05Z")
                        + "</Properties></Filter><Action i:type=\"EmptyRuleAction\"/>"));
        assertThat(corr.statusCode()).as(corr.body()).isEqualTo(201);
        RuleProperties.CorrelationFilter cf = (RuleProperties.CorrelationFilter) rule("rules", "corr").filter();
        assertThat(cf.correlationId()).isEqualTo("c-1");
        assertThat(cf.subject()).isEqualTo("lbl");
        Map<String, Object> expected = new java.util.LinkedHashMap<>();
        expected.put("region", "eu");
        expected.put("priority", 5);
        expected.put("vip", true);
        expected.put("when", Instant.parse("2024-01-02T03:04:05Z"));
        assertThat(cf.properties()).containsExactlyEntriesOf(expected);
        TestXml c = TestXml.parse(server.get(base + "corr").body());
        String props = R + "sb:Filter/sb:Properties/sb:KeyValueOfstringanyType";
        assertThat(c.texts(props + "/sb:Key")).containsExactly("region", "priority", "vip", "when");
        assertThat(c.texts(props + "/sb:Value/@i:type")).containsExactly("d6p1:string", "d6p1:int",
                "d6p1:boolean", "d6p1:dateTime");
        assertThat(c.text(R + "sb:Filter/sb:MessageId")).isNull();
        assertThat(c.childNames(R + "sb:Filter")).containsExactly("CorrelationId", "Label", "ContentType",
                "Properties");

        assertThat(server.put(base + "t", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"TrueFilter\"><SqlExpression>1=1</SqlExpression></Filter>")).statusCode())
                .isEqualTo(201);
        assertThat(server.put(base + "f", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"FalseFilter\"><SqlExpression>1=0</SqlExpression></Filter>")).statusCode())
                .isEqualTo(201);
        assertThat(rule("rules", "t").filter()).isEqualTo(RuleProperties.TrueFilter.INSTANCE);
        assertThat(rule("rules", "f").filter()).isEqualTo(RuleProperties.FalseFilter.INSTANCE);

        TestXml list = TestXml.parse(server.get("/shop/Subscriptions/rules/Rules").body());
        // in name order, as the service lists them (#32 cause 5)
        assertThat(list.texts("/a:feed/a:entry/a:title")).containsExactly("$Default", "corr", "f", "sql", "t");
        assertThat(list.texts("/a:feed/a:entry/a:content/sb:RuleDescription/sb:Filter/@i:type"))
                .containsExactly("TrueFilter", "CorrelationFilter", "FalseFilter", "SqlFilter", "TrueFilter");

        assertThat(server.put(base + "sql", AdminTestServer.entry("RuleDescription", "")).statusCode())
                .isEqualTo(409);
        HttpResponse<String> updated = server.update(base + "sql", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"SqlFilter\"><SqlExpression>a = 1</SqlExpression></Filter>"));
        assertThat(updated.statusCode()).as(updated.body()).isEqualTo(200);
        assertThat(rule("rules", "sql").filter()).isEqualTo(new RuleProperties.SqlFilter("a = 1"));
        assertThat(rule("rules", "sql").sqlAction()).isNull();
        assertThat(server.update(base + "missing", AdminTestServer.entry("RuleDescription", "")).statusCode())
                .isEqualTo(404);
        assertThat(server.delete(base + "$Default").statusCode()).isEqualTo(200);
        assertThat(server.get(base + "$Default").statusCode()).isEqualTo(404);
        assertThat(server.delete(base + "$Default").statusCode()).isEqualTo(404);
    }

    @Test
    void invalidRulesAre400() {
        assertThat(server.put("/shop/Subscriptions/bad", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(201);
        String base = "/shop/Subscriptions/bad/Rules/";
        assertThat(detail(server.put(base + "r", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"SqlFilter\"><SqlExpression>" + "x".repeat(1025) + "</SqlExpression></Filter>"))))
                .contains("maximum is 1024");
        assertThat(detail(server.put(base + "r", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"SqlFilter\"><SqlExpression>a=@q</SqlExpression><Parameters>"
                        + kv("@p", "int", "1") + "</Parameters></Filter>")))).contains("@q has no value");
        assertThat(detail(server.put(base + "r", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"SqlFilter\"><SqlExpression>a=@p</SqlExpression><Parameters>"
                        + kv("@p", "int", "one") + "</Parameters></Filter>")))).contains("not a valid int");
        assertThat(detail(server.put(base + "r", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"GeoFilter\"/>")))).contains("Unknown filter type 'GeoFilter'");
        // SQL is compiled when the rule is created: errors name the position
        assertThat(detail(server.put(base + "r", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"SqlFilter\"><SqlExpression>color = AND</SqlExpression></Filter>"))))
                .contains("Syntax error").contains("line 1, position 9");
        assertThat(detail(server.put(base + "r", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"SqlFilter\"><SqlExpression>sys.Colour = 'x'</SqlExpression></Filter>"))))
                .contains("'Colour' is not a system property");
        assertThat(detail(server.put(base + "r", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"TrueFilter\"/><Action i:type=\"SqlRuleAction\"><SqlExpression>SET"
                        + "</SqlExpression></Action>")))).contains("SQL action");
        assertThat(detail(server.put(base + "r", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"CorrelationFilter\"><Properties>" + kv("n", "int", "five")
                        + "</Properties></Filter>")))).contains("not a valid int");
    }

    @Test
    void sqlParametersRoundTripTypedAndFilterMessages() throws Exception {
        assertThat(server.put("/params", AdminTestServer.entry("TopicDescription", "")).statusCode()).isEqualTo(201);
        assertThat(server.put("/params/Subscriptions/params", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(201);
        String base = "/params/Subscriptions/params/Rules/";
        assertThat(server.delete(base + "$Default").statusCode()).isEqualTo(200);
        HttpResponse<String> created = server.put(base + "p", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"SqlFilter\"><SqlExpression>color = @color AND size &gt;= @min</SqlExpression>"
                        + "<Parameters>" + kv("@color", "string", "red") + kv("@min", "long", "5")
                        + "<KeyValueOfstringanyType><Key>@none</Key><Value i:nil=\"true\"/></KeyValueOfstringanyType>"
                        + "</Parameters><CompatibilityLevel>20</CompatibilityLevel></Filter>"
                        + "<Action i:type=\"SqlRuleAction\"><SqlExpression>SET level = @level</SqlExpression>"
                        + "<Parameters>" + kv("@level", "double", "2.5") + "</Parameters></Action>"));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        RuleProperties stored = paramsRule();
        Map<String, Object> expected = new java.util.LinkedHashMap<>();
        expected.put("@color", "red");
        expected.put("@min", 5L);
        expected.put("@none", null);
        assertThat(((RuleProperties.SqlFilter) stored.filter()).parameters()).isEqualTo(expected);
        assertThat(stored.actionParameters()).isEqualTo(Map.of("@level", 2.5d));

        TestXml x = TestXml.parse(server.get(base + "p").body());
        String f = "/a:entry/a:content/sb:RuleDescription/sb:Filter/";
        assertThat(x.childNames("/a:entry/a:content/sb:RuleDescription/sb:Filter"))
                .containsExactly("SqlExpression", "CompatibilityLevel", "Parameters");
        assertThat(x.texts(f + "sb:Parameters/sb:KeyValueOfstringanyType/sb:Key"))
                .containsExactly("@color", "@min", "@none");
        assertThat(x.texts(f + "sb:Parameters/sb:KeyValueOfstringanyType/sb:Value")).containsExactly("red", "5", "");
        assertThat(((org.w3c.dom.Element) x.node(f + "sb:Parameters/sb:KeyValueOfstringanyType[2]/sb:Value"))
                .getAttributeNS(Xmlns.XSI, "type")).isEqualTo("d6p1:long");
        assertThat(x.text("/a:entry/a:content/sb:RuleDescription/sb:Action/sb:Parameters"
                + "/sb:KeyValueOfstringanyType/sb:Value")).isEqualTo("2.5");

        // the rule filters and acts with its parameters
        server.engine.send("params", List.of(
                Message.builder().messageId("1").applicationProperties(Map.of("color", "red", "size", 7)).build(),
                Message.builder().messageId("2").applicationProperties(Map.of("color", "red", "size", 4)).build(),
                Message.builder().messageId("3").applicationProperties(Map.of("color", "blue", "size", 9)).build()))
                .get();
        TestXml counted = TestXml.parse(server.get("/params/Subscriptions/params?enrich=true").body());
        assertThat(counted.text(S + "sb:MessageCount")).isEqualTo("1");

        // an update replaces both parameter sets
        HttpResponse<String> updated = server.update(base + "p", AdminTestServer.entry("RuleDescription",
                "<Filter i:type=\"SqlFilter\"><SqlExpression>size &lt; @max</SqlExpression><Parameters>"
                        + kv("max", "int", "3") + "</Parameters></Filter>"
                        + "<Action i:type=\"SqlRuleAction\"><SqlExpression>SET level = @level</SqlExpression>"
                        + "<Parameters>" + kv("@level", "string", "low") + "</Parameters></Action>"));
        assertThat(updated.statusCode()).as(updated.body()).isEqualTo(200);
        assertThat(paramsRule().actionParameters()).isEqualTo(Map.of("@level", "low"));
        assertThat(((RuleProperties.SqlFilter) paramsRule().filter()).parameters()).isEqualTo(Map.of("max", 3));
    }

    private static RuleProperties paramsRule() {
        return server.engine.topic("params").subscription("params").rules().stream()
                .filter(r -> r.name().equals("p")).findFirst().orElseThrow();
    }

    private static String detail(HttpResponse<String> r) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        return TestXml.parse(r.body()).text("/Error/Detail");
    }

    private static RuleProperties rule(String sub, String name) {
        return server.engine.topic("shop").subscription(sub).rules().stream().filter(r -> r.name().equals(name))
                .findFirst().orElseThrow();
    }

    private static String kv(String key, String type, String value) {
        return "<KeyValueOfstringanyType><Key>" + key + "</Key><Value i:type=\"d6p1:" + type
                + "\" xmlns:d6p1=\"http://www.w3.org/2001/XMLSchema\">" + value + "</Value></KeyValueOfstringanyType>";
    }
}
