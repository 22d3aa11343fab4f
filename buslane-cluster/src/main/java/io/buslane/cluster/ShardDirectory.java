package io.buslane.cluster;

/**
 * Who serves which shard: the cluster controller's current view (in tests, a static map). Asked for every operation
 * this node carries to another, so a moved shard is followed at once.
 */
public interface ShardDirectory {

    /** The cluster address ({@code host:port}) of the node serving shard {@code shard}, or null when none is known. */
    String addressOf(int shard);
}
