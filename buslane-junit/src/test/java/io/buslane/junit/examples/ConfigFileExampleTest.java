package io.buslane.junit.examples;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import com.azure.messaging.servicebus.models.SubQueue;
import io.buslane.junit.BuslaneBroker;
import io.buslane.junit.EmbeddedBuslane;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

// docs/embedded.md shows this class as it is here, from its imports on.
@EmbeddedBuslane(config = "/invoices-config.json")
class ConfigFileExampleTest {

    @Test
    void queueFromTheConfigFile(BuslaneBroker broker) {
        ServiceBusClientBuilder clients = new ServiceBusClientBuilder().connectionString(broker.connectionString());
        try (ServiceBusSenderClient sender = clients.sender().queueName("invoices").buildClient();
             ServiceBusReceiverClient receiver = clients.receiver().queueName("invoices")
                     .receiveMode(ServiceBusReceiveMode.PEEK_LOCK).buildClient()) {
            sender.sendMessage(new ServiceBusMessage("invoice 1"));

            // MaxDeliveryCount 3: the third abandon dead-letters the message
            for (int i = 0; i < 3; i++) {
                ServiceBusReceivedMessage m = receiver.receiveMessages(1, Duration.ofSeconds(10)).iterator().next();
                receiver.abandon(m);
            }
            assertThat(receiver.peekMessage()).isNull();
        }
        try (ServiceBusReceiverClient deadLetters = clients.receiver().queueName("invoices")
                .subQueue(SubQueue.DEAD_LETTER_QUEUE).buildClient()) {
            assertThat(deadLetters.peekMessage().getBody().toString()).isEqualTo("invoice 1");
        }
    }

    @Test
    void onlyTheConfiguredEntities(BuslaneBroker broker) {
        try (ServiceBusSenderClient sender = new ServiceBusClientBuilder().connectionString(broker.connectionString())
                .sender().queueName("queue.1").buildClient()) {
            // the starter topology's queue.1 does not exist: the file replaces it
            assertThatThrownBy(() -> sender.sendMessage(new ServiceBusMessage("x")))
                    .hasMessageContaining("queue.1");
        }
    }
}
