package io.buslane.cluster;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.common.time.ManualClock;
import io.buslane.engine.Engine;
import io.buslane.engine.persist.RecordReader;
import io.buslane.engine.persist.RecordWriter;
import io.buslane.engine.remote.OpCodec;
import io.buslane.engine.remote.PartitionOp;
import io.buslane.engine.remote.RemotePartitions;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.IntFunction;

/**
 * The node channel in one thread, for engines in manual threading mode on manual clocks (Kafka's in-memory channel
 * managers): every carried operation and its answer are encoded and decoded as the real channel does
 * ({@code OpCodec}, errors as their kind and description), and delivered only when the test pumps; the
 * channel's timers ({@link RemotePartitions#schedule}) fire when the test moves the clock. So every remote path runs
 * deterministically, with no socket, thread or wall-clock time. The real channel keeps its own tests
 * ({@link ClusterRoutingTest}).
 */
final class LoopbackChannel {

    private record Timer(long dueMs, long order, Runnable action) {
    }

    private final ArrayDeque<Runnable> deliveries = new ArrayDeque<>();
    private final PriorityQueue<Timer> timers = new PriorityQueue<>((x, y) -> x.dueMs != y.dueMs
            ? Long.compare(x.dueMs, y.dueMs) : Long.compare(x.order, y.order));
    private final ManualClock clock;
    private final List<Engine> engines = new ArrayList<>();
    private long order;
    private long carried;
    private long largestAnswerBytes;

    /** @param clock the clock both nodes' engines run on (one time for the whole cluster) */
    LoopbackChannel(ManualClock clock) {
        this.clock = clock;
    }

    /** The port of the node whose engine is {@code self}: shard {@code s} is served by {@code ownerOf.apply(s)}. */
    RemotePartitions portFor(IntFunction<Engine> ownerOf) {
        return new RemotePartitions() {
            @Override
            public <R> CompletableFuture<R> call(int shard, PartitionOp<R> op) {
                return carry(ownerOf.apply(shard), op);
            }

            @Override
            public void schedule(Runnable action, long delayMs) {
                timers.add(new Timer(clock.epochMillis() + Math.max(0, delayMs), order++, action));
            }
        };
    }

    /** Registers an engine the pump drives. */
    void drive(Engine engine) {
        engines.add(engine);
    }

    /** The encoded size of the largest answer carried so far. */
    long largestAnswerBytes() {
        return largestAnswerBytes;
    }

    /** How many operations were carried so far. */
    long carried() {
        return carried;
    }

    private <R> CompletableFuture<R> carry(Engine owner, PartitionOp<R> op) {
        carried++;
        CompletableFuture<R> answer = new CompletableFuture<>();
        RecordWriter w = new RecordWriter();
        OpCodec.write(w, op);
        byte[] request = Arrays.copyOf(w.buffer(), w.size());
        deliveries.add(() -> owner.cluster().ownerSide().run(OpCodec.read(new RecordReader(request)))
                .whenComplete((result, error) -> deliveries.add(() -> answer(answer, op, result, error))));
        return answer;
    }

    private <R> void answer(CompletableFuture<R> answer, PartitionOp<R> op, Object result,
                                   Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause != null) {
            BrokerException be = cause instanceof BrokerException b ? b
                    : new BrokerException(ErrorKind.INTERNAL, String.valueOf(cause.getMessage()));
            answer.completeExceptionally(Frames.error(be.kind().name(), be.description()));
            return;
        }
        RecordWriter w = new RecordWriter();
        OpCodec.writeResult(w, op, result);
        largestAnswerBytes = Math.max(largestAnswerBytes, w.size());
        answer.complete(OpCodec.readResult(new RecordReader(Arrays.copyOf(w.buffer(), w.size())), op));
    }

    /** Runs the engines' duty cycles, the deliveries and the timers that are due until nothing is left to do. */
    void pump() {
        for (int rounds = 0; rounds < 100_000; rounds++) {
            int work = 0;
            for (Engine e : engines) {
                work += e.doWork();
            }
            while (!deliveries.isEmpty()) {
                deliveries.poll().run();
                work++;
            }
            while (!timers.isEmpty() && timers.peek().dueMs() <= clock.epochMillis()) {
                timers.poll().action().run();
                work++;
            }
            if (work == 0) {
                return;
            }
        }
        throw new AssertionError("the cluster never became idle");
    }

    /** Moves the clock by {@code d} (firing what falls due in order, each at its own time), pumping all along. */
    void advance(Duration d) {
        long end = clock.epochMillis() + d.toMillis();
        pump();
        while (!timers.isEmpty() && timers.peek().dueMs() <= end) {
            long next = timers.peek().dueMs();
            if (next > clock.epochMillis()) {
                clock.advanceMs(next - clock.epochMillis());
            }
            pump();
        }
        if (end > clock.epochMillis()) {
            clock.advanceMs(end - clock.epochMillis());
        }
        pump();
    }

    /** Pumps until {@code f} completes and returns its value (rethrowing a BrokerException). */
    <T> T await(CompletableFuture<T> f) {
        pump();
        if (!f.isDone()) {
            throw new AssertionError("the operation did not complete");
        }
        try {
            return f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof BrokerException be) {
                throw be;
            }
            throw e;
        }
    }
}
