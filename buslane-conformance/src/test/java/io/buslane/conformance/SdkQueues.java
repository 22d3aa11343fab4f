package io.buslane.conformance;

import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import io.buslane.testsupport.BrokerProcess;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Official-SDK helpers the tests that disrupt a broker share. */
final class SdkQueues {

    private SdkQueues() {
    }

    /**
     * A client of {@code b} that does not retry (each failure reaches the test, which decides) and waits up to 20 s
     * per try.
     */
    static ServiceBusClientBuilder noRetries(BrokerProcess b) {
        return new ServiceBusClientBuilder().connectionString(b.connectionString())
                .retryOptions(new AmqpRetryOptions().setMaxRetries(0).setTryTimeout(Duration.ofSeconds(20)));
    }

    /** Receives and completes until {@code queue} stays empty for 3 s; returns the message ids, duplicates kept. */
    static List<String> drain(ServiceBusClientBuilder client, String queue) {
        List<String> ids = new ArrayList<>();
        try (ServiceBusReceiverClient r = client.receiver().queueName(queue).buildClient()) {
            while (true) {
                List<ServiceBusReceivedMessage> got = new ArrayList<>();
                r.receiveMessages(200, Duration.ofSeconds(3)).forEach(got::add);
                if (got.isEmpty()) {
                    return ids;
                }
                for (ServiceBusReceivedMessage m : got) {
                    ids.add(m.getMessageId());
                    r.complete(m);
                }
            }
        }
    }
}
