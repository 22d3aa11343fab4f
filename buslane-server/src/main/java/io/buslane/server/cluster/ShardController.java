package io.buslane.server.cluster;

import io.buslane.journal.JournalException;
import io.buslane.journal.postgres.PostgresOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Decides which shards this node serves in a cluster, one round at a time ({@link #tick}): it heartbeats its
 * membership row, places every shard on the live nodes by {@link Rendezvous} hashing, takes the shards placed on it
 * once nobody else's lease on them runs (a dead node's lease runs out; a live node gives a shard up when it sees the
 * new placement), and gives up the shards placed elsewhere. Safety never depends on this class: a shard's journal
 * is fenced by its epoch (see docs/postgresql.md). What it adds is liveness, and one more safety margin: a node cut
 * off from the database stops serving its shards before its leases can have run out, so no two nodes ever serve one
 * shard, even for reads (deliveries from memory) that no fence would stop.
 */
public final class ShardController {

    private static final Logger LOG = LoggerFactory.getLogger(ShardController.class);

    /** The engine as the controller sees it. */
    public interface Host {
        int shardCount();

        boolean serves(int shard);

        /** Takes the shard: opens its journal (fencing any earlier owner), replays it, serves it. Blocking. */
        void serve(int shard);

        /** Stops serving the shard and gives its lease back when it still holds it. Blocking. */
        void stopServing(int shard, String why);
    }

    /** Membership and leases in the database (PostgresMembership and PostgresJournalFactory in production). */
    public interface Members {
        /** Records this node's heartbeat; returns the live node ids. Throws when the database does not answer. */
        List<String> heartbeat();

        /** Journal name → the node holding a live lease on it (journals without a live lease are absent). */
        Map<String, String> liveLeases();

        /** Marks this node as leaving. */
        void leave();

        /** When the last successful renewal of this node's leases started ({@link System#nanoTime()} scale). */
        long leasesSecuredAtNanos();

        /** The journals this node holds and was not fenced out of. */
        Set<String> ownedJournals();
    }

    private final String nodeId;
    private final long leaseNs;
    private final Members members;
    private final Host host;
    private final LongSupplier nanoTime;
    private volatile List<String> liveNodes = List.of();
    private final AtomicLong moves = new AtomicLong();
    /** Why each shard placed here was last not taken (its round's thread only): a refusal is logged once. */
    private final Map<Integer, String> notTakenBecause = new HashMap<>();
    private boolean left;
    /** Why this node serves nothing for good: another process took its node id over (null while it does not). */
    private volatile String displaced;

    public ShardController(String nodeId, Duration lease, Members members, Host host, LongSupplier nanoTime) {
        this.nodeId = nodeId;
        this.leaseNs = lease.toNanos();
        this.members = members;
        this.host = host;
        this.nanoTime = nanoTime;
    }

    /** How often {@link #tick} should run: often enough to notice a lost lease well before it runs out. */
    public static Duration period(Duration lease) {
        return Duration.ofMillis(Math.max(100, lease.toMillis() / 10));
    }

    public static String journalOf(int shard) {
        return "shard-" + shard;
    }

    /** The live nodes as of the last round. */
    public List<String> liveNodes() {
        return liveNodes;
    }

    /** Shards taken or given up since start. */
    public long moves() {
        return moves.get();
    }

    /**
     * The self-fence, on its own timer ({@link ClusterNode} runs it every {@link #period}): stops serving every
     * shard once this node's leases may run out before it could renew them. It makes no database call and never
     * waits for a round (which may be stuck on a silent database for as long as its timeouts allow), so a node cut
     * off from its database stops in time whatever its other threads are doing. (The shards themselves already
     * deliver nothing on a lease that may have passed: {@code Journal.leaseHeld}.) Never throws.
     */
    public void fenceIfCutOff() {
        try {
            fenceIfLeasesMayRunOut("its leases were not renewed in time");
        } catch (RuntimeException e) {
            LOG.warn("Cluster self-fence check failed: {}", e.toString());
        }
    }

    /**
     * Whether this node's leases may run out before it could renew them (the self-fence's condition): nothing
     * should then wait on the database while holding what giving shards up needs.
     */
    public boolean cutOff() {
        return nanoTime.getAsLong() - members.leasesSecuredAtNanos() > leaseNs * PostgresOptions.SAFE_LEASE_PERCENT
                / 100;
    }

    /** One round: heartbeat, then take and give up shards. Never throws. */
    public synchronized void tick() {
        if (left) {
            return;
        }
        try {
            round();
        } catch (RuntimeException e) {
            LOG.warn("Cluster round failed: {}", e.toString());
            fenceIfLeasesMayRunOut("the database does not answer (" + e.getMessage() + ")");
        }
    }

    private void round() {
        List<String> live;
        try {
            live = members.heartbeat();
        } catch (JournalException e) {
            if (e.reason() == JournalException.Reason.FENCED) {
                displace(e.getMessage());
                return;
            }
            throw e;
        }
        if (fenceIfLeasesMayRunOut("its leases could not be renewed")) {
            return;
        }
        List<String> nodes = new ArrayList<>(live);
        if (!nodes.contains(nodeId)) {
            nodes.add(nodeId);
        }
        liveNodes = List.copyOf(new TreeSet<>(nodes));
        Set<String> owned = members.ownedJournals();
        Map<String, String> leases = null;
        for (int k = 0; k < host.shardCount(); k++) {
            String placed = Rendezvous.owner(k, nodes);
            boolean serving = host.serves(k);
            if (serving && !owned.contains(journalOf(k))) {
                giveUp(k, "Another node took the shard over.");
            } else if (serving && !nodeId.equals(placed)) {
                giveUp(k, "The shard moves to node '" + placed + "'.");
            } else if (!serving && nodeId.equals(placed)) {
                if (leases == null) {
                    leases = members.liveLeases();
                }
                String holder = leases.get(journalOf(k));
                if (holder == null || holder.equals(nodeId)) {
                    take(k);
                }
            }
        }
    }

    /**
     * Takes a shard placed here whose lease looked free; a take that cannot happen now (another node renewed the
     * lease meanwhile, or the database failed) is left for the next round, with fresh membership, and the round
     * goes on with the other shards.
     */
    private void take(int shard) {
        try {
            host.serve(shard);
            moves.incrementAndGet();
            notTakenBecause.remove(shard);
        } catch (JournalException e) {
            if (e.reason() == JournalException.Reason.LEASED) {
                // said once per reason: the same refusal comes every round (a tenth of a lease) until it clears
                String reason = e.getMessage().replaceAll("\\d+ ms", "N ms");
                if (!reason.equals(notTakenBecause.put(shard, reason))) {
                    LOG.info("Shard {} not taken now, tried again each round: {}", shard, e.getMessage());
                } else {
                    LOG.debug("Shard {} not taken now: {}", shard, e.getMessage());
                }
            } else {
                LOG.warn("Shard {} could not be taken, tried again next round: {}", shard, e.toString());
            }
        } catch (RuntimeException e) {
            LOG.warn("Shard {} could not be taken, tried again next round", shard, e);
        }
    }

    private void giveUp(int shard, String why) {
        host.stopServing(shard, why);
        moves.incrementAndGet();
    }

    /**
     * Stops serving every shard when this node's leases may run out before it could renew them: the last renewal
     * that succeeded started more than {@link PostgresOptions#SAFE_LEASE_PERCENT} % of a lease ago (renewals run
     * every third of a lease). Runs on the round's thread and on the self-fence's timer, never holding the round's
     * monitor.
     */
    private boolean fenceIfLeasesMayRunOut(String why) {
        if (!cutOff()) {
            return false;
        }
        long age = nanoTime.getAsLong() - members.leasesSecuredAtNanos();
        List<Thread> stopping = new ArrayList<>();
        for (int k = 0; k < host.shardCount(); k++) {
            if (host.serves(k)) {
                if (stopping.isEmpty()) {
                    LOG.error("Node '{}' stops serving its shards: {}; its last lease renewal started {} ms ago, "
                            + "and another node may take them over once they run out", nodeId, why, age / 1_000_000);
                }
                // all at once: a shard's last cycle may wait on the unreachable database, the lease does not wait
                int shard = k;
                Thread t = new Thread(() -> giveUp(shard, "This node is cut off from the database."),
                        "buslane-fence-" + k);
                t.start();
                stopping.add(t);
            }
        }
        for (Thread t : stopping) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return true;
    }

    /**
     * Why this node serves nothing for good, or null: another process took its node id over while this one was
     * presumed dead (paused past its lease, say); two processes must never act as one node.
     */
    public String displaced() {
        return displaced;
    }

    /** Another process holds this node's id now: gives every shard up and takes none again (no more rounds). */
    private void displace(String why) {
        displaced = why;
        left = true;
        LOG.error("Node '{}' stops for good: {}", nodeId, why);
        for (int k = 0; k < host.shardCount(); k++) {
            if (host.serves(k)) {
                giveUp(k, "Another process took this node's id over.");
            }
        }
    }

    /** A clean shutdown: marks this node as leaving and gives every shard back, so others take them at once. */
    public synchronized void leave() {
        left = true;
        try {
            members.leave();
        } catch (RuntimeException e) {
            LOG.warn("Could not mark node '{}' as leaving: {}", nodeId, e.toString());
        }
        for (int k = 0; k < host.shardCount(); k++) {
            if (host.serves(k)) {
                giveUp(k, "The node shuts down.");
            }
        }
    }
}
