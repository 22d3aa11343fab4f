package io.buslane.conformance;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's Python and Go snippets, as the page shows them, run against a broker (the connection string's host
 * given the broker's port): each sends "hello" to queue.1, which a receiver then finds there.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ReadmeSnippetsTest {

    private static final Path README = Path.of("..", "README.md");
    private static final String CONFIG = "{ \"UserConfig\": { \"Namespaces\": [ { \"Name\": \"sbemulatorns\", "
            + "\"Queues\": [ { \"Name\": \"queue.1\" } ] } ], \"Logging\": { \"Type\": \"Console\" } } }";

    /** The README's one code block in {@code language}, its connection string pointed at {@code port}. */
    private static String snippet(String language, int port) throws Exception {
        Matcher m = Pattern.compile("```" + language + "\n(.*?)```", Pattern.DOTALL).matcher(Files.readString(README));
        assertThat(m.find()).as("README.md has a %s snippet", language).isTrue();
        String code = m.group(1);
        assertThat(code).contains("Endpoint=sb://localhost;");
        return code.replace("Endpoint=sb://localhost;", "Endpoint=sb://localhost:" + port + ";");
    }

    private static List<String> received(BrokerProcess broker) {
        try (ServiceBusReceiverClient r = new ServiceBusClientBuilder().connectionString(broker.connectionString())
                .receiver().queueName("queue.1").buildClient()) {
            List<String> out = new ArrayList<>();
            for (ServiceBusReceivedMessage m : r.receiveMessages(10, Duration.ofSeconds(5))) {
                out.add(m.getBody().toString());
                r.complete(m);
            }
            return out;
        }
    }

    @Test
    void thePythonSnippetSendsHello() throws Exception {
        Path python = PythonSdkConformanceTest.venvPython();
        try (BrokerProcess broker = BrokerProcess.start(CONFIG)) {
            JsSdkConformanceTest.Result result = JsSdkConformanceTest.run(List.of(python.toString(), "-c",
                    snippet("python", broker.amqpPort())), TlsConformanceTest.PY_DIR, Map.of(), 2);
            assertThat(result.exitCode()).as("the Python snippet failed:\n%s", result.output()).isZero();
            assertThat(received(broker)).containsExactly("hello");
        }
    }

    @Test
    void theGoSnippetSendsHello() throws Exception {
        GoSdkConformanceTest.build(); // the module's dependencies are there
        Path dir = GoSdkConformanceTest.GO_DIR.resolve("readme-snippet"); // inside the module: its go.mod applies
        Files.createDirectories(dir);
        try (BrokerProcess broker = BrokerProcess.start(CONFIG)) {
            Files.writeString(dir.resolve("main.go"), snippet("go", broker.amqpPort()));
            JsSdkConformanceTest.Result result = JsSdkConformanceTest.run(List.of("go", "run", "-mod=readonly",
                    "./readme-snippet"), GoSdkConformanceTest.GO_DIR, Map.of(), 4);
            assertThat(result.exitCode()).as("the Go snippet failed:\n%s", result.output()).isZero();
            assertThat(received(broker)).containsExactly("hello");
        } finally {
            Files.deleteIfExists(dir.resolve("main.go"));
            Files.deleteIfExists(dir);
        }
    }
}
