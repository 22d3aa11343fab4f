package io.buslane.engine.receive;

import java.util.UUID;

/**
 * A receiver's messages from one partition of its entity: a {@link LocalFeed} when this node serves the partition
 * (the receiver's consumer slot on the shard, pumped there), a {@link RemoteFeed} when another node does (cluster
 * mode: long polls carried to it). The receiver treats every partition alike through this interface; all its
 * methods may be called from any thread.
 */
interface PartitionFeed {

    /**
     * Delivers what the receiver's credit allows: a local feed pumps its partition; a remote one polls, only when
     * {@code polls} (a remote answer pumps the partitions served here without polling again at once).
     */
    void kick(boolean polls);

    /**
     * Hands over what is available now, then runs {@code answered} once what it handed over reached the receiver
     * (on the partition's shard thread for a local feed); no remote poll starts after that until
     * {@link #endDrain()}.
     */
    void drain(Runnable answered);

    /** The receiver's drain is over; returns whether polls may start again (a remote feed). */
    boolean endDrain();

    /** Ends a remote poll in flight so that the credit it holds comes back; nothing for a local feed. */
    void preempt();

    /** Leaves the partition: a local slot is removed on its shard, a remote poll ends and its holder is let go. */
    void close();

    /** The owner node's session holder this feed receives for (cluster mode), or null. */
    UUID holder();
}
