package io.buslane.junit.examples;

import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import io.buslane.junit.BuslaneExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

// docs/embedded.md shows this class as it is here, from its imports on.
class ProgrammaticExampleTest {

    @RegisterExtension
    static BuslaneExtension buslane = BuslaneExtension.inMemory()
            .queue("orders", q -> q.requiresSession(true).maxDeliveryCount(5))
            .topic("events", t -> t.subscription("all").subscription("eu", s -> s.sqlFilter("eu", "region = 'eu'")));

    @Test
    void sessionQueueDefinedInCode() {
        ServiceBusClientBuilder clients = new ServiceBusClientBuilder().connectionString(buslane.connectionString());
        try (ServiceBusSenderClient sender = clients.sender().queueName("orders").buildClient();
             ServiceBusSessionReceiverClient sessions = clients.sessionReceiver().queueName("orders").buildClient()) {
            sender.sendMessage(new ServiceBusMessage("order 1").setSessionId("customer-7"));

            try (ServiceBusReceiverClient receiver = sessions.acceptSession("customer-7")) {
                ServiceBusReceivedMessage received = receiver.receiveMessages(1, Duration.ofSeconds(10))
                        .iterator().next();
                assertThat(received.getBody().toString()).isEqualTo("order 1");
                receiver.complete(received);
            }
        }
    }

    @Test
    void topicWithFilteredSubscription() {
        ServiceBusClientBuilder clients = new ServiceBusClientBuilder().connectionString(buslane.connectionString());
        try (ServiceBusSenderClient sender = clients.sender().topicName("events").buildClient();
             ServiceBusReceiverClient all = clients.receiver().topicName("events").subscriptionName("all")
                     .buildClient();
             ServiceBusReceiverClient eu = clients.receiver().topicName("events").subscriptionName("eu")
                     .buildClient()) {
            ServiceBusMessage us = new ServiceBusMessage("us");
            us.getApplicationProperties().put("region", "us");
            ServiceBusMessage europe = new ServiceBusMessage("eu");
            europe.getApplicationProperties().put("region", "eu");
            sender.sendMessage(us);
            sender.sendMessage(europe);

            assertThat(all.peekMessages(10)).extracting(m -> m.getBody().toString()).containsExactly("us", "eu");
            assertThat(eu.peekMessages(10)).extracting(m -> m.getBody().toString()).containsExactly("eu");
        }
    }

    @Test
    void administrationClient() {
        String admin = buslane.broker().adminEndpoint();
        HttpPipelinePolicy toBuslane = (context, next) -> {
            context.getHttpRequest().setUrl(admin + context.getHttpRequest().getUrl().getFile());
            return next.process();
        };
        ServiceBusAdministrationClient client = new ServiceBusAdministrationClientBuilder()
                .connectionString(buslane.connectionString())
                .addPolicy(toBuslane)
                .buildClient();

        assertThat(client.getQueue("orders").isSessionRequired()).isTrue();
        assertThat(client.getQueue("orders").getMaxDeliveryCount()).isEqualTo(5);
        assertThat(client.getSubscription("events", "all").getSubscriptionName()).isEqualTo("all");
    }
}
