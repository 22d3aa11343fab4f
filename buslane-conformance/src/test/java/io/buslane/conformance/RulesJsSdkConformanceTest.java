package io.buslane.conformance;

import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs {@code js/rules.mjs}: subscription rules with the official JavaScript SDK's {@code ServiceBusRuleManager}
 * (add-rule, remove-rule, enumerate-rules), SQL filters and actions. Skipped when {@code node} or {@code npm} is not
 * on the PATH; installs the SDK into {@code js/node_modules} first when it is missing.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RulesJsSdkConformanceTest {

    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  {
                    "Name": "sbemulatorns",
                    "Topics": [ { "Name": "js-rules", "Subscriptions": [ { "Name": "s" } ] } ]
                  }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    private static final Path JS_DIR = JsSdkConformanceTest.JS_DIR;

    @Test
    void officialJavaScriptSdkManagesRules() throws Exception {
        JsSdkConformanceTest.ensureSdkInstalled();
        try (BrokerProcess broker = BrokerProcess.start(CONFIG)) {
            Path out = Files.createTempFile("buslane-js-rules-", ".log");
            ProcessBuilder pb = new ProcessBuilder("node", "rules.mjs").directory(JS_DIR.toFile())
                    .redirectErrorStream(true).redirectOutput(out.toFile());
            pb.environment().put("BUSLANE_CONNECTION_STRING", broker.connectionString());
            Process p = pb.start();
            boolean done = p.waitFor(2, TimeUnit.MINUTES);
            if (!done) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            String output = Files.readString(out);
            System.out.println(output);
            assertThat(done).as("node rules.mjs timed out:\n%s", output).isTrue();
            assertThat(p.exitValue()).as("node rules.mjs failed:\n%s\n--- broker log ---\n%s", output, broker.log())
                    .isZero();
        }
    }
}
