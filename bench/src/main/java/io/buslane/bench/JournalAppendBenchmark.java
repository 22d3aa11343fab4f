package io.buslane.bench;

import io.buslane.journal.JournalRecord;
import io.buslane.journal.file.FileJournal;
import io.buslane.journal.file.FileJournalOptions;
import io.buslane.journal.file.SyncPolicy;
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

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Journal group commit: one operation appends a batch of 1 KiB ADD records to a {@link FileJournal} and then calls
 * {@link FileJournal#sync()} once with {@link SyncPolicy#ALWAYS} (one {@code force(false)}). The score is records per
 * second: each method carries its batch size in {@code @OperationsPerInvocation}, which JMH only accepts as a
 * constant, hence one method per batch size ({@code batch1} ... {@code batch256}) rather than a {@code @Param}.
 *
 * <p>Every measurement iteration gets a fresh journal in a fresh directory (deleted afterwards), with the default
 * options except a segment size large enough that no segment rolls during an iteration: this measures appending
 * and syncing, not rolling. {@link RawFileChannelBenchmark} writes the same bytes with a bare {@code FileChannel}:
 * the ceiling.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class JournalAppendBenchmark {

    /** 8 GiB: more than a 2 s iteration can write here, so the one segment never rolls. */
    static final long SEGMENT_BYTES = 8L * 1024 * 1024 * 1024;
    private static final byte TYPE = 1;

    private final byte[] payload = BenchFiles.randomBytes(BenchFiles.PAYLOAD_BYTES, 42);
    private Path directory;
    private FileJournal journal;
    private long nextId = 1;

    @Setup(Level.Iteration)
    public void openJournal() {
        directory = BenchFiles.freshDirectory("journal-bench-");
        FileJournalOptions options = FileJournalOptions.defaults()
                .withSegmentSizeBytes(SEGMENT_BYTES)
                .withSyncPolicy(SyncPolicy.ALWAYS);
        journal = new FileJournal(directory.resolve("shard-0"), options);
        journal.replay(record -> {
            throw new IllegalStateException("a fresh journal replayed a record");
        });
    }

    @TearDown(Level.Iteration)
    public void closeJournal() {
        try {
            long expected = journal.appendedCount() * BenchFiles.FRAME_BYTES;
            if (journal.storedBytes() != expected) {
                throw new IllegalStateException("the journal stored " + journal.storedBytes() + " bytes for "
                        + journal.appendedCount() + " records, not " + expected + ": the ceiling benchmark's "
                        + BenchFiles.FRAMING_BYTES + "-byte framing no longer matches the journal's");
            }
            journal.close();
        } finally {
            BenchFiles.deleteRecursively(directory);
        }
    }

    private void appendAndSync(int batch) {
        for (int i = 0; i < batch; i++) {
            journal.append(JournalRecord.add(nextId++, TYPE, payload));
        }
        journal.sync();
    }

    @Benchmark
    @OperationsPerInvocation(1)
    public void batch1() {
        appendAndSync(1);
    }

    @Benchmark
    @OperationsPerInvocation(8)
    public void batch8() {
        appendAndSync(8);
    }

    @Benchmark
    @OperationsPerInvocation(64)
    public void batch64() {
        appendAndSync(64);
    }

    @Benchmark
    @OperationsPerInvocation(256)
    public void batch256() {
        appendAndSync(256);
    }
}
