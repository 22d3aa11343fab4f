package io.buslane.server.config;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.Limits;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.RuleProperties.CorrelationFilter;
import io.buslane.engine.entity.RuleProperties.SqlFilter;
import io.buslane.engine.entity.RuleProperties.TrueFilter;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class ConfigLoaderTest {

    private static final String Q0 = "$.UserConfig.Namespaces[0].Queues[0]";
    private static final String T0 = "$.UserConfig.Namespaces[0].Topics[0]";
    private static final String S0 = T0 + ".Subscriptions[0]";
    private static final String R0 = S0 + ".Rules[0]";

    @TempDir
    Path dir;

    private ListAppender<ILoggingEvent> logs;
    private Logger logger;

    @BeforeEach
    void captureLogs() {
        logger = (Logger) LoggerFactory.getLogger(ConfigLoader.class);
        logs = new ListAppender<>();
        logs.start();
        logger.addAppender(logs);
    }

    @AfterEach
    void releaseLogs() {
        logger.detachAppender(logs);
    }

    // ---------------------------------------------------------------- the emulator's own files

    @Test
    void emulatorSampleLoadsAsIs() throws Exception {
        // The emulator's sample Config.json (Azure/azure-service-bus-emulator-installer,
        // ServiceBus-Emulator/Config/Config.json) in the version Microsoft Learn's "Test locally by using the Azure
        // Service Bus emulator" publishes, with the SQL filter and action of subscription.4; copied unchanged.
        Path sample = resource("/config/emulator-sample.json");

        Topology t = ConfigLoader.load(sample);

        assertThat(t.namespaceName()).isEqualTo("sbemulatorns");
        assertThat(t.queues()).hasSize(1);
        QueueProperties q = t.queues().get(0);
        assertThat(q).isEqualTo(QueueProperties.builder("queue.1")
                .deadLetteringOnMessageExpiration(false)
                .defaultMessageTimeToLive(Duration.ofHours(1))
                .duplicateDetectionHistoryTimeWindow(Duration.ofSeconds(20))
                .lockDuration(Duration.ofMinutes(1))
                .maxDeliveryCount(3)
                .build());
        assertThat(q.forwardTo()).isNull();
        assertThat(q.forwardDeadLetteredMessagesTo()).isNull();

        assertThat(t.topics()).hasSize(1);
        TopicDefinition topic = t.topics().get(0);
        assertThat(topic.topic()).isEqualTo(TopicProperties.builder("topic.1")
                .defaultMessageTimeToLive(Duration.ofHours(1))
                .duplicateDetectionHistoryTimeWindow(Duration.ofSeconds(20))
                .build());
        assertThat(topic.subscriptions()).extracting(s -> s.subscription().name())
                .containsExactly("subscription.1", "subscription.2", "subscription.3", "subscription.4");
        SubscriptionProperties expectedSub = SubscriptionProperties.builder("topic.1", "subscription.1")
                .defaultMessageTimeToLive(Duration.ofHours(1))
                .lockDuration(Duration.ofMinutes(1))
                .maxDeliveryCount(3)
                .build();
        assertThat(topic.subscriptions().get(0).subscription()).isEqualTo(expectedSub);

        assertThat(topic.subscriptions().get(0).rules()).containsExactly(new RuleProperties("app-prop-filter-1",
                new CorrelationFilter("id1", "msgid1", "xyz", "someQueue", "subject1", "session1", "sessionId",
                        "application/text", Map.of()), null));
        assertThat(topic.subscriptions().get(1).rules()).containsExactly(new RuleProperties("user-prop-filter-1",
                new CorrelationFilter(null, null, null, null, null, null, null, null, Map.of("prop1", "value1")),
                null));
        assertThat(topic.subscriptions().get(2).rules()).containsExactly(RuleProperties.defaultRule());
        assertThat(topic.subscriptions().get(3).rules()).containsExactly(new RuleProperties("sql-filter-1",
                new SqlFilter("sys.MessageId = '123456' AND userProp1 = 'value1'"), "SET sys.To = 'Entity'"));

        assertThat(logs.list).as("no warnings for the emulator's own sample").isEmpty();
    }

    @Test
    void emulatorFileWithoutTopicsLoads() throws IOException {
        // Shaped like the installer's ServiceBus-Emulator/Config/Prover/Config.json: no "Topics" at all.
        Topology t = load("prover.json", """
                {"UserConfig": {"Namespaces": [{"Name": "sbemulatorns", "Queues": [
                  {"Name": "background-task", "Properties": {"DeadLetteringOnMessageExpiration": true,
                   "DefaultMessageTimeToLive": "PT1H", "DuplicateDetectionHistoryTimeWindow": "PT20S",
                   "ForwardDeadLetteredMessagesTo": "", "ForwardTo": "", "LockDuration": "PT1M",
                   "MaxDeliveryCount": 3, "RequiresDuplicateDetection": false, "RequiresSession": false}}]}],
                 "Logging": {"Type": "File"}}}
                """);

        assertThat(t.queues()).extracting(QueueProperties::name).containsExactly("background-task");
        assertThat(t.queues().get(0).deadLetteringOnMessageExpiration()).isTrue();
        assertThat(t.topics()).isEmpty();
    }

    // ---------------------------------------------------------------- defaults and property mapping

    @Test
    void missingPropertiesTakeTheCloudDefaults() throws IOException {
        Topology t = load("defaults.json", """
                {"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
                  "Queues": [{"Name": "q"}],
                  "Topics": [{"Name": "t", "Properties": {}, "Subscriptions": [{"Name": "s"}]}]}],
                 "Logging": {"Type": "Console"}}}
                """);

        assertThat(t.queues()).containsExactly(QueueProperties.builder("q").build());
        assertThat(t.queues().get(0).maxDeliveryCount()).isEqualTo(10);
        assertThat(t.queues().get(0).defaultMessageTimeToLive()).isEqualTo(Limits.MAX_DURATION);
        TopicDefinition topic = t.topics().get(0);
        assertThat(topic.topic()).isEqualTo(TopicProperties.builder("t").build());
        assertThat(topic.subscriptions()).containsExactly(new SubscriptionDefinition(
                SubscriptionProperties.builder("t", "s").build(), List.of(RuleProperties.defaultRule())));
    }

    @Test
    void mapsEveryQueueProperty() throws IOException {
        Topology t = load("queue.json", namespace("""
                "Queues": [
                  {"Name": "target"},
                  {"Name": "full", "Properties": {
                    "DeadLetteringOnMessageExpiration": true,
                    "DefaultMessageTimeToLive": "PT10M",
                    "DuplicateDetectionHistoryTimeWindow": "PT5S",
                    "ForwardDeadLetteredMessagesTo": "target",
                    "ForwardTo": "target",
                    "LockDuration": "PT30S",
                    "MaxDeliveryCount": 7,
                    "RequiresDuplicateDetection": true,
                    "RequiresSession": true,
                    "EnablePartitioning": true,
                    "MaxSizeInMegabytes": 5120,
                    "Status": "sendDisabled",
                    "AutoDeleteOnIdle": "P7D",
                    "UserMetadata": "owned by team x",
                    "MaxMessageSizeInKilobytes": 1024,
                    "EnableBatchedOperations": false}}]
                """));

        assertThat(t.queues().get(1)).isEqualTo(QueueProperties.builder("full")
                .deadLetteringOnMessageExpiration(true)
                .defaultMessageTimeToLive(Duration.ofMinutes(10))
                .duplicateDetectionHistoryTimeWindow(Duration.ofSeconds(5))
                .forwardDeadLetteredMessagesTo("target")
                .forwardTo("target")
                .lockDuration(Duration.ofSeconds(30))
                .maxDeliveryCount(7)
                .requiresDuplicateDetection(true)
                .requiresSession(true)
                .enablePartitioning(true)
                .maxSizeInMegabytes(5120)
                .status(EntityStatus.SEND_DISABLED)
                .autoDeleteOnIdle(Duration.ofDays(7))
                .userMetadata("owned by team x")
                .maxMessageSizeInKilobytes(1024)
                .enableBatchedOperations(false)
                .build());
        assertThat(logs.list).isEmpty();
    }

    @Test
    void mapsEveryTopicAndSubscriptionProperty() throws IOException {
        Topology t = load("topic.json", namespace("""
                "Queues": [{"Name": "dlq"}],
                "Topics": [{"Name": "orders", "Properties": {
                    "DefaultMessageTimeToLive": "P1D",
                    "DuplicateDetectionHistoryTimeWindow": "PT2M",
                    "RequiresDuplicateDetection": true,
                    "EnablePartitioning": true,
                    "MaxSizeInMegabytes": 2048,
                    "Status": "Disabled",
                    "AutoDeleteOnIdle": "PT1H",
                    "UserMetadata": "m",
                    "MaxMessageSizeInKilobytes": 512,
                    "SupportOrdering": false,
                    "EnableBatchedOperations": false},
                  "Subscriptions": [
                    {"Name": "all", "Properties": {
                      "DeadLetteringOnMessageExpiration": true,
                      "DefaultMessageTimeToLive": "PT5M",
                      "LockDuration": "PT5M",
                      "MaxDeliveryCount": 1,
                      "ForwardDeadLetteredMessagesTo": "dlq",
                      "ForwardTo": "DLQ",
                      "RequiresSession": true,
                      "DeadLetteringOnFilterEvaluationExceptions": false,
                      "Status": "ReceiveDisabled",
                      "AutoDeleteOnIdle": "PT5M",
                      "UserMetadata": "s",
                      "EnableBatchedOperations": false}},
                    {"Name": "alias", "Properties": {"EnableDeadLetteringOnFilterEvaluationExceptions": false}}]}]
                """));

        TopicDefinition topic = t.findTopic("ORDERS").orElseThrow();
        assertThat(topic.topic()).isEqualTo(TopicProperties.builder("orders")
                .defaultMessageTimeToLive(Duration.ofDays(1))
                .duplicateDetectionHistoryTimeWindow(Duration.ofMinutes(2))
                .requiresDuplicateDetection(true)
                .enablePartitioning(true)
                .maxSizeInMegabytes(2048)
                .status(EntityStatus.DISABLED)
                .autoDeleteOnIdle(Duration.ofHours(1))
                .userMetadata("m")
                .maxMessageSizeInKilobytes(512)
                .supportOrdering(false)
                .enableBatchedOperations(false)
                .build());
        assertThat(topic.findSubscription("all").orElseThrow().subscription())
                .isEqualTo(SubscriptionProperties.builder("orders", "all")
                        .deadLetteringOnMessageExpiration(true)
                        .defaultMessageTimeToLive(Duration.ofMinutes(5))
                        .lockDuration(Duration.ofMinutes(5))
                        .maxDeliveryCount(1)
                        .forwardDeadLetteredMessagesTo("dlq")
                        .forwardTo("DLQ")
                        .requiresSession(true)
                        .deadLetteringOnFilterEvaluationExceptions(false)
                        .status(EntityStatus.RECEIVE_DISABLED)
                        .autoDeleteOnIdle(Duration.ofMinutes(5))
                        .userMetadata("s")
                        .enableBatchedOperations(false)
                        .build());
        assertThat(topic.findSubscription("alias").orElseThrow().subscription()
                .deadLetteringOnFilterEvaluationExceptions()).isFalse();
        assertThat(logs.list).isEmpty();
    }

    @Test
    void propertyNamesAndFilterTypesMatchCaseInsensitively() throws IOException {
        Topology t = load("lower.json", """
                {"userconfig": {"namespaces": [{"name": "sbemulatorns",
                  "queues": [{"name": "q", "properties": {"lockduration": "pt45s", "maxdeliverycount": 4}}],
                  "TOPICS": [{"NAME": "t", "SUBSCRIPTIONS": [{"Name": "s", "rules": [
                    {"name": "a", "properties": {"filtertype": "sql", "sqlfilter": {"sqlexpression": "1=1"}}},
                    {"name": "b", "properties": {"filtertype": "CORRELATION",
                                                "correlationfilter": {"label": "x"}}}]}]}]}],
                 "logging": {"type": "File"}}}
                """);

        assertThat(t.queues().get(0).lockDuration()).isEqualTo(Duration.ofSeconds(45));
        assertThat(t.queues().get(0).maxDeliveryCount()).isEqualTo(4);
        assertThat(t.topics().get(0).subscriptions().get(0).rules()).containsExactly(
                new RuleProperties("a", new SqlFilter("1=1"), null),
                new RuleProperties("b", new CorrelationFilter(null, null, null, null, "x", null, null, null, null),
                        null));
        assertThat(logs.list).isEmpty();
    }

    @Test
    void acceptsCommentsTrailingCommasAndByteOrderMark() throws IOException {
        String json = "\uFEFF" + """
                {
                  // the emulator's reader allows comments
                  "UserConfig": {
                    "Namespaces": [ { "Name": "sbemulatorns", "Queues": [ { "Name": "q", }, ], }, ],
                    /* and trailing commas */
                    "Logging": { "Type": "Console" },
                  },
                }
                """;
        Path file = dir.resolve("lenient.json");
        Files.write(file, json.getBytes(StandardCharsets.UTF_8));

        assertThat(ConfigLoader.load(file).queues()).extracting(QueueProperties::name).containsExactly("q");
    }

    @Test
    void nullMeansNotGiven() throws IOException {
        Topology t = load("nulls.json", namespace("""
                "Queues": [{"Name": "q", "Properties": {"LockDuration": null, "ForwardTo": null}}],
                "Topics": null
                """));

        assertThat(t.queues()).containsExactly(QueueProperties.builder("q").build());
        assertThat(t.topics()).isEmpty();
    }

    @Test
    void namespaceNameIsKeptAndDefaultsToTheEmulators() throws IOException {
        assertThat(load("ns.json", """
                {"UserConfig": {"Namespaces": [{"Name": "my-namespace"}], "Logging": {"Type": "File"}}}
                """).namespaceName()).isEqualTo("my-namespace");
        assertThat(load("ns2.json", """
                {"UserConfig": {"Namespaces": [{}]}}
                """).namespaceName()).isEqualTo("sbemulatorns");
    }

    @Test
    void unknownPropertiesAreIgnoredWithAWarningNamingTheirPath() throws IOException {
        Topology t = load("future.json", """
                {"$schema": "https://example.invalid/schema.json",
                 "UserConfig": {"Namespaces": [{"Name": "sbemulatorns", "Region": "local",
                   "Queues": [{"Name": "q", "Tags": [], "Properties": {"LockDuration": "PT1M", "FancyNewThing": 1}}],
                   "Topics": [{"Name": "t", "Subscriptions": [{"Name": "s",
                     "Properties": {"RequiresDuplicateDetection": true},
                     "Rules": [{"Name": "r", "Properties": {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "1=1"},
                       "CorrelationFilter": {"Label": "x"}, "Priority": 1}},
                      {"Name": "c", "Properties": {"FilterType": "Correlation",
                       "CorrelationFilter": {"Label": "x", "Lable": "typo"},
                       "Action": {"SqlExpression": "SET a = 1", "Kind": "Sql"}}}]}]}]}],
                  "Logging": {"Type": "File", "Level": "Debug"}, "Telemetry": false}}
                """);

        assertThat(t.queues().get(0).lockDuration()).isEqualTo(Duration.ofMinutes(1));
        assertThat(logs.list).allSatisfy(e -> {
            assertThat(e.getLevel()).isEqualTo(Level.WARN);
            assertThat(e.getFormattedMessage()).contains("future.json");
        });
        assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage).satisfiesExactlyInAnyOrder(
                m -> assertThat(m).contains("$.UserConfig.Logging.Level"),
                m -> assertThat(m).contains("$.UserConfig.Telemetry"),
                m -> assertThat(m).contains("$.UserConfig.Namespaces[0].Region"),
                m -> assertThat(m).contains(Q0 + ".Tags"),
                m -> assertThat(m).contains(Q0 + ".Properties.FancyNewThing"),
                m -> assertThat(m).contains(S0 + ".Properties.RequiresDuplicateDetection"),
                m -> assertThat(m).contains(R0 + ".Properties.CorrelationFilter", "FilterType is Sql"),
                m -> assertThat(m).contains(R0 + ".Properties.Priority"),
                m -> assertThat(m).contains(S0 + ".Rules[1].Properties.CorrelationFilter.Lable"),
                m -> assertThat(m).contains(S0 + ".Rules[1].Properties.Action.Kind"));
    }

    // ---------------------------------------------------------------- rules and subscriptions

    @Test
    void listedRulesReplaceDefaultAndAnEmptyListKeepsIt() throws IOException {
        Topology t = load("rules.json", namespace("""
                "Topics": [{"Name": "t", "Subscriptions": [
                  {"Name": "filtered", "Rules": [
                    {"Name": "only-red", "Properties": {"FilterType": "Sql",
                                                        "SqlFilter": {"SqlExpression": "color = 'red'"}}}]},
                  {"Name": "empty-list", "Rules": []},
                  {"Name": "own-default", "Rules": [
                    {"Name": "$Default", "Properties": {"FilterType": "Sql",
                                                        "SqlFilter": {"SqlExpression": "1=0"}}}]}]}]
                """));

        TopicDefinition topic = t.topics().get(0);
        assertThat(topic.findSubscription("filtered").orElseThrow().rules())
                .containsExactly(new RuleProperties("only-red", new SqlFilter("color = 'red'"), null));
        assertThat(topic.findSubscription("empty-list").orElseThrow().rules())
                .containsExactly(RuleProperties.defaultRule());
        assertThat(topic.findSubscription("own-default").orElseThrow().rules())
                .containsExactly(new RuleProperties("$Default", new SqlFilter("1=0"), null));
    }

    @Test
    void correlationFilterMapsEveryFieldAndPropertyTypes() throws IOException {
        Topology t = load("correlation.json", namespace("""
                "Topics": [{"Name": "t", "Subscriptions": [{"Name": "s", "Rules": [{"Name": "c", "Properties": {
                  "FilterType": "Correlation",
                  "CorrelationFilter": {"ContentType": "ct", "CorrelationId": "cid", "Subject": "subj",
                    "MessageId": "mid", "ReplyTo": "rt", "ReplyToSessionId": "rtsid", "SessionId": "sid", "To": "to",
                    "Properties": {"s": "v", "i": 42, "l": 9000000000, "d": 1.5, "b": true, "odd key": "x"}},
                  "Action": {"SqlExpression": "SET handled = TRUE"}}}]}]}]
                """));

        RuleProperties rule = t.topics().get(0).subscriptions().get(0).rules().get(0);
        assertThat(rule.sqlAction()).isEqualTo("SET handled = TRUE");
        CorrelationFilter f = (CorrelationFilter) rule.filter();
        assertThat(f).isEqualTo(new CorrelationFilter("cid", "mid", "to", "rt", "subj", "sid", "rtsid", "ct",
                f.properties()));
        assertThat(f.properties()).containsExactly(Map.entry("s", "v"), Map.entry("i", 42),
                Map.entry("l", 9_000_000_000L), Map.entry("d", 1.5), Map.entry("b", true), Map.entry("odd key", "x"));
    }

    @Test
    void topicsWithoutSubscriptionsAreAccepted() throws IOException {
        Topology t = load("nosubs.json", namespace("""
                "Topics": [{"Name": "a"}, {"Name": "b", "Subscriptions": []}]
                """));

        assertThat(t.topics()).extracting(d -> d.topic().name()).containsExactly("a", "b");
        assertThat(t.topics()).allSatisfy(d -> assertThat(d.subscriptions()).isEmpty());
    }

    // ---------------------------------------------------------------- durations

    @Nested
    class Durations {

        @Test
        void netMaximumLoadsFromConfig() throws IOException {
            Topology t = load("max.json", namespace("""
                    "Queues": [{"Name": "q", "Properties": {"DefaultMessageTimeToLive": "P10675199DT2H48M5.4775807S",
                                                            "AutoDeleteOnIdle": "P10675199DT2H48M5.4775807S"}}]
                    """));

            assertThat(t.queues().get(0).defaultMessageTimeToLive()).isEqualTo(Limits.MAX_DURATION);
            assertThat(t.queues().get(0).autoDeleteOnIdle()).isEqualTo(Limits.MAX_DURATION);
        }

        /**
         * Config.json and the admin API read durations with the same parser ({@code TimeSpans}, whose own test
         * covers the edge cases): a year is 365 days, twelve months a year, weeks are refused, and values beyond
         * {@code TimeSpan.MaxValue} mean "never" instead of wrapping.
         */
        @Test
        void durationsReadAsInTheAdminApi() throws IOException {
            Topology t = load("durations.json", namespace("""
                    "Queues": [{"Name": "q", "Properties": {"DefaultMessageTimeToLive": "P12M",
                                                            "AutoDeleteOnIdle": "P50539024859478574Y",
                                                            "LockDuration": " pt45s "}}]
                    """));

            assertThat(t.queues().get(0).defaultMessageTimeToLive()).isEqualTo(Duration.ofDays(365));
            assertThat(t.queues().get(0).autoDeleteOnIdle()).isEqualTo(Limits.MAX_DURATION);
            assertThat(t.queues().get(0).lockDuration()).isEqualTo(Duration.ofSeconds(45));
            Topology beyond = load("beyond.json", namespace("""
                    "Queues": [{"Name": "q", "Properties": {"DefaultMessageTimeToLive": "P10675200D"}}]
                    """));
            assertThat(beyond.queues().get(0).defaultMessageTimeToLive()).as("beyond TimeSpan.MaxValue: never")
                    .isEqualTo(Limits.MAX_DURATION);
        }

        @ParameterizedTest
        @ValueSource(strings = {"", "P", "PT", "1H", "PT1H30", "P1W", "PT1.5M", "00:05:00", "P1DT", "PTS"})
        void rejectsMalformed(String text) {
            assertThatThrownBy(() -> load("bad.json", namespace("""
                    "Queues": [{"Name": "q", "Properties": {"LockDuration": "%s"}}]
                    """.formatted(text))))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("LockDuration must be an ISO-8601 duration");
        }
    }

    // ---------------------------------------------------------------- the starter topology

    @Test
    void starterTopologyHasTheQuickstartEntities() {
        Topology t = ConfigLoader.starterTopology();

        assertThat(t.namespaceName()).isEqualTo("sbemulatorns");
        assertThat(t.queues()).containsExactly(
                QueueProperties.builder("queue.1").build(),
                QueueProperties.builder("myqueue").build(),
                QueueProperties.builder("sessionqueue").requiresSession(true).build());
        assertThat(t.topics()).containsExactly(
                new TopicDefinition(TopicProperties.builder("topic.1").build(), List.of(
                        new SubscriptionDefinition(SubscriptionProperties.builder("topic.1", "subscription.1").build(),
                                List.of(RuleProperties.defaultRule())),
                        new SubscriptionDefinition(SubscriptionProperties.builder("topic.1", "subscription.2").build(),
                                List.of(RuleProperties.defaultRule())))),
                new TopicDefinition(TopicProperties.builder("mytopic").build(), List.of(
                        new SubscriptionDefinition(SubscriptionProperties.builder("mytopic", "mysubscription").build(),
                                List.of(RuleProperties.defaultRule())))));
        assertThat(t.topics().get(0).subscriptions().get(0).rules().get(0).filter()).isEqualTo(TrueFilter.INSTANCE);
        assertThat(logs.list).isEmpty();
    }

    // ---------------------------------------------------------------- errors

    static Stream<Arguments> invalidFiles() {
        return Stream.of(invalidDocuments(), invalidDocumentsContinued(), invalidSyntax()).flatMap(x -> x);
    }

    private static Stream<Arguments> invalidDocuments() {
        return Stream.of(
                bad("not-an-object", "[]", "$", "The document must be a JSON object, was an array"),
                bad("empty", "  ", "$", "the file is empty"),
                bad("no-user-config", "{\"Namespaces\": []}", "$.UserConfig", "UserConfig is required"),
                bad("no-namespaces", "{\"UserConfig\": {\"Logging\": {\"Type\": \"File\"}}}",
                        "$.UserConfig.Namespaces", "Namespaces is required"),
                bad("two-namespaces", "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"a\"}, {\"Name\": \"b\"}]}}",
                        "$.UserConfig.Namespaces", "must list exactly one namespace, found 2"),
                bad("zero-namespaces", "{\"UserConfig\": {\"Namespaces\": []}}",
                        "$.UserConfig.Namespaces", "must list exactly one namespace, found 0"),
                bad("queues-not-array", namespace("\"Queues\": {\"Name\": \"q\"}"),
                        "$.UserConfig.Namespaces[0].Queues", "Queues must be a JSON array, was an object"),
                bad("queue-not-object", namespace("\"Queues\": [\"q\"]"),
                        Q0, "A queue must be a JSON object, was the string \"q\""),
                bad("queue-without-name", namespace("\"Queues\": [{\"Properties\": {}}]"),
                        Q0 + ".Name", "Name is required"),
                bad("name-not-string", namespace("\"Queues\": [{\"Name\": 7}]"),
                        Q0 + ".Name", "Name must be a string, was the number 7"),
                bad("lock-duration-range", queue("\"LockDuration\": \"PT10M\""),
                        Q0 + ".Properties.LockDuration", "must be between PT5S and PT5M, was PT10M"),
                bad("lock-duration-format", queue("\"LockDuration\": \"1 minute\""),
                        Q0 + ".Properties.LockDuration", "LockDuration must be an ISO-8601 duration"),
                bad("lock-duration-type", queue("\"LockDuration\": 60"),
                        Q0 + ".Properties.LockDuration", "LockDuration must be a string, was the number 60"),
                bad("ttl-zero", queue("\"DefaultMessageTimeToLive\": \"PT0S\""),
                        Q0 + ".Properties.DefaultMessageTimeToLive", "DefaultMessageTimeToLive must be between PT1S"),
                bad("dedup-window", queue("\"DuplicateDetectionHistoryTimeWindow\": \"PT1S\""),
                        Q0 + ".Properties.DuplicateDetectionHistoryTimeWindow", "must be between PT5S and PT168H"),
                bad("auto-delete", queue("\"AutoDeleteOnIdle\": \"PT1M\""),
                        Q0 + ".Properties.AutoDeleteOnIdle", "AutoDeleteOnIdle must be between PT5M"),
                bad("max-delivery-zero", queue("\"MaxDeliveryCount\": 0"),
                        Q0 + ".Properties.MaxDeliveryCount", "MaxDeliveryCount must be at least 1, was 0"),
                bad("max-delivery-string", queue("\"MaxDeliveryCount\": \"3\""),
                        Q0 + ".Properties.MaxDeliveryCount",
                        "MaxDeliveryCount must be an integer, was the string \"3\""),
                bad("max-delivery-huge", queue("\"MaxDeliveryCount\": 3000000000"),
                        Q0 + ".Properties.MaxDeliveryCount", "must be an integer between -2147483648 and 2147483647"),
                bad("max-delivery-fraction", queue("\"MaxDeliveryCount\": 2.5"),
                        Q0 + ".Properties.MaxDeliveryCount", "must be an integer, was the number 2.5"),
                bad("bool-type", queue("\"RequiresSession\": \"true\""),
                        Q0 + ".Properties.RequiresSession", "RequiresSession must be a boolean (true or false)"),
                bad("max-size", queue("\"MaxSizeInMegabytes\": 0"),
                        Q0 + ".Properties.MaxSizeInMegabytes", "MaxSizeInMegabytes must be positive, was 0"),
                bad("status", queue("\"Status\": \"Paused\""),
                        Q0 + ".Properties.Status", "unknown entity status 'Paused'"),
                bad("properties-not-object", namespace("\"Queues\": [{\"Name\": \"q\", \"Properties\": []}]"),
                        Q0 + ".Properties", "Properties must be a JSON object, was an array"),
                bad("duplicate-property", queue("\"LockDuration\": \"PT1M\", \"lockDuration\": \"PT2M\""),
                        Q0 + ".Properties.lockDuration", "duplicate property \"lockDuration\""),
                bad("invalid-queue-name", namespace("\"Queues\": [{\"Name\": \"my queue\"}]"),
                        Q0 + ".Name", "contains the character ' ', which is not allowed"),
                bad("reserved-queue-name", namespace("\"Queues\": [{\"Name\": \"$web\"}]"),
                        Q0 + ".Name", "segments cannot start with '$'"),
                bad("empty-queue-name", namespace("\"Queues\": [{\"Name\": \"\"}]"),
                        Q0 + ".Name", "The entity path must be a non-empty string."));
    }

    private static Stream<Arguments> invalidDocumentsContinued() {
        return Stream.of(
                bad("duplicate-queue", namespace("\"Queues\": [{\"Name\": \"orders\"}, {\"Name\": \"Orders\"}]"),
                        "$.UserConfig.Namespaces[0].Queues[1].Name", "duplicate queue or topic name \"Orders\""),
                bad("queue-topic-clash", namespace("\"Queues\": [{\"Name\": \"x\"}], \"Topics\": [{\"Name\": \"X\"}]"),
                        T0 + ".Name", "duplicate queue or topic name \"X\": names are case-insensitive and "
                                + Q0 + ".Name already uses it"),
                bad("forward-unknown", queue("\"ForwardTo\": \"nowhere\""),
                        Q0 + ".Properties.ForwardTo",
                        "ForwardTo names \"nowhere\", which is neither a queue nor a topic"),
                bad("forward-dlq-unknown", subscription("\"ForwardDeadLetteredMessagesTo\": \"nowhere\""),
                        S0 + ".Properties.ForwardDeadLetteredMessagesTo", "which is neither a queue nor a topic"),
                bad("forward-self", queue("\"ForwardTo\": \"Q\""),
                        Q0 + ".Properties.ForwardTo", "ForwardTo cannot name the queue itself"),
                bad("subscription-lock", subscription("\"LockDuration\": \"PT1S\""),
                        S0 + ".Properties.LockDuration", "LockDuration must be between PT5S and PT5M, was PT1S"),
                bad("invalid-subscription-name", topic("{\"Name\": \"a/b\"}"),
                        S0 + ".Name", "The subscription name 'a/b' contains the character '/'"),
                bad("duplicate-subscription", topic("{\"Name\": \"s\"}, {\"Name\": \"S\"}"),
                        T0 + ".Subscriptions[1].Name", "duplicate subscription name \"S\""),
                bad("unknown-filter-type",
                        rule("\"FilterType\": \"SqlFilter\", \"SqlFilter\": {\"SqlExpression\": \"1=1\"}"),
                        R0 + ".Properties.FilterType",
                        "FilterType must be \"Correlation\" or \"Sql\", was \"SqlFilter\""),
                bad("missing-filter-type", rule("\"SqlFilter\": {\"SqlExpression\": \"1=1\"}"),
                        R0 + ".Properties.FilterType", "FilterType is required"),
                bad("sql-without-filter", rule("\"FilterType\": \"Sql\", \"CorrelationFilter\": {\"To\": \"x\"}"),
                        R0 + ".Properties.SqlFilter", "SqlFilter is required"),
                bad("sql-without-expression", rule("\"FilterType\": \"Sql\", \"SqlFilter\": {}"),
                        R0 + ".Properties.SqlFilter.SqlExpression", "SqlExpression is required"),
                bad("sql-blank", rule("\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \" \"}"),
                        R0 + ".Properties.SqlFilter.SqlExpression", "SqlExpression must not be empty"),
                bad("sql-too-long", rule("\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"a = '"
                                + "x".repeat(1100) + "'\"}"),
                        R0 + ".Properties.SqlFilter.SqlExpression", "must be at most 1024 characters long"),
                bad("sql-xml-character", rule("\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": "
                        + "\"color = '\\u0001'\"}"), R0, "a character XML 1.0 does not allow"),
                bad("correlation-xml-character", rule("\"FilterType\": \"Correlation\", \"CorrelationFilter\": "
                        + "{\"Label\": \"\\uFFFF\"}"), R0, "a character XML 1.0 does not allow"),
                bad("sql-syntax", rule("\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"color = \"}"),
                        R0 + ".Properties.SqlFilter.SqlExpression", "line 1, position"),
                bad("sql-unknown-system-property",
                        rule("\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"sys.Colour = 1\"}"),
                        R0 + ".Properties.SqlFilter.SqlExpression", "'Colour' is not a system property"),
                bad("sql-action-syntax", rule("\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"1=1\"}, "
                                + "\"Action\": {\"SqlExpression\": \"SET a\"}"),
                        R0 + ".Properties.Action.SqlExpression", "Syntax error in the SQL action expression"),
                bad("correlation-empty", rule("\"FilterType\": \"Correlation\", \"CorrelationFilter\": {}"),
                        R0 + ".Properties.CorrelationFilter", "CorrelationFilter must set at least one of"),
                bad("correlation-label-and-subject",
                        rule("\"FilterType\": \"Correlation\", "
                                + "\"CorrelationFilter\": {\"Label\": \"a\", \"Subject\": \"b\"}"),
                        R0 + ".Properties.CorrelationFilter.Subject",
                        "\"Subject\" and \"Label\" mean the same property"),
                bad("correlation-property-object",
                        rule("\"FilterType\": \"Correlation\", \"CorrelationFilter\": {\"Properties\": {\"p\": {}}}"),
                        R0 + ".Properties.CorrelationFilter.Properties.p",
                        "a correlation filter property must be a string, a boolean or a number"),
                bad("rule-without-properties", topic("{\"Name\": \"s\", \"Rules\": [{\"Name\": \"r\"}]}"),
                        R0 + ".Properties", "Properties is required"),
                bad("invalid-rule-name", topic("{\"Name\": \"s\", \"Rules\": [" + sqlRule("$Other") + "]}"),
                        R0 + ".Name", "The rule name '$Other' cannot start with '$'"),
                bad("duplicate-rule", topic("{\"Name\": \"s\", \"Rules\": ["
                                + sqlRule("r") + ", " + sqlRule("R") + "]}"),
                        S0 + ".Rules[1].Name", "duplicate rule name \"R\""));
    }

    private static Stream<Arguments> invalidSyntax() {
        return Stream.of(
                bad("syntax-missing-comma", "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"x\" \"Queues\": []}]}}",
                        "$.UserConfig.Namespaces[0].Name", "invalid JSON: Unexpected character ('\"' (code 34)): "
                                + "was expecting comma to separate Object entries"),
                bad("syntax-duplicate-key", "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"x\", \"Name\": \"y\"}]}}",
                        "$.UserConfig.Namespaces[0].Name", "invalid JSON: Duplicate field 'Name'"),
                bad("syntax-truncated", "{\"UserConfig\": {\"Namespaces\": [",
                        "$.UserConfig.Namespaces", "invalid JSON: Unexpected end-of-input"),
                bad("syntax-trailing-garbage", "{\"UserConfig\": {\"Namespaces\": [{}]}} x",
                        "$", "invalid JSON"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidFiles")
    void invalidFileFailsWithOneExceptionNamingFilePathAndRule(String name, String json, String path, String rule)
            throws IOException {
        Path file = dir.resolve(name + ".json");
        Files.writeString(file, json);

        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigLoader.load(file));

        assertThat(e).as("expected a ConfigException").isNotNull();
        assertThat(e.getMessage()).contains(file.toString(), name + ".json", path, rule);
        assertThat(e.jsonPath()).isEqualTo(path);
        assertThat(e.source()).isEqualTo(file.toString());
        assertThat(e.problem()).contains(rule);
    }

    @Test
    void semanticErrorsCarryLineAndColumn() throws IOException {
        Path file = dir.resolve("located.json");
        Files.writeString(file, """
                {
                  "UserConfig": {
                    "Namespaces": [
                      {
                        "Name": "sbemulatorns",
                        "Queues": [
                          { "Name": "q", "Properties": { "LockDuration": "PT10M" } }
                        ]
                      }
                    ]
                  }
                }
                """);

        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigLoader.load(file));

        assertThat(e.line()).isEqualTo(7);
        assertThat(e.column()).isEqualTo(42);
        assertThat(e.getMessage()).isEqualTo("Invalid configuration " + file + " at " + Q0
                + ".Properties.LockDuration (line 7, column 42): "
                + "LockDuration must be between PT5S and PT5M, was PT10M");
    }

    @Test
    void missingValuesAreLocatedAtTheirClosestAncestor() throws IOException {
        Path file = dir.resolve("ancestor.json");
        Files.writeString(file, "{\n  \"UserConfig\": {\n    \"Namespaces\": [\n      { \"Queues\": [ {} ] }\n"
                + "    ]\n  }\n}\n");

        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigLoader.load(file));

        assertThat(e.jsonPath()).isEqualTo(Q0 + ".Name");
        assertThat(e.line()).isEqualTo(4);
        assertThat(e.column()).isEqualTo(21);
    }

    @Test
    void syntaxErrorsCarryLineAndColumn() throws IOException {
        Path file = dir.resolve("syntax.json");
        Files.writeString(file, "{\n  \"UserConfig\": {\n    \"Namespaces\": [ { \"Name\": \"x\" } ]\n"
                + "    \"Logging\": {}\n  }\n}\n");

        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigLoader.load(file));

        assertThat(e.line()).isEqualTo(4);
        assertThat(e.column()).isEqualTo(5);
        assertThat(e.jsonPath()).isEqualTo("$.UserConfig.Namespaces");
        assertThat(e.getMessage()).contains("syntax.json", "(line 4, column 5)", "invalid JSON",
                "was expecting comma");
    }

    @Test
    void missingFileIsAConfigException() {
        Path file = dir.resolve("absent.json");

        assertThatThrownBy(() -> ConfigLoader.load(file))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("absent.json")
                .hasMessageContaining("the file does not exist");
    }

    // ---------------------------------------------------------------- helpers

    private Topology load(String fileName, String json) throws IOException {
        Path file = dir.resolve(fileName);
        Files.writeString(file, json);
        return ConfigLoader.load(file);
    }

    private static Arguments bad(String name, String json, String path, String rule) {
        return Arguments.of(name, json, path, rule);
    }

    /** A complete file whose single namespace has the given members. */
    private static String namespace(String members) {
        return "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\", " + members
                + "}], \"Logging\": {\"Type\": \"File\"}}}";
    }

    private static String queue(String properties) {
        return namespace("\"Queues\": [{\"Name\": \"q\", \"Properties\": {" + properties + "}}]");
    }

    private static String topic(String subscriptions) {
        return namespace("\"Topics\": [{\"Name\": \"t\", \"Subscriptions\": [" + subscriptions + "]}]");
    }

    private static String subscription(String properties) {
        return topic("{\"Name\": \"s\", \"Properties\": {" + properties + "}}");
    }

    private static String sqlRule(String name) {
        return "{\"Name\": \"" + name + "\", \"Properties\": {\"FilterType\": \"Sql\", "
                + "\"SqlFilter\": {\"SqlExpression\": \"1=1\"}}}";
    }

    private static String rule(String properties) {
        return topic("{\"Name\": \"s\", \"Rules\": [{\"Name\": \"r\", \"Properties\": {" + properties + "}}]}");
    }

    private static Path resource(String name) throws URISyntaxException {
        return Path.of(ConfigLoaderTest.class.getResource(name).toURI());
    }
}
