package io.buslane.containertests;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The release archive as a user gets it: unpacked in a temporary directory, started with {@code bin/buslane} and its
 * sample Config.json on free ports, served to the Java SDK. Needs only a JRE (no podman).
 */
class ReleaseArchiveTest {

    @TempDir
    static Path dir;
    private static Process broker;
    private static Path log;
    private static int amqpPort;
    private static int httpPort;

    /** The packaged buslane-VERSION.tar.gz (surefire passes its path). */
    static Path archive() {
        Path archive = Path.of(System.getProperty("buslane.archive"));
        assertThat(archive).as("run mvn package first (buslane-server makes the archive)").isRegularFile();
        return archive;
    }

    @BeforeAll
    static void unpackAndStart() throws Exception {
        Path archive = archive();
        Podman.run(Duration.ofMinutes(1), "tar", "-xzf", archive.toString(), "-C", dir.toString());
        String top = archive.getFileName().toString().replace(".tar.gz", "");
        Path home = dir.resolve(top);
        assertThat(home.resolve("bin/buslane")).isExecutable();
        assertThat(home.resolve("LICENSE")).content().contains("Apache License");
        amqpPort = freePort();
        httpPort = freePort();
        log = dir.resolve("buslane.log");
        ProcessBuilder pb = new ProcessBuilder(home.resolve("bin/buslane").toString(), "--config", "Config.json",
                "--amqp-port", Integer.toString(amqpPort), "--http-port", Integer.toString(httpPort),
                "--host", "127.0.0.1").directory(home.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("BUSLANE_JAVA_OPTS", "-Xmx256m -Dbuslane.test.marker=archive");
        broker = pb.start();
        await().atMost(Duration.ofSeconds(60)).until(() -> !broker.isAlive() || Podman.health(httpPort) == 200);
        assertThat(broker.isAlive()).as("bin/buslane exited:\n%s", Files.readString(log)).isTrue();
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.destroy();
            broker.waitFor(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void startsWithTheSampleConfigAndServesTheSdk() throws Exception {
        String cs = Sdk.connectionString("127.0.0.1", amqpPort);
        Sdk.sendAndReceive(cs, "queue.1");
        Sdk.sessions(cs, "sessionqueue");
        assertThat(Sdk.admin(cs, "127.0.0.1", httpPort).listQueues().stream().map(q -> q.getName()))
                .containsExactlyInAnyOrder("queue.1", "myqueue", "sessionqueue");
        // the launcher passed BUSLANE_JAVA_OPTS, and the journal went to ./data of the working directory
        assertThat(broker.info().commandLine().orElse("")).contains("-Dbuslane.test.marker=archive");
        assertThat(dir.resolve(archive().getFileName().toString().replace(".tar.gz", "")).resolve("data"))
                .isDirectory();
        assertThat(Files.readString(log, StandardCharsets.UTF_8))
                .containsOnlyOnce("Emulator Service is Successfully Up!");
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
