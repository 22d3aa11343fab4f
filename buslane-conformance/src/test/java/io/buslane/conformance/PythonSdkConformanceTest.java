package io.buslane.conformance;

import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs {@code py/sdk_conformance.py} with the official Python SDK of today, azure-servicebus 7.15 on its own AMQP
 * stack (pyamqp; pinned with its dependencies in {@code py/requirements.txt}), against a broker over the
 * emulator's connection string (plain AMQP on the broker's port). The same script runs over AMQPS, over AMQP over
 * WebSockets and with the administration client in {@link TlsConformanceTest}. The SDK is installed into
 * {@code py/.venv} from PyPI when missing or older than the requirements (by .ci/run, or by the first test that
 * needs it); without python3 or PyPI the test is skipped, or fails in CI ({@code CI=true} or
 * {@code BUSLANE_REQUIRE_SDKS=1}).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class PythonSdkConformanceTest {

    /** The pinned SDK version (py/requirements.txt). */
    static final String VERSION = "7.15.0";

    @Test
    void officialPythonSdkOfTodayWorks() throws Exception {
        Path python = venvPython();
        try (BrokerProcess broker = BrokerProcess.start(config(queues("plain"), topics("plain")))) {
            JsSdkConformanceTest.Result result = JsSdkConformanceTest.run(List.of(python.toString(),
                    "sdk_conformance.py"), TlsConformanceTest.PY_DIR, Map.of("BUSLANE_CONNECTION_STRING",
                    broker.connectionString(), "BUSLANE_TAG", "plain"), 4);
            System.out.println(result.output());
            assertThat(result.exitCode()).as("sdk_conformance.py failed:\n%s\n--- broker log ---\n%s",
                    result.output(), broker.log()).isZero();
            assertThat(result.output()).contains("PASS check_sessions (plain)");
        }
    }

    /** A Config.json with these queues and topics (JSON objects, comma-separated) in the emulator's namespace. */
    static String config(String queues, String topics) {
        return "{ \"UserConfig\": { \"Namespaces\": [ { \"Name\": \"sbemulatorns\", \"Queues\": [ " + queues
                + " ], \"Topics\": [ " + topics + " ] } ], \"Logging\": { \"Type\": \"Console\" } } }";
    }

    /** The Config.json queues of one run of sdk_conformance.py (entity names end with {@code -tag}). */
    static String queues(String tag) {
        StringBuilder q = new StringBuilder();
        for (String name : List.of("py-queue", "py-schedule", "py-deadletter", "py-defer", "py-rad")) {
            q.append("{ \"Name\": \"").append(name).append('-').append(tag).append("\" }, ");
        }
        return q + "{ \"Name\": \"py-sessions-" + tag + "\", \"Properties\": { \"RequiresSession\": true } }, "
                + "{ \"Name\": \"py-lock-" + tag + "\", \"Properties\": { \"LockDuration\": \"PT5S\" } }, "
                + "{ \"Name\": \"py-large-" + tag + "\", \"Properties\": { \"MaxMessageSizeInKilobytes\": 102400 } }";
    }

    /** The Config.json topics of one run of sdk_conformance.py. */
    static String topics(String tag) {
        return "{ \"Name\": \"py-topic-" + tag + "\", \"Subscriptions\": [ { \"Name\": \"all\" }, { \"Name\": "
                + "\"red\", \"Rules\": [ { \"Name\": \"red\", \"Properties\": { \"FilterType\": \"Sql\", "
                + "\"SqlFilter\": { \"SqlExpression\": \"color = 'red'\" } } } ] } ] }";
    }

    /**
     * The Python of {@code py/.venv} with the pinned SDK, installed first when missing or older than
     * {@code py/requirements.txt}; skips the calling test (fails it in CI) when that cannot be done here.
     */
    static synchronized Path venvPython() throws Exception {
        Path dir = TlsConformanceTest.PY_DIR;
        Path venv = dir.resolve(".venv");
        Path python = venv.resolve("bin/python");
        Path stamp = venv.resolve("installed-requirements.txt");
        Path requirements = dir.resolve("requirements.txt");
        if (Files.exists(stamp) && Files.readString(stamp).equals(Files.readString(requirements))
                && Files.isExecutable(python)) {
            return python;
        }
        if (!JsSdkConformanceTest.onPath("python3")) {
            skipOutsideCi("python3 is not on the PATH");
        }
        JsSdkConformanceTest.Result made = JsSdkConformanceTest.run(List.of("python3", "-m", "venv", "--clear",
                venv.toString()), dir, Map.of(), 2);
        if (made.exitCode() != 0) {
            skipOutsideCi("python3 -m venv failed (Debian: apt-get install python3-venv):\n" + made.output());
        }
        JsSdkConformanceTest.Result installed = JsSdkConformanceTest.run(List.of(python.toString(), "-m", "pip",
                "install", "--disable-pip-version-check", "--no-input", "-q", "-r", requirements.toString()), dir,
                Map.of(), 5);
        if (installed.exitCode() != 0) {
            skipOutsideCi("pip could not install py/requirements.txt (is PyPI reachable?):\n" + installed.output());
        }
        Files.copy(requirements, stamp);
        return python;
    }

    /** Skips the test, or fails it in CI ({@code CI=true} or {@code BUSLANE_REQUIRE_SDKS=1}, as .ci/run sets). */
    static void skipOutsideCi(String why) {
        if ("true".equals(System.getenv("CI")) || "1".equals(System.getenv("BUSLANE_REQUIRE_SDKS"))) {
            throw new IllegalStateException(why + " (CI=true or BUSLANE_REQUIRE_SDKS=1 makes this a failure)");
        }
        Assumptions.abort(why);
    }
}
