package io.buslane.conformance;

import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.core.amqp.exception.AmqpException;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import io.buslane.journal.postgres.TestPostgres;
import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The packaged broker on PostgreSQL storage, as processes: two brokers on one database with fenced ownership (the
 * first paused with SIGSTOP until its lease ran out, the second taking the shards over, the first resumed and
 * refused), and the database stopped and restarted under load (retriable errors, no hang, no loss, service back
 * without a restart of the broker).
 */
@ExtendWith(QuietSdkLogs.class)
class PostgresStorageProcessTest {

    private static final String QUEUE = "pg-queue";
    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  { "Name": "sbemulatorns", "Queues": [ { "Name": "pg-queue", "Properties": { "LockDuration": "PT30S",
                    "MaxDeliveryCount": 100 } } ] }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;

    private static BrokerProcess broker(String storage, String node, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("--storage", storage, "--node-id", node, "--lease-seconds",
                "2", "--shards", "2"));
        args.addAll(List.of(more));
        return BrokerProcess.builder().config(CONFIG).args(args.toArray(new String[0])).start();
    }

    private static ServiceBusClientBuilder client(BrokerProcess b) {
        return SdkQueues.noRetries(b);
    }

    private static Set<String> sendAll(ServiceBusSenderClient sender, String prefix, int n) {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < n; i++) {
            String id = prefix + "-" + i;
            sender.sendMessage(new ServiceBusMessage("body-" + id).setMessageId(id));
            ids.add(id);
        }
        return ids;
    }

    /** Receives and completes until the queue stays empty; returns every message id received, duplicates kept. */
    private static List<String> drain(BrokerProcess b) {
        return SdkQueues.drain(client(b), QUEUE);
    }

    private static int health(BrokerProcess b) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(b.baseUrl() + "/health")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        return r.statusCode();
    }

    private static void signal(BrokerProcess b, String sig) throws Exception {
        Process p = new ProcessBuilder("kill", "-" + sig, String.valueOf(b.pid())).inheritIO().start();
        assertThat(p.waitFor()).isZero();
    }

    @Test
    void aBrokerWhoseShardsWereTakenOverStopsServingThemAndNothingAcknowledgedIsLost() throws Exception {
        String storage = TestPostgres.storageUrl(TestPostgres.sharedOrSkip().newDatabase());
        try (BrokerProcess a = broker(storage, "node-a")) {
            Set<String> acked = new HashSet<>();
            try (ServiceBusSenderClient s = client(a).sender().queueName(QUEUE).buildClient()) {
                acked.addAll(sendAll(s, "a", 50));
            }
            signal(a, "STOP"); // node A still believes it owns its shards, but renews nothing
            try (BrokerProcess b = broker(storage, "node-b")) { // takes the shards once A's lease ran out
                try (ServiceBusSenderClient s = client(b).sender().queueName(QUEUE).buildClient()) {
                    acked.addAll(sendAll(s, "b", 50));
                }
                signal(a, "CONT");
                Set<String> refusedByA = new HashSet<>();
                try (ServiceBusSenderClient s = client(a).sender().queueName(QUEUE).buildClient()) {
                    for (int i = 0; i < 5; i++) {
                        String id = "a-late-" + i;
                        assertThatThrownBy(() -> s.sendMessage(new ServiceBusMessage("late").setMessageId(id)))
                                .isInstanceOf(ServiceBusException.class)
                                .satisfies(e -> assertThat(amqpCause(e).getErrorCondition())
                                        .isEqualTo(AmqpErrorCondition.SERVER_BUSY_ERROR))
                                .satisfies(e -> assertThat(amqpCause(e).isTransient()).isTrue());
                        refusedByA.add(id);
                    }
                }
                assertThat(health(a)).isEqualTo(503);
                assertThat(a.log()).contains("was taken over by node 'node-b'");
                List<String> received = drain(b);
                assertThat(received).doesNotHaveDuplicates();
                assertThat(new HashSet<>(received)).isEqualTo(acked);
                assertThat(received).doesNotContainAnyElementsOf(refusedByA);
            } finally {
                signal(a, "CONT");
            }
        }
    }

    @Test
    void theDatabaseStoppedUnderLoadGivesRetriableErrorsThenServiceResumesWithNothingLost() throws Exception {
        TestPostgres.assumeAvailable();
        try (TestPostgres pg = TestPostgres.startPrivate();
             BrokerProcess b = broker(TestPostgres.storageUrl(pg.newDatabase()), "node-a")) {
            Set<String> acked = ConcurrentHashMap.newKeySet();
            AtomicLong failures = new AtomicLong();
            AtomicLong longestSendMs = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> senders = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                String prefix = "t" + t;
                Thread th = new Thread(() -> {
                    try (ServiceBusSenderClient s = client(b).sender().queueName(QUEUE).buildClient()) {
                        for (int i = 0; !stop.get(); i++) {
                            String id = prefix + "-" + i;
                            long start = System.nanoTime();
                            try {
                                s.sendMessage(new ServiceBusMessage("body-" + id).setMessageId(id));
                                acked.add(id);
                            } catch (RuntimeException e) {
                                failures.incrementAndGet();
                                sleepQuietly(100);
                            }
                            longestSendMs.accumulateAndGet((System.nanoTime() - start) / 1_000_000, Math::max);
                        }
                    }
                }, "sender-" + t);
                th.start();
                senders.add(th);
            }
            waitFor(() -> acked.size() >= 100, Duration.ofSeconds(60), "sends before the outage");
            pg.stop();
            long failuresBefore = failures.get();
            waitFor(() -> failures.get() > failuresBefore + 5, Duration.ofSeconds(60), "retriable send failures");
            waitFor(() -> healthQuietly(b) == 503, Duration.ofSeconds(30), "/health 503 while the database is down");
            int ackedDuringOutage = acked.size();
            Thread.sleep(3000);
            pg.restart();
            waitFor(() -> acked.size() > ackedDuringOutage + 100, Duration.ofSeconds(60), "sends after the outage");
            waitFor(() -> healthQuietly(b) == 200, Duration.ofSeconds(30), "/health 200 again");
            stop.set(true);
            for (Thread th : senders) {
                th.join(60_000);
                assertThat(th.isAlive()).as("a sender hung").isFalse();
            }
            assertThat(longestSendMs.get()).as("longest send (ms)").isLessThan(30_000);
            List<String> received = drain(b);
            assertThat(received).doesNotHaveDuplicates();
            assertThat(new HashSet<>(received)).containsAll(acked);
        }
    }

    /** The AMQP error behind an SDK exception (the SDK wraps it once its retries are exhausted). */
    private static AmqpException amqpCause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof AmqpException a) {
                return a;
            }
        }
        throw new AssertionError("no AmqpException behind " + e, e);
    }

    private static int healthQuietly(BrokerProcess b) {
        try {
            return health(b);
        } catch (Exception e) {
            return -1;
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition, Duration max, String what) {
        await().atMost(max).pollInterval(Duration.ofMillis(50)).alias(what).until(condition::getAsBoolean);
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
