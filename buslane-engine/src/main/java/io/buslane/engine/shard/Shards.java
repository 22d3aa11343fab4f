package io.buslane.engine.shard;

import io.buslane.engine.api.ShardMonitor;

import java.util.function.Consumer;

/** All shards of an engine: driving them (manual threading), starting and stopping them, and their summed figures. */
public final class Shards implements ShardMonitor {

    private final Shard[] shards;
    private volatile Consumer<Throwable> fatalListener = e -> { };

    public Shards(Shard[] shards) {
        this.shards = shards;
    }

    public Shard[] all() {
        return shards;
    }

    public int count() {
        return shards.length;
    }

    /** Starts a dedicated thread per shard this node serves. */
    public void start() {
        for (Shard s : shards) {
            if (s.serving()) {
                s.start();
            }
        }
    }

    /** The shard in slot {@code index} (a dormant placeholder when this node does not serve it). */
    public Shard get(int index) {
        return shards[index];
    }

    /** Stops the shard threads. */
    public void stop() {
        for (Shard s : shards) {
            s.stop();
        }
    }

    /**
     * Closes every shard's journal. What a stopped shard still holds for a kept batch fails here (manual threading:
     * nothing writes that batch once its journal is closed); a thread that has not stopped yet owns its held
     * answers and fails them itself when its last cycle ends (after {@link Shard#stop} gave up waiting for it), so
     * they are never touched from two threads.
     */
    public void closeJournals() {
        for (Shard s : shards) {
            if (!s.threadAlive()) {
                s.failHeld();
            }
            if (s.journal() != null) {
                s.journal().close();
            }
        }
    }

    /** In manual threading mode: runs one duty cycle on every shard; returns the work done. */
    public int doWork() {
        int work = 0;
        for (Shard s : shards) {
            if (s.serving()) {
                work += s.doWork();
            }
        }
        return work;
    }

    /** In manual threading mode: runs duty cycles until no shard has anything to do. */
    public void runUntilIdle() {
        for (int i = 0; i < 10_000; i++) {
            if (doWork() == 0) {
                return;
            }
        }
        throw new IllegalStateException("engine did not become idle after 10000 cycles");
    }

    /** Encoded bytes of the message bodies all shards hold in the heap, as of each shard's last duty cycle. */
    @Override
    public long residentMessageBytes() {
        long total = 0;
        for (Shard s : shards) {
            if (s.bodies() != null) {
                total += s.bodies().publishedResidentBytes();
            }
        }
        return total;
    }

    /** Bytes of session state all shards hold in the heap (as of their last cycle; exact in manual threading). */
    @Override
    public long residentSessionStateBytes() {
        long total = 0;
        for (Shard s : shards) {
            total += s.sessionStates().residentBytes();
        }
        return total;
    }

    /** Message bodies read back from the journals so far. */
    @Override
    public long messageBodyReads() {
        long total = 0;
        for (Shard s : shards) {
            if (s.bodies() != null) {
                total += s.bodies().reads();
            }
        }
        return total;
    }

    /** Commands waiting in all shard queues. */
    @Override
    public int queuedCommands() {
        int n = 0;
        for (Shard s : shards) {
            n += s.queuedCommands();
        }
        return n;
    }

    /** Message locks that expired before settlement, on every shard since start. */
    @Override
    public long lockExpiries() {
        long n = 0;
        for (Shard s : shards) {
            n += s.lockExpiries();
        }
        return n;
    }

    /** The listener of {@link #onFatal}, for a shard made later (cluster mode). */
    public Consumer<Throwable> fatalListener() {
        return fatalListener;
    }

    @Override
    public void onFatal(Consumer<Throwable> listener) {
        fatalListener = listener;
        for (Shard s : shards) {
            s.onFatal(listener);
        }
    }

    /** The first error that ended a shard's thread, or null while every shard runs. */
    @Override
    public Throwable fatalError() {
        for (Shard s : shards) {
            if (s.fatal() != null) {
                return s.fatal();
            }
        }
        return null;
    }
}
