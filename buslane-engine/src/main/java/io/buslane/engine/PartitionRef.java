package io.buslane.engine;

import io.buslane.engine.partition.Partition;
import io.buslane.engine.shard.Shard;

/**
 * A partition and the shard that owns it. The reference may be held by any thread; the partition itself is
 * touched only by commands submitted to the shard.
 */
record PartitionRef(Shard shard, Partition partition) {
}
