package io.buslane.engine.partition;

/**
 * Hands out a partition's sequence numbers: unique, gap-free and strictly increasing until the range is
 * exhausted. Confined to its shard thread.
 *
 * <p>On a non-partitioned entity the number is a 64-bit counter starting at 1 that rolls over to 0 after
 * {@link Long#MAX_VALUE}. On a partitioned entity the top 16 bits carry the partition id and the low 48 bits a
 * counter that rolls over to 0 after 2<sup>48</sup>-1.
 */
public final class SequenceCounter {

    /** Mask of the 48-bit per-partition counter. */
    public static final long COUNTER_MASK_48 = (1L << 48) - 1;

    private final boolean partitioned;
    private final long partitionBits;
    private long nextCounter;

    public SequenceCounter(boolean partitioned, int partitionIndex, long nextCounter) {
        this.partitioned = partitioned;
        this.partitionBits = partitioned ? ((long) partitionIndex) << 48 : 0L;
        this.nextCounter = nextCounter;
    }

    /** Takes the next sequence number. */
    public long take() {
        long counter = nextCounter;
        nextCounter = successor(counter);
        return partitionBits | counter;
    }

    /** The counter value the next {@link #take()} uses (for checkpoints). */
    public long nextCounter() {
        return nextCounter;
    }

    /** Restores the counter so that the next number follows {@code sequenceNumber} (replay). */
    public void advancePast(long sequenceNumber) {
        nextCounter = successor(counterOf(sequenceNumber));
    }

    public void setNextCounter(long counter) {
        this.nextCounter = counter;
    }

    private long counterOf(long sequenceNumber) {
        return partitioned ? sequenceNumber & COUNTER_MASK_48 : sequenceNumber;
    }

    private long successor(long counter) {
        if (partitioned) {
            return (counter + 1) & COUNTER_MASK_48;
        }
        return counter == Long.MAX_VALUE ? 0 : counter + 1;
    }

    /** The partition id carried in the top 16 bits of a partitioned entity's sequence number. */
    public static int partitionOf(long sequenceNumber) {
        return (int) (sequenceNumber >>> 48);
    }
}
