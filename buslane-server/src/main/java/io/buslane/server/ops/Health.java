package io.buslane.server.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.buslane.common.time.Clock;
import io.buslane.engine.Engine;
import io.buslane.engine.namespace.TopicEntity;
import io.buslane.server.cluster.ClusterNode;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The broker's readiness as {@code GET /health} reports it: 200 with {@code "status":"healthy"} once the engine has
 * recovered and AMQP listens, 503 with {@code "status":"unhealthy"} while starting and from the moment shutdown
 * begins (the emulator's contract: tools wait for 200), and also 503 while a check reports a problem (a shard
 * thread that died, an event loop that stopped answering), named in {@code "problems"}. The body adds the lifecycle
 * state, ports, uptime and entity counts. Thread-safe.
 */
public final class Health {

    /** The broker's lifecycle. */
    public enum State {
        STARTING, READY, STOPPING
    }

    /** A status code and a JSON body. */
    public record Report(int status, String json) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Clock clock;
    private final long startedNs;
    private volatile State state = State.STARTING;
    private volatile Engine engine;
    private volatile int amqpPort = -1;
    private volatile int httpPort = -1;
    private final List<Supplier<List<String>>> checks = new CopyOnWriteArrayList<>();

    private volatile ClusterNode cluster;

    public Health(Clock clock) {
        this.clock = clock;
        this.startedNs = clock.monotonicNanos();
    }

    /** The broker is ready: the engine has recovered and both listeners are bound. */
    public void ready(Engine readyEngine, int readyAmqpPort, int readyHttpPort) {
        this.engine = readyEngine;
        this.amqpPort = readyAmqpPort;
        this.httpPort = readyHttpPort;
        this.state = State.READY;
    }

    /** Cluster mode: the node whose membership and shards the report shows. */
    public void cluster(ClusterNode node) {
        this.cluster = node;
    }

    /** Adds a check: each problem it reports makes health answer 503 and is listed in the body. */
    public void addCheck(Supplier<List<String>> check) {
        checks.add(check);
    }

    /** The problems the checks report now (empty when all is well). */
    public List<String> problems() {
        List<String> out = new ArrayList<>();
        for (Supplier<List<String>> c : checks) {
            out.addAll(c.get());
        }
        return out;
    }

    /** Shutdown has begun: health answers 503 from now on. */
    public void stopping() {
        this.state = State.STOPPING;
    }

    public State state() {
        return state;
    }

    public Report report() {
        State s = state;
        List<String> problems = s == State.READY ? problems() : List.of();
        boolean ok = s == State.READY && problems.isEmpty();
        ObjectNode body = JSON.createObjectNode();
        body.put("status", ok ? "healthy" : "unhealthy");
        body.put("state", s.name());
        if (!problems.isEmpty()) {
            ArrayNode list = body.putArray("problems");
            problems.forEach(list::add);
        }
        body.put("uptimeSeconds", (clock.monotonicNanos() - startedNs) / 1_000_000_000L);
        Engine e = engine;
        if (s == State.READY && e != null) {
            body.put("amqpPort", amqpPort);
            body.put("httpPort", httpPort);
            ObjectNode entities = body.putObject("entities");
            entities.put("queues", e.queues().size());
            entities.put("topics", e.topics().size());
            int subscriptions = 0;
            for (TopicEntity t : e.topics()) {
                subscriptions += t.subscriptions().size();
            }
            entities.put("subscriptions", subscriptions);
            ClusterNode c = cluster;
            if (c != null) {
                ObjectNode node = body.putObject("cluster");
                node.put("node", c.nodeId());
                ArrayNode live = node.putArray("liveNodes");
                c.liveNodes().forEach(live::add);
                ArrayNode served = node.putArray("servedShards");
                c.servedShards().forEach(served::add);
                node.put("shardCount", e.shardCount());
            }
        }
        return new Report(ok ? 200 : 503, body.toString());
    }
}
