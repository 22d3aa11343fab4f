package io.buslane.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The command line as a drop-in for Microsoft's emulator image: its Config.json path, EMULATOR_HTTP_PORT, the
 * environment it is started with, and the ready line printed once {@code /health} answers 200.
 */
class MainEmulatorDropInTest {

    private static final String EMULATOR_CONFIG = """
            {
              // the emulator's reader allows comments, and any namespace name
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "my-own-namespace",
                    "Queues": [ { "Name": "from-emulator-config" } ], // trailing comment
                    "Topics": []
                  }
                ],
                "Logging": { "Type": "File" }
              }
            }
            """;

    private static Main parse(Map<String, String> env, String... args) {
        Main main = new Main();
        main.env = env;
        new CommandLine(main).parseArgs(args);
        return main;
    }

    @Test
    void httpPortDefaultsToEmulatorHttpPortAndTheFlagWins() {
        assertThat(parse(Map.of()).effectiveHttpPort()).isEqualTo(5300);
        assertThat(parse(Map.of("EMULATOR_HTTP_PORT", "5400")).effectiveHttpPort()).isEqualTo(5400);
        assertThat(parse(Map.of("EMULATOR_HTTP_PORT", "5400"), "--http-port", "5500").effectiveHttpPort())
                .isEqualTo(5500);
    }

    @Test
    void configIsTheEmulatorsFileOrADirectoryMountedThereAndTheFlagWins(@TempDir Path dir) throws IOException {
        Map<String, String> env = Map.of("BUSLANE_EMULATOR_CONFIG_DIR", dir.toString());
        assertThat(parse(env).effectiveConfig()).as("nothing mounted: the starter topology").isNull();

        Path file = Files.writeString(dir.resolve("Config.json"), EMULATOR_CONFIG);
        assertThat(parse(env).effectiveConfig()).isEqualTo(file);
        assertThat(parse(env, "--config", "other.json").effectiveConfig()).isEqualTo(Path.of("other.json"));

        Files.delete(file);
        Path nested = Files.createDirectories(dir.resolve("Config.json"));
        Path inside = Files.writeString(nested.resolve("Config.json"), EMULATOR_CONFIG);
        assertThat(parse(env).effectiveConfig()).isEqualTo(inside);
    }

    @Test
    void defaultEmulatorPathIsTheOneTheEmulatorImageReads() {
        assertThat(Main.EMULATOR_CONFIG_DIR).isEqualTo("/ServiceBus_Emulator/ConfigFiles");
    }

    @Test
    void startsWithTheEmulatorsEnvironmentAndConfigAndPrintsTheReadyLineOnceAfterHealthIs200(@TempDir Path dir)
            throws Exception {
        Files.writeString(dir.resolve("Config.json"), EMULATOR_CONFIG);
        int httpPort = freePort();
        // the emulator compose template's environment: the SQL settings are accepted and ignored
        Map<String, String> env = Map.of("BUSLANE_EMULATOR_CONFIG_DIR", dir.toString(),
                "EMULATOR_HTTP_PORT", Integer.toString(httpPort), "ACCEPT_EULA", "Y", "SQL_SERVER", "sqledge",
                "MSSQL_SA_PASSWORD", "no-database-here", "SQL_WAIT_INTERVAL", "0");
        Main main = parse(env, "--in-memory", "--amqp-port", "0", "--host", "127.0.0.1");
        List<Integer> healthWhenPrinted = new ArrayList<>();
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        main.out = new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                printed.write(b);
                if (b == '\n') {
                    healthWhenPrinted.add(healthStatus(httpPort));
                }
            }
        }, true, StandardCharsets.UTF_8);
        try (Broker broker = main.start()) {
            assertThat(broker).isNotNull();
            assertThat(broker.httpPort()).isEqualTo(httpPort);
            assertThat(broker.engine().queues()).extracting(q -> q.properties().name())
                    .containsExactly("from-emulator-config");
            assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo(Main.READY_LINE + System.lineSeparator());
            assertThat(healthWhenPrinted).containsExactly(200);
        }
    }

    private static int healthStatus(int port) {
        try {
            HttpResponse<Void> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/health")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding());
            return r.statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
