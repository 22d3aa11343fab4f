package io.buslane.engine;

import io.buslane.engine.namespace.Namespace;
import io.buslane.engine.owner.OwnerSide;
import io.buslane.engine.remote.RemotePartitions;
import io.buslane.engine.routing.PartitionDirectory;

/**
 * Cluster mode's controls of one engine ({@link Engine#cluster()}): which shards this node serves (its cluster
 * controller decides), the namespace changes other nodes made, the port to the other nodes and the owner's entry
 * point for what they carry here. Outside cluster mode they change nothing: a single node serves every shard and
 * {@link #refreshNamespace} finds nothing to read.
 */
public final class EngineCluster {

    private final ShardOwnership ownership;
    private final Namespace namespace;
    private final PartitionDirectory directory;
    private final OwnerSide ownerSide;

    EngineCluster(ShardOwnership ownership, Namespace namespace, PartitionDirectory directory, OwnerSide ownerSide) {
        this.ownership = ownership;
        this.namespace = namespace;
        this.directory = directory;
        this.ownerSide = ownerSide;
    }

    /**
     * Applies the namespace changes other nodes made since this node last looked (entities, rules); returns whether
     * there were any. Cheap when there were none (one read of the journal's position).
     */
    public boolean refreshNamespace() {
        return namespace.refresh();
    }

    /** True when this node serves shard {@code index}. */
    public boolean servesShard(int index) {
        return ownership.serves(index);
    }

    /**
     * Starts serving shard {@code index} (this node takes it): opens its journal (which, on a shared database, waits
     * until no other node's lease on it runs and then fences that node out), builds its partitions anew, replays the
     * journal into them and starts the shard. Blocking: call it off the shard and I/O threads. Does nothing when the
     * shard is served already.
     */
    public void serveShard(int index) {
        ownership.serve(index);
    }

    /**
     * Stops serving shard {@code index} (the shard moves to another node, or another node took it over): its
     * receivers are closed and its waiting session accepts fail with SERVER_BUSY (the SDKs retry), message and
     * session locks on it are dropped, commands still queued run a last time, then the shard stops and its journal
     * is closed (giving its lease back, when it is still this node's). Later commands fail with SERVER_BUSY until it
     * is served again. Blocking. Does nothing when the shard is not served.
     *
     * @param why a sentence for the log and for the receivers' error
     */
    public void stopServingShard(int index, String why) {
        ownership.stop(index, why);
    }

    /**
     * The other nodes, where unary operations on partitions of shards this node does not serve go (sends, schedule
     * and cancel, settlement, lock renewal, browse, counts, session state and lock, deferred receive). Null (the
     * default): such operations fail with SERVER_BUSY.
     */
    public void remotePartitions(RemotePartitions remote) {
        directory.remote(remote);
    }

    /**
     * The owner's side: where operations other nodes carried here run, on the partition each names, with the same
     * engine code as a local call ({@link OwnerSide}); a partition of a shard this node does not serve refuses with
     * SERVER_BUSY (an operation is never carried on to a third node).
     */
    public RemotePartitions.Owner ownerSide() {
        return ownerSide;
    }
}
