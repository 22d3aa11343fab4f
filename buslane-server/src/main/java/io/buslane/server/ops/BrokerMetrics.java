package io.buslane.server.ops;

import io.buslane.amqp.transport.AmqpStats;
import io.buslane.engine.Engine;
import io.buslane.engine.api.EngineStats;
import io.buslane.engine.api.ShardMonitor;
import io.buslane.engine.namespace.QueueEntity;
import io.buslane.engine.api.RuntimeCounts;
import io.buslane.engine.namespace.SubscriptionEntity;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.journal.file.SyncListener;
import io.buslane.server.cluster.ClusterNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * The broker's Prometheus metrics ({@code GET /metrics}). Micrometer lives only here: the engine, journal and AMQP
 * layer keep plain counters ({@link EngineStats}, {@link AmqpStats}, {@link SyncListener}) that this class reads
 * when scraped, so the hot paths pay one {@code LongAdder} increment. Per-entity message counts are gathered from the
 * shards at each scrape ({@link #scrape()}); entities deleted since the last scrape disappear from the output.
 */
public final class BrokerMetrics {

    /** The Prometheus text exposition format's content type. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final long SCRAPE_TIMEOUT_SECONDS = 10;
    /** Histogram buckets for a sync: a local SSD forces in 0.1 to 0.2 ms; a slow or busy disk takes milliseconds. */
    private static final Duration[] SYNC_BUCKETS = {
        Duration.ofNanos(50_000), Duration.ofNanos(100_000), Duration.ofNanos(250_000), Duration.ofNanos(500_000),
        Duration.ofMillis(1), Duration.ofNanos(2_500_000), Duration.ofMillis(5), Duration.ofMillis(10),
        Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
        Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500),
    };

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Timer journalSync;
    private final Counter journalSyncedRecords;
    private final MultiGauge active;
    private final MultiGauge scheduled;
    private final MultiGauge deadLetter;
    private final MultiGauge transfer;
    private final MultiGauge transferDeadLetter;
    private final MultiGauge sizeBytes;
    private volatile Engine engine;

    public BrokerMetrics() {
        journalSync = Timer.builder("buslane.journal.sync")
                .description("Time to write and force one group-commit batch of journal records to disk")
                .serviceLevelObjectives(SYNC_BUCKETS)
                .register(registry);
        journalSyncedRecords = Counter.builder("buslane.journal.synced.records")
                .description("Journal records made durable by syncs").register(registry);
        active = entityGauge("buslane.entity.active.messages", "Active messages (available, locked or deferred)",
                null);
        scheduled = entityGauge("buslane.entity.scheduled.messages", "Scheduled messages not yet activated", null);
        deadLetter = entityGauge("buslane.entity.dead.letter.messages", "Messages in the dead-letter queue", null);
        transfer = entityGauge("buslane.entity.transfer.messages", "Messages waiting to be forwarded", null);
        transferDeadLetter = entityGauge("buslane.entity.transfer.dead.letter.messages",
                "Messages in the transfer dead-letter queue", null);
        sizeBytes = entityGauge("buslane.entity.size", "Bytes of messages and session state held", "bytes");
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
    }

    private MultiGauge entityGauge(String name, String description, String baseUnit) {
        return MultiGauge.builder(name).description(description).baseUnit(baseUnit).register(registry);
    }

    /** Records every journal sync's duration (install on the journal factory before the engine opens journals). */
    public SyncListener journalSyncListener() {
        return (records, nanos) -> {
            journalSync.record(nanos, TimeUnit.NANOSECONDS);
            journalSyncedRecords.increment(records);
        };
    }

    /** Exposes the engine's counters and, at each scrape, its entities' message counts. */
    public void bindEngine(Engine e) {
        this.engine = e;
        EngineStats stats = e.stats();
        counter("buslane.messages.sent", "Messages accepted by send or schedule", stats, EngineStats::sent,
                Tags.empty());
        counter("buslane.messages.delivered", "Messages handed to receivers", stats, EngineStats::delivered,
                Tags.empty());
        for (EngineStats.Outcome o : EngineStats.Outcome.values()) {
            counter("buslane.messages.settled", "Locked messages settled, by outcome", stats, s -> s.settled(o),
                    Tags.of("outcome", o.name().toLowerCase(Locale.ROOT)));
        }
        ShardMonitor shards = e.shards();
        counter("buslane.lock.expiries", "Message locks that expired before settlement", shards,
                ShardMonitor::lockExpiries, Tags.empty());
        counter("buslane.engine.body.reads", "Message bodies read back from the journal (evicted from memory)",
                shards, ShardMonitor::messageBodyReads, Tags.empty());
        Gauge.builder("buslane.engine.queued.commands", shards, ShardMonitor::queuedCommands)
                .description("Commands waiting in the shard queues").register(registry);
        Gauge.builder("buslane.engine.resident.message", shards, ShardMonitor::residentMessageBytes).baseUnit("bytes")
                .description("Encoded message bodies held in the heap").register(registry);
        for (String type : List.of("queue", "topic", "subscription")) {
            Gauge.builder("buslane.entities", e, x -> entityCount(x, type)).tag("type", type)
                    .description("Entities in the namespace").register(registry);
        }
    }

    private static double entityCount(Engine e, String type) {
        return switch (type) {
            case "queue" -> e.queues().size();
            case "topic" -> e.topics().size();
            default -> e.topics().stream().mapToInt(t -> t.subscriptions().size()).sum();
        };
    }

    /** Exposes the AMQP listener's connection and link counters. */
    public void bindAmqp(AmqpStats stats, IntSupplier openConnections) {
        Gauge.builder("buslane.amqp.connections", openConnections, IntSupplier::getAsInt)
                .description("Open AMQP connections").strongReference(true).register(registry);
        counter("buslane.amqp.connections.opened", "AMQP connections accepted", stats, AmqpStats::connectionsOpened,
                Tags.empty());
        counter("buslane.amqp.connections.refused", "AMQP connections refused at the connection limit", stats,
                AmqpStats::connectionsRefused, Tags.empty());
        Gauge.builder("buslane.amqp.links", stats, AmqpStats::linksOpen)
                .description("Open AMQP links (senders, receivers, $cbs and $management)").register(registry);
        counter("buslane.amqp.links.opened", "AMQP links attached", stats, AmqpStats::linksOpened, Tags.empty());
    }

    /**
     * TLS: {@code buslane_tls_certificate_expiry_seconds}, the seconds until the certificate in use expires
     * (negative once it has), for an alert days ahead; the broker also logs a warning daily in its last 14 days.
     */
    public void bindTlsCertificate(LongSupplier notAfterMs) {
        Gauge.builder("buslane.tls.certificate.expiry", notAfterMs,
                        s -> (s.getAsLong() - System.currentTimeMillis()) / 1000.0)
                .baseUnit("seconds")
                .description("Seconds until the TLS certificate in use expires")
                .register(registry);
    }

    /** Cluster mode: the shards this node serves, the live nodes it sees and the shards it took or gave up. */
    public void bindCluster(ClusterNode node) {
        Gauge.builder("buslane.cluster.shards.served", node, n -> n.servedShards().size())
                .description("Shards this node serves").strongReference(true).register(registry);
        Gauge.builder("buslane.cluster.nodes.live", node, n -> n.liveNodes().size())
                .description("Live nodes of the cluster as this node last saw them").strongReference(true)
                .register(registry);
        counter("buslane.cluster.shard.moves", "Shards this node took or gave up", node,
                ClusterNode::moves, Tags.empty());
    }

    /** Event loops not answering now, and how often one was found so. */
    public void bindWatchdog(EventLoopWatchdog watchdog) {
        Gauge.builder("buslane.eventloop.blocked", watchdog, w -> w.blockedLoops().size())
                .description("Event loops that have not answered the watchdog within its threshold")
                .strongReference(true).register(registry);
        counter("buslane.eventloop.blocked.episodes", "Times an event loop was found not answering", watchdog,
                EventLoopWatchdog::blockedEpisodes, Tags.empty());
    }

    private <T> void counter(String name, String description, T obj, ToLongFunction<T> f, Tags tags) {
        FunctionCounter.builder(name, obj, x -> f.applyAsLong(x)).description(description).tags(tags)
                .register(registry);
    }

    /**
     * Refreshes the per-entity gauges from the shards and renders every metric in the Prometheus text format.
     * Blocks for the shards' answers (call it off the event loop).
     */
    public synchronized String scrape() {
        Engine e = engine;
        if (e != null) {
            refreshEntities(e);
        }
        return registry.scrape(CONTENT_TYPE);
    }

    /** One entity's counts; a topic holds only scheduled messages (its subscriptions hold the rest). */
    private record Row(Tags tags, boolean topic, CompletableFuture<RuntimeCounts> counts) {
    }

    private void refreshEntities(Engine e) {
        List<Row> rows = new ArrayList<>();
        for (QueueEntity q : e.queues()) {
            String path = q.properties().name();
            rows.add(new Row(Tags.of("entity", path, "type", "queue"), false, e.counts(path)));
        }
        for (TopicEntity t : e.topics()) {
            String path = t.properties().name();
            rows.add(new Row(Tags.of("entity", path, "type", "topic"), true, e.counts(path)));
            for (SubscriptionEntity s : t.subscriptions()) {
                String subPath = s.properties().path();
                rows.add(new Row(Tags.of("entity", subPath, "type", "subscription"), false, e.counts(subPath)));
            }
        }
        try {
            CompletableFuture.allOf(rows.stream().map(r -> r.counts().exceptionally(x -> null))
                    .toArray(CompletableFuture[]::new)).get(SCRAPE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (Exception ex) {
            if (ex instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // render what answered in time
        }
        List<MultiGauge.Row<?>> a = new ArrayList<>();
        List<MultiGauge.Row<?>> sc = new ArrayList<>();
        List<MultiGauge.Row<?>> dl = new ArrayList<>();
        List<MultiGauge.Row<?>> tr = new ArrayList<>();
        List<MultiGauge.Row<?>> tdl = new ArrayList<>();
        List<MultiGauge.Row<?>> sz = new ArrayList<>();
        for (Row r : rows) {
            RuntimeCounts c = r.counts().isDone() && !r.counts().isCompletedExceptionally() ? r.counts().join()
                    : null;
            if (c == null) {
                continue; // deleted during the scrape, or a shard too busy to answer
            }
            sc.add(MultiGauge.Row.of(r.tags(), c.scheduledMessageCount()));
            sz.add(MultiGauge.Row.of(r.tags(), c.sizeInBytes()));
            if (!r.topic()) {
                a.add(MultiGauge.Row.of(r.tags(), c.activeMessageCount()));
                dl.add(MultiGauge.Row.of(r.tags(), c.deadLetterMessageCount()));
                tr.add(MultiGauge.Row.of(r.tags(), c.transferMessageCount()));
                tdl.add(MultiGauge.Row.of(r.tags(), c.transferDeadLetterMessageCount()));
            }
        }
        active.register(a, true);
        scheduled.register(sc, true);
        deadLetter.register(dl, true);
        transfer.register(tr, true);
        transferDeadLetter.register(tdl, true);
        sizeBytes.register(sz, true);
    }

    /** The registry (tests and embedding). */
    public PrometheusMeterRegistry registry() {
        return registry;
    }
}
