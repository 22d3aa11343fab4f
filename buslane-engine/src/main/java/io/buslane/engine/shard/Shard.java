package io.buslane.engine.shard;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.Clock;
import io.buslane.engine.dedup.DedupWindow;
import io.buslane.engine.partition.EngineTimer;
import io.buslane.engine.partition.MessageBodies;
import io.buslane.engine.partition.Partition;
import io.buslane.engine.partition.PartitionContext;
import io.buslane.engine.partition.PartitionLog;
import io.buslane.engine.partition.ResidentSessionStates;
import io.buslane.engine.persist.JournalPartitionLog;
import io.buslane.engine.persist.ShardJournal;
import io.buslane.engine.timer.TimerNode;
import io.buslane.engine.timer.TimerWheel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A single-writer agent owning a set of partitions, their timers and the append side of its own journal.
 * {@link #submit} is thread-safe; everything else runs on the shard's thread (or, in manual threading mode, on
 * whichever thread calls {@link #doWork()}, one at a time).
 *
 * <p>One duty cycle: read the clock once; fire due timers (scheduled activation, lock, session-lock and TTL
 * expiry); drain a bounded batch of commands, each applied to its partition; append a checkpoint per partition
 * whose counters moved; sync the journal once (group commit); evict the newest message bodies beyond the shard's
 * resident budget (their records are durable now, see {@link MessageBodies}); then run the completions and
 * deliveries parked during the cycle, now that the records behind them are durable. An idle cycle lets the journal
 * reclaim space instead ({@link ShardJournal#maintain}: one bounded compaction step), so that what consumers deleted
 * is freed even when nothing else is written, as on a disk too full to accept new messages.
 */
public final class Shard implements PartitionContext {

    private static final Logger LOG = LoggerFactory.getLogger(Shard.class);
    private static final int MAX_COMMANDS_PER_CYCLE = 4096;
    private static final long MAX_PARK_MS = 100;
    private static final long SYNC_FAILURE_LOG_INTERVAL_MS = 10_000;

    private final int index;
    private final Clock clock;
    private final ShardJournal journal;
    /** The journal's lease as of the current cycle (see {@link #leaseHeld}); shard thread only. */
    private boolean leaseHeld;
    private final JournalPartitionLog log;
    private final MessageBodies bodies;
    private final ResidentSessionStates states;
    private final TimerWheel timers;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    /**
     * Work parked until this cycle's sync: {@link Pending}s, and plain {@code Runnable}s run only if it succeeds.
     * Held across cycles while a failed sync's batch waits in the journal for a later one ({@link #heldBy}).
     */
    private final ArrayList<Object> pending = new ArrayList<>();
    /**
     * Non-null while the last sync failed with its batch kept by the journal ({@link ShardJournal#keepsFailedBatch}):
     * that failure. The parked answers then wait for the sync that stores the batch (every cycle tries) instead of
     * failing, since a send answered "failed" and stored afterwards would be stored again by the client's retry.
     * They fail, with this failure, when a sync fails for good (fenced) or the shard stops first.
     */
    private RuntimeException heldBy;
    private final LinkedHashSet<Partition> dirty = new LinkedHashSet<>();
    private final SplittableRandom random;
    private final long dedupHeapBudgetBytes;
    private final Consumer<TimerNode> fire = node -> ((EngineTimer) node).onTimer(this.nowMs);
    private long nowMs;
    private long syncFailureLoggedAtMs = Long.MIN_VALUE / 2;
    private volatile boolean running;
    private volatile long stopWaitMs = 10_000;
    private volatile boolean sleeping;
    private volatile Thread thread;
    /** The error that ended the shard's thread, or null while it runs (or never ran). */
    private volatile Throwable fatal;
    private volatile Consumer<Throwable> onFatal = e -> { };
    /**
     * Why this shard takes no commands (cluster mode: another node serves it, or this node stopped serving it), or
     * null while it serves. Commands submitted then fail at once with SERVER_BUSY.
     */
    private volatile String retired;
    /** Set once a retired shard ran its last cycle: from then on a submitter rejects what it queued itself. */
    private volatile boolean drained;

    /** Work parked until the cycle's records are durable. */
    private interface Pending {
        void durable();

        void failed(RuntimeException error);
    }

    public Shard(int index, Clock clock, ShardJournal journal) {
        this(index, clock, journal, DedupWindow.DEFAULT_HEAP_BUDGET_BYTES, ResidentSessionStates.DEFAULT_BUDGET_BYTES);
    }

    /**
     * @param dedupHeapBudgetBytes    the heap budget of each duplicate-detection window of this shard's partitions
     * @param sessionStateBudgetBytes the heap budget of this shard's durable session states
     */
    public Shard(int index, Clock clock, ShardJournal journal, long dedupHeapBudgetBytes,
                 long sessionStateBudgetBytes) {
        this.index = index;
        this.dedupHeapBudgetBytes = dedupHeapBudgetBytes;
        this.clock = clock;
        this.journal = journal;
        this.log = journal == null ? null : journal.log();
        this.bodies = journal == null ? null : journal.bodies();
        this.states = journal == null ? ResidentSessionStates.unlimited()
                : new ResidentSessionStates(sessionStateBudgetBytes, journal::readSessionState);
        this.nowMs = clock.epochMillis();
        this.timers = new TimerWheel(1, 64, nowMs);
        this.random = new SplittableRandom(new SecureRandom().nextLong());
    }

    /**
     * A placeholder for a shard this node does not serve (cluster mode: another node owns it). It has no journal
     * and never runs; every command submitted to it fails at once with SERVER_BUSY, and the partitions built on it
     * stay empty until the node takes the shard and builds them again on a serving shard.
     */
    public static Shard dormant(int index, Clock clock, long dedupHeapBudgetBytes, String reason) {
        Shard s = new Shard(index, clock, null, dedupHeapBudgetBytes, 0);
        s.retired = reason;
        s.drained = true;
        return s;
    }

    public int index() {
        return index;
    }

    /** False for a dormant shard and for one this node stopped serving. */
    public boolean serving() {
        return retired == null;
    }

    @Override
    public long dedupHeapBudgetBytes() {
        return dedupHeapBudgetBytes;
    }

    // ops (metrics): begin
    /** Written only by the shard thread; read by any thread. */
    private volatile long lockExpiries;

    @Override
    public void onLockExpired() {
        lockExpiries = lockExpiries + 1;
    }

    /** Message locks that expired on this shard since start. */
    public long lockExpiries() {
        return lockExpiries;
    }
    // ops (metrics): end

    public JournalPartitionLog journalLog() {
        return log;
    }

    public ShardJournal journal() {
        return journal;
    }

    // ------------------------------------------------------------------------------------------------ commands

    /**
     * Enqueues a command for the shard thread. Thread-safe and lock-free. On a shard that does not serve (see
     * {@link #serving()}) the command is refused: a {@link #call} fails with SERVER_BUSY, anything else is dropped.
     */
    public void submit(Runnable command) {
        if (drained) {
            refuse(command);
            return;
        }
        commands.offer(command);
        queued.incrementAndGet();
        if (drained) { // retired meanwhile: nobody else will run it
            refuseQueued();
            return;
        }
        if (sleeping) {
            Thread t = thread;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    /**
     * Runs {@code action} on the shard thread and completes the returned future with its result once the records
     * it logged are durable; an exception completes it exceptionally (nothing is parked for durability then).
     */
    public <T> CompletableFuture<T> call(Supplier<T> action) {
        return call(action, null, 0);
    }

    /**
     * As {@link #call(Supplier)}, and adds {@code count} to {@code counter} (unless null) once the action's records
     * are durable, just before the future completes: a metric counted where the work is acknowledged, without a
     * completion stage per operation.
     */
    public <T> CompletableFuture<T> call(Supplier<T> action, LongAdder counter, long count) {
        Call<T> call = new Call<>(this, action, counter, count);
        submit(call);
        return call;
    }

    /**
     * One {@link #call}: the future, the command and the parked completion in one object (a call is on the path
     * of every send and settlement).
     */
    private static final class Call<T> extends CompletableFuture<T> implements Runnable, Pending {
        private final Shard shard;
        private final Supplier<T> action;
        private final LongAdder counter;
        private final long count;
        private T result;

        Call(Shard shard, Supplier<T> action, LongAdder counter, long count) {
            this.shard = shard;
            this.action = action;
            this.counter = counter;
            this.count = count;
        }

        @Override
        public void run() {
            try {
                result = action.get();
            } catch (RuntimeException e) {
                completeExceptionally(e);
                return;
            }
            shard.pending.add(this);
        }

        @Override
        public void durable() {
            if (counter != null) {
                counter.add(count);
            }
            complete(result);
        }

        @Override
        public void failed(RuntimeException error) {
            completeExceptionally(error);
        }
    }

    private void refuse(Runnable command) {
        if (command instanceof Call<?> c) {
            c.completeExceptionally(new BrokerException(ErrorKind.SERVER_BUSY, retired));
        } else if (command instanceof Refusable r) {
            r.refused();
        }
    }

    /**
     * A command that must hear of it when a shard that does not serve (cluster mode) refuses it, e.g. because a
     * caller counts answers from every partition. {@link #refused} runs on the submitting or the retiring thread.
     */
    public interface Refusable extends Runnable {
        void refused();
    }

    private void refuseQueued() {
        Runnable command;
        while ((command = commands.poll()) != null) {
            queued.decrementAndGet();
            refuse(command);
        }
    }

    /**
     * Stops serving (cluster mode: the shard moves to another node, or this node lost it): the commands already
     * queued still run, then {@code lastWork} (closing the partitions' receivers), then the thread stops and
     * whatever arrives later fails with SERVER_BUSY and {@code reason}. The journal stays open; the caller closes
     * it. In manual threading mode the last cycles run on the caller's thread.
     */
    public void retire(String reason, Runnable lastWork) {
        submit(lastWork);
        retired = reason;
        if (thread != null) {
            stop();
        } else {
            for (int i = 0; i < 10_000 && doWork() > 0; i++) {
                // runs what was queued before the retirement
            }
            failHeld();
        }
        drained = true;
        refuseQueued();
    }

    /** Number of commands waiting (for back-pressure decisions and metrics). */
    public int queuedCommands() {
        return queued.get();
    }

    // ------------------------------------------------------------------------------------------------ PartitionContext

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
    public ResidentSessionStates sessionStates() {
        return states;
    }

    /**
     * The journal's lease as of this cycle: read once when the cycle starts (for its commands and timers) and again
     * after its sync (for the hand-overs), so that the deliveries of one cycle all see the same answer (a session's
     * messages are never handed over out of order because the lease lapsed between two of them).
     */
    @Override
    public boolean leaseHeld() {
        return leaseHeld;
    }

    @Override
    public boolean answersHeld() {
        return heldBy != null;
    }

    private boolean readLease() {
        return journal != null && journal.leaseHeld(); // a dormant shard (no journal) serves nothing
    }

    @Override
    public void afterSync(Runnable action) {
        // parked as it is (no wrapper per delivery); a failed cycle drops it: the deliveries of a failed cycle are
        // dropped, and their messages stay locked until the lock expires
        pending.add(action);
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
        dirty.add(partition);
    }

    @Override
    public UUID newLockToken(int partitionIndex) {
        long msb = (random.nextLong() & 0xffffffffffff0fffL) | 0x0000000000004000L;
        long lsb = (random.nextLong() & 0x3fffffffffff0000L) | 0x8000000000000000L | (partitionIndex & 0xffffL);
        return new UUID(msb, lsb);
    }

    /** The partition index a lock token of this broker carries. */
    public static int partitionOfLockToken(UUID token) {
        return (int) (token.getLeastSignificantBits() & 0xffffL);
    }

    // ------------------------------------------------------------------------------------------------ duty cycle

    /** Runs one duty cycle; returns the amount of work done (0 when idle). */
    public int doWork() {
        nowMs = Math.max(nowMs, clock.epochMillis());
        leaseHeld = readLease();
        int work = timers.advance(nowMs, fire);
        Runnable command;
        int drained = 0;
        while (drained < MAX_COMMANDS_PER_CYCLE && (command = commands.poll()) != null) {
            queued.decrementAndGet();
            drained++;
            try {
                command.run();
            } catch (RuntimeException e) {
                LOG.error("shard {}: command failed", index, e);
            }
        }
        work += drained;
        if (drained > 0) {
            // commands may have armed timers that are already due (e.g. a schedule time in the past)
            work += timers.advance(nowMs, fire);
        }
        for (Partition p : dirty) {
            log.checkpoint(p);
        }
        dirty.clear();
        boolean synced = syncAndComplete();
        if (work == 0 && !synced && journal.maintain()) {
            work = 1; // idle, with more space to reclaim: the next cycle follows at once
        }
        return work;
    }

    /** Syncs what the cycle wrote and runs what waited for it; returns whether there was anything to sync. */
    private boolean syncAndComplete() {
        RuntimeException failure = null;
        boolean synced = journal.hasUnsynced();
        if (synced) {
            try {
                journal.sync(nowMs);
                heldBy = null;
            } catch (BrokerException e) {
                boolean kept = journal.keepsFailedBatch();
                if (nowMs - syncFailureLoggedAtMs >= SYNC_FAILURE_LOG_INTERVAL_MS) { // an outage fails every cycle
                    syncFailureLoggedAtMs = nowMs;
                    LOG.error("shard {}: journal sync failed; {} {} pending operations (logged at most every {} s)",
                            index, kept ? "the journal keeps the batch for the next sync, holding the answers of"
                                    : "failing", pending.size(), SYNC_FAILURE_LOG_INTERVAL_MS / 1000, e);
                }
                failure = e;
                heldBy = kept ? e : null;
            }
        }
        bodies.afterSync(failure == null);
        states.afterSync(failure == null);
        if (pending.isEmpty() || heldBy != null) {
            return synced; // held: answered by the sync that stores the batch (or failed when the shard stops)
        }
        leaseHeld = readLease();
        Object[] actions = pending.toArray();
        pending.clear();
        for (Object action : actions) {
            try {
                if (action instanceof Pending p) {
                    if (failure == null) {
                        p.durable();
                    } else {
                        p.failed(failure);
                    }
                } else if (failure == null) {
                    ((Runnable) action).run();
                }
            } catch (RuntimeException e) {
                LOG.error("shard {}: completion failed", index, e);
            }
        }
        return synced;
    }

    /** Runs start-up work (replay and the first checkpoints) on the caller's thread before {@link #start}. */
    public void runStartup(Runnable action) {
        nowMs = Math.max(nowMs, clock.epochMillis());
        leaseHeld = readLease();
        action.run();
        // a shard taken from a node whose clock ran ahead: never stamp a time earlier than one it stored
        nowMs = Math.max(nowMs, log.clockFloorMs());
        syncAndComplete();
    }

    // ------------------------------------------------------------------------------------------------ thread

    /** Starts the shard's own thread (dedicated threading mode). */
    public void start() {
        running = true;
        Thread t = new Thread(this::runLoop, "buslane-shard-" + index);
        t.setDaemon(false);
        thread = t;
        t.start();
    }

    /** Called once, on the shard's thread, if an error ends it (out of memory, a bug that throws an Error). */
    public void onFatal(Consumer<Throwable> listener) {
        this.onFatal = listener;
    }

    /** The error that ended the shard's thread, or null. */
    public Throwable fatal() {
        return fatal;
    }

    private void runLoop() {
        try {
            duty();
        } catch (Throwable e) { // an Error: the shard cannot go on; say so rather than leave its callers hanging
            fatal = e;
            running = false;
            LOG.error("shard {}: its thread stopped: {}", index, e.toString(), e);
            answerNothingMore(e);
            onFatal.accept(e);
        }
    }

    /**
     * After its thread died: the answers parked for a sync that will not come fail (their records may or may not
     * be durable, as after a lost answer), and every command queued or submitted from now on is refused with
     * SERVER_BUSY, so that no caller waits for good on a shard that runs no more.
     */
    private void answerNothingMore(Throwable cause) {
        try {
            retired = "The shard's thread stopped (" + cause + "): this broker cannot serve its entities any more.";
            BrokerException error = new BrokerException(ErrorKind.SERVER_BUSY, retired);
            heldBy = null;
            Object[] actions = pending.toArray();
            pending.clear();
            for (Object action : actions) {
                if (action instanceof Pending p) {
                    p.failed(error);
                }
            }
            drained = true;
            refuseQueued();
        } catch (Throwable again) { // out of memory still: the fatal listener below must run whatever happens
            LOG.error("shard {}: could not fail its waiting callers: {}", index, again.toString());
        }
    }

    private void duty() {
        while (running) {
            int work;
            try {
                work = doWork();
            } catch (RuntimeException e) {
                LOG.error("shard {}: duty cycle failed", index, e);
                work = 0;
            }
            if (work == 0) {
                sleeping = true;
                if (commands.isEmpty() && running) {
                    long next = timers.nextExpirationMs();
                    long waitMs = next == Long.MAX_VALUE ? MAX_PARK_MS
                            : Math.max(0, Math.min(MAX_PARK_MS, next - clock.epochMillis()));
                    if (waitMs > 0) {
                        LockSupport.parkNanos(waitMs * 1_000_000L);
                    }
                }
                sleeping = false;
            }
        }
        // final cycle so that nothing accepted is left unsynced
        doWork();
        failHeld();
    }

    /**
     * Fails the answers still held for a batch the journal kept after a failed sync (see {@link #heldBy}): called when
     * the shard stops, as nothing writes that batch once the journal is closed. (Only a commit whose answer was lost
     * can have stored it: the one case where the outcome cannot be known, as with the service after a timeout.)
     */
    void failHeld() {
        if (heldBy == null) {
            return;
        }
        RuntimeException error = heldBy;
        heldBy = null;
        Object[] actions = pending.toArray();
        pending.clear();
        for (Object action : actions) {
            if (action instanceof Pending p) {
                try {
                    p.failed(error);
                } catch (RuntimeException e) {
                    LOG.error("shard {}: completion failed", index, e);
                }
            }
        }
    }

    /** Stops the thread after a final cycle and waits for it (up to 10 s: a journal call may hang that long). */
    public void stop() {
        running = false;
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(stopWaitMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                LOG.warn("shard {}: its thread has not stopped within {} ms (a journal call still waiting?); it "
                        + "fails what it still holds when that call returns", index, stopWaitMs);
            }
        }
    }

    /** How long {@link #stop} waits for the thread (tests shorten it). */
    void stopWait(long ms) {
        stopWaitMs = ms;
    }

    /** Whether this shard's dedicated thread is still running (false in manual threading mode). */
    boolean threadAlive() {
        Thread t = thread;
        return t != null && t.isAlive();
    }

    /**
     * True when no command is queued, nothing is parked (or what is parked waits for a kept batch's sync, which
     * only a journal that answers again can end) and no timer is due now (manual mode helper).
     */
    public boolean isIdle() {
        return commands.isEmpty() && (pending.isEmpty() || heldBy != null)
                && timers.nextExpirationMs() > clock.epochMillis();
    }
}
