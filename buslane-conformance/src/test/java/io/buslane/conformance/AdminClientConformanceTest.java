package io.buslane.conformance;

import com.azure.core.exception.ClientAuthenticationException;
import com.azure.core.exception.HttpResponseException;
import com.azure.core.exception.ResourceExistsException;
import com.azure.core.exception.ResourceNotFoundException;
import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.core.http.rest.PagedResponse;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import com.azure.messaging.servicebus.administration.models.CorrelationRuleFilter;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import com.azure.messaging.servicebus.administration.models.CreateRuleOptions;
import com.azure.messaging.servicebus.administration.models.CreateSubscriptionOptions;
import com.azure.messaging.servicebus.administration.models.CreateTopicOptions;
import com.azure.messaging.servicebus.administration.models.EmptyRuleAction;
import com.azure.messaging.servicebus.administration.models.EntityStatus;
import com.azure.messaging.servicebus.administration.models.FalseRuleFilter;
import com.azure.messaging.servicebus.administration.models.MessagingSku;
import com.azure.messaging.servicebus.administration.models.NamespaceProperties;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import com.azure.messaging.servicebus.administration.models.QueueRuntimeProperties;
import com.azure.messaging.servicebus.administration.models.RuleProperties;
import com.azure.messaging.servicebus.administration.models.SqlRuleAction;
import com.azure.messaging.servicebus.administration.models.SqlRuleFilter;
import com.azure.messaging.servicebus.administration.models.SubscriptionProperties;
import com.azure.messaging.servicebus.administration.models.SubscriptionRuntimeProperties;
import com.azure.messaging.servicebus.administration.models.TopicProperties;
import com.azure.messaging.servicebus.administration.models.TopicRuntimeProperties;
import com.azure.messaging.servicebus.administration.models.TrueRuleFilter;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The official Java {@link ServiceBusAdministrationClient} against the broker's ATOM management API on the HTTP
 * port. The client always speaks {@code https://<namespace>/...}; the pipeline policy of docs/admin-api.md
 * rewrites each request to the broker's plain-HTTP port. Every entity kind is created with non-default
 * properties and read back, updated, listed (across pages), counted and deleted; the error cases map to the
 * SDK's exceptions (404 → ResourceNotFoundException, 409 → ResourceExistsException, 401 →
 * ClientAuthenticationException).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdminClientConformanceTest extends ConformanceBase {

    /** SQL with XML metacharacters, quotes, a newline, a tab and non-ASCII text: must come back byte-identical. */
    private static final String SQL = "user.region = 'eu & <north>' AND\n\tsys.Label <> \"x\" OR user.städte > 2";

    static ServiceBusAdministrationClient admin;
    static ServiceBusClientBuilder data;

    @BeforeAll
    static void start() throws Exception {
        startBroker(null);
        admin = adminClient(broker.connectionString(), broker.httpPort());
        data = clientBuilder();
    }

    /** The snippet of docs/admin-api.md: an admin client whose requests go to Buslane's HTTP port. */
    static ServiceBusAdministrationClient adminClient(String connectionString, int httpPort) {
        return adminClient(connectionString, httpPort, null);
    }

    /** The same, with the given {@code Host} header (the namespace's host, as the SDK addresses it) when not null. */
    static ServiceBusAdministrationClient adminClient(String connectionString, int httpPort, String host) {
        HttpPipelinePolicy toBuslane = (context, next) -> {
            URL url = context.getHttpRequest().getUrl();
            context.getHttpRequest().setUrl("http://127.0.0.1:" + httpPort + url.getFile());
            if (host != null) {
                context.getHttpRequest().setHeader(HttpHeaderName.HOST, host);
            }
            return next.process();
        };
        return new ServiceBusAdministrationClientBuilder()
                .connectionString(connectionString)
                .addPolicy(toBuslane)
                .buildClient();
    }

    @Test
    void queueWithNonDefaultPropertiesRoundTripsAndUpdates() {
        CreateQueueOptions options = new CreateQueueOptions()
                .setLockDuration(Duration.ofSeconds(45))
                .setMaxSizeInMegabytes(2048)
                .setDuplicateDetectionRequired(true)
                .setSessionRequired(true)
                .setDefaultMessageTimeToLive(Duration.ofDays(2))
                .setDeadLetteringOnMessageExpiration(true)
                .setDuplicateDetectionHistoryTimeWindow(Duration.ofMinutes(2))
                .setMaxDeliveryCount(7)
                .setBatchedOperationsEnabled(false)
                .setStatus(EntityStatus.SEND_DISABLED)
                .setUserMetadata("orders & <more>")
                .setAutoDeleteOnIdle(Duration.ofHours(1))
                .setPartitioningEnabled(true)
                .setMaxMessageSizeInKilobytes(1024);
        QueueProperties created = admin.createQueue("admin/props-queue", options);
        assertQueue(created);
        QueueProperties got = admin.getQueue("admin/props-queue");
        assertQueue(got);
        assertThat(got.getName()).isEqualTo("admin/props-queue");

        got.setLockDuration(Duration.ofMinutes(2)).setMaxDeliveryCount(3).setStatus(EntityStatus.ACTIVE)
                .setUserMetadata("updated").setDefaultMessageTimeToLive(Duration.ofHours(5));
        QueueProperties updated = admin.updateQueue(got);
        assertThat(updated.getLockDuration()).isEqualTo(Duration.ofMinutes(2));
        QueueProperties reread = admin.getQueue("admin/props-queue");
        assertThat(reread.getLockDuration()).isEqualTo(Duration.ofMinutes(2));
        assertThat(reread.getMaxDeliveryCount()).isEqualTo(3);
        assertThat(reread.getStatus()).isEqualTo(EntityStatus.ACTIVE);
        assertThat(reread.getUserMetadata()).isEqualTo("updated");
        assertThat(reread.getDefaultMessageTimeToLive()).isEqualTo(Duration.ofHours(5));
        assertThat(reread.isSessionRequired()).isTrue();
        assertThat(reread.isPartitioningEnabled()).isTrue();
        // updated with the size it read (the 16 partitions' sum): still 2,048 MB a partition (#32 cause 3)
        assertThat(reread.getMaxSizeInMegabytes()).isEqualTo(16 * 2048);

        admin.deleteQueue("admin/props-queue");
        assertThat(admin.getQueueExists("admin/props-queue")).isFalse();
    }

    private static void assertQueue(QueueProperties q) {
        assertThat(q.getLockDuration()).isEqualTo(Duration.ofSeconds(45));
        // partitioned: the service reports the 16 partitions' sum (#32 cause 3)
        assertThat(q.getMaxSizeInMegabytes()).isEqualTo(16 * 2048);
        assertThat(q.isDuplicateDetectionRequired()).isTrue();
        assertThat(q.isSessionRequired()).isTrue();
        assertThat(q.getDefaultMessageTimeToLive()).isEqualTo(Duration.ofDays(2));
        assertThat(q.isDeadLetteringOnMessageExpiration()).isTrue();
        assertThat(q.getDuplicateDetectionHistoryTimeWindow()).isEqualTo(Duration.ofMinutes(2));
        assertThat(q.getMaxDeliveryCount()).isEqualTo(7);
        assertThat(q.isBatchedOperationsEnabled()).isFalse();
        assertThat(q.getStatus()).isEqualTo(EntityStatus.SEND_DISABLED);
        assertThat(q.getUserMetadata()).isEqualTo("orders & <more>");
        assertThat(q.getAutoDeleteOnIdle()).isEqualTo(Duration.ofHours(1));
        assertThat(q.isPartitioningEnabled()).isTrue();
        assertThat(q.getMaxMessageSizeInKilobytes()).isEqualTo(1024);
        assertThat(q.getForwardTo()).isNull();
    }

    @Test
    void defaultsComeBackAsTheServiceReportsThem() {
        QueueProperties q = admin.createQueue("admin-defaults");
        assertThat(q.getLockDuration()).isEqualTo(Duration.ofMinutes(1));
        assertThat(q.getMaxDeliveryCount()).isEqualTo(10);
        // The SDK sends its own "never" (5.477 s past the 10675199 days of TimeSpan.MaxValue); it comes back as sent.
        CreateQueueOptions defaults = new CreateQueueOptions();
        assertThat(q.getDefaultMessageTimeToLive()).isEqualTo(defaults.getDefaultMessageTimeToLive());
        assertThat(q.getAutoDeleteOnIdle()).isEqualTo(defaults.getAutoDeleteOnIdle());
        assertThat(q.getStatus()).isEqualTo(EntityStatus.ACTIVE);
        assertThat(q.isBatchedOperationsEnabled()).isTrue();
        assertThat(new QueueRuntimeProperties(q).getCreatedAt()).isNotNull();
    }

    /**
     * The SDK rewrites a forwarding target to {@code https://{namespace host}/{entity}} (in the options object it
     * was given) and expects the service to report it so; the broker keeps the entity name and reports the URL on
     * the host the request addressed, so the client's URLs point at the namespace's host, as the SDK's do.
     */
    @Test
    void forwardingTargetsComeBackAsTheAbsoluteUrlsTheSdkSent() {
        ServiceBusAdministrationClient onNamespaceHost = adminClient(broker.connectionString(), broker.httpPort(),
                "localhost");
        onNamespaceHost.createQueue("admin-fwd-target");
        CreateQueueOptions options = new CreateQueueOptions()
                .setForwardTo("admin-fwd-target").setForwardDeadLetteredMessagesTo("admin-fwd-target");
        QueueProperties q = onNamespaceHost.createQueue("admin-fwd-source", options);
        assertThat(options.getForwardTo()).isEqualTo("https://localhost/admin-fwd-target");
        assertThat(q.getForwardTo()).isEqualTo(options.getForwardTo());
        assertThat(q.getForwardDeadLetteredMessagesTo()).isEqualTo(options.getForwardDeadLetteredMessagesTo());
        QueueProperties reread = onNamespaceHost.getQueue("admin-fwd-source");
        assertThat(reread.getForwardTo()).isEqualTo("https://localhost/admin-fwd-target");
        assertThat(reread.getForwardDeadLetteredMessagesTo()).isEqualTo("https://localhost/admin-fwd-target");
        reread.setMaxDeliveryCount(4);
        assertThat(onNamespaceHost.updateQueue(reread).getForwardTo()).isEqualTo("https://localhost/admin-fwd-target");

        onNamespaceHost.createTopic("admin-fwd-topic");
        CreateSubscriptionOptions subOptions = new CreateSubscriptionOptions().setForwardTo("admin-fwd-target");
        SubscriptionProperties sub = onNamespaceHost.createSubscription("admin-fwd-topic", "s", subOptions);
        assertThat(sub.getForwardTo()).isEqualTo(subOptions.getForwardTo())
                .isEqualTo("https://localhost/admin-fwd-target");
        assertThat(sub.getForwardDeadLetteredMessagesTo()).isNull();

        assertThatThrownBy(() -> admin.createQueue("admin-fwd-broken", new CreateQueueOptions()
                .setForwardTo("admin-nowhere")))
                .isInstanceOfSatisfying(HttpResponseException.class,
                        e -> assertThat(e.getResponse().getStatusCode()).isEqualTo(400));
    }

    @Test
    void topicAndSubscriptionsRoundTrip() {
        TopicProperties topic = admin.createTopic("admin/topic", new CreateTopicOptions()
                .setDefaultMessageTimeToLive(Duration.ofHours(3))
                .setMaxSizeInMegabytes(5120)
                .setDuplicateDetectionRequired(true)
                .setDuplicateDetectionHistoryTimeWindow(Duration.ofSeconds(30))
                .setBatchedOperationsEnabled(false)
                .setOrderingSupported(false)
                .setAutoDeleteOnIdle(Duration.ofHours(2))
                .setUserMetadata("topic-meta")
                .setMaxMessageSizeInKilobytes(512));
        for (TopicProperties t : List.of(topic, admin.getTopic("admin/topic"))) {
            assertThat(t.getName()).isEqualTo("admin/topic");
            assertThat(t.getDefaultMessageTimeToLive()).isEqualTo(Duration.ofHours(3));
            assertThat(t.getMaxSizeInMegabytes()).isEqualTo(5120);
            assertThat(t.isDuplicateDetectionRequired()).isTrue();
            assertThat(t.getDuplicateDetectionHistoryTimeWindow()).isEqualTo(Duration.ofSeconds(30));
            assertThat(t.isBatchedOperationsEnabled()).isFalse();
            assertThat(t.isOrderingSupported()).isFalse();
            assertThat(t.getAutoDeleteOnIdle()).isEqualTo(Duration.ofHours(2));
            assertThat(t.getUserMetadata()).isEqualTo("topic-meta");
            assertThat(t.getMaxMessageSizeInKilobytes()).isEqualTo(512);
        }

        CreateSubscriptionOptions subOptions = new CreateSubscriptionOptions()
                .setLockDuration(Duration.ofSeconds(20))
                .setSessionRequired(true)
                .setDefaultMessageTimeToLive(Duration.ofMinutes(30))
                .setDeadLetteringOnMessageExpiration(true)
                .setEnableDeadLetteringOnFilterEvaluationExceptions(false)
                .setMaxDeliveryCount(4)
                .setBatchedOperationsEnabled(false)
                .setStatus(EntityStatus.RECEIVE_DISABLED)
                .setUserMetadata("sub-meta")
                .setAutoDeleteOnIdle(Duration.ofMinutes(15));
        SubscriptionProperties sub = admin.createSubscription("admin/topic", "audit", subOptions);
        for (SubscriptionProperties s : List.of(sub, admin.getSubscription("admin/topic", "audit"))) {
            assertThat(s.getTopicName()).isEqualTo("admin/topic");
            assertThat(s.getSubscriptionName()).isEqualTo("audit");
            assertThat(s.getLockDuration()).isEqualTo(Duration.ofSeconds(20));
            assertThat(s.isSessionRequired()).isTrue();
            assertThat(s.getDefaultMessageTimeToLive()).isEqualTo(Duration.ofMinutes(30));
            assertThat(s.isDeadLetteringOnMessageExpiration()).isTrue();
            assertThat(s.isDeadLetteringOnFilterEvaluationExceptions()).isFalse();
            assertThat(s.getMaxDeliveryCount()).isEqualTo(4);
            assertThat(s.isBatchedOperationsEnabled()).isFalse();
            assertThat(s.getStatus()).isEqualTo(EntityStatus.RECEIVE_DISABLED);
            assertThat(s.getUserMetadata()).isEqualTo("sub-meta");
            assertThat(s.getAutoDeleteOnIdle()).isEqualTo(Duration.ofMinutes(15));
        }
        assertThat(admin.listRules("admin/topic", "audit").stream().map(RuleProperties::getName))
                .containsExactly("$Default");

        SubscriptionProperties toUpdate = admin.getSubscription("admin/topic", "audit");
        toUpdate.setMaxDeliveryCount(8).setStatus(EntityStatus.ACTIVE);
        admin.updateSubscription(toUpdate);
        SubscriptionProperties reread = admin.getSubscription("admin/topic", "audit");
        assertThat(reread.getMaxDeliveryCount()).isEqualTo(8);
        assertThat(reread.getStatus()).isEqualTo(EntityStatus.ACTIVE);

        TopicProperties topicUpdate = admin.getTopic("admin/topic");
        topicUpdate.setUserMetadata("topic-meta-2").setDefaultMessageTimeToLive(Duration.ofHours(4));
        admin.updateTopic(topicUpdate);
        assertThat(admin.getTopic("admin/topic").getUserMetadata()).isEqualTo("topic-meta-2");
        assertThat(admin.getTopic("admin/topic").getDefaultMessageTimeToLive()).isEqualTo(Duration.ofHours(4));

        admin.createSubscription("admin/topic", "second");
        assertThat(admin.listSubscriptions("admin/topic").stream().map(SubscriptionProperties::getSubscriptionName))
                .containsExactly("audit", "second");
        assertThat(admin.getTopicRuntimeProperties("admin/topic").getSubscriptionCount()).isEqualTo(2);

        admin.deleteSubscription("admin/topic", "second");
        assertThat(admin.getSubscriptionExists("admin/topic", "second")).isFalse();
        admin.deleteTopic("admin/topic");
        assertThat(admin.getTopicExists("admin/topic")).isFalse();
    }

    @Test
    void rulesWithSqlAndCorrelationFiltersRoundTrip() {
        admin.createTopic("admin-rules");
        SqlRuleFilter sql = new SqlRuleFilter(SQL);
        CreateRuleOptions defaultRule = new CreateRuleOptions(sql).setAction(new SqlRuleAction("SET sys.Label = 'eu'"));
        admin.createSubscription("admin-rules", "eu", "eu-only", new CreateSubscriptionOptions(), defaultRule);

        RuleProperties euOnly = admin.getRule("admin-rules", "eu", "eu-only");
        assertThat(euOnly.getFilter()).isInstanceOfSatisfying(SqlRuleFilter.class,
                f -> assertThat(f.getSqlExpression()).isEqualTo(SQL));
        assertThat(euOnly.getAction()).isInstanceOfSatisfying(SqlRuleAction.class,
                a -> assertThat(a.getSqlExpression()).isEqualTo("SET sys.Label = 'eu'"));

        CorrelationRuleFilter correlation = new CorrelationRuleFilter("corr-1").setLabel("invoice")
                .setContentType("application/json").setTo("billing").setReplyTo("replies").setMessageId("m-1")
                .setSessionId("s-1").setReplyToSessionId("rs-1");
        correlation.getProperties().put("region", "eu");
        correlation.getProperties().put("tier", "gold");
        // Note the SDK's argument order: createRule(topic, RULE, SUBSCRIPTION, options), but
        // createRule(topic, SUBSCRIPTION, RULE) without options.
        RuleProperties created = admin.createRule("admin-rules", "by-correlation", "eu",
                new CreateRuleOptions(correlation));
        assertThat(created.getName()).isEqualTo("by-correlation");
        RuleProperties got = admin.getRule("admin-rules", "eu", "by-correlation");
        assertThat(got.getFilter()).isInstanceOfSatisfying(CorrelationRuleFilter.class, f -> {
            assertThat(f.getCorrelationId()).isEqualTo("corr-1");
            assertThat(f.getLabel()).isEqualTo("invoice");
            assertThat(f.getContentType()).isEqualTo("application/json");
            assertThat(f.getTo()).isEqualTo("billing");
            assertThat(f.getReplyTo()).isEqualTo("replies");
            assertThat(f.getMessageId()).isEqualTo("m-1");
            assertThat(f.getSessionId()).isEqualTo("s-1");
            assertThat(f.getReplyToSessionId()).isEqualTo("rs-1");
            assertThat(f.getProperties()).isEqualTo(Map.of("region", "eu", "tier", "gold"));
        });
        assertThat(got.getAction()).isInstanceOf(EmptyRuleAction.class);

        admin.createRule("admin-rules", "never", "eu", new CreateRuleOptions(new FalseRuleFilter()));
        admin.createRule("admin-rules", "eu", "always");
        assertThat(admin.getRule("admin-rules", "eu", "always").getFilter()).isInstanceOf(TrueRuleFilter.class);
        assertThat(admin.getRule("admin-rules", "eu", "never").getFilter()).isInstanceOf(FalseRuleFilter.class);
        assertThat(admin.listRules("admin-rules", "eu").stream().map(RuleProperties::getName))
                .containsExactly("always", "by-correlation", "eu-only", "never"); // name order, as the service

        RuleProperties toUpdate = admin.getRule("admin-rules", "eu", "never");
        toUpdate.setFilter(new SqlRuleFilter("user.amount >= 100")).setAction(new SqlRuleAction("SET big = TRUE"));
        admin.updateRule("admin-rules", "eu", toUpdate);
        RuleProperties updated = admin.getRule("admin-rules", "eu", "never");
        assertThat(((SqlRuleFilter) updated.getFilter()).getSqlExpression()).isEqualTo("user.amount >= 100");
        assertThat(((SqlRuleAction) updated.getAction()).getSqlExpression()).isEqualTo("SET big = TRUE");

        assertThatThrownBy(() -> admin.createRule("admin-rules", "eu", "always"))
                .isInstanceOf(ResourceExistsException.class);
        admin.deleteRule("admin-rules", "eu", "always");
        assertThatThrownBy(() -> admin.getRule("admin-rules", "eu", "always"))
                .isInstanceOf(ResourceNotFoundException.class);
        assertThatThrownBy(() -> admin.deleteRule("admin-rules", "eu", "always"))
                .isInstanceOf(ResourceNotFoundException.class);
    }

    @Test
    void runtimeCountsMatchWhatWasSentScheduledAndDeadLettered() {
        admin.createQueue("admin-counts");
        try (ServiceBusSenderClient sender = data.sender().queueName("admin-counts").buildClient();
             ServiceBusReceiverClient receiver = data.receiver().queueName("admin-counts")
                     .maxAutoLockRenewDuration(Duration.ZERO).buildClient()) {
            sender.sendMessages(List.of(new ServiceBusMessage("a"), new ServiceBusMessage("b"),
                    new ServiceBusMessage("c")));
            sender.scheduleMessage(new ServiceBusMessage("later"), OffsetDateTime.now().plusHours(1));
            List<ServiceBusReceivedMessage> got = StreamSupport.stream(
                    receiver.receiveMessages(1, Duration.ofSeconds(10)).spliterator(), false).toList();
            assertThat(got).hasSize(1);
            receiver.deadLetter(got.get(0));
        }
        QueueRuntimeProperties q = admin.getQueueRuntimeProperties("admin-counts");
        assertThat(q.getActiveMessageCount()).isEqualTo(2);
        assertThat(q.getDeadLetterMessageCount()).isEqualTo(1);
        assertThat(q.getScheduledMessageCount()).isEqualTo(1);
        assertThat(q.getTransferMessageCount()).isZero();
        assertThat(q.getTransferDeadLetterMessageCount()).isZero();
        assertThat(q.getTotalMessageCount()).isEqualTo(4);
        assertThat(q.getSizeInBytes()).isPositive();
        assertThat(q.getName()).isEqualTo("admin-counts");

        admin.createTopic("admin-counts-topic");
        admin.createSubscription("admin-counts-topic", "all");
        admin.createSubscription("admin-counts-topic", "invoices", "invoices",
                new CreateSubscriptionOptions(),
                new CreateRuleOptions(new CorrelationRuleFilter().setLabel("invoice")));
        try (ServiceBusSenderClient sender = data.sender().topicName("admin-counts-topic").buildClient()) {
            sender.sendMessage(new ServiceBusMessage("1").setSubject("invoice"));
            sender.sendMessage(new ServiceBusMessage("2").setSubject("order"));
            sender.scheduleMessage(new ServiceBusMessage("3"), OffsetDateTime.now().plusHours(1));
        }
        SubscriptionRuntimeProperties all = admin.getSubscriptionRuntimeProperties("admin-counts-topic", "all");
        assertThat(all.getActiveMessageCount()).isEqualTo(2);
        assertThat(all.getTotalMessageCount()).isEqualTo(2);
        assertThat(all.getSubscriptionName()).isEqualTo("all");
        assertThat(admin.getSubscriptionRuntimeProperties("admin-counts-topic", "invoices").getActiveMessageCount())
                .isEqualTo(1);
        TopicRuntimeProperties topic = admin.getTopicRuntimeProperties("admin-counts-topic");
        assertThat(topic.getSubscriptionCount()).isEqualTo(2);
        assertThat(topic.getScheduledMessageCount()).isEqualTo(1);
    }

    @Test
    void listsPageThroughMoreThanOnePage() {
        List<String> names = IntStream.range(0, 105).mapToObj(i -> String.format("admin-page-%03d", i)).toList();
        names.forEach(admin::createQueue);
        List<String> listed = admin.listQueues().stream().map(QueueProperties::getName)
                .filter(n -> n.startsWith("admin-page-")).collect(Collectors.toList());
        assertThat(listed).containsExactlyElementsOf(names);
        List<PagedResponse<QueueProperties>> pages = admin.listQueues().streamByPage().toList();
        assertThat(pages.size()).isGreaterThanOrEqualTo(2);
        assertThat(pages.get(0).getValue()).hasSize(100);
        assertThat(admin.listTopics().stream().map(TopicProperties::getName)).isNotNull();
        names.forEach(admin::deleteQueue);
        assertThat(admin.listQueues().stream().map(QueueProperties::getName))
                .noneMatch(n -> n.startsWith("admin-page-"));
    }

    @Test
    void namespacePropertiesDescribeAStandardNamespace() {
        NamespaceProperties ns = admin.getNamespaceProperties();
        assertThat(ns.getMessagingSku()).isEqualTo(MessagingSku.STANDARD);
        assertThat(ns.getName()).isNotBlank();
        assertThat(ns.getCreatedTime()).isNotNull();
    }

    private static HttpResponse<String> rawGet(String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + broker.httpPort() + path + "?api-version=2021-05"))
                .header("Authorization", sasToken("http://localhost/")).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void errorsMapToTheSdksExceptions() throws Exception {
        assertThatThrownBy(() -> admin.getQueue("admin-missing")).isInstanceOf(ResourceNotFoundException.class);
        assertThat(admin.getQueueExists("admin-missing")).isFalse();
        assertThatThrownBy(() -> admin.getQueueRuntimeProperties("admin-missing"))
                .isInstanceOf(ResourceNotFoundException.class);
        assertThatThrownBy(() -> admin.getTopic("admin-missing")).isInstanceOf(ResourceNotFoundException.class);
        assertThat(admin.getTopicExists("admin-missing")).isFalse();
        assertThatThrownBy(() -> admin.getSubscription("admin-missing", "s"))
                .isInstanceOf(ResourceNotFoundException.class);
        admin.createTopic("admin-missing-subs");
        assertThatThrownBy(() -> admin.getSubscription("admin-missing-subs", "s"))
                .isInstanceOf(ResourceNotFoundException.class);
        assertThat(admin.getSubscriptionExists("admin-missing-subs", "s")).isFalse();
        assertThatThrownBy(() -> admin.getSubscriptionRuntimeProperties("admin-missing-subs", "s"))
                .isInstanceOf(ResourceNotFoundException.class);
        // What the service answers underneath: 200 with an empty feed for a missing queue or topic (the discovery
        // feed of an unoccupied name); 404 for a missing subscription or rule, the only answer the SDK reads there.
        assertThat(rawGet("/admin-missing").statusCode()).isEqualTo(200);
        assertThat(rawGet("/admin-missing").body()).startsWith("<?xml")
                .contains("<feed xmlns=\"http://www.w3.org/2005/Atom\">").doesNotContain("<entry");
        assertThat(rawGet("/admin-missing-subs/Subscriptions/s").statusCode()).isEqualTo(404);
        assertThatThrownBy(() -> admin.deleteQueue("admin-missing")).isInstanceOf(ResourceNotFoundException.class);
        assertThatThrownBy(() -> admin.createSubscription("admin-missing", "s"))
                .isInstanceOf(ResourceNotFoundException.class);

        admin.createQueue("admin-exists");
        assertThatThrownBy(() -> admin.createQueue("admin-exists")).isInstanceOf(ResourceExistsException.class);
        assertThatThrownBy(() -> admin.createTopic("admin-exists")).isInstanceOf(ResourceExistsException.class);

        QueueProperties stale = admin.getQueue("admin-exists");
        admin.deleteQueue("admin-exists");
        assertThatThrownBy(() -> admin.updateQueue(stale)).isInstanceOf(ResourceNotFoundException.class);

        assertThatThrownBy(() -> admin.createQueue("admin-invalid", new CreateQueueOptions()
                .setLockDuration(Duration.ofMinutes(10))))
                .isInstanceOfSatisfying(HttpResponseException.class, e -> {
                    assertThat(e.getResponse().getStatusCode()).isEqualTo(400);
                    assertThat(e.getMessage()).contains("LockDuration");
                });

        String wrongKey = broker.connectionString().replace("SAS_KEY_VALUE", "not-the-key");
        ServiceBusAdministrationClient intruder = adminClient(wrongKey, broker.httpPort());
        assertThatThrownBy(() -> intruder.getQueue("queue.1")).isInstanceOf(ClientAuthenticationException.class);
        assertThatThrownBy(() -> intruder.createQueue("admin-intruder"))
                .isInstanceOf(ClientAuthenticationException.class);
        assertThat(admin.getQueueExists("admin-intruder")).isFalse();
    }
}
