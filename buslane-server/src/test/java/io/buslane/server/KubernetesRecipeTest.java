package io.buslane.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.buslane.journal.postgres.PostgresOptions;
import io.buslane.server.tls.ClusterTls;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kubernetes recipe (dist/kubernetes/buslane.yaml, docs/kubernetes.md), checked offline since no cluster and no
 * schema registry is reachable here: the objects are there and refer to each other (the StatefulSet to its headless
 * Service, selectors to the pods' labels, environment to the Secrets' keys, the TLS paths to the mounted Secret,
 * probes and Services to the container's ports), and the container's arguments and environment are flags and
 * variables the broker reads, which, as a pod of it would see them, make a valid cluster node with mutual TLS.
 */
class KubernetesRecipeTest {

    private static final Path RECIPE = Path.of("..", "dist", "kubernetes", "buslane.yaml");
    private static final Pattern ENV_DEFAULT = Pattern.compile("\\$\\{env:([A-Z_]+)}");
    private static final List<JsonNode> OBJECTS = new ArrayList<>();

    @BeforeAll
    static void read() throws IOException {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        try (MappingIterator<JsonNode> docs = yaml.readerFor(JsonNode.class).readValues(RECIPE.toFile())) {
            while (docs.hasNext()) {
                JsonNode doc = docs.next();
                if (doc != null && !doc.isEmpty()) {
                    OBJECTS.add(doc);
                }
            }
        }
    }

    private static JsonNode one(String kind, String name) {
        return OBJECTS.stream().filter(o -> o.path("kind").asText().equals(kind)
                && o.path("metadata").path("name").asText().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " in " + RECIPE));
    }

    private static JsonNode statefulSet() {
        return OBJECTS.stream().filter(o -> o.path("kind").asText().equals("StatefulSet")).findFirst().orElseThrow();
    }

    private static JsonNode container() {
        return statefulSet().path("spec").path("template").path("spec").path("containers").get(0);
    }

    @Test
    void threeNodesOnAHeadlessServiceWithStableIdsAndAClientService() {
        JsonNode sts = statefulSet();
        assertThat(sts.path("spec").path("replicas").asInt()).isEqualTo(3);
        JsonNode headless = one("Service", sts.path("spec").path("serviceName").asText());
        assertThat(headless.path("spec").path("clusterIP").asText()).isEqualTo("None");
        assertThat(headless.path("spec").path("publishNotReadyAddresses").asBoolean()).isTrue();
        JsonNode labels = sts.path("spec").path("template").path("metadata").path("labels");
        assertThat(sts.path("spec").path("selector").path("matchLabels")).isEqualTo(labels);
        for (JsonNode o : OBJECTS) {
            JsonNode selector = o.path("kind").asText().equals("Service") ? o.path("spec").path("selector")
                    : o.path("spec").path("selector").path("matchLabels");
            if (o.path("kind").asText().matches("Service|PodDisruptionBudget")) {
                selector.fields().forEachRemaining(e -> assertThat(labels.path(e.getKey()).asText())
                        .as("%s %s selects the pods", o.path("kind").asText(), o.path("metadata").path("name"))
                        .isEqualTo(e.getValue().asText()));
            }
        }
        assertThat(one("PodDisruptionBudget", "buslane").path("spec").path("maxUnavailable").asInt()).isEqualTo(1);
        JsonNode podName = env(container()).get("POD_NAME").path("valueFrom").path("fieldRef").path("fieldPath");
        assertThat(podName.asText()).as("the node id is the pod's name").isEqualTo("metadata.name");
    }

    @Test
    void everyReferenceResolvesInsideTheRecipe() {
        JsonNode c = container();
        Set<String> ports = new HashSet<>();
        c.path("ports").forEach(p -> ports.add(p.path("name").asText()));
        assertThat(ports).contains("amqp", "http", "cluster");
        for (JsonNode o : OBJECTS) {
            if (o.path("kind").asText().equals("Service")) {
                o.path("spec").path("ports").forEach(p -> assertThat(ports).contains(p.path("targetPort").asText()));
            }
        }
        assertThat(c.path("readinessProbe").path("httpGet").path("path").asText()).isEqualTo("/health");
        assertThat(ports).contains(c.path("readinessProbe").path("httpGet").path("port").asText());
        assertThat(c.path("lifecycle").path("preStop").path("exec").path("command")).isNotEmpty();
        assertThat(statefulSet().path("spec").path("template").path("spec").path("terminationGracePeriodSeconds")
                .asInt()).isGreaterThanOrEqualTo(30);
        env(c).values().forEach(e -> {
            JsonNode ref = e.path("valueFrom").path("secretKeyRef");
            if (!ref.isMissingNode()) {
                JsonNode secret = one("Secret", ref.path("name").asText());
                assertThat(secret.path("stringData").has(ref.path("key").asText())
                        || secret.path("data").has(ref.path("key").asText())).as("secret key %s", ref).isTrue();
            }
        });
        Map<String, String> mounts = mounts();
        for (String name : List.of("BUSLANE_CLUSTER_TLS_CERT", "BUSLANE_CLUSTER_TLS_KEY", "BUSLANE_CLUSTER_TLS_CA")) {
            Path file = Path.of(env(c).get(name).path("value").asText());
            String secret = mounts.get(file.getParent().toString());
            assertThat(secret).as("%s is in a mounted Secret", name).isNotNull();
            assertThat(one("Secret", secret).path("data").has(file.getFileName().toString())).isTrue();
        }
    }

    @Test
    void theContainerArgumentsAndEnvironmentAreWhatTheBrokerReadsAndMakeAClusterNode() throws Exception {
        Set<String> variables = brokerVariables();
        Map<String, String> environment = new HashMap<>();
        env(container()).forEach((name, e) -> {
            if (name.startsWith("BUSLANE_")) {
                assertThat(variables).as("the broker reads %s", name).contains(name);
                JsonNode ref = e.path("valueFrom").path("secretKeyRef");
                environment.put(name, ref.isMissingNode() ? e.path("value").asText()
                        : one("Secret", ref.path("name").asText()).path("stringData").path(ref.path("key").asText())
                        .asText());
            }
        });
        List<String> args = new ArrayList<>();
        container().path("args").forEach(a -> args.add(a.asText().replace("$(POD_NAME)", "buslane-0")
                .replace("$(POD_NAMESPACE)", "buslane")));
        Main main = new Main();
        main.env = environment;
        new CommandLine(main).parseArgs(args.toArray(new String[0]));
        assertThat(main.clusterAddress).isEqualTo("buslane-0." + statefulSet().path("spec").path("serviceName")
                .asText() + ".buslane.svc.cluster.local:5400");
        assertThat(main.nodeId).isEqualTo("buslane-0");
        // as the pod's environment sets them (picocli reads the variables of this JVM, which has none of them)
        String storage = environment.get("BUSLANE_STORAGE");
        ClusterTls tls = new ClusterTls(Path.of(environment.get("BUSLANE_CLUSTER_TLS_CERT")),
                Path.of(environment.get("BUSLANE_CLUSTER_TLS_KEY")),
                Path.of(environment.get("BUSLANE_CLUSTER_TLS_CA")));
        BrokerOptions options = BrokerOptions.defaults()
                .withPostgres(PostgresOptions.parse(storage, main.nodeId, Duration.ofSeconds(5), null))
                .withCluster(main.clusterAddress, main.clusterSecret, tls);
        assertThat(options.clusterTls()).isEqualTo(tls);
    }

    /** The BUSLANE_* environment variables the broker's options default to. */
    private static Set<String> brokerVariables() {
        Set<String> out = new HashSet<>();
        for (Field f : Main.class.getDeclaredFields()) {
            CommandLine.Option o = f.getAnnotation(CommandLine.Option.class);
            Matcher m = o == null ? null : ENV_DEFAULT.matcher(o.defaultValue());
            if (m != null && m.find()) {
                out.add(m.group(1));
            }
        }
        return out;
    }

    private static Map<String, JsonNode> env(JsonNode container) {
        Map<String, JsonNode> out = new HashMap<>();
        container.path("env").forEach(e -> out.put(e.path("name").asText(), e));
        return out;
    }

    /** Mount path → the Secret mounted there. */
    private static Map<String, String> mounts() {
        JsonNode pod = statefulSet().path("spec").path("template").path("spec");
        Map<String, String> secretOfVolume = new HashMap<>();
        pod.path("volumes").forEach(v -> {
            if (v.has("secret")) {
                secretOfVolume.put(v.path("name").asText(), v.path("secret").path("secretName").asText());
            }
        });
        Map<String, String> out = new HashMap<>();
        container().path("volumeMounts").forEach(m -> {
            String secret = secretOfVolume.get(m.path("name").asText());
            if (secret != null) {
                out.put(m.path("mountPath").asText(), secret);
            }
        });
        return out;
    }

    @Test
    void theRecipeIsOnTheDocsPage() throws IOException {
        assertThat(Files.readString(Path.of("..", "docs", "kubernetes.md"))).contains("dist/kubernetes/buslane.yaml");
    }
}
