package io.buslane.containertests;

import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;

import java.net.URL;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What the tests do with the official Java SDK against a broker they started. */
final class Sdk {

    /** The emulator's connection string for an AMQP port on this host. */
    static String connectionString(String host, int amqpPort) {
        return "Endpoint=sb://" + host + ":" + amqpPort + ";SharedAccessKeyName=RootManageSharedAccessKey;"
                + "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
    }

    private Sdk() {
    }

    /** Sends one message to the queue and receives it back (peek-lock, completed). */
    static void sendAndReceive(String connectionString, String queue) {
        try (ServiceBusSenderClient sender = new ServiceBusClientBuilder().connectionString(connectionString)
                .sender().queueName(queue).buildClient();
             ServiceBusReceiverClient receiver = new ServiceBusClientBuilder().connectionString(connectionString)
                     .receiver().queueName(queue).buildClient()) {
            sender.sendMessage(new ServiceBusMessage("hello " + queue).setMessageId("m-1"));
            List<ServiceBusReceivedMessage> got = receive(receiver, 1);
            assertThat(got).extracting(m -> m.getBody().toString()).containsExactly("hello " + queue);
            receiver.complete(got.get(0));
        }
    }

    /** Sends to two sessions of a session queue and receives one session's messages, in order. */
    static void sessions(String connectionString, String queue) {
        ServiceBusClientBuilder builder = new ServiceBusClientBuilder().connectionString(connectionString);
        try (ServiceBusSenderClient sender = builder.sender().queueName(queue).buildClient();
             ServiceBusSessionReceiverClient sessions = builder.sessionReceiver().queueName(queue)
                     .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            for (int i = 0; i < 3; i++) {
                sender.sendMessage(new ServiceBusMessage("a" + i).setSessionId("session-a"));
                sender.sendMessage(new ServiceBusMessage("b" + i).setSessionId("session-b"));
            }
            try (ServiceBusReceiverClient b = sessions.acceptSession("session-b")) {
                assertThat(receive(b, 3)).extracting(m -> m.getBody().toString()).containsExactly("b0", "b1", "b2");
            }
            try (ServiceBusReceiverClient a = sessions.acceptSession("session-a")) {
                assertThat(receive(a, 3)).extracting(m -> m.getSessionId()).containsOnly("session-a").hasSize(3);
            }
        }
    }

    /** Schedules a message two seconds ahead: not there before, received after. */
    static void schedule(String connectionString, String queue) {
        try (ServiceBusSenderClient sender = new ServiceBusClientBuilder().connectionString(connectionString)
                .sender().queueName(queue).buildClient();
             ServiceBusReceiverClient receiver = new ServiceBusClientBuilder().connectionString(connectionString)
                     .receiver().queueName(queue).receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE)
                     .buildClient()) {
            OffsetDateTime at = OffsetDateTime.now().plusSeconds(2);
            long sequence = sender.scheduleMessage(new ServiceBusMessage("later"), at);
            assertThat(sequence).isPositive();
            assertThat(receiver.peekMessage()).extracting(ServiceBusReceivedMessage::getScheduledEnqueueTime)
                    .isNotNull();
            List<ServiceBusReceivedMessage> got = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (got.isEmpty() && System.nanoTime() < deadline) {
                receiver.receiveMessages(1, Duration.ofSeconds(2)).forEach(got::add);
            }
            assertThat(got).extracting(m -> m.getBody().toString()).containsExactly("later");
            assertThat(got.get(0).getEnqueuedTime()).isAfterOrEqualTo(at.minusSeconds(1));
        }
    }

    /** An admin client whose requests go to the broker's plain-HTTP port (the SDK always builds https URLs). */
    static ServiceBusAdministrationClient admin(String connectionString, String host, int httpPort) {
        HttpPipelinePolicy toBuslane = (context, next) -> {
            URL url = context.getHttpRequest().getUrl();
            context.getHttpRequest().setUrl("http://" + host + ":" + httpPort + url.getFile());
            return next.process();
        };
        return new ServiceBusAdministrationClientBuilder().connectionString(connectionString).addPolicy(toBuslane)
                .buildClient();
    }

    private static List<ServiceBusReceivedMessage> receive(ServiceBusReceiverClient receiver, int count) {
        List<ServiceBusReceivedMessage> got = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (got.size() < count && System.nanoTime() < deadline) {
            receiver.receiveMessages(count - got.size(), Duration.ofSeconds(3)).forEach(got::add);
        }
        return got;
    }
}
