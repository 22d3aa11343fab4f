package io.buslane.engine.routing;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.message.Message;
import io.buslane.engine.namespace.PartitionRef;
import io.buslane.engine.namespace.ShardPlacement;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.SequenceCounter;
import io.buslane.engine.shard.Shard;
import io.buslane.engine.remote.PartitionOp;
import io.buslane.engine.remote.RemotePartitions;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Where things live: entity and partition index → shard (the placement hash), and partition key, SessionId,
 * MessageId, lock token or sequence number → partition (the stable key hash and the partition index that tokens
 * and sequence numbers carry). Every "which partition, which shard?" of the engine is answered here.
 *
 * <p>It is cluster mode's seam: an operation on a partition of a shard this node serves runs on that shard; one on
 * a shard another node serves goes to {@link RemotePartitions} ({@code engine.remote}), and without one it is
 * refused with SERVER_BUSY.
 */
public final class PartitionDirectory implements ShardPlacement {

    private final Shard[] shards;
    /** The other nodes (cluster mode), or null. */
    private volatile RemotePartitions remote;

    public PartitionDirectory(Shard[] shards) {
        this.shards = shards;
    }

    /** Cluster mode: where operations on partitions of shards this node does not serve go (null: refused). */
    public void remote(RemotePartitions remotePartitions) {
        this.remote = remotePartitions;
    }

    /** Cluster mode: the channel to the other nodes, or null. */
    public RemotePartitions remote() {
        return remote;
    }

    /**
     * The one "is it served here?" of the engine's routing: whether an operation on a partition of {@code shard}
     * runs on this node. True when this node serves the shard, and whenever there is no channel to other nodes
     * (outside cluster mode every shard is served; a dormant shard without a channel refuses with SERVER_BUSY
     * itself). False only in cluster mode for a shard another node serves: the operation goes there.
     */
    public boolean servedHere(Shard shard) {
        return remote == null || shard.serving();
    }

    /**
     * Runs {@code local} on the partition's shard when this node serves it (or outside cluster mode), else runs the
     * operation {@code op} describes on the node that serves it.
     */
    public <T> CompletableFuture<T> call(PartitionRef ref, Supplier<? extends PartitionOp<T>> op, Supplier<T> local) {
        return call(ref, op, local, null, 0);
    }

    /** As above; a local call adds {@code count} to {@code counter} once durable (the owner counts a remote one). */
    public <T> CompletableFuture<T> call(PartitionRef ref, Supplier<? extends PartitionOp<T>> op, Supplier<T> local,
                                         LongAdder counter, long count) {
        RemotePartitions r = remote;
        if (r == null || ref.shard().serving()) { // servedHere, with the channel read once
            return ref.shard().call(local, counter, count);
        }
        return r.call(ref.shard().index(), op.get());
    }

    /** As {@link PartitionRef#onAll}, each partition local or remote as {@link #call} decides. */
    public <T> CompletableFuture<List<T>> onAll(PartitionRef[] refs, IntFunction<? extends PartitionOp<T>> op,
                                                Function<Partition, T>
                                                        action) {
        List<CompletableFuture<T>> all = new ArrayList<>(refs.length);
        for (int i = 0; i < refs.length; i++) {
            PartitionRef ref = refs[i];
            int index = i;
            all.add(call(ref, () -> op.apply(index), () -> action.apply(ref.partition())));
        }
        return CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).thenApply(x -> {
            List<T> out = new ArrayList<>(all.size());
            for (CompletableFuture<T> f : all) {
                out.add(f.join());
            }
            return out;
        });
    }

    public int shardCount() {
        return shards.length;
    }

    /** The shard of a partition: a 64-bit mix of entity id and partition index, stable for a data directory. */
    @Override
    public Shard shardOf(long entityId, int partitionIndex) {
        long h = entityId * 31 + partitionIndex;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return shards[(int) Math.floorMod(h, (long) shards.length)];
    }

    /**
     * The partition a message goes to: by SessionId, else PartitionKey, else ViaPartitionKey (the .NET SDK's
     * TransactionPartitionKey: a message that has only that one lands where a transaction through this entity with
     * that key will look for it, as on the service), else MessageId when duplicate detection is on; otherwise
     * {@code unkeyed} (round-robin, chosen once per send so a batch stays together).
     */
    public static int partitionIndexFor(Message m, boolean dedup, int partitions, int unkeyed) {
        if (partitions == 1) {
            return 0;
        }
        String key = m.sessionId() != null ? m.sessionId() : m.partitionKey();
        if (key == null) {
            key = m.viaPartitionKey(); // a TransactionPartitionKey alone places the message as a PartitionKey would
        }
        if (key == null && dedup && m.messageId() != null) {
            key = m.messageId().toString();
        }
        if (key == null) {
            return unkeyed;
        }
        return Math.floorMod(stableHash(key), partitions);
    }

    /** FNV-1a over the key's UTF-16 code units: stable across processes and versions. */
    public static int stableHash(String key) {
        int h = 0x811C9DC5;
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            h = (h ^ (c & 0xff)) * 0x01000193;
            h = (h ^ (c >>> 8)) * 0x01000193;
        }
        return h;
    }

    /** The partition of an unkeyed send: the next of the entity's round robin. */
    public int unkeyedPartition(SendTarget target) {
        int n = target.partitions().length;
        return n == 1 ? 0 : Math.floorMod(target.roundRobin().getAndIncrement(), n);
    }

    /** The partition that holds a session. */
    public PartitionRef forSession(PartitionRef[] refs, String sessionId) {
        return refs[refs.length == 1 ? 0 : Math.floorMod(stableHash(sessionId), refs.length)];
    }

    /**
     * The partition a forwarded message goes to: by its own keys, else by the transfer key, so that a re-forward
     * after a crash reaches the partition that remembers the key.
     */
    public PartitionRef forTransfer(SendTarget target, Message m, String transferKey) {
        int n = target.partitions().length;
        return target.partitions()[partitionIndexFor(m, target.dedup(), n, Math.floorMod(stableHash(transferKey), n))];
    }

    /** The partition a lock token was issued by (its lowest 16 bits); MESSAGE_LOCK_LOST when it names none. */
    public PartitionRef forLockToken(PartitionRef[] refs, UUID lockToken) {
        int p = lockToken == null ? Integer.MAX_VALUE : Shard.partitionOfLockToken(lockToken);
        if (p >= refs.length) {
            throw new BrokerException(ErrorKind.MESSAGE_LOCK_LOST, "The lock supplied is invalid.");
        }
        return refs[p];
    }

    /** The partition that assigned a sequence number (its top 16 bits on partitioned entities). */
    public PartitionRef forSequence(PartitionRef[] refs, boolean partitioned, long seq) {
        if (!partitioned) {
            return refs[0];
        }
        int p = SequenceCounter.partitionOf(seq);
        if (p >= refs.length) {
            throw new BrokerException(ErrorKind.MESSAGE_NOT_FOUND, "No message with sequence number " + seq
                    + " exists.");
        }
        return refs[p];
    }
}
