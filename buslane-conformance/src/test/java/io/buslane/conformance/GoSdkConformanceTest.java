package io.buslane.conformance;

import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs {@code go/main.go} with the official Go SDK, {@code azservicebus} and its {@code admin} package (the
 * version pinned in {@code go/go.mod}, checked by the committed {@code go/go.sum}), against a broker over the
 * emulator's connection string (plain AMQP on the broker's port); over AMQPS with the administration client in
 * {@link TlsConformanceTest}. The modules come from the Go module proxy into the module cache (by .ci/run, or by
 * the first build); without {@code go} the test is skipped, or fails in CI ({@code CI=true} or
 * {@code BUSLANE_REQUIRE_SDKS=1}).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class GoSdkConformanceTest {

    /** The pinned SDK version (go/go.mod). */
    static final String VERSION = "v1.11.0";
    /** The folder of the Go conformance program. */
    static final Path GO_DIR = Path.of(System.getProperty("buslane.conformance.go", "go")).toAbsolutePath();

    @Test
    void officialGoSdkWorks() throws Exception {
        Path program = build();
        try (BrokerProcess broker = BrokerProcess.start(PythonSdkConformanceTest.config(queues("plain"),
                topics("plain")))) {
            JsSdkConformanceTest.Result result = JsSdkConformanceTest.run(List.of(program.toString()), GO_DIR,
                    Map.of("BUSLANE_CONNECTION_STRING", broker.connectionString(), "BUSLANE_TAG", "plain"), 4);
            System.out.println(result.output());
            assertThat(result.exitCode()).as("go/main.go failed:\n%s\n--- broker log ---\n%s", result.output(),
                    broker.log()).isZero();
            assertThat(result.output()).contains("PASS sessions (plain)");
        }
    }

    /** The Config.json queues of one run of the Go program (entity names end with {@code -tag}). */
    static String queues(String tag) {
        return PythonSdkConformanceTest.queues(tag).replace("\"py-", "\"go-");
    }

    /** The Config.json topics of one run of the Go program. */
    static String topics(String tag) {
        return PythonSdkConformanceTest.topics(tag).replace("\"py-", "\"go-");
    }

    /**
     * Builds the Go program into {@code target/go-conformance} (the module cache and build cache make a rebuild
     * quick); skips the calling test (fails it in CI) without {@code go} or the module proxy.
     */
    static synchronized Path build() throws Exception {
        if (!JsSdkConformanceTest.onPath("go")) {
            PythonSdkConformanceTest.skipOutsideCi("go is not on the PATH");
        }
        Path program = Path.of("target", "go-conformance").toAbsolutePath();
        JsSdkConformanceTest.Result built = JsSdkConformanceTest.run(List.of("go", "build", "-mod=readonly", "-o",
                program.toString(), "."), GO_DIR, Map.of(), 5);
        if (built.exitCode() != 0) {
            PythonSdkConformanceTest.skipOutsideCi("go build failed (is the Go module proxy reachable?):\n"
                    + built.output());
        }
        return program;
    }
}
