package io.buslane.bench.queue;

import org.jctools.queues.MpscArrayQueue;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The shard's command queue (issue #24, item 5): what one submit costs on the producer side (an event loop) and one
 * poll on the consumer side (the shard thread), for the queue the shard uses today (a
 * {@link ConcurrentLinkedQueue}, a node per command, plus an {@link AtomicInteger} count incremented on submit and
 * decremented on poll) against JCTools' MPSC array queues: bounded ({@link MpscArrayQueue}, whose full queue the
 * shard would have to push back on) and unbounded ({@link MpscUnboundedXaddArrayQueue}, chunked, no back-pressure
 * needed). One producer and one consumer thread, the shape of the hot path on a 2-core machine.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Group)
public class ShardQueueBenchmark {

    /** The queue under test. */
    @Param({"clq+counter", "jctools-mpsc-array", "jctools-mpsc-unbounded-xadd"})
    public String queue;

    private Queue<Runnable> q;
    private AtomicInteger queued;
    private boolean counted;
    private static final Runnable COMMAND = () -> { };

    @Setup(Level.Iteration)
    public void setUp() {
        queued = new AtomicInteger();
        counted = queue.equals("clq+counter");
        switch (queue) {
            case "clq+counter" -> q = new ConcurrentLinkedQueue<>();
            case "jctools-mpsc-array" -> q = new MpscArrayQueue<>(64 * 1024);
            case "jctools-mpsc-unbounded-xadd" -> q = new MpscUnboundedXaddArrayQueue<>(4096);
            default -> throw new IllegalArgumentException(queue);
        }
    }

    /** Commands the consumer took (the transfer rate); empty polls are not counted. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Taken {
        public long taken;

        @Setup(Level.Iteration)
        public void reset() {
            taken = 0;
        }
    }

    /** A submit: the command is never dropped (a full bounded queue is retried), and today's queue counts it. */
    @Benchmark
    @Group("submitPoll")
    @GroupThreads(1)
    public void submit() {
        while (!q.offer(COMMAND)) {
            Thread.onSpinWait();
        }
        if (counted) {
            queued.incrementAndGet();
        }
    }

    /** The shard thread's poll (and, for today's queue, the count's decrement). */
    @Benchmark
    @Group("submitPoll")
    @GroupThreads(1)
    public void poll(Taken taken, Blackhole bh) {
        Runnable r = q.poll();
        if (r != null) {
            taken.taken++;
            if (counted) {
                queued.decrementAndGet();
            }
        }
        bh.consume(r);
    }
}
