package io.buslane.engine.partition;

import io.buslane.common.error.BrokerException;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.message.ReceivedMessage;
import io.buslane.engine.timer.TimerWheel;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A shard as a partition sees it, driven by hand with explicit times: the cycle's time is set by the test, timers
 * sit in a real {@link TimerWheel} and fire in {@link #advanceTo}, work waiting for durability runs at
 * {@link #sync()}, the log records what it was told as text, and every message stays resident. No threads, no
 * clock, no journal.
 */
final class ManualPartitionContext implements PartitionContext {

    private long nowMs;
    private final TimerWheel timers;
    private final List<Runnable> afterSync = new ArrayList<>();
    final RecordingLog log = new RecordingLog();
    private final MessageBodies bodies = new MessageBodies(Long.MAX_VALUE / 4, 0, (id, modified) -> {
        throw new IllegalStateException("every message is resident in these tests (record " + id + ")");
    });
    private long nextLockToken = 1;

    ManualPartitionContext(long startMs) {
        this.nowMs = startMs;
        this.timers = new TimerWheel(1, 64, startMs);
    }

    /** Moves the cycle's time to {@code timeMs}, fires the timers due by then and runs what waited for durability. */
    void advanceTo(long timeMs) {
        nowMs = timeMs;
        timers.advance(timeMs, node -> ((EngineTimer) node).onTimer(nowMs));
        sync();
    }

    /** Ends the cycle: the records are "durable", so the parked deliveries and answers run. */
    void sync() {
        List<Runnable> due = new ArrayList<>(afterSync);
        afterSync.clear();
        due.forEach(Runnable::run);
    }

    int pendingTimers() {
        return timers.size();
    }

    @Override
    public long nowMs() {
        return nowMs;
    }

    @Override
    public PartitionLog log() {
        return log;
    }

    @Override
    public MessageBodies bodies() {
        return bodies;
    }

    @Override
    public void afterSync(Runnable action) {
        afterSync.add(action);
    }

    @Override
    public void schedule(EngineTimer timer, long deadlineMs) {
        timers.schedule(timer, deadlineMs);
    }

    @Override
    public void cancel(EngineTimer timer) {
        timers.cancel(timer);
    }

    @Override
    public void markDirty(Partition partition) {
    }

    @Override
    public UUID newLockToken(int partitionIndex) {
        return new UUID(nextLockToken++, partitionIndex & 0xffffL);
    }

    @Override
    public long dedupHeapBudgetBytes() {
        return 1 << 20;
    }

    /** The records a partition reported, as text ("entryAdded 3", "sessionStateWritten s1"), in order. */
    static final class RecordingLog implements PartitionLog {
        final List<String> records = new ArrayList<>();
        private long nextRecordId = 1;

        @Override
        public long nextRecordId() {
            return nextRecordId++;
        }

        @Override
        public void partitionCreated(Partition partition) {
            records.add("partitionCreated");
        }

        @Override
        public void partitionDropped(Partition partition) {
            records.add("partitionDropped");
        }

        @Override
        public void checkpoint(Partition partition) {
        }

        @Override
        public void topicBodyAdded(Partition partition, TopicBody body) {
            records.add("topicBodyAdded " + body.seq);
        }

        @Override
        public void topicBodyRemoved(TopicBody body) {
            records.add("topicBodyRemoved " + body.seq);
        }

        @Override
        public void entryAdded(Entry entry) {
            records.add("entryAdded " + entry.seq);
        }

        @Override
        public void entryUpdated(Entry entry) {
            records.add("entryUpdated " + entry.seq);
        }

        @Override
        public void entryRemoved(Entry entry) {
            records.add("entryRemoved " + entry.seq);
        }

        @Override
        public void scheduledAdded(Partition partition, ScheduledEntry entry) {
            records.add("scheduledAdded " + entry.seq);
        }

        @Override
        public void scheduledRemoved(ScheduledEntry entry) {
            records.add("scheduledRemoved " + entry.seq);
        }

        @Override
        public void sessionStateWritten(SessionEntry session) {
            if (session.stateRecordId() == 0) {
                session.assignStateRecordId(nextRecordId());
            }
            records.add("sessionStateWritten " + session.id());
        }

        @Override
        public void sessionStateCleared(SessionEntry session) {
            records.add("sessionStateCleared " + session.id());
        }

        @Override
        public void transferAdded(Partition partition, Transfer transfer) {
            records.add("transferAdded");
        }

        @Override
        public void transferRemoved(Transfer transfer) {
            records.add("transferRemoved");
        }

        @Override
        public void recordDropped(long recordId) {
            records.add("recordDropped " + recordId);
        }
    }

    /** A receiver with a fixed amount of credit that keeps what it is given. */
    static final class TestConsumer implements ConsumerHandle {
        private final ReceiveMode mode;
        private int credit;
        final List<ReceivedMessage> received = new ArrayList<>();
        BrokerException closedWith;

        TestConsumer(ReceiveMode mode, int credit) {
            this.mode = mode;
            this.credit = credit;
        }

        void addCredit(int n) {
            credit += n;
        }

        @Override
        public ReceiveMode mode() {
            return mode;
        }

        @Override
        public boolean tryAcquireCredit() {
            if (credit == 0) {
                return false;
            }
            credit--;
            return true;
        }

        @Override
        public void releaseCredit() {
            credit++;
        }

        @Override
        public void deliver(ReceivedMessage message) {
            received.add(message);
        }

        @Override
        public void closedByEngine(BrokerException error) {
            closedWith = error;
        }
    }
}
