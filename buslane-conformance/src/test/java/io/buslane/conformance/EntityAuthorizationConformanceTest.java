package io.buslane.conformance;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.models.AccessRights;
import com.azure.messaging.servicebus.administration.models.AuthorizationRule;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import com.azure.messaging.servicebus.administration.models.CreateTopicOptions;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import com.azure.messaging.servicebus.administration.models.SharedAccessAuthorizationRule;
import com.azure.messaging.servicebus.administration.models.TopicProperties;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Authorization rules on entities through the official Java SDK: created and read back with the administration
 * client, kept across a restart, and enforced: a connection string with an entity's own Send-only key sends to
 * that entity and nothing else, and cannot receive; its Listen key receives.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EntityAuthorizationConformanceTest extends ConformanceBase {

    private static final String SEND_KEY = "c2VuZC1vbmx5LWtleS1mb3Itb3JkZXJzLTAxMjM0NTY3ODk=";
    private static final String LISTEN_KEY = "bGlzdGVuLW9ubHkta2V5LWZvci1vcmRlcnMtMDEyMzQ1Njc4OQ==";

    static ServiceBusAdministrationClient admin;

    @BeforeAll
    static void start() throws Exception {
        startBroker(null);
        admin = AdminClientConformanceTest.adminClient(broker.connectionString(), broker.httpPort());
    }

    private static String entityConnectionString(String keyName, String key, String entity) {
        return "Endpoint=sb://localhost:" + broker.amqpPort() + ";SharedAccessKeyName=" + keyName
                + ";SharedAccessKey=" + key + ";UseDevelopmentEmulator=true;EntityPath=" + entity;
    }

    private static ServiceBusClientBuilder client(String connectionString) {
        return new ServiceBusClientBuilder().connectionString(connectionString)
                .retryOptions(new AmqpRetryOptions().setMaxRetries(0).setTryTimeout(Duration.ofSeconds(15)));
    }

    /** The messages of an exception and its causes, for an SDK that wraps the broker's error. */
    private static String causes(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            b.append(t).append('\n');
        }
        return b.toString();
    }

    @Test
    void rulesAreStoredReturnedAndKeptAcrossARestart() throws Exception {
        CreateQueueOptions options = new CreateQueueOptions();
        options.getAuthorizationRules().add(new SharedAccessAuthorizationRule("sender", SEND_KEY, SEND_KEY + "2",
                List.of(AccessRights.SEND)));
        options.getAuthorizationRules().add(new SharedAccessAuthorizationRule("listener", LISTEN_KEY,
                List.of(AccessRights.LISTEN)));
        QueueProperties created = admin.createQueue("rules-q", options);
        assertThat(created.getAuthorizationRules()).extracting(AuthorizationRule::getKeyName)
                .containsExactly("sender", "listener");
        CreateTopicOptions topicOptions = new CreateTopicOptions();
        topicOptions.getAuthorizationRules().add(new SharedAccessAuthorizationRule("manager", SEND_KEY,
                List.of(AccessRights.MANAGE, AccessRights.LISTEN, AccessRights.SEND)));
        admin.createTopic("rules-t", topicOptions);

        broker.restart();
        QueueProperties q = admin.getQueue("rules-q");
        AuthorizationRule sender = q.getAuthorizationRules().get(0);
        assertThat(sender).isInstanceOf(SharedAccessAuthorizationRule.class);
        assertThat(sender.getKeyName()).isEqualTo("sender");
        assertThat(sender.getPrimaryKey()).isEqualTo(SEND_KEY);
        assertThat(sender.getSecondaryKey()).isEqualTo(SEND_KEY + "2");
        assertThat(sender.getAccessRights()).containsExactly(AccessRights.SEND);
        assertThat(sender.getClaimType()).isEqualTo("SharedAccessKey");
        assertThat(sender.getCreatedAt()).isNotNull();
        assertThat(q.getAuthorizationRules().get(1).getAccessRights()).containsExactly(AccessRights.LISTEN);
        assertThat(q.getAuthorizationRules().get(1).getSecondaryKey()).as("generated when not given")
                .isNotBlank();
        TopicProperties t = admin.getTopic("rules-t");
        assertThat(t.getAuthorizationRules().get(0).getAccessRights())
                .containsExactlyInAnyOrder(AccessRights.MANAGE, AccessRights.LISTEN, AccessRights.SEND);

        // an update that sets no rule removes them, as the service does
        q.getAuthorizationRules().clear();
        assertThat(admin.updateQueue(q).getAuthorizationRules()).isEmpty();
    }

    @Test
    void anEntitysSendKeySendsToThatEntityOnlyAndItsListenKeyReceives() {
        CreateQueueOptions options = new CreateQueueOptions();
        options.getAuthorizationRules().add(new SharedAccessAuthorizationRule("sender", SEND_KEY,
                List.of(AccessRights.SEND)));
        options.getAuthorizationRules().add(new SharedAccessAuthorizationRule("listener", LISTEN_KEY,
                List.of(AccessRights.LISTEN)));
        admin.createQueue("guarded", options);
        admin.createQueue("elsewhere");

        try (ServiceBusSenderClient sender = client(entityConnectionString("sender", SEND_KEY, "guarded"))
                .sender().buildClient()) {
            sender.sendMessage(new ServiceBusMessage("allowed"));
        }
        // the same key on another entity: not a key of that entity
        try (ServiceBusSenderClient other = client(entityConnectionString("sender", SEND_KEY, "elsewhere"))
                .sender().buildClient()) {
            assertThatThrownBy(() -> other.sendMessage(new ServiceBusMessage("refused")))
                    .isInstanceOf(ServiceBusException.class);
        }
        // Send does not give Listen
        try (ServiceBusReceiverClient wrong = client(entityConnectionString("sender", SEND_KEY, "guarded"))
                .receiver().queueName("guarded").buildClient()) {
            assertThatThrownBy(() -> wrong.receiveMessages(1, Duration.ofSeconds(5)).stream().count())
                    .satisfies(e -> assertThat(causes(e)).containsIgnoringCase("unauthorized"));
        }
        try (ServiceBusReceiverClient receiver = client(entityConnectionString("listener", LISTEN_KEY, "guarded"))
                .receiver().queueName("guarded").buildClient()) {
            assertThat(receiver.receiveMessages(1, Duration.ofSeconds(10)).stream()
                    .map(m -> m.getBody().toString()).toList()).containsExactly("allowed");
        }
    }
}
