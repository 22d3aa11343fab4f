package io.buslane.junit.examples;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import io.buslane.junit.Buslane;
import io.buslane.junit.BuslaneBroker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

// docs/embedded.md shows this class as it is here, from its imports on.
class DurableExampleTest {

    @Test
    void survivesACloseAndReopen(@TempDir Path dataDir) {
        try (BuslaneBroker broker = Buslane.durable(dataDir).queue("orders").start();
             ServiceBusSenderClient sender = new ServiceBusClientBuilder()
                     .connectionString(broker.connectionString()).sender().queueName("orders").buildClient()) {
            sender.sendMessage(new ServiceBusMessage("kept"));
        }

        try (BuslaneBroker broker = Buslane.durable(dataDir).queue("orders").start();
             ServiceBusReceiverClient receiver = new ServiceBusClientBuilder()
                     .connectionString(broker.connectionString()).receiver().queueName("orders").buildClient()) {
            ServiceBusReceivedMessage m = receiver.receiveMessages(1, Duration.ofSeconds(10)).iterator().next();
            assertThat(m.getBody().toString()).isEqualTo("kept");
            receiver.complete(m);
        }
    }

    @Test
    void inMemoryKeepsNothing() {
        try (BuslaneBroker broker = Buslane.inMemory().queue("orders").start();
             ServiceBusSenderClient sender = new ServiceBusClientBuilder()
                     .connectionString(broker.connectionString()).sender().queueName("orders").buildClient()) {
            sender.sendMessage(new ServiceBusMessage("lost"));
        }
        try (BuslaneBroker broker = Buslane.inMemory().queue("orders").start();
             ServiceBusReceiverClient receiver = new ServiceBusClientBuilder()
                     .connectionString(broker.connectionString()).receiver().queueName("orders").buildClient()) {
            assertThat(receiver.peekMessage()).isNull();
            assertThat(broker.dataDirectory()).isNull();
        }
    }
}
