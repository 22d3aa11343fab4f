package io.buslane.conformance;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import io.buslane.journal.postgres.TestPostgres;
import io.buslane.testsupport.BrokerProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The packaged broker on a highly available PostgreSQL: a primary with a synchronous standby (streaming
 * replication, {@code synchronous_commit=on}, {@code synchronous_standby_names='*'}), the broker given both through
 * a multi-host storage URL with {@code targetServerType=primary}. Under SDK load the primary's postmaster is killed
 * with SIGKILL and the standby promoted: every acknowledged send is still there afterwards, none is stored twice,
 * nothing completed comes back, and the broker serves again by itself (the time from the promotion to the next
 * acknowledged send is printed; docs/postgresql.md records it). Slow profile.
 */
@ExtendWith(QuietSdkLogs.class)
class PostgresFailoverTest {

    private static final String QUEUE = "ha-queue";
    private static final String CONFIG = """
            {
              "UserConfig": {
                "Namespaces": [
                  { "Name": "sbemulatorns", "Queues": [ { "Name": "ha-queue", "Properties": { "LockDuration": "PT30S",
                    "MaxDeliveryCount": 100 } } ] }
                ],
                "Logging": { "Type": "Console" }
              }
            }
            """;
    @BeforeAll
    static void needsPostgres() {
        TestPostgres.assumeAvailable();
    }

    private static ServiceBusClientBuilder client(BrokerProcess b) {
        return SdkQueues.noRetries(b);
    }

    @Test
    void aPrimaryKilledAndItsSynchronousStandbyPromotedLosesNothingAcknowledged() throws Exception {
        try (TestPostgres primary = TestPostgres.startPrivate()) {
            String database = primary.newDatabase();
            String name = database.substring(database.lastIndexOf('/') + 1, database.indexOf('?'));
            try (TestPostgres standby = TestPostgres.startStandbyOf(primary)) {
                primary.sql("ALTER SYSTEM SET synchronous_standby_names = '*'");
                primary.sql("SELECT pg_reload_conf()");
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                        .alias("the standby is synchronous")
                        .until(() -> primary.sql("SELECT string_agg(sync_state, ',') FROM pg_stat_replication")
                                .equals("sync"));
                String storage = "postgresql://buslane@127.0.0.1:" + primary.port() + ",127.0.0.1:" + standby.port()
                        + "/" + name + "?targetServerType=primary";
                try (BrokerProcess b = BrokerProcess.builder().config(CONFIG)
                        .args("--storage", storage, "--node-id", "ha-node", "--shards", "2").start()) {
                    failOverUnderLoad(b, primary, standby);
                }
            }
        }
    }

    private static void failOverUnderLoad(BrokerProcess b, TestPostgres primary, TestPostgres standby)
            throws Exception {
        Set<String> acked = ConcurrentHashMap.newKeySet();
        AtomicLong lastAckNs = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger failed = new AtomicInteger();
        Thread sender = new Thread(() -> {
            try (ServiceBusSenderClient s = client(b).sender().queueName(QUEUE).buildClient()) {
                int i = 0;
                while (!stop.get()) {
                    String id = "m-" + i;
                    try {
                        s.sendMessage(new ServiceBusMessage("body-" + id).setMessageId(id));
                        acked.add(id);
                        lastAckNs.set(System.nanoTime());
                        i++;
                    } catch (RuntimeException e) {
                        failed.incrementAndGet();
                        pause(100); // sent again, as an SDK retries: a send answered as failed was not stored
                    }
                }
            }
        }, "ha-sender");
        sender.start();
        await().atMost(Duration.ofSeconds(60)).until(() -> acked.size() >= 200);
        Set<String> completed = new HashSet<>();
        try (ServiceBusReceiverClient r = client(b).receiver().queueName(QUEUE).buildClient()) {
            for (ServiceBusReceivedMessage m : r.receiveMessages(100, Duration.ofSeconds(5))) {
                r.complete(m);
                completed.add(m.getMessageId());
            }
        }
        primary.kill();
        pause(3_000); // no primary for a while, as while a failover manager decides: sends wait or are refused
        standby.promote();
        long promotedNs = System.nanoTime();
        int ackedAtPromotion = acked.size();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).alias("sends after the failover")
                .until(() -> acked.size() > ackedAtPromotion && lastAckNs.get() > promotedNs);
        System.out.println("POSTGRESQL FAILOVER: the broker acknowledged a send again "
                + (lastAckNs.get() - promotedNs) / 1_000_000 + " ms after the standby's promotion (" + failed.get()
                + " sends refused meanwhile, each sent again)");
        await().atMost(Duration.ofSeconds(60)).until(() -> acked.size() > ackedAtPromotion + 100);
        stop.set(true);
        sender.join(60_000);
        assertThat(sender.isAlive()).as("the sender hung").isFalse();
        List<String> received = drain(b);
        assertThat(completed).as("completed before the failover").isNotEmpty();
        assertThat(received).as("stored once").doesNotHaveDuplicates();
        assertThat(received).as("completed, then received again").doesNotContainAnyElementsOf(completed);
        Set<String> all = new HashSet<>(received);
        all.addAll(completed);
        assertThat(all).as("every acknowledged send survives the failover").containsAll(acked);
    }

    /** Receives and completes until the queue stays empty; returns every message id received, duplicates kept. */
    private static List<String> drain(BrokerProcess b) {
        return SdkQueues.drain(client(b), QUEUE);
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
