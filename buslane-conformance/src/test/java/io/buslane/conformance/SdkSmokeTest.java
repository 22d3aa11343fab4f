package io.buslane.conformance;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;

class SdkSmokeTest extends ConformanceBase {

    @BeforeAll
    static void start() throws Exception {
        startBroker(null);
    }

    @Test
    void sendAndReceiveWithTheOfficialJavaSdk() {
        ServiceBusClientBuilder builder = clientBuilder();
        try (ServiceBusSenderClient sender = builder.sender().queueName("queue.1").buildClient();
             ServiceBusReceiverClient receiver = builder.receiver().queueName("queue.1").buildClient()) {
            sender.sendMessage(new ServiceBusMessage("hello"));
            sender.sendMessages(List.of(new ServiceBusMessage("a"), new ServiceBusMessage("b")));
            List<ServiceBusReceivedMessage> got = StreamSupport.stream(
                    receiver.receiveMessages(3, Duration.ofSeconds(10)).spliterator(), false)
                    .collect(Collectors.toList());
            assertThat(got).extracting(m -> m.getBody().toString()).containsExactly("hello", "a", "b");
            assertThat(got).extracting(ServiceBusReceivedMessage::getSequenceNumber).containsExactly(1L, 2L, 3L);
            got.forEach(m -> receiver.complete(m));
        }
    }
}
