package io.buslane.bench.broker;

import org.apache.activemq.artemis.api.core.QueueConfiguration;
import org.apache.activemq.artemis.api.core.RoutingType;
import org.apache.activemq.artemis.core.config.Configuration;
import org.apache.activemq.artemis.core.config.CoreAddressConfiguration;
import org.apache.activemq.artemis.core.config.impl.ConfigurationImpl;
import org.apache.activemq.artemis.core.server.JournalType;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;
import org.apache.activemq.artemis.core.settings.impl.AddressSettings;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * The benchmark's peer: Apache Artemis embedded in its own JVM. Durable, NIO journal, every journal write synced
 * (transactional and non-transactional), the journal buffer timeout given on the command line (measured on this
 * disk by {@link DiskSync}, as {@code artemis create} does), one AMQP acceptor on loopback, security and the audit
 * log off (slf4j-simple at WARN), auto-created addresses ANYCAST so that a receiver on a queue name shares it with
 * the sender. The fan-out address {@value #TOPIC} is a MULTICAST address with the queues {@code s1..s4}, received
 * as {@code bench-topic::s1} (fully qualified queue names).
 *
 * <p>Usage: {@code ArtemisMain <amqp-port> <data-dir> <journal-buffer-timeout-ns>}. Prints {@value #READY} once
 * started; stops cleanly on SIGTERM.
 */
public final class ArtemisMain {

    static final String READY = "ARTEMIS-READY";
    static final String TOPIC = "bench-topic";
    static final int SUBSCRIPTIONS = 4;

    private ArtemisMain() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        Path dir = Path.of(args[1]);
        int bufferTimeoutNs = Integer.parseInt(args[2]);

        Configuration config = new ConfigurationImpl();
        config.setName("bench-artemis");
        config.setPersistenceEnabled(true);
        config.setSecurityEnabled(false);
        config.setJournalType(JournalType.NIO);
        config.setJournalDirectory(dir.resolve("journal").toString());
        config.setBindingsDirectory(dir.resolve("bindings").toString());
        config.setPagingDirectory(dir.resolve("paging").toString());
        config.setLargeMessagesDirectory(dir.resolve("large-messages").toString());
        config.setNodeManagerLockDirectory(dir.toString());
        config.setJournalSyncTransactional(true);
        config.setJournalSyncNonTransactional(true);
        config.setJournalBufferTimeout_NIO(bufferTimeoutNs);
        config.setJMXManagementEnabled(false);
        config.addAcceptorConfiguration("amqp", "tcp://127.0.0.1:" + port + "?protocols=AMQP");

        AddressSettings settings = new AddressSettings()
                .setDefaultAddressRoutingType(RoutingType.ANYCAST)
                .setDefaultQueueRoutingType(RoutingType.ANYCAST)
                .setAutoCreateAddresses(true)
                .setAutoCreateQueues(true);
        config.addAddressSetting("#", settings);

        CoreAddressConfiguration topic = new CoreAddressConfiguration().setName(TOPIC)
                .addRoutingType(RoutingType.MULTICAST);
        for (int i = 1; i <= SUBSCRIPTIONS; i++) {
            topic.addQueueConfiguration(QueueConfiguration.of("s" + i).setAddress(TOPIC)
                    .setRoutingType(RoutingType.MULTICAST).setDurable(true));
        }
        config.addAddressConfiguration(topic);

        EmbeddedActiveMQ server = new EmbeddedActiveMQ();
        server.setConfiguration(config);
        server.start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.stop();
            } catch (Exception e) {
                e.printStackTrace();
            }
            stopped.countDown();
        }));
        System.out.println(READY);
        System.out.flush();
        stopped.await();
    }
}
