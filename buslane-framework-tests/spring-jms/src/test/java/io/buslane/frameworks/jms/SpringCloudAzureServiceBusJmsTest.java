package io.buslane.frameworks.jms;

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
import org.springframework.jms.annotation.JmsListener;
import org.springframework.jms.core.JmsTemplate;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Boot application on Spring Cloud Azure's JMS starter
 * ({@code com.azure.spring:spring-cloud-azure-starter-servicebus-jms} 5.23.0, qpid-jms underneath), unmodified and
 * configured only by properties as its docs show ({@code spring.jms.servicebus.connection-string},
 * {@code spring.jms.servicebus.pricing-tier=standard}), against the packaged broker over TLS: the starter always
 * connects with {@code amqps://} to 5671. Spring's {@link JmsTemplate} sends and receives, and a {@link JmsListener}
 * method receives what the template sends to its queue.
 *
 * <p>Binding 5671 needs root: skipped elsewhere, failed in CI ({@code CI=true} or {@code BUSLANE_REQUIRE_TLS=1}).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SpringCloudAzureServiceBusJmsTest {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [ { "Name": "jms-template" }, { "Name": "jms-listener" } ]
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** What the {@code @JmsListener} method received. */
    static final BlockingQueue<String> LISTENED = new LinkedBlockingQueue<>();

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
                        "spring.jms.servicebus.connection-string=" + TlsBroker.CONNECTION_STRING,
                        "spring.jms.servicebus.pricing-tier=standard",
                        "spring.jms.template.receive-timeout=" + WAIT.toMillis() + "ms")
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
    void jmsTemplateSendsAndReceives() {
        JmsTemplate template = app.getBean(JmsTemplate.class);
        String body = "jms-" + UUID.randomUUID();
        template.convertAndSend("jms-template", body);
        assertThat(template.receiveAndConvert("jms-template")).as("what JmsTemplate received; log:\n%s",
                tls.broker().logTail()).isEqualTo(body);
    }

    @Test
    void jmsListenerReceivesWhatTheTemplateSends() throws Exception {
        String body = "listener-" + UUID.randomUUID();
        app.getBean(JmsTemplate.class).convertAndSend("jms-listener", body);
        assertThat(LISTENED.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).as("what the @JmsListener got; log:\n%s",
                tls.broker().logTail()).isEqualTo(body);
    }

    /** Skips the test, or fails it in CI ({@code CI=true} or {@code BUSLANE_REQUIRE_TLS=1}, as .ci/run sets). */
    static void skipOutsideCi(String why) {
        if ("true".equals(System.getenv("CI")) || "1".equals(System.getenv("BUSLANE_REQUIRE_TLS"))) {
            throw new IllegalStateException(why + " (CI=true or BUSLANE_REQUIRE_TLS=1 makes this a failure)");
        }
        Assumptions.abort(why);
    }

    /** The application: a listener bean; the connection factory, template and container come from the starters. */
    @SpringBootApplication
    static class App {

        @Bean
        Listener listener() {
            return new Listener();
        }
    }

    /** A {@code @JmsListener} method on the queue. */
    static class Listener {

        @JmsListener(destination = "jms-listener")
        void onMessage(String body) {
            LISTENED.add(body);
        }
    }
}
