package io.buslane.server.cluster;

import java.nio.charset.StandardCharsets;
import java.util.Collection;

/**
 * Which live node serves a shard: rendezvous (highest random weight) hashing. Every node computes the same answer
 * from the same set of live node ids, with no coordination, and a change of membership moves only the shards it
 * must: a node that joins takes about {@code 1/n} of the shards (only from others, to itself), a node that leaves
 * hands only its own shards to the others.
 */
public final class Rendezvous {

    private Rendezvous() {
    }

    /** The node among {@code nodeIds} that should serve {@code shard}, or null when there is none. */
    public static String owner(int shard, Collection<String> nodeIds) {
        String best = null;
        long bestScore = 0;
        for (String id : nodeIds) {
            long score = score(id, shard);
            if (best == null || Long.compareUnsigned(score, bestScore) > 0
                    || (score == bestScore && id.compareTo(best) < 0)) {
                best = id;
                bestScore = score;
            }
        }
        return best;
    }

    /** A 64-bit weight of a node for a shard: FNV-1a over the node id's UTF-8 bytes, mixed with the shard. */
    static long score(String nodeId, int shard) {
        long h = 0xcbf29ce484222325L;
        for (byte b : nodeId.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        h ^= (shard + 1) * 0x9e3779b97f4a7c15L;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }
}
