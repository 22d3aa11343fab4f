package io.buslane.junit.examples;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import io.buslane.junit.BuslaneBroker;
import io.buslane.junit.BuslaneExtension;
import io.buslane.junit.Reset;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each nested class runs two tests in order on one broker: the first leaves a message behind, the second sees what
 * the reset mode left. Without the reset after each test, the second tests of the first two classes fail.
 */
class ResetBetweenTestsTest {

    static void send(String connectionString, String queue, String body) {
        try (ServiceBusSenderClient sender = new ServiceBusClientBuilder().connectionString(connectionString)
                .sender().queueName(queue).buildClient()) {
            sender.sendMessage(new ServiceBusMessage(body));
        }
    }

    static boolean isEmpty(String connectionString, String queue) {
        try (ServiceBusReceiverClient receiver = new ServiceBusClientBuilder().connectionString(connectionString)
                .receiver().queueName(queue).buildClient()) {
            return receiver.peekMessage() == null;
        }
    }

    @Nested
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class TopologyReset {

        @RegisterExtension
        static BuslaneExtension buslane = BuslaneExtension.inMemory().queue("work");

        @Test
        @Order(1)
        void leavesAMessage(BuslaneBroker broker) {
            send(broker.connectionString(), "work", "left behind");
            assertThat(isEmpty(broker.connectionString(), "work")).isFalse();
        }

        @Test
        @Order(2)
        void startsEmpty(BuslaneBroker broker) {
            assertThat(isEmpty(broker.connectionString(), "work")).isTrue();
        }
    }

    @Nested
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class MessagesReset {

        @RegisterExtension
        static BuslaneExtension buslane = BuslaneExtension.inMemory().queue("work").withReset(Reset.MESSAGES);

        @Test
        @Order(1)
        void leavesAMessage(BuslaneBroker broker) {
            send(broker.connectionString(), "work", "left behind");
        }

        @Test
        @Order(2)
        void startsEmpty(BuslaneBroker broker) {
            assertThat(isEmpty(broker.connectionString(), "work")).isTrue();
        }
    }

    @Nested
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class NoReset {

        @RegisterExtension
        static BuslaneExtension buslane = BuslaneExtension.inMemory().queue("work").withReset(Reset.NONE);

        @Test
        @Order(1)
        void leavesAMessage(BuslaneBroker broker) {
            send(broker.connectionString(), "work", "left behind");
        }

        @Test
        @Order(2)
        void findsIt(BuslaneBroker broker) {
            assertThat(isEmpty(broker.connectionString(), "work")).isFalse();
        }
    }
}
