package io.buslane.server.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.buslane.engine.entity.EntityNames;
import io.buslane.engine.entity.EntityStatus;
import io.buslane.engine.entity.Limits;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Thread-safe (stateless). Loads a {@link Topology} from a {@code Config.json} file in the schema of Microsoft's
 * Service Bus emulator
 * ({@code Azure/azure-service-bus-emulator-installer:ServiceBus-Emulator/Schema/Config-schema.json}), so that every
 * file the emulator accepts loads here unchanged.
 *
 * <p><b>Format.</b> Root {@code UserConfig} with {@code Namespaces[]} (exactly one) and {@code Logging} (its
 * {@code Type} is accepted and ignored). The namespace has a {@code Name} (the emulator insists on
 * {@code sbemulatorns}; any non-blank name is accepted and kept, and {@code sbemulatorns} is assumed when absent),
 * {@code Queues[]} and {@code Topics[]} (absent means none). Entities have a {@code Name} and {@code Properties};
 * topics have {@code Subscriptions[]}, subscriptions have {@code Rules[]} (see {@link RuleReader}). Property names
 * match case-insensitively, JSON {@code null} means "not given", and the text may contain {@code //} and
 * {@code /* *}{@code /} comments, trailing commas and a UTF-8 byte-order mark, as .NET's configuration reader
 * allows. Durations are ISO-8601 ({@link io.buslane.common.time.TimeSpans}); {@code ForwardTo} and
 * {@code ForwardDeadLetteredMessagesTo} treat {@code ""} as "none".
 *
 * <p><b>Properties.</b> Queues: {@code DeadLetteringOnMessageExpiration}, {@code DefaultMessageTimeToLive},
 * {@code DuplicateDetectionHistoryTimeWindow}, {@code ForwardDeadLetteredMessagesTo}, {@code ForwardTo},
 * {@code LockDuration}, {@code MaxDeliveryCount}, {@code RequiresDuplicateDetection}, {@code RequiresSession}.
 * Topics: {@code DefaultMessageTimeToLive}, {@code DuplicateDetectionHistoryTimeWindow},
 * {@code RequiresDuplicateDetection}. Subscriptions: the queue's minus duplicate detection, plus
 * {@code DeadLetteringOnFilterEvaluationExceptions} (alias {@code EnableDeadLetteringOnFilterEvaluationExceptions}).
 * Buslane extensions, which the emulator cannot express: on queues and topics {@code EnablePartitioning},
 * {@code MaxSizeInMegabytes}, {@code MaxMessageSizeInKilobytes}; on queues, topics and subscriptions
 * {@code Status} ({@code Active}, {@code Disabled}, {@code SendDisabled}, {@code ReceiveDisabled}),
 * {@code AutoDeleteOnIdle}, {@code UserMetadata}, {@code EnableBatchedOperations}; on topics
 * {@code SupportOrdering}. A property that is not given takes the <em>cloud</em> default (the entity builders'),
 * not the emulator's: e.g. {@code MaxDeliveryCount} 10 rather than 3, time-to-live "never" rather than one hour.
 * Values are checked against the cloud's ranges, which contain the emulator's narrower ones.
 *
 * <p><b>Decisions where the emulator is loose or Buslane differs.</b>
 * <ul>
 *   <li>A subscription whose {@code Rules} is absent or empty gets the {@code $Default} TrueFilter rule. A
 *       subscription that lists rules gets exactly those rules, which <em>replace</em> {@code $Default}. The
 *       emulator's documentation does not say so outright, but its behaviour implies it: the sample's correlation
 *       and SQL filters would filter nothing next to a TrueFilter, and its known pitfall (installer issue #127: a
 *       rule with an unknown {@code FilterType} is dropped and the subscription is left with only {@code $Default},
 *       receiving everything) is only observable if listed rules normally replace it. A listed rule may itself be
 *       named {@code $Default}, as some published configs do.</li>
 *   <li>An unknown {@code FilterType} is an error, not a silently dropped rule.</li>
 *   <li>A topic without subscriptions (absent or empty {@code Subscriptions}) is accepted as an extension; the
 *       emulator's schema requires 1..50. The cloud allows it, and subscriptions can be added at run time.</li>
 *   <li>No emulator quotas (50 entities, 1000 rules): the cloud's limits apply, e.g. at most
 *       {@value Limits#MAX_SUBSCRIPTIONS_PER_TOPIC} subscriptions per topic.</li>
 *   <li>Names follow the cloud's rules ({@link EntityNames}) rather than the emulator's pattern: e.g. {@code ~} is
 *       allowed, a {@code /} in a subscription or rule name is not. They must be unique case-insensitively: queues
 *       and topics among themselves, subscriptions within a topic, rules within a subscription.</li>
 *   <li>{@code ForwardTo} and {@code ForwardDeadLetteredMessagesTo} must name a queue or topic of the same file, as
 *       the cloud requires the target to exist.</li>
 *   <li>Unknown properties are ignored with a WARN log naming their path, so files written for future emulator
 *       versions still load; a top-level {@code $schema} is ignored silently.</li>
 * </ul>
 *
 * <p><b>Errors.</b> A file that cannot be loaded fails with one {@link ConfigException} naming the file, the JSON
 * path and, where it can be found, the line and column of the first problem, and the rule it breaks. That covers
 * unreadable files, JSON syntax errors, wrong types, out-of-range values and invalid or duplicate names.
 */
public final class ConfigLoader {

    /** The reason logged for a property the loader does not know. */
    static final String UNKNOWN_PROPERTY = "unknown property";

    /** The namespace name the emulator requires, assumed when a file gives none. */
    public static final String EMULATOR_NAMESPACE = "sbemulatorns";

    /** {@link Limits#MAX_DURATION} as .NET writes it. */
    private static final String NET_MAX_DURATION = "P10675199DT2H48M5.4775807S";

    private static final String STARTER_RESOURCE = "starter-config.json";
    private static final String STARTER_SOURCE = "classpath:io/buslane/server/config/" + STARTER_RESOURCE;

    private static final Logger LOG = LoggerFactory.getLogger(ConfigLoader.class);

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS, JsonReadFeature.ALLOW_TRAILING_COMMA)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private ConfigLoader() {
    }

    /**
     * Loads a Config.json file.
     *
     * @throws ConfigException if the file cannot be read or is not a valid configuration
     */
    public static Topology load(Path file) {
        String source = file.toString();
        byte[] json;
        try {
            json = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new ConfigException(source, JsonPaths.ROOT, -1, -1, "the file does not exist", e);
        } catch (IOException e) {
            throw new ConfigException(source, JsonPaths.ROOT, -1, -1, "the file cannot be read: " + e, e);
        }
        return parse(source, json);
    }

    /**
     * Parses Config.json text.
     *
     * @param source the name to report in errors (a file name or resource)
     * @param json   the UTF-8 (or UTF-16/32, detected) text
     * @throws ConfigException if the text is not a valid configuration
     */
    public static Topology parse(String source, byte[] json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw syntaxError(source, e);
        } catch (IOException e) {
            throw new ConfigException(source, JsonPaths.ROOT, -1, -1, "the text cannot be read: " + e, e);
        }
        if (root == null || root.isMissingNode()) {
            throw new ConfigException(source, JsonPaths.ROOT, -1, -1,
                    "the file is empty; expected a JSON object with a UserConfig property", null);
        }
        try {
            return new Reader(source).read(root);
        } catch (ConfigProblem p) {
            JsonLocation at = JsonPaths.locate(MAPPER.getFactory(), json, p.path());
            int line = at == null ? -1 : at.getLineNr();
            int column = at == null ? -1 : at.getColumnNr();
            throw new ConfigException(source, p.path(), line, column, p.getMessage(), p.getCause());
        }
    }

    /**
     * The topology used when no {@code --config} is given, so that the official SDK quickstarts and the emulator's
     * samples run unchanged: queues {@code queue.1}, {@code myqueue} and {@code sessionqueue} (sessions required);
     * topic {@code topic.1} with subscriptions {@code subscription.1} and {@code subscription.2}; topic
     * {@code mytopic} with subscription {@code mysubscription}. Every entity takes the cloud defaults and every
     * subscription the {@code $Default} rule. Read from the bundled {@code starter-config.json} by this loader.
     */
    public static Topology starterTopology() {
        try (InputStream in = ConfigLoader.class.getResourceAsStream(STARTER_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + STARTER_SOURCE);
            }
            return parse(STARTER_SOURCE, in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + STARTER_SOURCE, e);
        }
    }

    private static ConfigException syntaxError(String source, JsonProcessingException e) {
        String path = JsonPaths.ROOT;
        if (e.getProcessor() instanceof JsonParser parser) {
            path = JsonPaths.of(parser.getParsingContext());
        }
        JsonLocation at = e.getLocation();
        int line = at == null ? -1 : at.getLineNr();
        int column = at == null ? -1 : at.getColumnNr();
        return new ConfigException(source, path, line, column, "invalid JSON: " + e.getOriginalMessage(), e);
    }

    /** Confined to one load. Reads the tree, remembering names and forwarding targets for the cross-checks. */
    private static final class Reader {

        private record Reference(String target, String path, String property) {
        }

        private final String source;
        private final Map<String, String> entityPaths = new HashMap<>();
        private final List<Reference> references = new ArrayList<>();

        Reader(String source) {
            this.source = source;
        }

        Topology read(JsonNode rootNode) {
            JsonObjectView root = JsonObjectView.of(rootNode, JsonPaths.ROOT, "The document");
            root.ignore("$schema");
            JsonObjectView user = root.requiredObject("UserConfig");
            warnUnread(root);
            JsonObjectView logging = user.object("Logging");
            if (logging != null) {
                logging.ignore("Type");
                warnUnread(logging);
            }
            JsonObjectView.Entry namespacesEntry = user.required("Namespaces");
            List<JsonObjectView> namespaces = user.objects("Namespaces", "A namespace");
            if (namespaces.size() != 1) {
                throw new ConfigProblem(namespacesEntry.path(), namespacesEntry.key()
                        + " must list exactly one namespace, found " + namespaces.size());
            }
            warnUnread(user);
            Topology topology = readNamespace(namespaces.get(0));
            checkReferences();
            return topology;
        }

        private Topology readNamespace(JsonObjectView ns) {
            String name = ns.string("Name");
            if (name == null) {
                name = EMULATOR_NAMESPACE;
            } else if (name.isBlank()) {
                throw new ConfigProblem(ns.pathOf("Name"), "Name must not be empty");
            }
            List<QueueProperties> queues = new ArrayList<>();
            for (JsonObjectView q : ns.objects("Queues", "A queue")) {
                queues.add(readQueue(q));
            }
            List<TopicDefinition> topics = new ArrayList<>();
            for (JsonObjectView t : ns.objects("Topics", "A topic")) {
                topics.add(readTopic(t));
            }
            warnUnread(ns);
            return new Topology(name, queues, topics);
        }

        private QueueProperties readQueue(JsonObjectView q) {
            String name = entityName(q, EntityNames::requireValidPath);
            registerEntity(name, q.pathOf("Name"));
            QueueProperties.Builder b = QueueProperties.builder(name);
            JsonObjectView p = q.object("Properties");
            if (p != null) {
                set(p.bool("DeadLetteringOnMessageExpiration"), b::deadLetteringOnMessageExpiration);
                set(p.duration("DefaultMessageTimeToLive"), b::defaultMessageTimeToLive);
                set(p.duration("DuplicateDetectionHistoryTimeWindow"), b::duplicateDetectionHistoryTimeWindow);
                set(forwardTarget(p, "ForwardDeadLetteredMessagesTo"), b::forwardDeadLetteredMessagesTo);
                set(forwardTarget(p, "ForwardTo"), b::forwardTo);
                set(p.duration("LockDuration"), b::lockDuration);
                set(int32(p, "MaxDeliveryCount"), b::maxDeliveryCount);
                set(p.bool("RequiresDuplicateDetection"), b::requiresDuplicateDetection);
                set(p.bool("RequiresSession"), b::requiresSession);
                set(p.bool("EnablePartitioning"), b::enablePartitioning);
                set(p.integer("MaxSizeInMegabytes", Long.MIN_VALUE, Long.MAX_VALUE), b::maxSizeInMegabytes);
                set(int32(p, "MaxMessageSizeInKilobytes"), b::maxMessageSizeInKilobytes);
                set(status(p), b::status);
                set(p.duration("AutoDeleteOnIdle"), b::autoDeleteOnIdle);
                set(p.string("UserMetadata"), b::userMetadata);
                set(p.bool("EnableBatchedOperations"), b::enableBatchedOperations);
                warnUnread(p);
            }
            warnUnread(q);
            return build(q, p, b::build);
        }

        private TopicDefinition readTopic(JsonObjectView t) {
            String name = entityName(t, EntityNames::requireValidPath);
            registerEntity(name, t.pathOf("Name"));
            TopicProperties.Builder b = TopicProperties.builder(name);
            JsonObjectView p = t.object("Properties");
            if (p != null) {
                set(p.duration("DefaultMessageTimeToLive"), b::defaultMessageTimeToLive);
                set(p.duration("DuplicateDetectionHistoryTimeWindow"), b::duplicateDetectionHistoryTimeWindow);
                set(p.bool("RequiresDuplicateDetection"), b::requiresDuplicateDetection);
                set(p.bool("EnablePartitioning"), b::enablePartitioning);
                set(p.integer("MaxSizeInMegabytes", Long.MIN_VALUE, Long.MAX_VALUE), b::maxSizeInMegabytes);
                set(int32(p, "MaxMessageSizeInKilobytes"), b::maxMessageSizeInKilobytes);
                set(status(p), b::status);
                set(p.duration("AutoDeleteOnIdle"), b::autoDeleteOnIdle);
                set(p.string("UserMetadata"), b::userMetadata);
                set(p.bool("SupportOrdering"), b::supportOrdering);
                set(p.bool("EnableBatchedOperations"), b::enableBatchedOperations);
                warnUnread(p);
            }
            TopicProperties topic = build(t, p, b::build);
            List<JsonObjectView> subscriptionViews = t.objects("Subscriptions", "A subscription");
            if (subscriptionViews.size() > Limits.MAX_SUBSCRIPTIONS_PER_TOPIC) {
                throw new ConfigProblem(t.pathOf("Subscriptions"), "a topic can have at most "
                        + Limits.MAX_SUBSCRIPTIONS_PER_TOPIC + " subscriptions, found " + subscriptionViews.size());
            }
            Map<String, String> subscriptionPaths = new HashMap<>();
            List<SubscriptionDefinition> subscriptions = new ArrayList<>();
            for (JsonObjectView s : subscriptionViews) {
                subscriptions.add(readSubscription(name, s, subscriptionPaths));
            }
            warnUnread(t);
            return new TopicDefinition(topic, subscriptions);
        }

        private SubscriptionDefinition readSubscription(String topicName, JsonObjectView s,
                                                        Map<String, String> siblings) {
            String name = entityName(s, EntityNames::requireValidSubscriptionName);
            requireUnique(siblings, name, s.pathOf("Name"), "subscription");
            SubscriptionProperties.Builder b = SubscriptionProperties.builder(topicName, name);
            JsonObjectView p = s.object("Properties");
            if (p != null) {
                set(p.bool("DeadLetteringOnMessageExpiration"), b::deadLetteringOnMessageExpiration);
                set(p.duration("DefaultMessageTimeToLive"), b::defaultMessageTimeToLive);
                set(p.duration("LockDuration"), b::lockDuration);
                set(int32(p, "MaxDeliveryCount"), b::maxDeliveryCount);
                set(forwardTarget(p, "ForwardDeadLetteredMessagesTo"), b::forwardDeadLetteredMessagesTo);
                set(forwardTarget(p, "ForwardTo"), b::forwardTo);
                set(p.bool("RequiresSession"), b::requiresSession);
                set(p.bool("DeadLetteringOnFilterEvaluationExceptions",
                        "EnableDeadLetteringOnFilterEvaluationExceptions"),
                        b::deadLetteringOnFilterEvaluationExceptions);
                set(status(p), b::status);
                set(p.duration("AutoDeleteOnIdle"), b::autoDeleteOnIdle);
                set(p.string("UserMetadata"), b::userMetadata);
                set(p.bool("EnableBatchedOperations"), b::enableBatchedOperations);
                warnUnread(p);
            }
            SubscriptionProperties subscription = build(s, p, b::build);
            List<RuleProperties> rules = new ArrayList<>();
            Map<String, String> rulePaths = new HashMap<>();
            for (JsonObjectView r : s.objects("Rules", "A rule")) {
                RuleProperties rule = RuleReader.read(r, this::warn);
                requireUnique(rulePaths, rule.name(), r.pathOf("Name"), "rule");
                rules.add(rule);
            }
            if (rules.isEmpty()) {
                rules.add(RuleProperties.defaultRule());
            }
            warnUnread(s);
            return new SubscriptionDefinition(subscription, rules);
        }

        private static String entityName(JsonObjectView entity, Consumer<String> validator) {
            String name = entity.requiredString("Name");
            try {
                validator.accept(name);
            } catch (IllegalArgumentException e) {
                throw new ConfigProblem(entity.pathOf("Name"), e.getMessage(), e);
            }
            return name;
        }

        private void registerEntity(String name, String path) {
            requireUnique(entityPaths, name, path, "queue or topic");
        }

        private static void requireUnique(Map<String, String> seen, String name, String path, String what) {
            String previous = seen.putIfAbsent(name.toLowerCase(Locale.ROOT), path);
            if (previous != null) {
                throw new ConfigProblem(path, "duplicate " + what + " name \"" + name + "\": names are "
                        + "case-insensitive and " + previous + " already uses it");
            }
        }

        private String forwardTarget(JsonObjectView p, String property) {
            String target = p.string(property);
            if (target != null && !target.isEmpty()) {
                references.add(new Reference(target, p.pathOf(property), property));
            }
            return target;
        }

        private void checkReferences() {
            for (Reference r : references) {
                if (!entityPaths.containsKey(r.target().toLowerCase(Locale.ROOT))) {
                    throw new ConfigProblem(r.path(), r.property() + " names \"" + r.target()
                            + "\", which is neither a queue nor a topic in this file");
                }
            }
        }

        private static Integer int32(JsonObjectView p, String property) {
            Long v = p.integer(property, Integer.MIN_VALUE, Integer.MAX_VALUE);
            return v == null ? null : v.intValue();
        }

        private static EntityStatus status(JsonObjectView p) {
            String text = p.string("Status");
            if (text == null) {
                return null;
            }
            try {
                return EntityStatus.parse(text);
            } catch (IllegalArgumentException e) {
                throw new ConfigProblem(p.pathOf("Status"), "Status: " + e.getMessage(), e);
            }
        }

        /**
         * Builds an entity, reporting a constructor's {@link IllegalArgumentException} at the property its message
         * starts with ({@code "LockDuration must be between ..."}), or at the entity when it names none.
         */
        private static <T> T build(JsonObjectView entity, JsonObjectView props, Supplier<T> builder) {
            try {
                return builder.get();
            } catch (IllegalArgumentException e) {
                // Show the .NET maximum the way Config.json files write it, not as PT256204778H48M5.4775807S.
                String message = String.valueOf(e.getMessage()).replace(Limits.MAX_DURATION.toString(),
                        NET_MAX_DURATION);
                int space = message.indexOf(' ');
                String property = space > 0 ? message.substring(0, space) : message;
                String path = props != null && props.has(property) ? props.pathOf(property) : entity.path();
                throw new ConfigProblem(path, message, e);
            }
        }

        private static <T> void set(T value, Consumer<T> setter) {
            if (value != null) {
                setter.accept(value);
            }
        }

        private void warnUnread(JsonObjectView view) {
            view.forEachUnread(path -> warn(path, UNKNOWN_PROPERTY));
        }

        private void warn(String path, String why) {
            LOG.warn("{}: ignoring {} ({})", source, path, why);
        }
    }
}
