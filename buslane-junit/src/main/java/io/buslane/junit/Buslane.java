package io.buslane.junit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Starts a Buslane broker inside this JVM, on {@code 127.0.0.1} and ports the system picks, for tests: no Docker, no
 * process. A builder; {@link #start()} returns the running {@link BuslaneBroker}. Not thread-safe.
 *
 * <pre>{@code
 * try (BuslaneBroker broker = Buslane.inMemory()
 *         .queue("orders", q -> q.requiresSession(true).maxDeliveryCount(5))
 *         .topic("events", t -> t.subscription("all"))
 *         .start()) {
 *     String cs = broker.connectionString();
 * }
 * }</pre>
 *
 * <p>The broker starts with the Config.json given to {@link #withConfig(String)} plus the entities defined in code
 * (an entity in code replaces one of the same name in the file); with neither, with the starter topology
 * ({@code queue.1}, {@code myqueue}, {@code sessionqueue}, {@code topic.1}, {@code mytopic}). See docs/embedded.md.
 */
public final class Buslane {

    private static final JsonMapper LENIENT = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS, JsonReadFeature.ALLOW_TRAILING_COMMA)
            .build();

    private final Path dataDir;
    private String configJson;
    private final List<QueueSpec> queues = new ArrayList<>();
    private final List<TopicSpec> topics = new ArrayList<>();

    private Buslane(Path dataDir) {
        this.dataDir = dataDir;
    }

    /** A broker that keeps its messages in memory only: the fastest start, nothing survives {@code close()}. */
    public static Buslane inMemory() {
        return new Buslane(null);
    }

    /**
     * A broker that keeps its journals in {@code dataDir} (created if missing): a broker started again on the same
     * directory finds the entities and messages the previous one left.
     */
    public static Buslane durable(Path dataDir) {
        return new Buslane(Objects.requireNonNull(dataDir, "dataDir"));
    }

    /** Starts with this Config.json text (the emulator's schema; {@code //} comments allowed). */
    public Buslane withConfig(String json) {
        this.configJson = Objects.requireNonNull(json, "json");
        return this;
    }

    /** Starts with this Config.json file. */
    public Buslane withConfig(Path file) {
        try {
            return withConfig(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + file, e);
        }
    }

    /** Defines a queue with the cloud's default properties. */
    public Buslane queue(String name) {
        return queue(name, q -> { });
    }

    /** Defines a queue: {@code .queue("orders", q -> q.requiresSession(true).maxDeliveryCount(5))}. */
    public Buslane queue(String name, Consumer<QueueSpec> spec) {
        QueueSpec q = new QueueSpec(name);
        spec.accept(q);
        queues.add(q);
        return this;
    }

    /** Defines a topic and its subscriptions: {@code .topic("events", t -> t.subscription("all"))}. */
    public Buslane topic(String name, Consumer<TopicSpec> spec) {
        TopicSpec t = new TopicSpec(name);
        spec.accept(t);
        topics.add(t);
        return this;
    }

    /** The data directory, or null in memory. */
    Path dataDir() {
        return dataDir;
    }

    /**
     * Starts the broker (about a second in memory; docs/embedded.md has the measurements).
     *
     * @throws IllegalStateException if the broker cannot start (e.g. the configuration is invalid)
     */
    public BuslaneBroker start() {
        return BuslaneBroker.start(dataDir, configText());
    }

    /** The Config.json the broker starts with: the given text, with the entities defined in code merged in. */
    String configText() {
        if (queues.isEmpty() && topics.isEmpty()) {
            return configJson;
        }
        ObjectNode root;
        try {
            root = configJson == null ? JsonNodeFactory.instance.objectNode()
                    : (ObjectNode) LENIENT.readTree(configJson);
        } catch (JsonProcessingException | ClassCastException e) {
            throw new IllegalArgumentException("The Config.json is not a JSON object: " + e.getMessage(), e);
        }
        ObjectNode namespace = namespace(root);
        ArrayNode fileQueues = array(namespace, "Queues");
        ArrayNode fileTopics = array(namespace, "Topics");
        for (QueueSpec q : queues) {
            removeNamed(fileQueues, q.name());
            removeNamed(fileTopics, q.name());
            fileQueues.add(q.toJson());
        }
        for (TopicSpec t : topics) {
            removeNamed(fileQueues, t.name());
            removeNamed(fileTopics, t.name());
            fileTopics.add(t.toJson());
        }
        return root.toPrettyString();
    }

    private static ObjectNode namespace(ObjectNode root) {
        ObjectNode user = root.has("UserConfig") ? (ObjectNode) root.get("UserConfig") : root.putObject("UserConfig");
        ArrayNode namespaces = array(user, "Namespaces");
        if (namespaces.isEmpty()) {
            namespaces.addObject().put("Name", "sbemulatorns");
        }
        if (!user.has("Logging")) {
            user.putObject("Logging").put("Type", "Console");
        }
        return (ObjectNode) namespaces.get(0);
    }

    private static ArrayNode array(ObjectNode parent, String field) {
        JsonNode node = parent.get(field);
        if (node instanceof ArrayNode a) {
            return a;
        }
        return parent.putArray(field);
    }

    private static void removeNamed(ArrayNode entries, String name) {
        String wanted = name.toLowerCase(Locale.ROOT);
        for (int i = entries.size() - 1; i >= 0; i--) {
            if (entries.get(i).path("Name").asText("").toLowerCase(Locale.ROOT).equals(wanted)) {
                entries.remove(i);
            }
        }
    }
}
