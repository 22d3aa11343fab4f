package io.buslane.conformance;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusRuleManagerClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.models.CorrelationRuleFilter;
import com.azure.messaging.servicebus.administration.models.CreateRuleOptions;
import com.azure.messaging.servicebus.administration.models.RuleProperties;
import com.azure.messaging.servicebus.administration.models.SqlRuleAction;
import com.azure.messaging.servicebus.administration.models.SqlRuleFilter;
import com.azure.messaging.servicebus.administration.models.TrueRuleFilter;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import com.azure.messaging.servicebus.models.SubQueue;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Subscription rules with the official Java SDK: {@link ServiceBusRuleManagerClient} creates, lists and deletes SQL
 * and correlation rules over {@code $management}; SQL filters route messages; SQL actions stamp each copy; without
 * {@code $Default} nothing is delivered; a failing filter dead-letters with the exception name. One broker for the
 * class; every test uses its own topic.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RulesConformanceTest extends ConformanceBase {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Topics": [
                      { "Name": "rules-manage", "Subscriptions": [ { "Name": "s" } ] },
                      { "Name": "rules-routed", "Subscriptions": [ { "Name": "s" } ] },
                      { "Name": "rules-acted", "Subscriptions": [ { "Name": "s" },
                          { "Name": "configured", "Rules": [ { "Name": "blue",
                              "Properties": { "FilterType": "Sql", "SqlFilter": { "SqlExpression": "color = 'blue'" },
                                              "Action": { "SqlExpression": "SET seen = TRUE" } } } ] } ] },
                      { "Name": "rules-empty", "Subscriptions": [ { "Name": "s" }, { "Name": "witness" } ] },
                      { "Name": "rules-failing", "Subscriptions": [ { "Name": "s" } ] },
                      { "Name": "rules-params", "Subscriptions": [ { "Name": "s" } ] }
                    ]
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    /** This class's receive timeout (longer than {@link ConformanceBase#SHORT}). */
    private static final Duration SHORT = Duration.ofSeconds(10);

    @BeforeAll
    static void start() throws Exception {
        startBroker(CONFIG);
    }

    @Test
    void ruleManagerCreatesListsAndDeletesSqlAndCorrelationRules() {
        ServiceBusRuleManagerClient rules = rules("rules-manage", "s");
        rules.createRule("red", new CreateRuleOptions(new SqlRuleFilter("color = 'red' AND quantity > 10"))
                .setAction(new SqlRuleAction("SET tagged = 'yes'")));
        CorrelationRuleFilter correlation = new CorrelationRuleFilter().setCorrelationId("c-1").setLabel("invoice");
        correlation.getProperties().put("region", "eu");
        rules.createRule("corr", new CreateRuleOptions(correlation));

        List<RuleProperties> listed = list(rules);
        assertThat(listed).extracting(RuleProperties::getName).containsExactly("$Default", "red", "corr");
        assertThat(listed.get(0).getFilter()).isInstanceOf(TrueRuleFilter.class);
        assertThat(((SqlRuleFilter) listed.get(1).getFilter()).getSqlExpression())
                .isEqualTo("color = 'red' AND quantity > 10");
        assertThat(((SqlRuleAction) listed.get(1).getAction()).getSqlExpression()).isEqualTo("SET tagged = 'yes'");
        CorrelationRuleFilter back = (CorrelationRuleFilter) listed.get(2).getFilter();
        assertThat(back.getCorrelationId()).isEqualTo("c-1");
        assertThat(back.getLabel()).isEqualTo("invoice");
        assertThat(back.getProperties()).containsEntry("region", "eu");
        assertThat(listed.get(2).getAction()).isNull();

        ServiceBusException duplicate = catchThrowableOfType(ServiceBusException.class,
                () -> rules.createRule("RED", new CreateRuleOptions(new SqlRuleFilter("1=1"))));
        assertThat(duplicate).isNotNull();
        assertThat(duplicate.getReason()).isEqualTo(ServiceBusFailureReason.MESSAGING_ENTITY_ALREADY_EXISTS);

        ServiceBusException invalid = catchThrowableOfType(ServiceBusException.class,
                () -> rules.createRule("bad", new CreateRuleOptions(new SqlRuleFilter("color = = 'x'"))));
        assertThat(invalid).isNotNull();
        assertThat(invalid.isTransient()).isFalse();
        assertThat(invalid).hasMessageContaining("position 9");

        rules.deleteRule("red");
        assertThat(list(rules)).extracting(RuleProperties::getName).containsExactly("$Default", "corr");
        ServiceBusException missing = catchThrowableOfType(ServiceBusException.class, () -> rules.deleteRule("red"));
        assertThat(missing).isNotNull();
        assertThat(missing.getReason()).isEqualTo(ServiceBusFailureReason.MESSAGING_ENTITY_NOT_FOUND);
    }

    @Test
    void sqlFiltersRouteMessagesBySystemAndUserProperties() {
        ServiceBusRuleManagerClient rules = rules("rules-routed", "s");
        rules.deleteRule("$Default");
        rules.createRule("big-orders", new CreateRuleOptions(new SqlRuleFilter(
                "quantity > 10 AND sys.Label LIKE 'order-%' AND (region IN ('eu', 'us') OR region IS NULL)")));
        send("rules-routed", message("a", Map.of("quantity", 50, "region", "eu")).setSubject("order-1"),
                message("b", Map.of("quantity", 5, "region", "eu")).setSubject("order-2"),
                message("c", Map.of("quantity", 50, "region", "asia")).setSubject("order-3"),
                message("d", Map.of("quantity", 50L)).setSubject("order-4"),
                message("e", Map.of("quantity", 99)).setSubject("invoice-5"));
        ServiceBusReceiverClient receiver = receiver("rules-routed", "s", SubQueue.NONE);
        assertThat(bodies(receive(receiver, 2, SHORT))).containsExactly("a", "d");
        assertThat(receiver.peekMessage()).isNull();
    }

    /**
     * SQL filter and action parameters ({@code @name}) exist only in the admin API's RuleDescription (the SDKs send
     * none over {@code $management}, and the Java admin client drops them): a rule PUT with {@code Parameters} routes
     * and stamps what the SDK sends, and the admin client still reads the rule back.
     */
    @Test
    void sqlParametersGivenThroughTheAdminApiRouteAndStampMessages() throws Exception {
        rules("rules-params", "s").deleteRule("$Default");
        String kv = "<KeyValueOfstringanyType><Key>%s</Key><Value i:type=\"d6p1:%s\" "
                + "xmlns:d6p1=\"http://www.w3.org/2001/XMLSchema\">%s</Value></KeyValueOfstringanyType>";
        String body = "<entry xmlns=\"http://www.w3.org/2005/Atom\"><content type=\"application/xml\">"
                + "<RuleDescription xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\" "
                + "xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\"><Filter i:type=\"SqlFilter\">"
                + "<SqlExpression>region = @region AND quantity &gt;= @min</SqlExpression><Parameters>"
                + kv.formatted("@region", "string", "eu") + kv.formatted("@min", "int", "10")
                + "</Parameters></Filter><Action i:type=\"SqlRuleAction\"><SqlExpression>SET tier = @tier"
                + "</SqlExpression><Parameters>" + kv.formatted("@tier", "string", "gold")
                + "</Parameters></Action></RuleDescription></content></entry>";
        HttpResponse<String> created = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                        "http://127.0.0.1:" + broker.httpPort() + "/rules-params/Subscriptions/s/Rules/eu-big"
                                + "?api-version=2021-05"))
                .header("Authorization", sasToken("http://localhost/"))
                .header("Content-Type", "application/atom+xml")
                .PUT(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);

        send("rules-params", message("a", Map.of("quantity", 50, "region", "eu")),
                message("b", Map.of("quantity", 5, "region", "eu")),
                message("c", Map.of("quantity", 50, "region", "us")),
                message("d", Map.of("quantity", 10L, "region", "eu")));
        ServiceBusReceiverClient receiver = receiver("rules-params", "s", SubQueue.NONE);
        List<ServiceBusReceivedMessage> got = receive(receiver, 2, SHORT);
        assertThat(bodies(got)).containsExactly("a", "d");
        assertThat(got).allSatisfy(m -> assertThat(m.getApplicationProperties()).containsEntry("tier", "gold"));
        assertThat(receiver.peekMessage()).isNull();

        RuleProperties read = AdminClientConformanceTest.adminClient(broker.connectionString(), broker.httpPort())
                .getRule("rules-params", "s", "eu-big");
        assertThat(((SqlRuleFilter) read.getFilter()).getSqlExpression())
                .isEqualTo("region = @region AND quantity >= @min");
    }

    @Test
    void sqlActionsStampTheirOwnCopyWithTheRuleName() {
        ServiceBusRuleManagerClient rules = rules("rules-acted", "s");
        rules.createRule("stamp", new CreateRuleOptions(new SqlRuleFilter("EXISTS(quantity)"))
                .setAction(new SqlRuleAction("SET priority = 'high'; SET doubled = quantity * 2; "
                        + "SET sys.Label = 'stamped'; REMOVE secret")));
        send("rules-acted", message("x", Map.of("quantity", 21, "secret", "s")).setSubject("original"));

        List<ServiceBusReceivedMessage> got = receive(receiver("rules-acted", "s", SubQueue.NONE), 2, SHORT);
        assertThat(got).hasSize(2);
        ServiceBusReceivedMessage plain = got.stream().filter(m -> !m.getApplicationProperties()
                .containsKey("RuleName")).findFirst().orElseThrow();
        ServiceBusReceivedMessage stamped = got.stream().filter(m -> m.getApplicationProperties()
                .containsKey("RuleName")).findFirst().orElseThrow();
        assertThat(plain.getSubject()).isEqualTo("original");
        assertThat(plain.getApplicationProperties()).containsEntry("secret", "s").doesNotContainKey("priority");
        assertThat(stamped.getApplicationProperties()).containsEntry("RuleName", "stamp")
                .containsEntry("priority", "high").containsEntry("doubled", 42L).doesNotContainKey("secret");
        assertThat(stamped.getSubject()).isEqualTo("stamped");
        assertThat(stamped.getBody().toString()).isEqualTo("x");

        // a rule from Config.json with an action
        assertThat(receiver("rules-acted", "configured", SubQueue.NONE).peekMessage()).isNull(); // x was not blue
        send("rules-acted", message("blue", Map.of("color", "blue")));
        ServiceBusReceivedMessage blue =
                receive(receiver("rules-acted", "configured", SubQueue.NONE), 1, SHORT).get(0);
        assertThat(blue.getApplicationProperties()).containsEntry("seen", true).containsEntry("RuleName", "blue");
    }

    @Test
    void withoutTheDefaultRuleNothingIsDelivered() {
        rules("rules-empty", "s").deleteRule("$Default");
        assertThat(list(rules("rules-empty", "s"))).isEmpty();
        send("rules-empty", message("lost", Map.of()));
        assertThat(bodies(receive(receiver("rules-empty", "witness", SubQueue.NONE), 1, SHORT)))
                .containsExactly("lost");
        assertThat(receiver("rules-empty", "s", SubQueue.NONE).peekMessage()).isNull();
    }

    @Test
    void aFailingFilterDeadLettersWithTheExceptionName() {
        ServiceBusRuleManagerClient rules = rules("rules-failing", "s");
        rules.deleteRule("$Default");
        rules.createRule("divide", new CreateRuleOptions(new SqlRuleFilter("quantity / divisor > 1")));
        send("rules-failing", message("zero", Map.of("quantity", 4, "divisor", 0)), message("two", Map.of("quantity", 4,
                "divisor", 2)));
        assertThat(bodies(receive(receiver("rules-failing", "s", SubQueue.NONE), 1, SHORT))).containsExactly("two");
        ServiceBusReceivedMessage dead =
                receive(receiver("rules-failing", "s", SubQueue.DEAD_LETTER_QUEUE), 1, SHORT).get(0);
        assertThat(dead.getBody().toString()).isEqualTo("zero");
        assertThat(dead.getDeadLetterReason()).isEqualTo("DivideByZeroException");
        assertThat(dead.getDeadLetterErrorDescription()).isEqualTo("Attempted to divide by zero.");
    }

    // ------------------------------------------------------------------------------------------------ helpers

    @Override
    ServiceBusClientBuilder builder() {
        return builder(new AmqpRetryOptions().setTryTimeout(Duration.ofSeconds(10)).setMaxRetries(0));
    }

    private ServiceBusRuleManagerClient rules(String topic, String subscription) {
        return track(builder().ruleManager().topicName(topic).subscriptionName(subscription).buildClient());
    }

    private ServiceBusReceiverClient receiver(String topic, String subscription, SubQueue subQueue) {
        return track(builder().receiver().topicName(topic).subscriptionName(subscription).subQueue(subQueue)
                .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient());
    }

    private void send(String topic, ServiceBusMessage... messages) {
        ServiceBusSenderClient sender = track(builder().sender().topicName(topic).buildClient());
        for (ServiceBusMessage m : messages) {
            sender.sendMessage(m);
        }
    }

    private static ServiceBusMessage message(String body, Map<String, Object> properties) {
        ServiceBusMessage m = new ServiceBusMessage(body);
        m.getApplicationProperties().putAll(properties);
        return m;
    }

    private static List<RuleProperties> list(ServiceBusRuleManagerClient rules) {
        return StreamSupport.stream(rules.listRules().spliterator(), false).collect(Collectors.toList());
    }
}
