package io.buslane.engine.namespace;

import io.buslane.engine.shard.Shard;

/**
 * Which shard owns partition {@code partitionIndex} of entity {@code entityId}: asked once, when the partition is
 * made (created or recovered). Implemented by the routing layer's partition directory, which owns the placement
 * hash; the namespace only builds entities on the shards it is told.
 */
@FunctionalInterface
public interface ShardPlacement {

    Shard shardOf(long entityId, int partitionIndex);
}
