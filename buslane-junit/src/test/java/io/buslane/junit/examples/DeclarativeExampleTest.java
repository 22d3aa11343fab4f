package io.buslane.junit.examples;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import io.buslane.junit.BuslaneBroker;
import io.buslane.junit.BuslaneConnectionString;
import io.buslane.junit.BuslaneExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

// docs/embedded.md shows this class as it is here, from its imports on.
@ExtendWith(BuslaneExtension.class)
class DeclarativeExampleTest {

    @Test
    void sendsAndReceives(@BuslaneConnectionString String connectionString) {
        ServiceBusClientBuilder clients = new ServiceBusClientBuilder().connectionString(connectionString);
        try (ServiceBusSenderClient sender = clients.sender().queueName("queue.1").buildClient();
             ServiceBusReceiverClient receiver = clients.receiver().queueName("queue.1").buildClient()) {
            sender.sendMessage(new ServiceBusMessage("hello"));

            ServiceBusReceivedMessage received = receiver.receiveMessages(1, Duration.ofSeconds(10))
                    .iterator().next();
            assertThat(received.getBody().toString()).isEqualTo("hello");
            receiver.complete(received);
        }
    }

    @Test
    void injectsTheBroker(BuslaneBroker broker) {
        assertThat(broker.connectionString()).contains("sb://localhost:" + broker.amqpPort());
        assertThat(broker.adminEndpoint()).isEqualTo("http://127.0.0.1:" + broker.httpPort());
    }
}
