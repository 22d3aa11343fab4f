package io.buslane.containertests;

import com.azure.messaging.servicebus.administration.models.QueueProperties;
import io.buslane.testcontainers.BuslaneContainer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.azure.ServiceBusEmulatorContainer;
import org.testcontainers.utility.DockerImageName;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The image under Testcontainers, over podman's Docker-compatible socket (Ryuk disabled, no pulls): Buslane's own
 * {@link BuslaneContainer}, and Testcontainers' Service Bus emulator module with the Buslane image as a compatible
 * substitute for Microsoft's.
 */
class BuslaneContainerTest {

    private static final String CONFIG = """
            {
              // created at start-up from /ServiceBus_Emulator/ConfigFiles/Config.json
              "UserConfig": {
                "Namespaces": [ { "Name": "tc", "Queues": [ { "Name": "tc-queue" } ] } ],
                "Logging": { "Type": "File" }
              }
            }
            """;

    @BeforeAll
    static void podmanSocket() throws Exception {
        Podman.startService();
    }

    @Test
    void buslaneContainerServesTheSdkWithItsConfig() throws Exception {
        try (BuslaneContainer buslane = new BuslaneContainer(Podman.IMAGE).withConfig(CONFIG)
                .withImagePullPolicy(name -> false)) {
            buslane.start();
            assertThat(buslane.getConnectionString()).contains("UseDevelopmentEmulator=true")
                    .contains(":" + buslane.getMappedPort(5672) + ";");
            HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create(buslane.getAdminEndpoint() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            Sdk.sendAndReceive(buslane.getConnectionString(), "tc-queue");
            assertThat(Sdk.admin(buslane.getConnectionString(), buslane.getHost(), buslane.getMappedPort(5300))
                    .listQueues().stream().map(QueueProperties::getName)).containsExactly("tc-queue");
            assertThat(buslane.getLogs()).containsOnlyOnce("Emulator Service is Successfully Up!");
        }
    }

    /**
     * Testcontainers' ServiceBusEmulatorContainer (1.21.4) waits for the ready line and copies Config.json to the
     * emulator's path, but its configure() insists on an MSSQLServerContainer: overriding it drops that requirement
     * (docs/distribution.md shows this snippet).
     */
    @Test
    void testcontainersOwnEmulatorModuleRunsTheBuslaneImage() {
        DockerImageName image = DockerImageName.parse(Podman.IMAGE)
                .asCompatibleSubstituteFor("mcr.microsoft.com/azure-messaging/servicebus-emulator");
        try (ServiceBusEmulatorContainer emulator = new ServiceBusEmulatorContainer(image) {
            @Override
            protected void configure() {
                acceptLicense(); // no SQL Server: Buslane needs no database
            }
        }) {
            emulator.withImagePullPolicy(name -> false);
            emulator.start();
            Sdk.sendAndReceive(emulator.getConnectionString(), "myqueue");
        }
    }
}
