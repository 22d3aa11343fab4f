package io.buslane.conformance;

import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusMessageBatch;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusRuleManagerClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import com.azure.messaging.servicebus.ServiceBusTransactionContext;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import com.azure.messaging.servicebus.administration.models.CorrelationRuleFilter;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import com.azure.messaging.servicebus.administration.models.CreateRuleOptions;
import com.azure.messaging.servicebus.administration.models.CreateSubscriptionOptions;
import com.azure.messaging.servicebus.administration.models.CreateTopicOptions;
import com.azure.messaging.servicebus.administration.models.EntityStatus;
import com.azure.messaging.servicebus.administration.models.FalseRuleFilter;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import com.azure.messaging.servicebus.administration.models.RuleProperties;
import com.azure.messaging.servicebus.administration.models.SqlRuleAction;
import com.azure.messaging.servicebus.administration.models.SqlRuleFilter;
import com.azure.messaging.servicebus.administration.models.SubscriptionProperties;
import com.azure.messaging.servicebus.administration.models.TopicProperties;
import com.azure.messaging.servicebus.administration.models.TrueRuleFilter;
import com.azure.messaging.servicebus.models.AbandonOptions;
import com.azure.messaging.servicebus.models.DeadLetterOptions;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import com.azure.messaging.servicebus.models.SubQueue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Records what the official SDKs send, byte for byte, for the seed corpora of the fuzz tests ({@code
 * docs/fuzzing.md}): a recording proxy in front of a running broker writes each client connection's bytes to a file,
 * while the Java SDK (7.17.20, this module's test dependency) runs through sends, batches, receives, settlements,
 * sessions, rules, transactions and {@code $management} operations, the Java admin client through the ATOM API, and
 * the JavaScript SDK ({@code js/conformance.mjs}, {@code js/rules.mjs}) through its checks.
 *
 * <p>Not a test (the build does not run it). Start a broker with the entities of {@link #CONFIG} ({@code
 * --print-config} prints it), then run this class with this module's test classpath:
 * {@code java -cp <classpath> io.buslane.conformance.FuzzSeedRecorder <amqp-port> <http-port> <out-dir>}. It writes
 * {@code <out>/java/conn-NNN.c2s}, {@code <out>/js/conn-NNN.c2s} and {@code <out>/admin/conn-NNN.c2s}.
 */
public final class FuzzSeedRecorder {

    /** The entities the scenarios use (those of the JS conformance scripts and of the in-process fuzz broker). */
    static final String CONFIG = """
            {"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
              "Queues": [{"Name": "js-queue"}, {"Name": "js-sessions", "Properties": {"RequiresSession": true}},
                         {"Name": "js-schedule"}, {"Name": "js-peek"}, {"Name": "js-deadletter"},
                         {"Name": "js-defer"}, {"Name": "js-ttl"}, {"Name": "js-footer"},
                         {"Name": "js-lock", "Properties": {"LockDuration": "PT5S"}},
                         {"Name": "q"}, {"Name": "sq", "Properties": {"RequiresSession": true}}],
              "Topics": [{"Name": "js-rules", "Subscriptions": [{"Name": "s"}]},
                         {"Name": "t", "Subscriptions": [{"Name": "s"}]}]}],
              "Logging": {"Type": "Console"}}}
            """;

    private FuzzSeedRecorder() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--print-config")) {
            System.out.print(CONFIG);
            return;
        }
        int amqpPort = Integer.parseInt(args[0]);
        int httpPort = Integer.parseInt(args[1]);
        Path out = Path.of(args[2]);
        Files.createDirectories(out);
        Files.writeString(out.resolve("Config.json"), CONFIG);
        int javaPort = record(amqpPort, out.resolve("java"));
        javaSdk(connectionString(javaPort));
        int adminPort = record(httpPort, out.resolve("admin"));
        adminClient(connectionString(javaPort), adminPort);
        int jsPort = record(amqpPort, out.resolve("js"));
        for (String script : List.of("conformance.mjs", "rules.mjs")) {
            ProcessBuilder pb = new ProcessBuilder("node", script).directory(Path.of("js").toFile()).inheritIO();
            pb.environment().put("BUSLANE_CONNECTION_STRING", connectionString(jsPort));
            Process p = pb.start();
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly();
            }
        }
        System.out.println("Recorded into " + out.toAbsolutePath());
        System.exit(0);
    }

    private static String connectionString(int port) {
        return "Endpoint=sb://localhost:" + port + ";SharedAccessKeyName=RootManageSharedAccessKey;"
                + "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
    }

    /** A proxy to {@code targetPort} on a free port that writes what each client sends to {@code dir}. */
    private static int record(int targetPort, Path dir) throws IOException {
        Files.createDirectories(dir);
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        AtomicInteger connections = new AtomicInteger();
        Thread accept = new Thread(() -> {
            while (true) {
                try {
                    Socket client = server.accept();
                    Socket broker = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                    Path file = dir.resolve(String.format("conn-%03d.c2s", connections.incrementAndGet()));
                    pipe(client.getInputStream(), broker.getOutputStream(), Files.newOutputStream(file));
                    pipe(broker.getInputStream(), client.getOutputStream(), OutputStream.nullOutputStream());
                } catch (IOException e) {
                    return;
                }
            }
        }, "recorder-" + targetPort);
        accept.setDaemon(true);
        accept.start();
        return server.getLocalPort();
    }

    private static void pipe(InputStream in, OutputStream to, OutputStream copy) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[65_536];
            try (in; to; copy) {
                int n;
                while ((n = in.read(buffer)) > 0) {
                    copy.write(buffer, 0, n);
                    copy.flush();
                    to.write(buffer, 0, n);
                    to.flush();
                }
            } catch (IOException closed) {
                // the connection ended
            }
        });
        t.setDaemon(true);
        t.start();
    }

    // ------------------------------------------------------------------------------------------------ Java SDK

    private static void javaSdk(String connectionString) {
        ServiceBusClientBuilder b = new ServiceBusClientBuilder().connectionString(connectionString);
        try (ServiceBusSenderClient sender = b.sender().queueName("q").buildClient()) {
            ServiceBusMessage m = new ServiceBusMessage("hello").setMessageId("m-1").setSubject("label")
                    .setCorrelationId("c-1").setContentType("text/plain").setTimeToLive(Duration.ofMinutes(5));
            m.getApplicationProperties().putAll(Map.of("n", 7, "s", "x", "d", 1.5,
                    "when", OffsetDateTime.parse("2026-01-01T00:00:00Z")));
            sender.sendMessage(m);
            ServiceBusMessageBatch batch = sender.createMessageBatch();
            batch.tryAddMessage(new ServiceBusMessage("b-1"));
            batch.tryAddMessage(new ServiceBusMessage(new byte[] {1, 2, 3}).setPartitionKey("pk"));
            sender.sendMessages(batch);
            for (int i = 0; i < 4; i++) {
                sender.sendMessage(new ServiceBusMessage("more-" + i));
            }
            long seq = sender.scheduleMessage(new ServiceBusMessage("later"), OffsetDateTime.now().plusHours(1));
            sender.cancelScheduledMessage(seq);
        }
        settlements(b);
        try (ServiceBusReceiverClient r = b.receiver().queueName("q")
                .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            r.receiveMessages(5, Duration.ofSeconds(2)).forEach(x -> { });
        }
        try (ServiceBusReceiverClient dlq = b.receiver().queueName("q").subQueue(SubQueue.DEAD_LETTER_QUEUE)
                .buildClient()) {
            dlq.receiveMessages(1, Duration.ofSeconds(2)).forEach(dlq::complete);
        }
        sessions(b);
        rules(b);
        try (ServiceBusSenderClient sender = b.sender().queueName("q").buildClient()) {
            ServiceBusTransactionContext tx = sender.createTransaction();
            sender.sendMessage(new ServiceBusMessage("in-tx"), tx);
            sender.commitTransaction(tx);
            ServiceBusTransactionContext rollback = sender.createTransaction();
            sender.sendMessage(new ServiceBusMessage("rolled-back"), rollback);
            sender.rollbackTransaction(rollback);
        }
    }

    /** Peek-lock: complete, abandon, defer and receive deferred, dead-letter, renew lock, peek. */
    private static void settlements(ServiceBusClientBuilder b) {
        try (ServiceBusReceiverClient r = b.receiver().queueName("q").disableAutoComplete().buildClient()) {
            List<ServiceBusReceivedMessage> got = new ArrayList<>();
            r.receiveMessages(7, Duration.ofSeconds(5)).forEach(got::add);
            if (got.size() > 0) {
                r.renewMessageLock(got.get(0));
                r.complete(got.get(0));
            }
            if (got.size() > 1) {
                r.abandon(got.get(1), new AbandonOptions().setPropertiesToModify(Map.of("k", "v")));
            }
            if (got.size() > 2) {
                r.defer(got.get(2));
                r.receiveDeferredMessage(got.get(2).getSequenceNumber());
            }
            if (got.size() > 3) {
                r.deadLetter(got.get(3), new DeadLetterOptions().setDeadLetterReason("why")
                        .setDeadLetterErrorDescription("because"));
            }
            for (int i = 4; i < got.size(); i++) {
                r.complete(got.get(i));
            }
            r.peekMessages(3).forEach(x -> { });
        }
    }

    private static void sessions(ServiceBusClientBuilder b) {
        try (ServiceBusSenderClient sender = b.sender().queueName("sq").buildClient()) {
            sender.sendMessage(new ServiceBusMessage("s-1").setSessionId("s1"));
            sender.sendMessage(new ServiceBusMessage("s-2").setSessionId("s1"));
        }
        try (ServiceBusSessionReceiverClient sessions = b.sessionReceiver().queueName("sq").disableAutoComplete()
                .buildClient(); ServiceBusReceiverClient r = sessions.acceptSession("s1")) {
            r.receiveMessages(2, Duration.ofSeconds(5)).forEach(r::complete);
            r.setSessionState("state".getBytes());
            r.getSessionState();
            r.renewSessionLock();
        }
    }

    private static void rules(ServiceBusClientBuilder b) {
        try (ServiceBusSenderClient sender = b.sender().topicName("t").buildClient()) {
            ServiceBusMessage m = new ServiceBusMessage("t-1").setSubject("red");
            m.getApplicationProperties().put("color", "red");
            sender.sendMessage(m);
        }
        try (ServiceBusRuleManagerClient rules = b.ruleManager().topicName("t").subscriptionName("s")
                .buildClient()) {
            rules.createRule("sql", new CreateRuleOptions(new SqlRuleFilter("color = 'red' AND n > 3"))
                    .setAction(new SqlRuleAction("SET x = 1")));
            CorrelationRuleFilter corr = new CorrelationRuleFilter().setLabel("red").setMessageId("m");
            corr.getProperties().put("color", "blue");
            rules.createRule("corr", new CreateRuleOptions(corr));
            rules.listRules().forEach(x -> { });
            rules.deleteRule("sql");
            rules.deleteRule("corr");
        }
        try (ServiceBusReceiverClient r = b.receiver().topicName("t").subscriptionName("s").buildClient()) {
            r.receiveMessages(1, Duration.ofSeconds(3)).forEach(x -> { });
        }
    }

    // ------------------------------------------------------------------------------------------------ admin client

    private static void adminClient(String connectionString, int httpPort) {
        HttpPipelinePolicy toProxy = (context, next) -> {
            URL url = context.getHttpRequest().getUrl();
            context.getHttpRequest().setUrl("http://127.0.0.1:" + httpPort + url.getFile());
            return next.process();
        };
        ServiceBusAdministrationClient admin = new ServiceBusAdministrationClientBuilder()
                .connectionString(connectionString).addPolicy(toProxy).buildClient();
        QueueProperties q = admin.createQueue("adm-q", new CreateQueueOptions()
                .setLockDuration(Duration.ofSeconds(45)).setMaxSizeInMegabytes(2048)
                .setDuplicateDetectionRequired(true).setSessionRequired(true)
                .setDefaultMessageTimeToLive(Duration.ofDays(2)).setDeadLetteringOnMessageExpiration(true)
                .setDuplicateDetectionHistoryTimeWindow(Duration.ofMinutes(2)).setMaxDeliveryCount(7)
                .setBatchedOperationsEnabled(false).setStatus(EntityStatus.SEND_DISABLED)
                .setUserMetadata("orders & <more>").setAutoDeleteOnIdle(Duration.ofHours(1))
                .setPartitioningEnabled(true).setMaxMessageSizeInKilobytes(1024));
        admin.updateQueue(q.setMaxDeliveryCount(9).setForwardTo("q").setForwardDeadLetteredMessagesTo("q"));
        admin.getQueue("adm-q");
        admin.getQueueRuntimeProperties("adm-q");
        admin.listQueues().forEach(x -> { });
        TopicProperties t = admin.createTopic("adm-t", new CreateTopicOptions()
                .setDefaultMessageTimeToLive(Duration.ofHours(3)).setDuplicateDetectionRequired(true)
                .setOrderingSupported(true).setUserMetadata("meta").setMaxSizeInMegabytes(1024));
        admin.updateTopic(t.setUserMetadata("changed"));
        SubscriptionProperties s = admin.createSubscription("adm-t", "adm-s", new CreateSubscriptionOptions()
                .setLockDuration(Duration.ofSeconds(30)).setMaxDeliveryCount(5)
                .setEnableDeadLetteringOnFilterEvaluationExceptions(true).setUserMetadata("sub"));
        admin.updateSubscription(s.setMaxDeliveryCount(6));
        admin.createSubscription("adm-t", "adm-s2", "first", new CreateSubscriptionOptions(),
                new CreateRuleOptions(new SqlRuleFilter("color = 'red'")).setAction(new SqlRuleAction("SET a = 1")));
        adminRules(admin);
        admin.getNamespaceProperties();
        admin.deleteSubscription("adm-t", "adm-s2");
        admin.deleteTopic("adm-t");
        admin.deleteQueue("adm-q");
    }

    private static void adminRules(ServiceBusAdministrationClient admin) {
        admin.createRule("adm-t", "adm-sql", "adm-s", new CreateRuleOptions(
                new SqlRuleFilter("n > 3 AND sys.Label LIKE 'r%'"))
                .setAction(new SqlRuleAction("SET x = 'y'; REMOVE z")));
        CorrelationRuleFilter corr = new CorrelationRuleFilter().setLabel("red").setMessageId("m").setSessionId("s")
                .setReplyTo("r").setTo("to").setContentType("ct").setCorrelationId("c").setReplyToSessionId("rs");
        corr.getProperties().put("color", "blue");
        corr.getProperties().put("n", 5);
        admin.createRule("adm-t", "adm-corr", "adm-s", new CreateRuleOptions(corr));
        admin.createRule("adm-t", "adm-true", "adm-s", new CreateRuleOptions(new TrueRuleFilter()));
        admin.createRule("adm-t", "adm-false", "adm-s", new CreateRuleOptions(new FalseRuleFilter()));
        RuleProperties r = admin.getRule("adm-t", "adm-s", "adm-sql");
        r.setAction(new SqlRuleAction("SET x = 2"));
        admin.updateRule("adm-t", "adm-s", r);
        admin.listRules("adm-t", "adm-s").forEach(x -> { });
        admin.deleteRule("adm-t", "adm-s", "adm-corr");
    }
}
