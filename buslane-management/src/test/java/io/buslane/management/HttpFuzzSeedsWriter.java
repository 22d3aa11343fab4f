package io.buslane.management;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes the seeds of the HTTP fuzz targets: for {@code AtomFuzzTest}, every request of the official Java admin
 * client recorded on the wire ({@code atom/recordings/java-sdk-7.17.20-admin-client.http}, see
 * {@code docs/fuzzing.md}) as its path line and body; for {@code RestFuzzTest}, requests as the service's REST
 * documentation writes them.
 *
 * <p>Not part of the build: {@code mvn -o -pl buslane-management test -Dtest=HttpFuzzSeedsWriter
 * -Dfuzz.writeSeeds=true}. It replaces the files named {@code seed-*} and leaves findings alone.
 */
@EnabledIfSystemProperty(named = "fuzz.writeSeeds", matches = "true")
class HttpFuzzSeedsWriter {

    private static final Path RESOURCES = Path.of("src/test/resources/io/buslane/management");
    private static final Path RECORDING = RESOURCES.resolve("atom/recordings/java-sdk-7.17.20-admin-client.http");
    private static final Path ATOM = RESOURCES.resolve("atom/AtomFuzzTestInputs/request");
    private static final Path REST = RESOURCES.resolve("rest/RestFuzzTestInputs/request");
    private static final Pattern CONTENT_LENGTH = Pattern.compile("(?im)^content-length:\\s*(\\d+)");

    @Test
    void write() throws IOException {
        for (Path dir : new Path[] {ATOM, REST}) {
            Files.createDirectories(dir);
            try (Stream<Path> old = Files.list(dir)) {
                for (Path p : old.filter(p -> p.getFileName().toString().startsWith("seed-")).toList()) {
                    Files.delete(p);
                }
            }
        }
        byte[] recording = Files.readAllBytes(RECORDING);
        int p = 0;
        int n = 0;
        while (p < recording.length) {
            int end = indexOf(recording, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII), p);
            if (end < 0) {
                break;
            }
            String head = new String(recording, p, end - p, StandardCharsets.ISO_8859_1);
            Matcher m = CONTENT_LENGTH.matcher(head);
            int length = m.find() ? Integer.parseInt(m.group(1)) : 0;
            byte[] body = Arrays.copyOfRange(recording, end + 4, end + 4 + length);
            String[] requestLine = head.substring(0, head.indexOf("\r\n")).split(" ");
            String name = String.format(Locale.ROOT, "seed-java-sdk-7.17.20-%02d-%s.bin", ++n,
                    requestLine[0].toLowerCase(Locale.ROOT));
            Files.write(ATOM.resolve(name), concat((requestLine[1] + "\n").getBytes(StandardCharsets.UTF_8), body));
            p = end + 4 + length;
        }
        for (Map.Entry<String, String> e : restRequests().entrySet()) {
            Files.writeString(REST.resolve("seed-" + e.getKey() + ".txt"), e.getValue(), StandardCharsets.UTF_8);
        }
    }

    /** BrokerProperties line, header lines, empty line, body (see RestFuzzTest). */
    private static Map<String, String> restRequests() {
        Map<String, String> r = new LinkedHashMap<>();
        r.put("single", "{\"Label\":\"M1\",\"State\":\"Active\",\"TimeToLive\":10,\"MessageId\":\"m-1\","
                + "\"CorrelationId\":\"c-1\",\"SessionId\":\"s1\",\"ReplyTo\":\"r\",\"To\":\"t\","
                + "\"PartitionKey\":\"s1\","
                + "\"ReplyToSessionId\":\"rs\",\"ViaPartitionKey\":\"v\","
                + "\"ScheduledEnqueueTimeUtc\":\"Sun, 06 Nov 1994 08:49:37 GMT\",\"ForcePersistence\":false}\n"
                + "/queue.1/messages\n"
                + "Content-Type: application/atom+xml;type=entry;charset=utf-8\n"
                + "Priority: \"High\"\nCustomer: 12345\nBig: 12345678901\nRatio: 1.5e3\nFlag: true\n"
                + "Sent: \"Wed, 02 Jul 2014 01:32:27 GMT\"\nBare: plain words\n\nThis is a message.");
        r.put("batch", "\n/topic/messages\nContent-Type: application/vnd.microsoft.servicebus.json\n\n"
                + "[{\"Body\":\"This is the first message\",\"UserProperties\":{\"Color\":\"Red\",\"n\":1,\"big\":"
                + "12345678901,\"r\":1.5,\"ok\":true}},{\"Body\":\"second\",\"BrokerProperties\":{\"Label\":\"M2\","
                + "\"TimeToLive\":\"30.5\"}},{\"Body\":{\"nested\":[1,2]},"
                + "\"BrokerProperties\":{\"MessageId\":\"x3\"}}]");
        r.put("ttl-max", "{\"TimeToLive\":922337203685.4775807}\n/q/messages\n\n");
        r.put("escaped-path", "{}\n/q%2Fsub/Subscriptions/s%20x/messages/head\n\n");
        return r;
    }

    private static int indexOf(byte[] haystack, byte[] needle, int from) {
        outer:
        for (int i = from; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }
}
