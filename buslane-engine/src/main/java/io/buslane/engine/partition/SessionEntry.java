package io.buslane.engine.partition;

/**
 * A message session within one sub-queue: its ready messages, its lock, and its state, kept by the sub-queue's
 * {@link SessionTable}. The entry is its own session-lock timer. Confined to its shard thread.
 */
public final class SessionEntry extends EngineTimer {
    final String id;
    final SubQueueState queue;
    final ReadyQueue ready = new ReadyQueue();
    /** Messages of this session held by the sub-queue (available, locked and deferred). */
    int messageCount;
    ConsumerSlot holder;
    long lockedUntilMs;
    /** The state's bytes while resident, null when evicted or when there is none (see {@link #stateLength}). */
    byte[] state;
    /** The state's length in bytes, or -1 when the session has no state. */
    int stateLength = -1;
    long stateRecordId;
    long lastUpdatedMs;
    /** When the session's state was last written (0 when never). */
    long stateUpdatedMs;
    /** The key under which the session is in its table's index of available sessions, or null. */
    Long indexedSeq;

    SessionEntry(String id, SubQueueState queue) {
        this.id = id;
        this.queue = queue;
    }

    public String id() {
        return id;
    }

    /** The state's bytes as the log writes them: resident, since they were just set. */
    public byte[] state() {
        return state;
    }

    /** Whether the session has a state (resident or not). */
    public boolean hasState() {
        return stateLength >= 0;
    }

    public long stateRecordId() {
        return stateRecordId;
    }

    /** Records the journal id of the session's state record (set by the log on the first write). */
    public void assignStateRecordId(long recordId) {
        this.stateRecordId = recordId;
    }

    public long lastUpdatedMs() {
        return lastUpdatedMs;
    }

    public SubQueueState queue() {
        return queue;
    }

    boolean lockedAt(long nowMs) {
        return holder != null && lockedUntilMs > nowMs;
    }

    /** Whether {@code by} holds the session's lock; true for a null {@code by} (any holder will do). */
    boolean heldBy(ConsumerHandle by) {
        return by == null || (holder != null && holder.consumer == by);
    }

    @Override
    public void onTimer(long nowMs) {
        queue.deliveries.onSessionLockTimer(this, nowMs);
    }
}
