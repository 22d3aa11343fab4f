package io.buslane.containertests;

import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import com.azure.messaging.servicebus.administration.models.TopicProperties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Buslane image started exactly as Microsoft's emulator compose template starts the emulator: the same
 * environment (ACCEPT_EULA, SQL_SERVER, MSSQL_SA_PASSWORD, SQL_WAIT_INTERVAL, with no SQL Server anywhere), a
 * Config.json mounted read-only at /ServiceBus_Emulator/ConfigFiles/Config.json, ports 5672 and 5300 published; then
 * the Java SDK sends, receives with sessions and schedules, and the admin client lists the entities.
 */
class EmulatorImageTest {

    /** Comments and a namespace name of its own, as users' emulator files have. */
    private static final String CONFIG = """
            {
              // an emulator Config.json
              "UserConfig": {
                "Namespaces": [ {
                  "Name": "my-compose-namespace",
                  "Queues": [
                    { "Name": "orders" },
                    { "Name": "checkout", "Properties": { "RequiresSession": true } }
                  ],
                  "Topics": [ { "Name": "events", "Subscriptions": [ { "Name": "audit" } ] } ]
                } ],
                "Logging": { "Type": "File" }
              }
            }
            """;

    @TempDir
    static Path dir;
    private static final String NAME = "buslane-emulator-test-" + ProcessHandle.current().pid();
    private static int amqpPort;
    private static int httpPort;
    /** The log line's count seen at each /health poll, while /health was not 200 yet. */
    private static final List<String> linesBeforeHealthy = new ArrayList<>();
    private static boolean started;

    @BeforeAll
    static void startAsTheComposeTemplateDoes() throws Exception {
        Podman.buildImage();
        Path config = Files.writeString(dir.resolve("Config.json"), CONFIG);
        amqpPort = ReleaseArchiveTest.freePort();
        httpPort = ReleaseArchiveTest.freePort();
        Podman.run(Duration.ofMinutes(1), Podman.podman("run", "-d", "--name", NAME,
                "-v", config + ":/ServiceBus_Emulator/ConfigFiles/Config.json:ro",
                "-p", amqpPort + ":5672", "-p", httpPort + ":5300",
                "-e", "SQL_SERVER=sqledge", "-e", "MSSQL_SA_PASSWORD=Not-used-1", "-e", "ACCEPT_EULA=Y",
                "-e", "SQL_WAIT_INTERVAL=0", Podman.IMAGE));
        started = true;
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (true) {
            // the log first, then /health: a ready line in a log read before a /health that is not yet 200 was
            // printed too early (read the other way round, the line may come between the two reads, correctly)
            String logs = logs();
            if (Podman.health(httpPort) == 200) {
                break;
            }
            if (logs.contains(READY)) {
                linesBeforeHealthy.add(logs);
            }
            assertThat(System.nanoTime()).as("/health never answered 200; logs:\n%s", logs).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static final String READY = "Emulator Service is Successfully Up!";

    @AfterAll
    static void stop() throws Exception {
        if (started) {
            Podman.run(Duration.ofMinutes(1), Podman.podman("rm", "-f", "-t", "5", NAME));
        }
    }

    private static String logs() throws Exception {
        return Podman.run(Duration.ofSeconds(30), Podman.podman("logs", NAME));
    }

    @Test
    void readyLineAppearsOnceAndNotBeforeHealthIs200() throws Exception {
        assertThat(linesBeforeHealthy).as("the line was printed while /health was not 200").isEmpty();
        String logs = logs();
        assertThat(logs).containsOnlyOnce(READY);
        assertThat(logs).contains("data /var/lib/buslane/data");
    }

    @Test
    void sdkSendsReceivesWithSessionsAndSchedules() {
        String cs = Sdk.connectionString("localhost", amqpPort);
        Sdk.sendAndReceive(cs, "orders");
        Sdk.sessions(cs, "checkout");
        Sdk.schedule(cs, "orders");
    }

    @Test
    void adminClientListsTheMountedConfigsEntities() {
        ServiceBusAdministrationClient admin = Sdk.admin(Sdk.connectionString("localhost", amqpPort), "127.0.0.1",
                httpPort);
        assertThat(admin.listQueues().stream().map(QueueProperties::getName)).containsExactlyInAnyOrder("orders",
                "checkout");
        assertThat(admin.listTopics().stream().map(TopicProperties::getName)).containsExactly("events");
        assertThat(admin.getQueue("checkout").isSessionRequired()).isTrue();
    }

    @Test
    void runsAsANonRootUserWithItsDataOnAVolume() throws Exception {
        assertThat(Podman.run(Duration.ofSeconds(30), Podman.podman("exec", NAME, "id", "-u")).trim())
                .isEqualTo("10001");
        assertThat(Podman.run(Duration.ofSeconds(30), Podman.podman("image", "inspect", "--format",
                "{{json .Config.Volumes}} {{json .Config.ExposedPorts}}", Podman.IMAGE)))
                .contains("/var/lib/buslane").contains("5672/tcp").contains("5300/tcp");
        assertThat(Podman.run(Duration.ofSeconds(30), Podman.podman("healthcheck", "run", NAME))).doesNotContain(
                "unhealthy");
    }
}
