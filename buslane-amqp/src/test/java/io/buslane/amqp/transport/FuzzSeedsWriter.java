package io.buslane.amqp.transport;

import io.buslane.amqp.link.Links;
import io.buslane.amqp.mgmt.ManagementProcessor;
import io.buslane.testsupport.amqp.AmqpFrames;
import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.AmqpSequence;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.DeliveryAnnotations;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.transaction.Coordinator;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Writes the seed inputs of the AMQP fuzz targets (and the CBS target of buslane-common) from the SDK conversations
 * recorded on the wire, which are checked in as the seeds of {@link AmqpConnectionFuzzTest}
 * ({@code AmqpConnectionFuzzTestInputs/clientBytes/*-sdk-*.bin}, recorded as {@code docs/fuzzing.md} describes), plus
 * synthetic inputs encoded with proton-j (the codec of the Java SDK) where the recordings do not reach: the hostile
 * frames of the wire tests, one request per {@code $management} operation, messages with every section.
 *
 * <p>Not part of the build: run it after adding a recording, from the module directory:
 * {@code mvn -o -pl buslane-amqp test -Dtest=FuzzSeedsWriter -Dfuzz.writeSeeds=true}. It only adds or replaces
 * files named {@code seed-*}; findings ({@code crash-*} and the like) are left alone.
 */
@EnabledIfSystemProperty(named = "fuzz.writeSeeds", matches = "true")
class FuzzSeedsWriter {

    private static final Path RESOURCES = Path.of("src/test/resources/io/buslane/amqp");
    private static final Path RECORDINGS = RESOURCES.resolve("transport/AmqpConnectionFuzzTestInputs/clientBytes");
    private static final Path GUARD = RESOURCES.resolve("transport/FrameGuardFuzzTestInputs/guardThenProton");
    private static final Path CODEC = RESOURCES.resolve("codec/AmqpCodecFuzzTestInputs/transferPayload");
    private static final Path MANAGEMENT = RESOURCES.resolve("mgmt/ManagementFuzzTestInputs/request");
    private static final Path CBS = Path.of(
            "../buslane-common/src/test/resources/io/buslane/common/auth/CbsFuzzTestInputs/putToken");

    private final AmqpFrames frames = new AmqpFrames();
    private final DecoderImpl decoder = frames.decoder();

    @Test
    void write() throws IOException {
        for (Path dir : List.of(GUARD, CODEC, MANAGEMENT, CBS)) {
            Files.createDirectories(dir);
            try (Stream<Path> old = Files.list(dir)) {
                // in the CBS folder only the recorded seeds are this writer's (CbsFuzzSeedsWriter adds others)
                for (Path p : old.filter(p -> p.getFileName().toString().startsWith(dir == CBS ? "seed-j" : "seed-"))
                        .toList()) {
                    Files.delete(p);
                }
            }
        }
        List<Path> recordings;
        try (Stream<Path> files = Files.list(RECORDINGS)) {
            recordings = files.filter(p -> p.getFileName().toString().contains("-sdk-")).sorted().toList();
        }
        if (recordings.isEmpty()) {
            throw new IllegalStateException("No recordings in " + RECORDINGS.toAbsolutePath());
        }
        for (Path recording : recordings) {
            String name = recording.getFileName().toString().replace(".bin", "");
            byte[] bytes = Files.readAllBytes(recording);
            write(GUARD, "seed-" + name + ".bin", bytes);
            int n = 0;
            for (Delivery d : deliveries(bytes)) {
                n++;
                String base = "seed-" + name + "-" + String.format(Locale.ROOT, "%02d", n);
                String node = Links.stripHost(d.target == null ? "" : d.target);
                if (node.equalsIgnoreCase("$cbs")) {
                    putToken(base, d.payload);
                } else if (node.toLowerCase(Locale.ROOT).endsWith("/$management")) {
                    String entity = node.substring(0, node.length() - "/$management".length());
                    write(MANAGEMENT, base + ".bin", concat(new byte[] {(byte) entitySelector(entity)}, d.payload));
                } else {
                    byte format = d.format == 0 ? (byte) 0 : d.format == 0x80013700L ? (byte) 1 : (byte) 2;
                    write(CODEC, base + ".bin", concat(new byte[] {format}, d.payload));
                }
            }
        }
        hostileFrames();
        managementOperations();
        messages();
    }

    // ------------------------------------------------------------------------------------------------ recordings

    private record Delivery(String target, long format, byte[] payload) {
    }

    /** The complete deliveries a client sent on a connection, with the target of their link and their format. */
    private List<Delivery> deliveries(byte[] stream) {
        Map<Long, String> targets = new HashMap<>();
        Map<Long, ByteBuffer> partial = new HashMap<>();
        Map<Long, Long> formats = new HashMap<>();
        List<Delivery> out = new ArrayList<>();
        int p = 0;
        while (p + 8 <= stream.length) {
            if (stream[p] == 'A' && stream[p + 1] == 'M' && stream[p + 2] == 'Q' && stream[p + 3] == 'P') {
                p += 8;
                continue;
            }
            int size = ByteBuffer.wrap(stream, p, 4).getInt();
            if (size < 8 || p + size > stream.length) {
                break;
            }
            int doff = (stream[p + 4] & 0xff) * 4;
            int channel = ((stream[p + 6] & 0xff) << 8) | (stream[p + 7] & 0xff);
            if (size > doff) {
                ByteBuffer body = ByteBuffer.wrap(stream, p + doff, size - doff);
                decoder.setByteBuffer(body);
                Object performative = decoder.readObject();
                if (performative instanceof Attach a && a.getRole() == Role.SENDER) {
                    String target = a.getTarget() instanceof Target t ? t.getAddress()
                            : a.getTarget() instanceof Coordinator ? "coordinator" : null;
                    targets.put(key(channel, a.getHandle().longValue()), target);
                } else if (performative instanceof Transfer t) {
                    long k = key(channel, t.getHandle().longValue());
                    if (t.getMessageFormat() != null) {
                        formats.putIfAbsent(k, t.getMessageFormat().longValue());
                    }
                    ByteBuffer acc = partial.computeIfAbsent(k, x -> ByteBuffer.allocate(1 << 20));
                    acc.put(body);
                    if (!Boolean.TRUE.equals(t.getMore())) {
                        acc.flip();
                        byte[] payload = new byte[acc.remaining()];
                        acc.get(payload);
                        partial.remove(k);
                        Long format = formats.remove(k);
                        out.add(new Delivery(targets.get(k), format == null ? 0 : format, payload));
                    }
                }
            }
            p += size;
        }
        return out;
    }

    private static long key(int channel, long handle) {
        return ((long) channel << 32) | handle;
    }

    /** The index of the entity in {@code ManagementFuzzTest.ENTITIES} a recorded node maps to. */
    private static int entitySelector(String entity) {
        String e = entity.toLowerCase(Locale.ROOT);
        if (e.contains("$deadletterqueue")) {
            return 3;
        }
        if (e.contains("/subscriptions/")) {
            return 2;
        }
        if (e.equals("sq") || e.contains("session")) {
            return 1;
        }
        return 0;
    }

    /** A recorded put-token request, as the CBS target's input: type, audience and token on three lines. */
    private void putToken(String base, byte[] payload) throws IOException {
        Message m = Proton.message();
        m.decode(payload, 0, payload.length);
        Map<?, ?> props = m.getApplicationProperties() == null ? Map.of() : m.getApplicationProperties().getValue();
        Object token = m.getBody() instanceof AmqpValue v ? v.getValue() : null;
        String text = props.get("type") + "\n" + props.get("name") + "\n" + token;
        write(CBS, base + ".txt", text.getBytes(StandardCharsets.UTF_8));
    }

    // ------------------------------------------------------------------------------------------------ synthetic

    /** The hostile frames of {@code HostileWireTest} and {@code FrameGuardTest}, behind a plain AMQP header. */
    private void hostileFrames() throws IOException {
        byte[] open = AmqpFrames.concat(AmqpFrames.AMQP_HEADER, frames.frame(0, AmqpFrames.open()), frames.frame(0,
                AmqpFrames.begin()));
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        seeds.put("endless-disposition", AmqpFrames.concat(open, frames.frame(0, AmqpFrames.endlessDisposition())));
        seeds.put("handle-max", AmqpFrames.concat(open, frames.frame(0, AmqpFrames.attachSender(0xffffffffL, "q"))));
        seeds.put("nested-5000", AmqpFrames.concat(AmqpFrames.AMQP_HEADER, AmqpFrames.deeplyNestedOpen(5_000)));
        seeds.put("nested-10", AmqpFrames.concat(AmqpFrames.AMQP_HEADER, AmqpFrames.deeplyNestedOpen(10)));
        seeds.put("channel-1024", AmqpFrames.concat(open, frames.frame(1024, AmqpFrames.begin())));
        Flow credit = AmqpFrames.flow(0, 0x80000000L);
        seeds.put("credit-2-31", AmqpFrames.concat(open, frames.frame(0, AmqpFrames.attachSender(0, "q")),
                frames.frame(0, credit)));
        seeds.put("unfinished-transfers", AmqpFrames.concat(open, frames.frame(0, AmqpFrames.attachSender(0, "q")),
                frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, true), new byte[3000]),
                frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, true), new byte[3000]),
                frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, false),
                        new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, 2, 'h', 'i'}),
                new byte[] {0, 0, 0, 8, 2, 0, 0, 0}, frames.frame(0, AmqpFrames.detach(0))));
        SaslInit plain = new SaslInit();
        plain.setMechanism(Symbol.valueOf("PLAIN"));
        plain.setInitialResponse(new Binary("\0RootManageSharedAccessKey\0SAS_KEY_VALUE".getBytes(
                StandardCharsets.UTF_8)));
        seeds.put("sasl-plain-send", AmqpFrames.concat(AmqpFrames.SASL_HEADER,
                frames.frame(AmqpFrames.TYPE_SASL, 0, plain, null), open,
                frames.frame(0, AmqpFrames.attachSender(0, "q")), frames.frame(AmqpFrames.TYPE_AMQP, 0,
                        AmqpFrames.transfer(0, 0, false), new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, 2, 'h', 'i'})));
        SaslInit wrong = new SaslInit();
        wrong.setMechanism(Symbol.valueOf("PLAIN"));
        wrong.setInitialResponse(new Binary("\0RootManageSharedAccessKey\0wrong".getBytes(StandardCharsets.UTF_8)));
        seeds.put("sasl-plain-wrong", AmqpFrames.concat(AmqpFrames.SASL_HEADER,
                frames.frame(AmqpFrames.TYPE_SASL, 0, wrong, null)));
        Attach coordinator = AmqpFrames.attachSender(0, "x");
        coordinator.setTarget(new Coordinator());
        seeds.put("sasl-plain-coordinator", AmqpFrames.concat(AmqpFrames.SASL_HEADER,
                frames.frame(AmqpFrames.TYPE_SASL, 0, plain, null), open, frames.frame(0, coordinator)));
        seeds.put("tls-header", new byte[] {'A', 'M', 'Q', 'P', 2, 1, 0, 0});
        seeds.put("heartbeats", AmqpFrames.concat(open, new byte[] {0, 0, 0, 8, 2, 0, 0, 0, 0, 0, 0, 8, 2, 0, 0, 0}));
        for (Map.Entry<String, byte[]> e : seeds.entrySet()) {
            write(GUARD, "seed-" + e.getKey() + ".bin", e.getValue());
            write(RECORDINGS, "seed-" + e.getKey() + ".bin", e.getValue());
        }
    }

    /** One request per operation of {@code amqp-wire-protocol.md} §6.2, with the types the SDKs send. */
    private void managementOperations() throws IOException {
        UUID[] tokens = {UUID.fromString("8b2d8c7e-53c1-4a3a-9b11-6d2f0f1e2a3b")};
        Map<String, Map<String, Object>> ops = new LinkedHashMap<>();
        ops.put(ManagementProcessor.RENEW_LOCK, Map.of("lock-tokens", tokens));
        ops.put(ManagementProcessor.RECEIVE_BY_SEQUENCE_NUMBER, Map.of("sequence-numbers", new Long[] {1L, 2L},
                "receiver-settle-mode", UnsignedInteger.ONE));
        ops.put(ManagementProcessor.UPDATE_DISPOSITION, Map.of("lock-tokens", tokens, "disposition-status",
                "suspended", "deadletter-reason", "why", "deadletter-description", "because",
                "properties-to-modify", Map.of("k", "v")));
        ops.put(ManagementProcessor.RENEW_SESSION_LOCK, Map.of("session-id", "s1"));
        ops.put(ManagementProcessor.SET_SESSION_STATE, Map.of("session-id", "s1", "session-state",
                new Binary(new byte[] {1, 2, 3})));
        ops.put(ManagementProcessor.GET_SESSION_STATE, Map.of("session-id", "s1"));
        ops.put(ManagementProcessor.GET_MESSAGE_SESSIONS, Map.of("last-updated-time", new Date(0), "skip", 0,
                "top", 10));
        ops.put(ManagementProcessor.PEEK_MESSAGE, Map.of("from-sequence-number", 1L, "message-count", 5));
        Message scheduled = Proton.message();
        scheduled.setBody(new Data(new Binary("later".getBytes(StandardCharsets.UTF_8))));
        scheduled.setMessageAnnotations(new MessageAnnotations(Map.of(Symbol.valueOf("x-opt-scheduled-enqueue-time"),
                new Date(1_767_229_200_000L))));
        ops.put(ManagementProcessor.SCHEDULE_MESSAGE, Map.of("messages", List.of(Map.of("message-id", "m-1",
                "message", new Binary(encode(scheduled))))));
        ops.put(ManagementProcessor.CANCEL_SCHEDULED_MESSAGE, Map.of("sequence-numbers", new Long[] {5L}));
        ops.put(ManagementProcessor.BATCH_DELETE_MESSAGES, Map.of("message-count", 10, "enqueued-time-utc",
                new Date(1_800_000_000_000L)));
        ops.put(ManagementProcessor.ENUMERATE_RULES, Map.of("top", Integer.MAX_VALUE, "skip", 0));
        Map<String, Object> correlation = new LinkedHashMap<>();
        correlation.put("correlation-id", "c");
        correlation.put("label", "red");
        correlation.put("properties", Map.of("color", "blue", "n", 5L));
        ops.put(ManagementProcessor.ADD_RULE, Map.of("rule-name", "r1", "rule-description", Map.of(
                "sql-filter", Map.of("expression", "color = 'red' AND n > 3"),
                "sql-rule-action", Map.of("expression", "SET x = 1"))));
        ops.put(ManagementProcessor.ADD_RULE + "#correlation", Map.of("rule-name", "r2", "rule-description",
                Map.of("correlation-filter", correlation)));
        ops.put(ManagementProcessor.REMOVE_RULE, Map.of("rule-name", "r1"));
        int n = 0;
        for (Map.Entry<String, Map<String, Object>> op : ops.entrySet()) {
            String operation = op.getKey().replaceAll("#.*", "");
            Message request = Proton.message();
            Properties properties = new Properties();
            properties.setMessageId(new UnsignedLong(++n));
            properties.setReplyTo("q/management-client-reply-to");
            request.setProperties(properties);
            request.setApplicationProperties(new ApplicationProperties(Map.of("operation", operation,
                    "com.microsoft:server-timeout", 59_000L)));
            request.setBody(new AmqpValue(op.getValue()));
            int entity = operation.contains("rule") ? 2 : operation.contains("session") ? 1 : 0;
            write(MANAGEMENT, "seed-op-" + op.getKey().replace("com.microsoft:", "").replace('#', '-') + ".bin",
                    concat(new byte[] {(byte) entity}, encode(request)));
        }
    }

    /** Single messages and batches with every section and body kind, for the codec. */
    private void messages() throws IOException {
        Message full = Proton.message();
        Header header = new Header();
        header.setDurable(true);
        header.setPriority(org.apache.qpid.proton.amqp.UnsignedByte.valueOf((byte) 7));
        header.setTtl(UnsignedInteger.valueOf(60_000));
        full.setHeader(header);
        full.setDeliveryAnnotations(new DeliveryAnnotations(Map.of(Symbol.valueOf("x-opt-lock-token"),
                UUID.fromString("8b2d8c7e-53c1-4a3a-9b11-6d2f0f1e2a3b"))));
        full.setMessageAnnotations(new MessageAnnotations(Map.of(Symbol.valueOf("x-opt-partition-key"), "pk",
                Symbol.valueOf("x-opt-scheduled-enqueue-time"), new Date(1_767_229_200_000L))));
        Properties p = new Properties();
        p.setMessageId("m-1");
        p.setCorrelationId(new UnsignedLong(7));
        p.setTo("q");
        p.setSubject("label");
        p.setReplyTo("r");
        p.setGroupId("s1");
        p.setReplyToGroupId("rs");
        p.setContentType(Symbol.valueOf("application/json"));
        p.setCreationTime(new Date(1_767_225_600_000L));
        p.setAbsoluteExpiryTime(new Date(1_767_225_660_000L));
        full.setProperties(p);
        Map<String, Object> app = new LinkedHashMap<>();
        app.put("s", "x");
        app.put("n", 7);
        app.put("l", 7L);
        app.put("d", 1.5);
        app.put("b", true);
        app.put("t", new Date(0));
        app.put("u", UUID.fromString("8b2d8c7e-53c1-4a3a-9b11-6d2f0f1e2a3b"));
        app.put("bin", new Binary(new byte[] {1, 2}));
        full.setApplicationProperties(new ApplicationProperties(app));
        full.setBody(new Data(new Binary("body".getBytes(StandardCharsets.UTF_8))));
        full.setFooter(new Footer(Map.of(Symbol.valueOf("f"), "v")));
        write(CODEC, "seed-all-sections.bin", concat(new byte[] {0}, encode(full)));

        Message value = Proton.message();
        value.setBody(new AmqpValue(Map.of("a", List.of(1, 2L, "x"))));
        write(CODEC, "seed-amqp-value.bin", concat(new byte[] {0}, encode(value)));
        Message sequence = Proton.message();
        sequence.setBody(new AmqpSequence(List.of(1, "two")));
        write(CODEC, "seed-amqp-sequence.bin", concat(new byte[] {0}, encode(sequence)));

        Message envelope = Proton.message();
        envelope.setMessageAnnotations(new MessageAnnotations(Map.of(Symbol.valueOf("x-opt-partition-key"), "pk")));
        byte[] inner = encode(full);
        byte[] batch = concat(encode(envelope), dataSection(inner), dataSection(encode(value)));
        write(CODEC, "seed-batch.bin", concat(new byte[] {1}, batch));
    }

    private static byte[] dataSection(byte[] bytes) {
        ByteBuffer b = ByteBuffer.allocate(8 + bytes.length);
        b.put((byte) 0x00).put((byte) 0x53).put((byte) 0x75).put((byte) 0xb0).putInt(bytes.length).put(bytes);
        return b.array();
    }

    private static byte[] encode(Message m) {
        byte[] buffer = new byte[1 << 16];
        int n = m.encode(buffer, 0, buffer.length);
        byte[] out = new byte[n];
        System.arraycopy(buffer, 0, out, 0, n);
        return out;
    }

    private static byte[] concat(byte[]... parts) {
        return AmqpFrames.concat(parts);
    }

    private static void write(Path dir, String name, byte[] bytes) {
        try {
            Files.write(dir.resolve(name), bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
