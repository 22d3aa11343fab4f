package io.buslane.frameworks.spring;

import com.azure.messaging.servicebus.ServiceBusErrorContext;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusProcessorClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.spring.cloud.service.servicebus.consumer.ServiceBusErrorHandler;
import com.azure.spring.cloud.service.servicebus.consumer.ServiceBusRecordMessageListener;
import com.azure.spring.messaging.implementation.annotation.EnableAzureMessaging;
import com.azure.spring.messaging.servicebus.core.ServiceBusTemplate;
import com.azure.spring.messaging.servicebus.implementation.core.annotation.ServiceBusListener;
import io.buslane.testsupport.TlsBroker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.messaging.support.MessageBuilder;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Boot application on Spring Cloud Azure's Service Bus starter
 * ({@code com.azure.spring:spring-cloud-azure-starter-servicebus} 5.22.0, with
 * {@code spring-messaging-azure-servicebus}), unmodified and configured only by properties as its docs show, against
 * the packaged broker over TLS on 5671 from a normal connection string
 * ({@code spring.cloud.azure.servicebus.connection-string}): {@link ServiceBusTemplate} sends and a
 * {@link ServiceBusListener} method receives; the {@link ServiceBusSenderClient} bean the starter makes from
 * {@code spring.cloud.azure.servicebus.producer.*} sends and its {@link ServiceBusProcessorClient} bean
 * ({@code spring.cloud.azure.servicebus.processor.*}, started by the starter) receives.
 *
 * <p>Binding 5671 needs root: skipped elsewhere, failed in CI ({@code CI=true} or {@code BUSLANE_REQUIRE_TLS=1}).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SpringCloudAzureServiceBusTest {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [ { "Name": "spring-template" }, { "Name": "spring-clients" } ]
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** What the {@code @ServiceBusListener} method received. */
    static final BlockingQueue<String> LISTENED = new LinkedBlockingQueue<>();
    /** What the processor client's record listener received. */
    static final BlockingQueue<String> PROCESSED = new LinkedBlockingQueue<>();
    /** Errors the processor client reported. */
    static final BlockingQueue<Throwable> ERRORS = new LinkedBlockingQueue<>();

    private static TlsBroker tls;
    private static ConfigurableApplicationContext app;

    @BeforeAll
    static void start() throws Exception {
        String why = TlsBroker.whyUnavailable();
        if (why != null) {
            skipOutsideCi(why);
        }
        tls = TlsBroker.start(CONFIG);
        app = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties(
                        "spring.cloud.azure.servicebus.connection-string=" + TlsBroker.CONNECTION_STRING,
                        "spring.cloud.azure.servicebus.entity-type=queue",
                        "spring.cloud.azure.servicebus.producer.entity-name=spring-clients",
                        "spring.cloud.azure.servicebus.producer.entity-type=queue",
                        "spring.cloud.azure.servicebus.processor.entity-name=spring-clients",
                        "spring.cloud.azure.servicebus.processor.entity-type=queue")
                .run();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (app != null) {
                app.close();
            }
        } finally {
            if (tls != null) {
                tls.close();
            }
        }
    }

    @Test
    void templateSendsAndServiceBusListenerReceives() throws Exception {
        String body = "template-" + UUID.randomUUID();
        ServiceBusTemplate template = app.getBean(ServiceBusTemplate.class);
        template.sendAsync("spring-template", MessageBuilder.withPayload(body).build()).block(WAIT);
        assertThat(LISTENED.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).as("what the @ServiceBusListener got; log:\n%s",
                tls.broker().logTail()).isEqualTo(body);
    }

    @Test
    void senderClientBeanSendsAndProcessorClientBeanReceives() throws Exception {
        assertThat(app.getBean(ServiceBusProcessorClient.class).isRunning()).as("started by the starter").isTrue();
        String body = "client-" + UUID.randomUUID();
        app.getBean(ServiceBusSenderClient.class).sendMessage(new ServiceBusMessage(body));
        assertThat(PROCESSED.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).as("what the processor got; errors %s; log:\n%s",
                ERRORS, tls.broker().logTail()).isEqualTo(body);
    }

    /** Skips the test, or fails it in CI ({@code CI=true} or {@code BUSLANE_REQUIRE_TLS=1}, as .ci/run sets). */
    static void skipOutsideCi(String why) {
        if ("true".equals(System.getenv("CI")) || "1".equals(System.getenv("BUSLANE_REQUIRE_TLS"))) {
            throw new IllegalStateException(why + " (CI=true or BUSLANE_REQUIRE_TLS=1 makes this a failure)");
        }
        Assumptions.abort(why);
    }

    /** The application: what its docs show, the beans the processor client needs and a listener method. */
    @SpringBootApplication
    @EnableAzureMessaging
    static class App {

        @Bean
        ServiceBusRecordMessageListener processorListener() {
            return context -> PROCESSED.add(context.getMessage().getBody().toString());
        }

        @Bean
        ServiceBusErrorHandler processorErrors() {
            return (ServiceBusErrorContext context) -> ERRORS.add(context.getException());
        }

        @Bean
        Listener listener() {
            return new Listener();
        }
    }

    /** A {@code @ServiceBusListener} method on the queue the template sends to. */
    static class Listener {

        @ServiceBusListener(destination = "spring-template")
        void onMessage(String body) {
            LISTENED.add(body);
        }
    }
}
