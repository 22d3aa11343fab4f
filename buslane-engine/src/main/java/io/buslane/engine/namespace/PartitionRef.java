package io.buslane.engine.namespace;

import io.buslane.engine.partition.Partition;
import io.buslane.engine.shard.Shard;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * A partition and the shard that owns it. The reference may be held by any thread; the partition itself is
 * touched only by commands submitted to the shard.
 */
public record PartitionRef(Shard shard, Partition partition) {

    /** The index of the shard holding this partition (what front ends show; they never touch the shard). */
    public int shardIndex() {
        return shard.index();
    }

    /** Runs {@code action} on every partition (each on its shard); completes with the results in partition order. */
    public static <T> CompletableFuture<List<T>> onAll(PartitionRef[] refs, Function<Partition, T> action) {
        List<CompletableFuture<T>> all = new ArrayList<>(refs.length);
        for (PartitionRef ref : refs) {
            all.add(ref.shard().call(() -> action.apply(ref.partition())));
        }
        return CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).thenApply(x -> {
            List<T> out = new ArrayList<>(all.size());
            for (CompletableFuture<T> f : all) {
                out.add(f.join());
            }
            return out;
        });
    }

    /**
     * As {@link #onAll}, on the partitions whose shard this node serves (all of them outside cluster mode): how an
     * entity change reaches the partitions. The others are built anew from the entity's description when this node
     * takes their shard.
     */
    public static <T> CompletableFuture<List<T>> onServing(PartitionRef[] refs, Function<Partition, T> action) {
        List<PartitionRef> serving = new ArrayList<>(refs.length);
        for (PartitionRef ref : refs) {
            if (ref.shard().serving()) {
                serving.add(ref);
            }
        }
        return onAll(serving.toArray(new PartitionRef[0]), action);
    }
}
