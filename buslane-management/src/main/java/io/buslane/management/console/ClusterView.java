package io.buslane.management.console;

import java.util.List;
import java.util.Map;

/** What the console shows of a cluster (docs/cluster.md): this node, the live nodes, and who serves which shard. */
public interface ClusterView {

    /** This node's id. */
    String node();

    /** The live nodes, by id. */
    List<String> liveNodes();

    /** Shard index → the node serving it (a shard nobody serves now is absent). */
    Map<Integer, String> shardOwners();
}
