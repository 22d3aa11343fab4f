package io.buslane.management.atom;

import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class QueueTopicApiTest {

    private static final String Q = "/a:entry/a:content/sb:QueueDescription/";
    private static final String T = "/a:entry/a:content/sb:TopicDescription/";

    static AdminTestServer server;

    @BeforeAll
    static void start() throws Exception {
        server = AdminTestServer.validating();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    private static String queueBody() {
        return AdminTestServer.entry("QueueDescription", "<LockDuration>PT45S</LockDuration>"
                + "<MaxSizeInMegabytes>2048</MaxSizeInMegabytes>"
                + "<RequiresDuplicateDetection>true</RequiresDuplicateDetection>"
                + "<RequiresSession>false</RequiresSession>"
                + "<DefaultMessageTimeToLive>P2D</DefaultMessageTimeToLive>"
                + "<DeadLetteringOnMessageExpiration>true</DeadLetteringOnMessageExpiration>"
                + "<DuplicateDetectionHistoryTimeWindow>PT2M</DuplicateDetectionHistoryTimeWindow>"
                + "<MaxDeliveryCount>7</MaxDeliveryCount>"
                + "<EnableBatchedOperations>false</EnableBatchedOperations>"
                + "<IsAnonymousAccessible>false</IsAnonymousAccessible><AuthorizationRules/>"
                + "<Status>SendDisabled</Status><UserMetadata>meta &amp; data</UserMetadata>"
                + "<AutoDeleteOnIdle>PT1H</AutoDeleteOnIdle><EnablePartitioning>true</EnablePartitioning>"
                + "<EnableExpress>false</EnableExpress>");
    }

    @Test
    void createsAQueueWithEveryPropertyAndReadsItBackInTheServicesShape() {
        HttpResponse<String> created = server.put("/orders", queueBody());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        assertThat(created.headers().firstValue("Content-Type")).hasValueSatisfying(
                v -> assertThat(v).startsWith("application/atom+xml"));

        HttpResponse<String> got = server.get("/orders?enrich=false");
        assertThat(got.statusCode()).isEqualTo(200);
        TestXml x = TestXml.parse(got.body());
        assertThat(x.text("/a:entry/a:title")).isEqualTo("orders");
        assertThat(x.text("/a:entry/a:id")).startsWith("http://127.0.0.1:" + server.port() + "/orders");
        assertThat(x.text(Q + "sb:LockDuration")).isEqualTo("PT45S");
        // partitioned: reported as the 16 partitions' sum, as the service does (#32 cause 3)
        assertThat(x.text(Q + "sb:MaxSizeInMegabytes")).isEqualTo("32768");
        assertThat(x.text(Q + "sb:RequiresDuplicateDetection")).isEqualTo("true");
        assertThat(x.text(Q + "sb:DefaultMessageTimeToLive")).isEqualTo("P2D");
        assertThat(x.text(Q + "sb:DeadLetteringOnMessageExpiration")).isEqualTo("true");
        assertThat(x.text(Q + "sb:DuplicateDetectionHistoryTimeWindow")).isEqualTo("PT2M");
        assertThat(x.text(Q + "sb:MaxDeliveryCount")).isEqualTo("7");
        assertThat(x.text(Q + "sb:EnableBatchedOperations")).isEqualTo("false");
        assertThat(x.text(Q + "sb:Status")).isEqualTo("SendDisabled");
        assertThat(x.text(Q + "sb:UserMetadata")).isEqualTo("meta & data");
        assertThat(x.text(Q + "sb:AutoDeleteOnIdle")).isEqualTo("PT1H");
        assertThat(x.text(Q + "sb:EnablePartitioning")).isEqualTo("true");
        assertThat(x.text(Q + "sb:CountDetails/c:ActiveMessageCount")).isEqualTo("0");
        assertThat(x.childNames("/a:entry/a:content/sb:QueueDescription")).containsExactly("LockDuration",
                "MaxSizeInMegabytes", "RequiresDuplicateDetection", "RequiresSession", "DefaultMessageTimeToLive",
                "DeadLetteringOnMessageExpiration", "DuplicateDetectionHistoryTimeWindow", "MaxDeliveryCount",
                "EnableBatchedOperations", "SizeInBytes", "MessageCount", "IsAnonymousAccessible",
                "AuthorizationRules", "Status", "UserMetadata", "CreatedAt", "UpdatedAt", "AccessedAt",
                "SupportOrdering", "CountDetails", "AutoDeleteOnIdle", "EnablePartitioning",
                "EntityAvailabilityStatus", "EnableExpress", "MaxMessageSizeInKilobytes");
        assertThat(x.childNames(Q + "sb:CountDetails")).containsExactly("ActiveMessageCount",
                "DeadLetterMessageCount", "ScheduledMessageCount", "TransferMessageCount",
                "TransferDeadLetterMessageCount");

        QueueProperties p = server.engine.queue("orders").properties();
        assertThat(p.lockDuration()).isEqualTo(Duration.ofSeconds(45));
        assertThat(p.status()).isEqualTo(EntityStatus.SEND_DISABLED);
        assertThat(p.enablePartitioning()).isTrue();
    }

    @Test
    void defaultsAreTheServicesAndMaxDurationsAreTimeSpanMaxValue() {
        assertThat(server.put("/defaults", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(201);
        TestXml x = TestXml.parse(server.get("/defaults").body());
        assertThat(x.text(Q + "sb:LockDuration")).isEqualTo("PT1M");
        assertThat(x.text(Q + "sb:DefaultMessageTimeToLive")).isEqualTo("P10675199DT2H48M5.4775807S");
        assertThat(x.text(Q + "sb:AutoDeleteOnIdle")).isEqualTo("P10675199DT2H48M5.4775807S");
        assertThat(x.text(Q + "sb:MaxDeliveryCount")).isEqualTo("10");
        assertThat(x.text(Q + "sb:MaxMessageSizeInKilobytes")).isEqualTo("256");
        assertThat(x.text(Q + "sb:Status")).isEqualTo("Active");
        assertThat(x.node(Q + "sb:ForwardTo")).isNull();
    }

    @Test
    void duplicateCreateIs409AndAMissingEntityIsAnEmptyFeedOrA404InTheServicesShape() {
        assertThat(server.put("/dup", AdminTestServer.entry("QueueDescription", "")).statusCode()).isEqualTo(201);
        HttpResponse<String> again = server.put("/dup", AdminTestServer.entry("QueueDescription", ""));
        assertThat(again.statusCode()).isEqualTo(409);
        assertThat(TestXml.parse(again.body()).text("/Error/Code")).isEqualTo("409");
        assertThat(server.put("/dup", AdminTestServer.entry("TopicDescription", "")).statusCode()).isEqualTo(409);

        HttpResponse<String> missing = server.get("/nope");
        assertThat(missing.statusCode()).isEqualTo(200);
        TestXml feed = TestXml.parse(missing.body());
        assertThat(feed.root().getLocalName()).isEqualTo("feed");
        assertThat(feed.count("/a:feed/a:entry")).isZero();
        assertThat(feed.text("/a:feed/a:title")).isEqualTo("Publicly Listed Services");
        assertThat(server.getsEmptyFeed("/nope?enrich=true")).isTrue();
        HttpResponse<String> deleted = server.delete("/nope");
        assertThat(deleted.statusCode()).isEqualTo(404);
        TestXml error = TestXml.parse(deleted.body());
        assertThat(error.text("/Error/Code")).isEqualTo("404");
        assertThat(error.text("/Error/Detail")).contains("'nope' could not be found");
        assertThat(server.update("/nope", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(404);
    }

    @Test
    void updateWithIfMatchChangesTheDescriptionAndRefusesImmutableChanges() {
        assertThat(server.put("/upd", AdminTestServer.entry("QueueDescription", "<MaxDeliveryCount>3"
                + "</MaxDeliveryCount>")).statusCode()).isEqualTo(201);
        HttpResponse<String> updated = server.update("/upd", AdminTestServer.entry("QueueDescription",
                "<LockDuration>PT2M</LockDuration><Status>Disabled</Status>"));
        assertThat(updated.statusCode()).as(updated.body()).isEqualTo(200);
        TestXml x = TestXml.parse(server.get("/upd").body());
        assertThat(x.text(Q + "sb:LockDuration")).isEqualTo("PT2M");
        assertThat(x.text(Q + "sb:Status")).isEqualTo("Disabled");
        assertThat(x.text(Q + "sb:MaxDeliveryCount")).as("absent elements keep their value").isEqualTo("3");

        HttpResponse<String> refused = server.update("/upd", AdminTestServer.entry("QueueDescription",
                "<RequiresSession>true</RequiresSession>"));
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(TestXml.parse(refused.body()).text("/Error/Detail")).contains("RequiresSession cannot be changed");
    }

    @Test
    void invalidPropertiesAre400WithAClearDetail() {
        HttpResponse<String> r = server.put("/bad", AdminTestServer.entry("QueueDescription",
                "<LockDuration>PT10M</LockDuration>"));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(TestXml.parse(r.body()).text("/Error/Detail")).contains("LockDuration must be between");
        r = server.put("/bad", AdminTestServer.entry("QueueDescription", "<MaxDeliveryCount>many</MaxDeliveryCount>"));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(TestXml.parse(r.body()).text("/Error/Detail")).contains("MaxDeliveryCount");
        r = server.put("/bad", AdminTestServer.entry("QueueDescription", "<LockDuration>soon</LockDuration>"));
        assertThat(TestXml.parse(r.body()).text("/Error/Detail")).contains("not a valid ISO-8601 duration");
        assertThat(server.put("/bad", "<entry").statusCode()).isEqualTo(400);
        assertThat(server.put("/bad", AdminTestServer.entry("RuleDescription", "")).statusCode()).isEqualTo(400);
        assertThat(server.put("/bad@name", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(400);
        assertThat(server.getsEmptyFeed("/bad")).isTrue();
    }

    @Test
    void lookAlikeNamesAndUnboundedSizesAre400() {
        assertThat(server.put("/t", AdminTestServer.entry("TopicDescription", "")).statusCode()).isEqualTo(201);
        for (String path : List.of("/a..b", "/a/../b", "/pay%E2%80%AEroll", "/zero%E2%80%8Bwidth", "/bom%EF%BB%BF",
                "/t/Subscriptions/..", "/t/Subscriptions/s%E2%81%A6")) {
            HttpResponse<String> r = server.put(path, AdminTestServer.entry(path.contains("/Subscriptions/")
                    ? "SubscriptionDescription" : "QueueDescription", ""));
            assertThat(r.statusCode()).as(path).isEqualTo(400);
            assertThat(TestXml.parse(r.body()).text("/Error/Detail")).as(path).contains("not allowed")
                    .doesNotContain("\u202E").doesNotContain("\u200B");
        }
        HttpResponse<String> r = server.put("/huge", AdminTestServer.entry("QueueDescription",
                "<MaxSizeInMegabytes>1000000000</MaxSizeInMegabytes>"));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(TestXml.parse(r.body()).text("/Error/Detail")).contains("MaxSizeInMegabytes must be at most 81920");
        r = server.put("/huge", AdminTestServer.entry("TopicDescription",
                "<MaxMessageSizeInKilobytes>2147483647</MaxMessageSizeInKilobytes>"));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(TestXml.parse(r.body()).text("/Error/Detail")).contains("MaxMessageSizeInKilobytes must be at most");
        assertThat(server.getsEmptyFeed("/huge")).isTrue();
    }

    @Test
    void entityPathsMayContainSlashesEncodedOrNot() {
        assertThat(server.put("/app/orders/eu", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(201);
        assertThat(server.get("/app%2Forders%2Feu").statusCode()).isEqualTo(200);
        assertThat(TestXml.parse(server.get("/app/orders/eu").body()).text("/a:entry/a:title"))
                .isEqualTo("app/orders/eu");
        assertThat(server.delete("/app%2Forders%2Feu").statusCode()).isEqualTo(200);
        assertThat(server.getsEmptyFeed("/app/orders/eu")).isTrue();
    }

    /** #32 cause 4: the service answers a GET of the namespace root with the discovery feed of its children. */
    @Test
    void theNamespaceRootIsEntitiesDiscoveryOfTheTopLevelQueuesAndTopicsInNameOrder() {
        assertThat(server.put("/disc-b", AdminTestServer.entry("QueueDescription", "")).statusCode()).isEqualTo(201);
        assertThat(server.put("/Disc-a", AdminTestServer.entry("TopicDescription", "")).statusCode()).isEqualTo(201);
        assertThat(server.put("/disc/nested", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(201);
        HttpResponse<String> root = server.get("/");
        assertThat(root.statusCode()).as(root.body()).isEqualTo(200);
        TestXml x = TestXml.parse(root.body());
        assertThat(x.text("/a:feed/a:title")).isEqualTo("Publicly Listed Services");
        List<String> titles = x.texts("/a:feed/a:entry/a:title");
        assertThat(titles).containsSubsequence("Disc-a", "disc-b").doesNotContain("disc/nested");
        assertThat(x.node("/a:feed/a:entry[a:title='Disc-a']/a:content/sb:TopicDescription")).isNotNull();
        assertThat(x.node("/a:feed/a:entry[a:title='disc-b']/a:content/sb:QueueDescription")).isNotNull();
        assertThat(server.put("/", AdminTestServer.entry("QueueDescription", "")).statusCode()).isEqualTo(404);
    }

    @Test
    void forwardToAcceptsAUrlOrANameIsReportedAsTheEntitysUrlAndRequiresAnExistingTarget() {
        assertThat(server.put("/fwd-target", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(201);
        HttpResponse<String> r = server.put("/fwd-source", AdminTestServer.entry("QueueDescription",
                "<ForwardTo>https://localhost/fwd-target</ForwardTo>"
                        + "<ForwardDeadLetteredMessagesTo>sb://localhost/fwd-target</ForwardDeadLetteredMessagesTo>"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        assertThat(server.engine.queue("fwd-source").properties().forwardTo()).isEqualTo("fwd-target");
        TestXml x = TestXml.parse(r.body());
        // an absolute URL comes back as sent (#32 cause 2: each SDK compares what it reads with what it sent)
        assertThat(x.text(Q + "sb:ForwardTo")).isEqualTo("https://localhost/fwd-target");
        assertThat(x.text(Q + "sb:ForwardDeadLetteredMessagesTo")).isEqualTo("sb://localhost/fwd-target");

        HttpResponse<String> bare = server.put("/fwd-bare", AdminTestServer.entry("QueueDescription",
                "<ForwardTo>fwd-target</ForwardTo>"));
        assertThat(bare.statusCode()).as(bare.body()).isEqualTo(201);
        assertThat(server.engine.queue("fwd-bare").properties().forwardTo()).isEqualTo("fwd-target");
        assertThat(TestXml.parse(server.get("/fwd-bare").body()).text(Q + "sb:ForwardTo"))
                .isEqualTo("https://127.0.0.1/fwd-target");
        assertThat(TestXml.parse(bare.body()).node(Q + "sb:ForwardDeadLetteredMessagesTo")).isNull();

        // the JavaScript SDK's form: scheme and host in lower case as .NET's Uri does, port and path kept
        HttpResponse<String> js = server.put("/fwd-js", AdminTestServer.entry("QueueDescription",
                "<ForwardTo>SB://LocalHost:5300/Fwd-Target</ForwardTo>"));
        assertThat(js.statusCode()).as(js.body()).isEqualTo(201);
        assertThat(server.engine.queue("fwd-js").properties().forwardTo()).isEqualTo("Fwd-Target");
        assertThat(TestXml.parse(server.get("/fwd-js").body()).text(Q + "sb:ForwardTo"))
                .isEqualTo("sb://localhost:5300/Fwd-Target");

        HttpResponse<String> missing = server.put("/fwd-broken", AdminTestServer.entry("QueueDescription",
                "<ForwardTo>https://localhost/nowhere</ForwardTo>"));
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(TestXml.parse(missing.body()).text("/Error/Detail")).contains("ForwardTo names 'nowhere'");
    }

    @Test
    void enrichedGetCarriesTheEnginesCounts() throws Exception {
        assertThat(server.put("/counted", AdminTestServer.entry("QueueDescription", "")).statusCode())
                .isEqualTo(201);
        server.engine.send("counted", List.of(message("1"), message("2"), message("3"))).get();
        server.engine.schedule("counted", List.of(Message.builder().messageId("s").body(new byte[] {1})
                .scheduledEnqueueTimeMs(System.currentTimeMillis() + 3_600_000).build())).get();
        TestXml x = TestXml.parse(server.get("/counted?enrich=true").body());
        assertThat(x.text(Q + "sb:CountDetails/c:ActiveMessageCount")).isEqualTo("3");
        assertThat(x.text(Q + "sb:CountDetails/c:ScheduledMessageCount")).isEqualTo("1");
        assertThat(x.text(Q + "sb:CountDetails/c:DeadLetterMessageCount")).isEqualTo("0");
        assertThat(x.text(Q + "sb:MessageCount")).isEqualTo("4");
        assertThat(Long.parseLong(x.text(Q + "sb:SizeInBytes"))).isPositive();
    }

    @Test
    void topicsRoundTripAndCountTheirSubscriptions() {
        HttpResponse<String> created = server.put("/events", AdminTestServer.entry("TopicDescription",
                "<DefaultMessageTimeToLive>PT10M</DefaultMessageTimeToLive><MaxSizeInMegabytes>5120"
                        + "</MaxSizeInMegabytes><RequiresDuplicateDetection>true</RequiresDuplicateDetection>"
                        + "<DuplicateDetectionHistoryTimeWindow>PT30S</DuplicateDetectionHistoryTimeWindow>"
                        + "<SupportOrdering>false</SupportOrdering><UserMetadata>t</UserMetadata>"
                        + "<MaxMessageSizeInKilobytes>1024</MaxMessageSizeInKilobytes>"));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        assertThat(server.put("/events/Subscriptions/s1", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(201);
        TestXml x = TestXml.parse(server.get("/events?enrich=true").body());
        assertThat(x.text(T + "sb:DefaultMessageTimeToLive")).isEqualTo("PT10M");
        assertThat(x.text(T + "sb:MaxSizeInMegabytes")).isEqualTo("5120");
        assertThat(x.text(T + "sb:DuplicateDetectionHistoryTimeWindow")).isEqualTo("PT30S");
        assertThat(x.text(T + "sb:SupportOrdering")).isEqualTo("false");
        assertThat(x.text(T + "sb:MaxMessageSizeInKilobytes")).isEqualTo("1024");
        assertThat(x.text(T + "sb:SubscriptionCount")).isEqualTo("1");
        assertThat(x.childNames("/a:entry/a:content/sb:TopicDescription")).containsExactly(
                "DefaultMessageTimeToLive", "MaxSizeInMegabytes", "RequiresDuplicateDetection",
                "DuplicateDetectionHistoryTimeWindow", "EnableBatchedOperations", "SizeInBytes",
                "FilteringMessagesBeforePublishing", "IsAnonymousAccessible", "AuthorizationRules", "Status",
                "UserMetadata", "CreatedAt", "UpdatedAt", "AccessedAt", "SupportOrdering", "CountDetails",
                "SubscriptionCount", "AutoDeleteOnIdle", "EnablePartitioning", "EntityAvailabilityStatus",
                "EnableSubscriptionPartitioning", "EnableExpress", "MaxMessageSizeInKilobytes");
        assertThat(server.update("/events", AdminTestServer.entry("TopicDescription",
                "<UserMetadata>t2</UserMetadata>")).statusCode()).isEqualTo(200);
        assertThat(server.engine.topic("events").properties().userMetadata()).isEqualTo("t2");
        assertThat(server.delete("/events").statusCode()).isEqualTo(200);
        assertThat(server.get("/events/Subscriptions/s1").statusCode()).isEqualTo(404);
    }

    /**
     * From api-version 2024-05 (the default of .NET 7.21 and Java 7.18) a topic's description ends with
     * SqlFilterCount and CorrelationFilterCount over all its subscriptions' rules, $Default counted as SQL, as the
     * service emits them (captured in the Go SDK's admin tests: one subscription with $Default, one SQL and one
     * correlation rule reads 2 and 1); earlier versions carry neither.
     */
    @Test
    void apiVersion2024_05AddsTheTopicsFilterCounts() throws Exception {
        assertThat(server.put("/counted-topic", AdminTestServer.entry("TopicDescription", "")).statusCode())
                .isEqualTo(201);
        assertThat(server.put("/counted-topic/Subscriptions/s1", AdminTestServer.entry("SubscriptionDescription", ""))
                .statusCode()).isEqualTo(201);
        server.engine.addRule("counted-topic", "s1", new RuleProperties("red",
                new RuleProperties.SqlFilter("color = 'red'", null), null)).get();
        server.engine.addRule("counted-topic", "s1", new RuleProperties("by-id", new RuleProperties.CorrelationFilter(
                "c1", null, null, null, null, null, null, null, null), null)).get();
        TestXml current = TestXml.parse(server.get("/counted-topic?api-version=2024-05").body());
        assertThat(current.text(T + "sb:SqlFilterCount")).isEqualTo("2");
        assertThat(current.text(T + "sb:CorrelationFilterCount")).isEqualTo("1");
        List<String> names = current.childNames("/a:entry/a:content/sb:TopicDescription");
        assertThat(names.subList(names.size() - 3, names.size())).containsExactly("MaxMessageSizeInKilobytes",
                "SqlFilterCount", "CorrelationFilterCount");
        for (String older : new String[] {"?api-version=2021-05", "?api-version=2017-04", ""}) {
            TestXml x = TestXml.parse(server.get("/counted-topic" + older).body());
            assertThat(x.childNames("/a:entry/a:content/sb:TopicDescription")).as(older)
                    .doesNotContain("SqlFilterCount", "CorrelationFilterCount");
        }
        assertThat(server.delete("/counted-topic").statusCode()).isEqualTo(200);
    }

    @Test
    void listsArePagedFeedsWithANextLink() {
        for (String n : List.of("page-c", "page-a", "page-e", "page-b", "page-d")) {
            assertThat(server.put("/" + n, AdminTestServer.entry("TopicDescription", "")).statusCode())
                    .isEqualTo(201);
        }
        HttpResponse<String> first = server.get("/$Resources/topics?$skip=0&$top=2");
        assertThat(first.statusCode()).isEqualTo(200);
        TestXml f = TestXml.parse(first.body());
        assertThat(f.root().getLocalName()).isEqualTo("feed");
        List<String> all = new java.util.ArrayList<>(f.texts("/a:feed/a:entry/a:title"));
        String next = f.text("/a:feed/a:link[@rel='next']/@href");
        assertThat(next).contains("$skip=2").contains("$top=2");
        int guard = 0;
        while (next != null && guard++ < 10) {
            String pathAndQuery = next.substring(next.indexOf("/$Resources"));
            TestXml page = TestXml.parse(server.get(pathAndQuery.replaceAll("&api-version=[^&]*", "")).body());
            all.addAll(page.texts("/a:feed/a:entry/a:title"));
            next = page.text("/a:feed/a:link[@rel='next']/@href");
        }
        assertThat(all.stream().filter(n -> n.startsWith("page-")))
                .containsExactly("page-a", "page-b", "page-c", "page-d", "page-e");
        assertThat(TestXml.parse(server.get("/$Resources/queues").body())
                .texts("/a:feed/a:entry/a:content/sb:QueueDescription/sb:LockDuration")).isNotEmpty();
        assertThat(server.get("/$Resources/topics?$top=abc").statusCode()).isEqualTo(400);
        assertThat(server.get("/$Resources/eventhubs").statusCode()).isEqualTo(404);
    }

    @Test
    void namespaceInfoDescribesAStandardMessagingNamespace() {
        HttpResponse<String> r = server.get("/$namespaceinfo");
        assertThat(r.statusCode()).isEqualTo(200);
        TestXml x = TestXml.parse(r.body());
        String ns = "/a:entry/a:content/sb:NamespaceInfo/";
        assertThat(x.text(ns + "sb:MessagingSKU")).isEqualTo("Standard");
        assertThat(x.text(ns + "sb:NamespaceType")).isEqualTo("Messaging");
        assertThat(x.text(ns + "sb:Name")).isEqualTo("127.0.0.1");
        assertThat(x.text(ns + "sb:CreatedTime")).endsWith("Z");
    }

    @Test
    void healthAndOtherRoutesKeepTheirPaths() {
        assertThat(server.get("/health").body()).isEqualTo("ok");
        assertThat(server.get("/registered-later").body()).as("routes mounted after the API come first")
                .isEqualTo("later");
    }

    private static Message message(String id) {
        return Message.builder().messageId(id).body(id.getBytes(StandardCharsets.UTF_8)).build();
    }
}
