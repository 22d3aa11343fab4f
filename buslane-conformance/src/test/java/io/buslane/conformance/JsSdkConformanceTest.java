package io.buslane.conformance;

import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs {@code js/conformance.mjs} (the official JavaScript SDK, {@code @azure/service-bus}, pinned in
 * {@code js/package.json} and {@code js/package-lock.json}) against a broker. Skipped only when {@code node} or
 * {@code npm} is not on the PATH; installs the dependencies with {@code npm ci} when {@code js/node_modules} is
 * missing.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class JsSdkConformanceTest {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Queues": [
                      { "Name": "js-queue" },
                      { "Name": "js-sessions", "Properties": { "RequiresSession": true } },
                      { "Name": "js-schedule" },
                      { "Name": "js-peek" },
                      { "Name": "js-deadletter" },
                      { "Name": "js-defer" },
                      { "Name": "js-ttl" },
                      { "Name": "js-footer" },
                      { "Name": "js-lock", "Properties": { "LockDuration": "PT5S" } }
                    ],
                    "Topics": []
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    /** The folder of the JavaScript conformance scripts. */
    static final Path JS_DIR = Path.of(System.getProperty("buslane.conformance.js", "js")).toAbsolutePath();

    @Test
    void officialJavaScriptSdkWorks() throws Exception {
        assertThat(JS_DIR.resolve("conformance.mjs")).exists();
        ensureSdkInstalled();

        try (BrokerProcess broker = BrokerProcess.start(CONFIG)) {
            Result result = run(List.of("node", "conformance.mjs"), broker.connectionString(), 2);
            System.out.println(result.output);
            assertThat(result.exitCode)
                    .as("node conformance.mjs failed:\n%s\n--- broker log ---\n%s", result.output, broker.log())
                    .isZero();
        }
    }

    /**
     * Skips the calling test when node or npm is missing; otherwise installs the pinned JavaScript SDK into
     * {@code js/node_modules} with {@code npm ci} unless it is there already and not older than the package-lock
     * (whichever JS test runs first).
     */
    static synchronized void ensureSdkInstalled() throws Exception {
        Assumptions.assumeTrue(onPath("node"), "node is not on the PATH");
        Assumptions.assumeTrue(onPath("npm"), "npm is not on the PATH");
        java.nio.file.Path installed = JS_DIR.resolve("node_modules/.package-lock.json");
        boolean stale = !Files.isDirectory(JS_DIR.resolve("node_modules/@azure/service-bus"))
                || !Files.exists(installed) // installed by an npm that keeps no record, or half-installed
                || Files.getLastModifiedTime(JS_DIR.resolve("package-lock.json"))
                        .compareTo(Files.getLastModifiedTime(installed)) > 0; // the lock changed since
        if (stale) {
            Result install = run(List.of("npm", "ci", "--no-audit", "--no-fund"), null, 5);
            assertThat(install.exitCode).as("npm ci failed:\n%s", install.output).isZero();
        }
    }

    record Result(int exitCode, String output) {
    }

    private static Result run(List<String> command, String connectionString, int timeoutMinutes) throws Exception {
        return run(command, JS_DIR, connectionString == null ? java.util.Map.of()
                : java.util.Map.of("BUSLANE_CONNECTION_STRING", connectionString), timeoutMinutes);
    }

    /** Runs {@code command} in {@code dir} with {@code env} added to the environment; its exit code and output. */
    static Result run(List<String> command, Path dir, java.util.Map<String, String> env, int timeoutMinutes)
            throws Exception {
        Path out = Files.createTempFile("buslane-js-", ".log");
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        boolean done = p.waitFor(timeoutMinutes, TimeUnit.MINUTES);
        if (!done) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            return new Result(-1, String.join(" ", command) + " timed out after " + timeoutMinutes + " min:\n"
                    + read(out));
        }
        return new Result(p.exitValue(), read(out));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "(unreadable output: " + e + ")";
        }
    }

    /** Whether {@code executable} is in a folder of the PATH. */
    static boolean onPath(String executable) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, executable))) {
                return true;
            }
        }
        return false;
    }
}
