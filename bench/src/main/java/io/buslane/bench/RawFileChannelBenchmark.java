package io.buslane.bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/**
 * The ceiling for {@link JournalAppendBenchmark}: the same bytes per batch (batch x (1 KiB payload + 19 bytes of
 * framing)), already prepared in a direct buffer, written with one positional {@code FileChannel.write} at the end
 * of a growing file and then {@code force(false)}, exactly the system calls the journal makes, minus everything else
 * (encoding, CRC, bookkeeping). Same iteration layout: a fresh file in a fresh directory per iteration.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class RawFileChannelBenchmark {

    private final ByteBuffer bytes = ByteBuffer.allocateDirect(BenchFiles.MAX_BATCH * BenchFiles.FRAME_BYTES);
    private Path directory;
    private FileChannel channel;
    private long position;

    @Setup(Level.Trial)
    public void fillBuffer() {
        bytes.put(BenchFiles.randomBytes(bytes.capacity(), 42)).clear();
    }

    @Setup(Level.Iteration)
    public void openFile() throws IOException {
        directory = BenchFiles.freshDirectory("raw-bench-");
        channel = FileChannel.open(directory.resolve("raw.seg"), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
        position = 0;
    }

    @TearDown(Level.Iteration)
    public void closeFile() throws IOException {
        try {
            channel.close();
        } finally {
            BenchFiles.deleteRecursively(directory);
        }
    }

    private void writeAndForce(int batch) throws IOException {
        bytes.limit(batch * BenchFiles.FRAME_BYTES).position(0);
        while (bytes.hasRemaining()) {
            position += channel.write(bytes, position);
        }
        channel.force(false);
    }

    @Benchmark
    @OperationsPerInvocation(1)
    public void batch1() throws IOException {
        writeAndForce(1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public void batch8() throws IOException {
        writeAndForce(8);
    }

    @Benchmark
    @OperationsPerInvocation(64)
    public void batch64() throws IOException {
        writeAndForce(64);
    }

    @Benchmark
    @OperationsPerInvocation(256)
    public void batch256() throws IOException {
        writeAndForce(256);
    }
}
