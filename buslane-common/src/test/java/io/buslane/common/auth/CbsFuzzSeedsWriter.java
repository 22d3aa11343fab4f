package io.buslane.common.auth;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes the seeds of {@link CbsFuzzTest} that the recordings do not cover: tokens built exactly as the Java,
 * JavaScript, Python and .NET SDKs build them ({@link SdkTokens}), for entity and namespace audiences, and the
 * malformed variants the parser must refuse. (The put-token requests of the recorded SDK conversations,
 * {@code seed-java-sdk-*} and {@code seed-js-sdk-*}, are written by buslane-amqp's {@code FuzzSeedsWriter}.)
 *
 * <p>Not part of the build: {@code mvn -o -pl buslane-common test -Dtest=CbsFuzzSeedsWriter -Dfuzz.writeSeeds=true}.
 */
@EnabledIfSystemProperty(named = "fuzz.writeSeeds", matches = "true")
class CbsFuzzSeedsWriter {

    private static final Path DIR = Path.of("src/test/resources/io/buslane/common/auth/CbsFuzzTestInputs/putToken");
    private static final String SAS = CbsAuthorizer.SAS_TOKEN_TYPE;
    /** 2030-01-01: valid at the fuzz test's clock. */
    private static final long EXPIRY = 1_893_456_000L;

    @Test
    void write() throws IOException {
        Files.createDirectories(DIR);
        String key = SdkTokens.KEY;
        String name = SdkTokens.KEY_NAME;
        Map<String, String[]> seeds = new LinkedHashMap<>();
        seeds.put("java", new String[] {SAS, "amqp://localhost/queue.1",
            SdkTokens.java("amqp://localhost/queue.1", name, key, EXPIRY)});
        seeds.put("js", new String[] {SAS, "sb://localhost/topic/Subscriptions/s",
            SdkTokens.js("sb://localhost/topic/Subscriptions/s", name, key, EXPIRY)});
        seeds.put("python", new String[] {SAS, "sb://localhost/queue with space",
            SdkTokens.python("sb://localhost/queue with space", name, key, EXPIRY)});
        seeds.put("dotnet-namespace", new String[] {SAS, "amqps://localhost/queue.1/$management",
            SdkTokens.dotnet("amqps://localhost/", name, key, EXPIRY)});
        seeds.put("jwt", new String[] {"jwt", "sb://localhost/queue.1", "eyJhbGciOiJIUzI1NiJ9.e30.c2ln"});
        seeds.put("expired", new String[] {SAS, "amqp://localhost/q", SdkTokens.java("amqp://localhost/q", name, key,
            1_000L)});
        seeds.put("wrong-key", new String[] {SAS, "amqp://localhost/q", SdkTokens.java("amqp://localhost/q", name,
            "not-the-key", EXPIRY)});
        seeds.put("duplicate-field", new String[] {SAS, "amqp://localhost/q",
            "SharedAccessSignature sr=a&sr=b&sig=x&se=1&skn=k"});
        seeds.put("fraction-expiry", new String[] {SAS, "amqp://localhost/q",
            "sharedaccesssignature  SR=amqp%3a%2f%2flocalhost%2fq&sig=%zz&se=0001893456000.5&skn=k&&x="});
        for (Map.Entry<String, String[]> e : seeds.entrySet()) {
            Files.writeString(DIR.resolve("seed-built-" + e.getKey() + ".txt"), String.join("\n", e.getValue()),
                    StandardCharsets.UTF_8);
        }
    }
}
