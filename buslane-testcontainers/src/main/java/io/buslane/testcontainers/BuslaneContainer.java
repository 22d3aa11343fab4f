package io.buslane.testcontainers;

import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.MountableFile;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The Buslane image in Testcontainers: a Service Bus emulator without a SQL Server container.
 *
 * <pre>{@code
 * try (BuslaneContainer buslane = new BuslaneContainer("buslane/buslane:0.1.0").withConfig(Path.of("Config.json"))) {
 *     buslane.start();
 *     ServiceBusSenderClient sender = new ServiceBusClientBuilder()
 *             .connectionString(buslane.getConnectionString()).sender().queueName("queue.1").buildClient();
 * }
 * }</pre>
 *
 * <p>Ready once {@code GET /health} answers 200 (the broker prints the emulator's
 * {@code Emulator Service is Successfully Up!} line at the same moment).
 */
public class BuslaneContainer extends GenericContainer<BuslaneContainer> {

    /** The image name used when none is given. */
    public static final String DEFAULT_IMAGE = "buslane/buslane:0.1.0";
    /** The AMQP port inside the container. */
    public static final int AMQP_PORT = 5672;
    /** The HTTP port inside the container: {@code /health}, the admin (ATOM) API, REST and the console. */
    public static final int HTTP_PORT = 5300;
    /** Where the image (like Microsoft's emulator image) reads its Config.json. */
    public static final String CONFIG_PATH = "/ServiceBus_Emulator/ConfigFiles/Config.json";
    /** The emulator's well-known SAS key, which Buslane accepts by default. */
    private static final String CONNECTION_STRING_FORMAT = "Endpoint=sb://%s:%d;SharedAccessKeyName="
            + "RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";

    /** A container of {@link #DEFAULT_IMAGE}. */
    public BuslaneContainer() {
        this(DEFAULT_IMAGE);
    }

    /** A container of the named Buslane image, e.g. {@code buslane/buslane:0.1.0}. */
    public BuslaneContainer(String image) {
        this(DockerImageName.parse(image));
    }

    /** A container of the given Buslane image. */
    public BuslaneContainer(DockerImageName image) {
        super(image);
        withExposedPorts(AMQP_PORT, HTTP_PORT);
        waitingFor(Wait.forHttp("/health").forPort(HTTP_PORT).forStatusCode(200)
                .withStartupTimeout(Duration.ofSeconds(60)));
    }

    /** Creates the entities of this Config.json (the emulator's schema; {@code //} comments allowed) at start-up. */
    public BuslaneContainer withConfig(String configJson) {
        return withCopyToContainer(Transferable.of(configJson.getBytes(StandardCharsets.UTF_8), 0644), CONFIG_PATH);
    }

    /** Creates the entities of the Config.json in this file at start-up. */
    public BuslaneContainer withConfig(Path configFile) {
        return withCopyToContainer(MountableFile.forHostPath(configFile, 0644), CONFIG_PATH);
    }

    /**
     * The connection string for the Service Bus SDKs: the emulator's well-known key,
     * {@code UseDevelopmentEmulator=true} (plain AMQP) and the mapped AMQP port.
     */
    public String getConnectionString() {
        return String.format(CONNECTION_STRING_FORMAT, getHost(), getMappedPort(AMQP_PORT));
    }

    /** The HTTP endpoint for the admin API, REST, {@code /health} and the console, e.g. {@code http://localhost:32768}. */
    public String getAdminEndpoint() {
        return "http://" + getHost() + ":" + getMappedPort(HTTP_PORT);
    }
}
