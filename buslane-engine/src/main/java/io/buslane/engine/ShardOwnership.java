package io.buslane.engine;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.shard.Shard;
import io.buslane.engine.shard.Shards;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.function.IntPredicate;

/**
 * Cluster mode: which shards this node serves, changed at run time by the node's cluster controller through
 * {@link EngineCluster#serveShard} and {@link EngineCluster#stopServingShard}. A shard another node serves is a dormant
 * placeholder ({@link Shard#dormant}: no journal, no thread, every command refused with SERVER_BUSY); serving it
 * swaps in a shard with its journal and partitions built anew, stopping swaps the placeholder back.
 */
final class ShardOwnership {

    private static final Logger LOG = LoggerFactory.getLogger(ShardOwnership.class);

    private final EngineConfig config;
    private final Shards shards;
    private final Namespace namespace;
    /** Serialises taking and giving up shards. */
    private final Object lock = new Object();
    private volatile boolean closed;

    ShardOwnership(EngineConfig config, Shards shards, Namespace namespace) {
        this.config = config;
        this.shards = shards;
        this.namespace = namespace;
    }

    /** The refusal of a shard this node does not serve. */
    static String notServedHere(int shard) {
        return "Shard " + shard + " is not served by this node now (it is served by another node of the cluster, "
                + "or moving). Retry later.";
    }

    /**
     * The shards of an engine starting on a namespace that recorded {@code recordedShardCount} shards (0: a new
     * one, which gets the configured count; a recorded count wins): those {@code servedAtStart} accepts with their
     * journals opened, the others dormant.
     */
    static Shard[] open(EngineConfig config, int recordedShardCount, IntPredicate servedAtStart) {
        int shardCount = recordedShardCount > 0 ? recordedShardCount : config.shardCount();
        if (recordedShardCount > 0 && recordedShardCount != config.shardCount()) {
            LOG.warn("The data directory was created with {} shards; using {} (configured {}).",
                    recordedShardCount, recordedShardCount, config.shardCount());
        }
        Shard[] shards = new Shard[shardCount];
        for (int i = 0; i < shardCount; i++) {
            shards[i] = servedAtStart.test(i) ? serving(config, i) : dormant(config, i);
        }
        return shards;
    }

    /** A shard that serves: its journal opened (and, in cluster mode, its lease taken), not yet replayed. */
    static Shard serving(EngineConfig config, int index) {
        return new Shard(index, config.clock(), config.storage().openShard(index, config.residentBytesPerShard()),
                config.dedupHeapBytesPerWindow(), config.sessionStateBytesPerShard());
    }

    /** The placeholder of shard {@code index} while another node serves it. */
    static Shard dormant(EngineConfig config, int index) {
        return Shard.dormant(index, config.clock(), config.dedupHeapBytesPerWindow(), notServedHere(index));
    }

    boolean serves(int index) {
        return shards.get(index).serving();
    }

    /** From now on no shard is taken or given up (the engine closes). */
    void close() {
        closed = true;
    }

    /** See {@link EngineCluster#serveShard}. */
    void serve(int index) {
        synchronized (lock) {
            if (closed || serves(index)) {
                return;
            }
        }
        // opened outside the lock: taking a journal can wait on its lease or on the database, and giving other
        // shards up (the self-fence) must not wait for that
        Shard shard = serving(config, index);
        synchronized (lock) {
            if (closed || serves(index)) {
                shard.journal().close();
                return;
            }
            shard.onFatal(shards.fatalListener());
            try {
                namespace.replaceShard(shards.all(), shard);
            } catch (RuntimeException e) {
                // the replay failed (the database stalled, say): the slot gets its placeholder back and the journal
                // is closed (its lease given back), so that the shard is taken again later, here or elsewhere,
                // instead of looking served with no thread running it
                namespace.replaceShard(shards.all(), dormant(config, index));
                shard.journal().close();
                throw e;
            }
            if (config.threadingMode() == ThreadingMode.DEDICATED) {
                shard.start();
            }
            LOG.info("Serving shard {}", index);
        }
    }

    /** See {@link EngineCluster#stopServingShard}. */
    void stop(int index, String why) {
        Shard old;
        List<PartitionRef> refs;
        synchronized (lock) { // only the swap: shards given up together stop in parallel
            if (closed || !serves(index)) {
                return;
            }
            old = shards.get(index);
            refs = namespace.replaceShard(shards.all(), dormant(config, index));
        }
        BrokerException error = new BrokerException(ErrorKind.SERVER_BUSY, why + " " + notServedHere(index));
        old.retire(notServedHere(index), () -> {
            for (PartitionRef ref : refs) {
                ref.partition().stopServing(error);
            }
        });
        old.journal().close();
        LOG.info("Stopped serving shard {}: {}", index, why);
    }
}
