package io.buslane.junit.examples;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import io.buslane.junit.BuslaneExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

// docs/embedded.md shows this class as it is here, from its imports on.
@SpringBootTest(properties = {
        "spring.cloud.azure.servicebus.producer.entity-name=orders",
        "spring.cloud.azure.servicebus.producer.entity-type=queue"})
class SpringBootExampleTest {

    @RegisterExtension
    static BuslaneExtension buslane = BuslaneExtension.inMemory().queue("orders");

    @DynamicPropertySource
    static void serviceBus(DynamicPropertyRegistry registry) {
        registry.add("spring.cloud.azure.servicebus.connection-string", buslane::connectionString);
    }

    @SpringBootApplication
    static class OrdersApplication {
    }

    @Autowired
    ServiceBusSenderClient sender; // configured by Spring Cloud Azure from the properties above

    @Test
    void theAutoConfiguredSenderReachesTheEmbeddedBroker() {
        sender.sendMessage(new ServiceBusMessage("from Spring"));

        try (ServiceBusReceiverClient receiver = new ServiceBusClientBuilder()
                .connectionString(buslane.connectionString()).receiver().queueName("orders").buildClient()) {
            ServiceBusReceivedMessage m = receiver.receiveMessages(1, Duration.ofSeconds(10)).iterator().next();
            assertThat(m.getBody().toString()).isEqualTo("from Spring");
            receiver.complete(m);
        }
    }
}
