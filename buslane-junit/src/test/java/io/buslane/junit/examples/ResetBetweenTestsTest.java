package io.buslane.junit.examples;

import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
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
 * Each nested class runs two tests in order on one broker: the first leaves a message, an entity it created and a
 * property it changed behind, the second sees what the reset mode left. Without the reset after each test, the second
 * tests of the first two classes fail; with a messages-only reset, the entity checks of the first fail.
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

    static ServiceBusAdministrationClient admin(BuslaneBroker broker) {
        HttpPipelinePolicy toBuslane = (context, next) -> {
            context.getHttpRequest().setUrl(broker.adminEndpoint() + context.getHttpRequest().getUrl().getFile());
            return next.process();
        };
        return new ServiceBusAdministrationClientBuilder().connectionString(broker.connectionString())
                .addPolicy(toBuslane).buildClient();
    }

    /** Creates queue "scratch" and sets MaxDeliveryCount 3 on queue "work". */
    static void changeTheTopology(BuslaneBroker broker) {
        ServiceBusAdministrationClient admin = admin(broker);
        admin.createQueue("scratch");
        QueueProperties work = admin.getQueue("work");
        admin.updateQueue(work.setMaxDeliveryCount(3));
    }

    @Nested
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class TopologyReset {

        @RegisterExtension
        static BuslaneExtension buslane = BuslaneExtension.inMemory().queue("work");

        @Test
        @Order(1)
        void leavesAMessageAndChangesTheTopology(BuslaneBroker broker) {
            send(broker.connectionString(), "work", "left behind");
            assertThat(isEmpty(broker.connectionString(), "work")).isFalse();
            changeTheTopology(broker);
        }

        @Test
        @Order(2)
        void startsFromTheConfiguredTopologyEmpty(BuslaneBroker broker) {
            assertThat(isEmpty(broker.connectionString(), "work")).isTrue();
            ServiceBusAdministrationClient admin = admin(broker);
            assertThat(admin.getQueueExists("scratch")).isFalse();
            assertThat(admin.getQueue("work").getMaxDeliveryCount()).isEqualTo(10);
        }
    }

    @Nested
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class MessagesReset {

        @RegisterExtension
        static BuslaneExtension buslane = BuslaneExtension.inMemory().queue("work").withReset(Reset.MESSAGES);

        @Test
        @Order(1)
        void leavesAMessageAndChangesTheTopology(BuslaneBroker broker) {
            send(broker.connectionString(), "work", "left behind");
            changeTheTopology(broker);
        }

        @Test
        @Order(2)
        void startsEmptyWithTheEntitiesAsLeft(BuslaneBroker broker) {
            assertThat(isEmpty(broker.connectionString(), "work")).isTrue();
            ServiceBusAdministrationClient admin = admin(broker);
            assertThat(admin.getQueueExists("scratch")).isTrue();
            assertThat(admin.getQueue("work").getMaxDeliveryCount()).isEqualTo(3);
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
