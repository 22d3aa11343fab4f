package io.buslane.journal.file;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalException;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import io.buslane.journal.ReplayHandler;
import io.buslane.journal.file.RecoveryReport.Corruption;
import io.buslane.journal.file.RecoveryReport.InterruptedCompaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.zip.CRC32C;

/**
 * Confined to its writer thread. A {@link Journal} kept as an append-only log of numbered segment files in one
 * directory, with a CRC per record, torn-tail truncation, reported (never served) corruption, and compaction that
 * survives a crash at any step.
 *
 * <h2>Files</h2>
 * A journal is one folder of segment files, numbered in append order, the highest one active, beside the output and
 * control file of an unfinished compaction; {@link io.buslane.journal.DataDirectoryLayout} names them all and draws
 * the whole data directory. A segment has no header and is not pre-allocated: it is the records back to back, and
 * its size is the end of its last record; {@link RecordFormat} draws how each record is framed (a record takes
 * {@code 19 + n} bytes; n is at most 256 MiB minus 19). There is no index file: replay reads the segments
 * sequentially, and the liveness index compaction needs is rebuilt in memory while replaying.
 *
 * <h2>Writing</h2>
 * {@link #append} encodes into one reusable direct buffer and writes it to the active segment only when the buffer is
 * full; it never forces. {@link #sync} writes what is buffered and, with {@link SyncPolicy#ALWAYS}, calls
 * {@code force(false)} once: the owner appends a whole batch and then syncs once (group commit). With
 * {@link SyncPolicy#NONE} nothing is forced and a WARN is logged at open.
 *
 * <p><b>Batches are atomic.</b> {@code sync} ends the batch with a batch-end marker (a 19-byte frame, see
 * {@link RecordFormat#MARKER_ID}) written before the buffer, and every segment starts with a marker: a batch-end
 * marker, or a batch-continues marker when it was started in the middle of a batch. Since a full write buffer, and a
 * roll, reach the file before the sync, a crash can leave part of a batch on disk, every frame of it valid: recovery
 * drops such an unfinished batch whole (see below), so a shard's commit (a transaction's records) is never applied
 * in part. Markers are invisible to the owner: they are not replayed, indexed, counted by {@link #appendedCount()}
 * or kept by compaction, and {@link #append} refuses a record that would look like one.
 *
 * <p>The active segment rolls when the next record would take it past {@code segmentSizeBytes} (a larger record gets
 * a fresh segment of its own; a batch-end marker may take it 19 bytes past). Rolling writes and forces the old
 * segment, creates the new file and fsyncs the directory, whatever the sync policy, so a sealed segment is always
 * complete on disk: a bad record in one can only be corruption, never a torn write.
 *
 * <p><b>Failures.</b> An {@link IOException} in {@code append} or {@code sync} becomes a {@link JournalException},
 * with {@code diskFull} set when it says "No space left on device" (or the quota/Windows equivalents). Before it is
 * thrown, every record appended since the last successful sync is discarded: segments created since are deleted and
 * the file truncated back to the last synced position. The journal stays usable, so a later append and sync succeed
 * once space returns, and recovery never sees the failed batch's partial bytes (it would truncate them as a torn tail
 * anyway). If that rollback fails too, every later call throws and the journal must be reopened. {@link #close()}
 * discards unsynced records the same way, matching {@code InMemoryJournal}. A failure for lack of space also
 * releases the data directory's disk reserve ({@link DiskReserve}), so that the next batch (the owner refuses new
 * messages meanwhile, but goes on writing the DELETEs that free space) finds room.
 *
 * <h2>Recovery</h2>
 * <ol>
 *   <li>When opened: finish or undo a compaction that a crash interrupted (see {@link SegmentCompactor}).</li>
 *   <li>{@link #replay}: read the segments in order, verifying each record's magic, length (within bounds and the
 *       file), CRC and kind, delivering good records and indexing their liveness.</li>
 *   <li>A segment that starts with a marker is read batch by batch: a record is delivered only once its batch's
 *       end marker has been read, in the same segment or, for a batch a roll split, in a later one. A last batch
 *       without its end marker (a crash while it was written, whether a frame was torn or not) is dropped whole:
 *       the files are truncated after the last batch-end marker (later segments, which only that batch can have
 *       reached, to nothing), and a WARN gives the records and bytes dropped. A segment without markers (written
 *       before they existed, or by compaction) is read record by record, as below.</li>
 *   <li>At the first bad record of the <em>last</em> segment, truncate the file there (a torn tail: the crash cut a
 *       write short) and log at WARN how many bytes were dropped. A last segment without markers is then sealed:
 *       new batches go to a new segment, which starts with one.</li>
 *   <li>At the first bad record of a <em>sealed</em> segment (bit rot: sealed segments were forced when rolled),
 *       stop reading that segment and log at ERROR. <b>The remainder of that segment is skipped</b>: a damaged
 *       record's length cannot be trusted, so there is no safe way to find the next record, and guessing could
 *       serve garbage. The file is left untouched for inspection and is never compacted while open; DELETEs in
 *       later segments are kept, as the skipped bytes may hold what they delete. Replay then continues with the
 *       next segment, whose records are intact.</li>
 *   <li>Log one INFO line with the totals. The {@link RecoveryReport} ({@link #recoveryReport()}) lists the
 *       truncated bytes and every corruption, so the owner can decide whether to start.</li>
 * </ol>
 *
 * <h2>Reading a record back</h2>
 * {@link #read(long, RecordKind)} finds the live ADD or UPDATE of an id in the in-memory index (which knows each
 * stored record's segment, offset and size, see {@link LiveIndex}) and reads its frame with one positional read,
 * verifying magic, length, kind, id and CRC; a mismatch is reported as a {@link JournalException}, never served.
 * Only synced records are indexed, and a sync writes the whole write buffer to the file, so what {@code read} can
 * find is always in the file, not in the buffer. Up to {@value #MAX_READ_CHANNELS} segments are kept open for
 * reading (least recently read closed first); compaction, which replaces segment files, closes them all.
 *
 * <h2>Compaction</h2>
 * {@link #compact(double)} is called by the owner thread between batches and compacts everything at once. In
 * addition, when {@code autoCompactLiveRatio} is above zero, the first successful {@link #sync} after a segment roll
 * starts a pass with that ratio, and every successful sync while it is unfinished carries it on by one bounded step
 * ({@link #COMPACTION_STEP_BYTES} of source read; a group is swapped in at once when its copy is done), so a
 * segment's rewrite is spread over many batches instead of stalling one. Compaction never runs inside
 * {@code append}, and a failed automatic compaction is logged, not thrown, since the synced batch is durable
 * regardless. A pass is also requested when the journal is opened and, without any roll, once DELETEs and UPDATEs
 * have made enough bytes of sealed segments dead (half a segment's worth; any amount when the owner is idle), so
 * that consuming messages frees space even when nothing else is written, as when new messages are refused because
 * the disk is full. {@link #maintain()} carries a pass on while the owner has nothing to write, and after a restart,
 * when no sync may come at all. A group's output must fit on the disk (with the disk reserve, which compaction may
 * release); a group with nothing live is removed without writing anything (see {@link SegmentCompactor}).
 * Before a swap compaction makes every appended record durable (forcing even
 * with {@link SyncPolicy#NONE}: it must never drop a record on the strength of one a crash could still lose). The
 * protocol, its crash safety and the liveness rules are in {@link SegmentCompactor} and {@link LiveIndex}.
 */
public final class FileJournal implements Journal {

    private static final Logger LOG = LoggerFactory.getLogger(FileJournal.class);
    private static final int READ_BUFFER_BYTES = 256 * 1024;
    /** Segments kept open for {@link #read}; a backlog spread over more segments reopens the files as it goes. */
    static final int MAX_READ_CHANNELS = 8;
    /** Frames up to this size are read through one reused buffer; larger ones get a buffer of their own. */
    private static final int RECORD_READ_BUFFER_BYTES = 64 * 1024;
    /**
     * Source bytes an automatic compaction step reads after a sync: about a millisecond of work, so that rewriting
     * a segment never holds the owner thread (and the acknowledgements waiting on it) for long.
     */
    static final long COMPACTION_STEP_BYTES = 256 * 1024;
    private static final int COMPACTION_WRITE_BUFFER_BYTES = 256 * 1024;
    /**
     * Free space a compaction output leaves untouched (a quarter segment for small segments), so that the DELETEs and
     * checkpoints of every journal on the disk still find room while it is written.
     */
    private static final long COMPACTION_MARGIN_BYTES = 1024 * 1024;

    private final Path directory;
    private final FileJournalOptions options;
    private final SegmentIo io;
    private final DiskReserve reserve;
    private final Runnable onClose;
    private final NavigableMap<Long, Segment> segments = new TreeMap<>();
    private final LiveIndex index = new LiveIndex(segments);
    private final CRC32C crc = new CRC32C();
    private final CRC32C readCrc = new CRC32C();
    private final ByteBuffer writeBuffer;
    /** Segments open for {@link #read}, least recently read first. */
    private final LinkedHashMap<Long, FileChannel> readChannels = new LinkedHashMap<>(16, 0.75f, true);
    private ByteBuffer recordReadBuffer;
    private final SegmentCompactor compactor;
    private final InterruptedCompaction interruptedCompaction;

    private SegmentWriter active;
    private Segment activeSegment;
    /** The segment holding the last synced byte and its size then: where a failed batch rolls back to. */
    private long syncedSegment;
    private long syncedSizeBytes;
    /**
     * Records appended since the last successful sync (id, packed entry, offset in its segment); indexed once the
     * sync succeeds.
     */
    private long[] pendingIds = new long[64];
    private long[] pendingEntries = new long[64];
    private long[] pendingOffsets = new long[64];
    private int pendingCount;
    private long appendedCount;
    private boolean rolledSinceAutoCompaction;
    /** {@link LiveIndex#sealedKilledBytes()} when the last automatic pass was requested. */
    private long sealedKilledAtPass;
    /** The disk's free bytes as last read when a compaction group was picked. */
    private long lastFreeBytes = Long.MAX_VALUE;
    /** The latest background deletion of replaced segments; {@link #close} waits for it. */
    private Future<?> obsoleteDeletion;
    /** Source bytes one automatic compaction step reads after a sync (see {@link SegmentCompactor#step}). */
    private long compactionStepBytes = COMPACTION_STEP_BYTES;
    private RecoveryReport recoveryReport;
    private boolean replayed;
    /** Recovery found a non-empty last segment that does not start with a batch-end marker (an older format). */
    private boolean activeSegmentUnmarked;
    private boolean closed;
    /** Set when the journal can no longer be used; every later call fails with it as the cause. */
    private RuntimeException failure;

    /**
     * Opens (creating if needed) the journal in {@code directory}, finishing or undoing an interrupted compaction.
     * Records are read by {@link #replay}. Nothing locks the directory: {@link FileJournalFactory} does.
     *
     * @param directory the journal's own directory
     * @param options   segment size, sync policy, buffer size and automatic compaction
     * @throws JournalException when the directory cannot be read or prepared
     */
    // ops (metrics): begin
    private volatile SyncListener syncListener = SyncListener.NONE;

    /** Sets who is told about each sync's duration (a metrics hook). */
    public void syncListener(SyncListener listener) {
        this.syncListener = listener == null ? SyncListener.NONE : listener;
    }
    // ops (metrics): end

    public FileJournal(Path directory, FileJournalOptions options) {
        this(directory, options, SegmentIo.DIRECT, () -> { });
    }

    /** A journal with no disk reserve (see {@link FileJournalFactory} for journals that share one). */
    FileJournal(Path directory, FileJournalOptions options, SegmentIo io, Runnable onClose) {
        this(directory, options, io, DiskReserve.none(directory, options.diskSpace()), onClose);
    }

    /**
     * @param directory the journal's own directory
     * @param options   segment size, sync policy, buffer size, automatic compaction and the disk's free space
     * @param io        the write/force seam (tests inject faults through it)
     * @param reserve   the data directory's disk reserve, released when a write or compaction runs out of space
     * @param onClose   run once when the journal is closed (the factory forgets the name)
     */
    FileJournal(Path directory, FileJournalOptions options, SegmentIo io, DiskReserve reserve, Runnable onClose) {
        this.directory = Objects.requireNonNull(directory, "directory");
        this.options = Objects.requireNonNull(options, "options");
        this.io = io;
        this.reserve = Objects.requireNonNull(reserve, "reserve");
        this.onClose = onClose;
        this.writeBuffer = ByteBuffer.allocateDirect(options.writeBufferSizeBytes());
        try {
            if (!Files.isDirectory(directory)) {
                Files.createDirectories(directory);
                Path parent = directory.toAbsolutePath().getParent();
                if (parent != null) {
                    SegmentFiles.fsyncDirectory(parent);
                }
            }
            this.interruptedCompaction = SegmentCompactor.recoverInterrupted(directory);
            for (long number : SegmentFiles.listSegments(directory)) {
                Path path = SegmentFiles.segmentPath(directory, number);
                segments.put(number, new Segment(number, path, Files.size(path)));
            }
        } catch (IOException e) {
            throw DiskErrors.toJournalException("cannot open journal " + directory, e);
        }
        this.compactor = new SegmentCompactor(directory, segments, index, io, options.segmentSizeBytes(),
                ByteBuffer.allocateDirect(COMPACTION_WRITE_BUFFER_BYTES), new CRC32C(),
                this::forceBeforeCompactionSwap, new CompactionSpace());
        if (options.syncPolicy() == SyncPolicy.NONE) {
            LOG.warn("Journal {} uses SyncPolicy.NONE: synced records are NOT durable and may be lost on power "
                    + "failure or an operating-system crash", directory);
        }
    }

    @Override
    public void replay(ReplayHandler handler) {
        Objects.requireNonNull(handler, "handler");
        if (closed) {
            throw new IllegalStateException("journal " + directory + " is closed");
        }
        if (replayed) {
            throw new IllegalStateException("replay may be called only once, before the first append");
        }
        replayed = true;
        try {
            recoveryReport = recover(handler);
            openActiveSegment();
        } catch (IOException e) {
            failure = DiskErrors.toJournalException("cannot recover journal " + directory, e);
            throw failure;
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        }
        if (options.autoCompactLiveRatio() > 0) {
            requestAutoPass(); // what the last run left dead is reclaimed even if nothing is ever written again
        }
        RecoveryReport r = recoveryReport;
        LOG.info("Recovered journal {}: {} records ({} bytes) from {} segments; torn tail truncated: {} bytes; "
                        + "corrupt segments: {}; interrupted compaction: {}", directory, r.recordsReplayed(),
                r.bytesReplayed(), r.segmentsScanned(), r.bytesTruncated(), r.corruptions().size(),
                r.interruptedCompaction());
    }

    private RecoveryReport recover(ReplayHandler handler) throws IOException {
        ByteBuffer readBuffer = ByteBuffer.allocate(READ_BUFFER_BYTES);
        Replayed replayed = new Replayed(handler);
        long bytesTruncated = 0;
        String torn = null;
        boolean tornBatch = false;
        List<Corruption> corruptions = new ArrayList<>();
        long lastNumber = segments.isEmpty() ? -1 : segments.lastKey();
        index.sealedBelow(segments.isEmpty() ? Long.MAX_VALUE : lastNumber);
        for (Segment segment : segments.values()) {
            boolean last = segment.number == lastNumber;
            try (SegmentReader reader = new SegmentReader(segment.path, readBuffer)) {
                // a segment that starts with a marker holds each record back until its batch's end marker (a batch
                // may go on in the next segment); one without (written before markers existed, or by compaction) is
                // delivered record by record
                boolean batched = false;
                boolean first = true;
                JournalRecord record;
                while ((record = reader.next()) != null) {
                    long offsetBytes = reader.position() - reader.lastFrameBytes();
                    if (first) {
                        batched = reader.lastIsMarker();
                        replayed.startSegment(segment.number, batched && !reader.lastIsBatchEnd(),
                                reader.position());
                        first = false;
                    }
                    if (reader.lastIsBatchEnd()) {
                        replayed.endBatch(segment.number, reader.position());
                    } else if (batched && !reader.lastIsMarker()) {
                        replayed.hold(record, segment.number, offsetBytes, reader.lastFrameBytes());
                    } else if (!batched) {
                        replayed.deliver(record, segment.number, offsetBytes, reader.lastFrameBytes());
                    }
                }
                segment.sizeBytes = reader.fileSizeBytes();
                if (last) {
                    activeSegmentUnmarked = !batched && reader.position() > 0;
                }
                if (reader.failure() == null) {
                    continue;
                }
                long validBytes = reader.position();
                long badBytes = reader.fileSizeBytes() - validBytes;
                if (last) {
                    truncate(segment.path, validBytes);
                    segment.sizeBytes = validBytes;
                    bytesTruncated += badBytes;
                    torn = reader.failure();
                    tornBatch = batched;
                    if (!batched && !replayed.unfinished()) {
                        LOG.warn("Truncated the torn tail of {}: dropped {} bytes after offset {} ({})",
                                segment.path, badBytes, validBytes, torn);
                    }
                } else {
                    replayed.endBatch(segment.number, validBytes); // as before markers: the valid prefix is served
                    segment.corrupt = true;
                    index.markCorrupt(segment.number);
                    corruptions.add(new Corruption(segment.path.getFileName().toString(), validBytes, badBytes,
                            reader.failure()));
                    LOG.error("Corrupt record in sealed segment {} at offset {} ({}): the remaining {} bytes of the "
                                    + "segment were skipped, not served; the file is left as is for inspection",
                            segment.path, validBytes, reader.failure(), badBytes);
                }
            }
        }
        if (replayed.unfinished() || tornBatch) {
            bytesTruncated += dropUnfinishedBatch(replayed, bytesTruncated, torn);
        }
        return new RecoveryReport(replayed.records, segments.size(), replayed.bytes, bytesTruncated, corruptions,
                interruptedCompaction);
    }

    /**
     * Drops the last batch, which has no end marker (a crash while it was written): its held records are never
     * delivered, and every byte from where it starts (after the last batch-end marker) is truncated, in the segment
     * it starts in and in every later one (which only it can have reached). Returns the bytes dropped on top of
     * {@code tornBytes}, the torn tail already cut (for {@code torn}, a reason, or null).
     */
    private long dropUnfinishedBatch(Replayed replayed, long tornBytes, String torn) throws IOException {
        long droppedBytes = 0;
        for (Segment segment : segments.tailMap(replayed.batchSegment, true).values()) {
            long keep = segment.number == replayed.batchSegment ? replayed.batchOffset : 0;
            if (segment.sizeBytes > keep) {
                droppedBytes += segment.sizeBytes - keep;
                truncate(segment.path, keep);
                segment.sizeBytes = keep;
            }
        }
        LOG.warn("Truncated the torn tail of journal {}: dropped its unfinished last batch whole, {} complete records "
                        + "and {} bytes in all from offset {} of segment {} on ({})", directory,
                replayed.held.size(), tornBytes + droppedBytes, replayed.batchOffset, replayed.batchSegment,
                torn != null ? torn : "no batch-end marker after them");
        replayed.held.clear();
        return droppedBytes;
    }

    /** A record read during recovery and held back until its batch's end marker. */
    private record HeldRecord(JournalRecord record, long segmentNumber, long offsetBytes, int frameBytes) {
    }

    /**
     * Delivers recovered records to the replay handler and indexes them, counting them for the report; holds the
     * records of the batch being read until its end marker, and knows where that batch starts.
     */
    private final class Replayed {
        private final ReplayHandler handler;
        final List<HeldRecord> held = new ArrayList<>();
        long records;
        long bytes;
        /** Where the batch being read starts: just after the last batch-end marker read. */
        long batchSegment;
        long batchOffset;

        Replayed(ReplayHandler handler) {
            this.handler = handler;
        }

        /**
         * A segment begins: its first frame is a batch-continues marker ending at {@code offsetBytes}
         * ({@code continues}), or anything else, before which the batch being read cannot go on.
         */
        void startSegment(long segmentNumber, boolean continues, long offsetBytes) {
            if (!continues) {
                deliverHeld();
                batchSegment = segmentNumber;
                batchOffset = 0;
            } else if (held.isEmpty()) {
                batchSegment = segmentNumber;
                batchOffset = offsetBytes;
            }
        }

        void hold(JournalRecord record, long segmentNumber, long offsetBytes, int frameBytes) {
            held.add(new HeldRecord(record, segmentNumber, offsetBytes, frameBytes));
        }

        /** The batch being read ended at {@code offsetBytes}: its records are delivered. */
        void endBatch(long segmentNumber, long offsetBytes) {
            deliverHeld();
            batchSegment = segmentNumber;
            batchOffset = offsetBytes;
        }

        boolean unfinished() {
            return !held.isEmpty();
        }

        void deliver(JournalRecord record, long segmentNumber, long offsetBytes, int frameBytes) {
            handler.onRecord(record);
            index.add(record.id(), record.kind(), segmentNumber, offsetBytes, frameBytes);
            records++;
            bytes += frameBytes;
        }

        private void deliverHeld() {
            for (HeldRecord r : held) {
                deliver(r.record(), r.segmentNumber(), r.offsetBytes(), r.frameBytes());
            }
            held.clear();
        }
    }

    private static void truncate(Path file, long sizeBytes) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(sizeBytes);
            channel.force(true);
        }
    }

    private void openActiveSegment() throws IOException {
        if (segments.isEmpty()) {
            Path path = SegmentFiles.segmentPath(directory, 1);
            active = SegmentWriter.create(path, io, writeBuffer, crc);
            activeSegment = new Segment(1, path, 0);
            segments.put(1L, activeSegment);
            SegmentFiles.fsyncDirectory(directory);
        } else {
            activeSegment = segments.lastEntry().getValue();
            active = SegmentWriter.openAt(activeSegment.path, activeSegment.sizeBytes, io, writeBuffer, crc);
            // a last segment written before batch-end markers existed is sealed as it is: new batches go to a
            // segment that starts with a marker, so that recovery reads it batch by batch
            if (activeSegment.sizeBytes >= options.segmentSizeBytes() || activeSegmentUnmarked) {
                roll();
            }
        }
        syncedSegment = activeSegment.number;
        syncedSizeBytes = activeSegment.sizeBytes;
        index.sealedBelow(activeSegment.number);
    }

    /**
     * Buffers one record; see the class comment for when it reaches the file.
     *
     * @throws IllegalArgumentException when the payload exceeds the 256 MiB frame limit
     * @throws JournalException         when writing fails; every record appended since the last sync is discarded
     */
    @Override
    public void append(JournalRecord record) {
        Objects.requireNonNull(record, "record");
        append(record.kind(), record.id(), record.type(), record.payload(), 0, record.payload().length);
    }

    /** Writes the payload slice straight into the write buffer: no copy of the caller's array is kept. */
    @Override
    public void append(RecordKind kind, long id, byte type, byte[] payload, int offset, int length) {
        Objects.requireNonNull(kind, "kind");
        Objects.checkFromIndexSize(offset, length, payload.length);
        if (length == 0 && RecordFormat.isMarker(kind, id, type)) {
            throw new IllegalArgumentException("a DELETE of id " + id + " with type " + type + " is reserved for the "
                    + "journal's batch markers");
        }
        checkUsable();
        int frameBytes = RecordFormat.frameBytes(length);
        long offsetBytes;
        try {
            long sizeBytes = active.logicalSizeBytes();
            if (sizeBytes > 0 && sizeBytes + frameBytes > options.segmentSizeBytes()) {
                roll();
            }
            if (active.logicalSizeBytes() == 0) {
                // a segment starts with a marker, so that recovery reads it batch by batch; one started in the
                // middle of a batch says that the batch goes on in it
                writeMarker(pendingCount > 0 ? RecordFormat.BATCH_CONTINUES_TYPE : RecordFormat.BATCH_END_TYPE);
            }
            offsetBytes = active.logicalSizeBytes();
            active.append(kind, id, type, payload, offset, length);
        } catch (IOException e) {
            throw failBatch("cannot append to journal " + directory, e);
        }
        if (pendingCount == pendingIds.length) {
            pendingIds = Arrays.copyOf(pendingIds, pendingCount * 2);
            pendingEntries = Arrays.copyOf(pendingEntries, pendingCount * 2);
            pendingOffsets = Arrays.copyOf(pendingOffsets, pendingCount * 2);
        }
        pendingIds[pendingCount] = id;
        pendingEntries[pendingCount] = LiveIndex.pack(activeSegment.number, kind, false, frameBytes);
        pendingOffsets[pendingCount] = offsetBytes;
        pendingCount++;
        appendedCount++;
    }

    /**
     * Writes the buffered records and, with {@link SyncPolicy#ALWAYS}, forces them once.
     *
     * @throws JournalException when writing or forcing fails; every record appended since the last sync is discarded
     */
    @Override
    public void sync() {
        checkUsable();
        if (pendingCount == 0) {
            return;
        }
        syncPending();
        if (options.autoCompactLiveRatio() > 0) {
            if (rolledSinceAutoCompaction
                    || index.sealedKilledBytes() - sealedKilledAtPass >= options.segmentSizeBytes() / 2) {
                requestAutoPass();
            }
            if (compactor.hasWork()) {
                autoCompactionStep();
            }
        }
    }

    /**
     * Carries automatic compaction on by one bounded step while the owner has nothing to write (call on the writer
     * thread, between batches, when no record is appended and unsynced): a pass is requested when the last one
     * ended and records of sealed segments died since, or at a roll. Without it, space freed by DELETEs would wait
     * for the next sync, which may never come: a drained queue on a full disk, or a restarted broker, writes nothing.
     *
     * @return true when more compaction can run at once; false when there is none, or it waits on the background
     *         thread
     */
    @Override
    public boolean maintain() {
        if (closed || failure != null || !replayed || pendingCount > 0 || options.autoCompactLiveRatio() <= 0) {
            return false;
        }
        if (!compactor.hasWork()
                && (rolledSinceAutoCompaction || index.sealedKilledBytes() != sealedKilledAtPass)) {
            requestAutoPass();
        }
        if (!compactor.hasWork()) {
            return false;
        }
        autoCompactionStep();
        return failure == null && compactor.hasWork() && !compactor.awaitingForce();
    }

    private void requestAutoPass() {
        rolledSinceAutoCompaction = false;
        sealedKilledAtPass = index.sealedKilledBytes();
        compactor.requestPass(options.autoCompactLiveRatio());
    }

    /** One automatic step; a failure is logged, not thrown, since every synced batch is durable regardless. */
    private void autoCompactionStep() {
        try {
            compactDurable(compactionStepBytes);
        } catch (JournalException e) {
            if (e.diskFull()) {
                LOG.warn("Automatic compaction of journal {} ran out of disk space: {}; the synced batches are "
                        + "durable, appends continue, and the pass goes on with the next group", directory,
                        e.getMessage());
            } else {
                LOG.warn("Automatic compaction of journal {} failed; the synced batch is durable and appends "
                        + "continue", directory, e);
            }
        }
    }

    /** Makes the records appended since the last sync durable and indexes them ({@code pendingCount > 0}). */
    private void syncPending() {
        long startNs = System.nanoTime(); // ops (metrics)
        try {
            writeMarker(RecordFormat.BATCH_END_TYPE);
            active.flush();
            if (options.syncPolicy() == SyncPolicy.ALWAYS) {
                active.force();
            }
        } catch (IOException e) {
            throw failBatch("cannot sync journal " + directory, e);
        }
        activeSegment.sizeBytes = active.writtenBytes();
        syncedSegment = activeSegment.number;
        syncedSizeBytes = activeSegment.sizeBytes;
        for (int i = 0; i < pendingCount; i++) {
            long entry = pendingEntries[i];
            compactor.settle(pendingIds[i]); // a survivor of the last swap is brought up to date first
            index.add(pendingIds[i], LiveIndex.kindOf(entry), LiveIndex.segmentOf(entry), pendingOffsets[i],
                    LiveIndex.frameBytesOf(entry));
        }
        syncListener.onSync(pendingCount, System.nanoTime() - startNs); // ops (metrics)
        pendingCount = 0;
    }

    /**
     * Rewrites sealed segments whose live fraction is below {@code liveRatioThreshold}, keeping only their live
     * records in append order. Call between batches, on the owner thread. Records appended and not yet synced are
     * synced first (as by {@link #sync}); with {@link SyncPolicy#NONE} the active segment is forced.
     *
     * @param liveRatioThreshold in [0, 1]: 0 compacts nothing, 1 every sealed segment holding a dead record
     * @return what was rewritten; {@link CompactionResult#NONE} when compaction is disabled after a failure
     * @throws JournalException when the disk fails; nothing is lost, and a failure half-way through a swap is
     *                          finished when the journal is next opened
     */
    public CompactionResult compact(double liveRatioThreshold) {
        if (!(liveRatioThreshold >= 0.0 && liveRatioThreshold <= 1.0)) {
            throw new IllegalArgumentException("liveRatioThreshold must be within [0, 1]: " + liveRatioThreshold);
        }
        checkUsable();
        rolledSinceAutoCompaction = false; // this call stands in for the automatic compaction
        sealedKilledAtPass = index.sealedKilledBytes();
        if (pendingCount > 0) {
            syncPending(); // no automatic step: the full pass below finishes a pass under way
        }
        compactor.requestPass(liveRatioThreshold);
        return compactDurable(Long.MAX_VALUE);
    }

    /**
     * Runs compaction for about {@code budgetBytes} of source bytes (see {@link SegmentCompactor#step}); nothing
     * when the budget is zero.
     */
    private CompactionResult compactDurable(long budgetBytes) {
        if (compactor.disabledReason() != null || budgetBytes <= 0) {
            return CompactionResult.NONE;
        }
        try {
            CompactionResult result = null;
            try {
                result = compactor.step(activeSegment.number, budgetBytes);
            } finally {
                if (result == null || result.segmentsCompacted() > 0) {
                    closeReadChannels(); // segment files may have been replaced or deleted
                }
            }
            if (result.segmentsCompacted() > 0) {
                LOG.info("Compacted {} segments of journal {} into {}: {} -> {} bytes", result.segmentsCompacted(),
                        directory, result.segmentsWritten(), result.bytesBefore(), result.bytesAfter());
            }
            List<Path> obsolete = compactor.takeObsoleteFiles();
            if (!obsolete.isEmpty()) {
                if (budgetBytes == Long.MAX_VALUE) {
                    BackgroundIo.deleteNow(obsolete);
                } else {
                    obsoleteDeletion = BackgroundIo.deleteLater(obsolete);
                }
            }
            return result;
        } catch (IOException e) {
            throw compactionFailed(e);
        } catch (UncheckedIOException e) {
            throw compactionFailed(e.getCause());
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        }
    }

    private JournalException compactionFailed(IOException cause) {
        JournalException thrown = DiskErrors.toJournalException("cannot compact journal " + directory, cause);
        if (thrown.diskFull()) {
            reserve.release("compacting journal " + directory + " ran out of space");
        }
        return thrown;
    }

    /**
     * The space a compaction group's output may take: the disk's free space, plus the disk reserve (released by
     * {@link #makeRoom} when the group needs it), minus a margin left for every journal's DELETEs and checkpoints.
     * Read once per group, never per append.
     */
    private final class CompactionSpace implements SegmentCompactor.OutputSpace {

        @Override
        public long allowance() {
            lastFreeBytes = reserve.freeBytes();
            long room = lastFreeBytes - margin();
            long held = reserve.heldBytes();
            return room > Long.MAX_VALUE - held ? Long.MAX_VALUE : room + held;
        }

        @Override
        public void makeRoom(long bytes) {
            if (lastFreeBytes != Long.MAX_VALUE && bytes > lastFreeBytes - margin() && reserve.heldBytes() > 0) {
                reserve.release("compacting journal " + directory + " needs up to " + bytes + " bytes, "
                        + lastFreeBytes + " are free");
            }
        }

        private long margin() {
            return Math.min(COMPACTION_MARGIN_BYTES, options.segmentSizeBytes() / 4);
        }
    }

    /**
     * Reads the live ADD or UPDATE of {@code id} back from its segment; see the class comment.
     *
     * @return the record, or null when the index holds no live record of that kind for the id
     * @throws JournalException when the file cannot be read or the frame there fails verification (the journal stays
     *                          usable)
     */
    @Override
    public JournalRecord read(long id, RecordKind kind) {
        Objects.requireNonNull(kind, "kind");
        if (kind == RecordKind.DELETE) {
            throw new IllegalArgumentException("only ADD and UPDATE records can be read: " + kind);
        }
        checkReadable();
        compactor.settle(id);
        LiveIndex.IdRecords records = index.records(id);
        if (records == null) {
            return null;
        }
        int i = LiveIndex.liveRecord(records, kind);
        if (i < 0) {
            return null;
        }
        long entry = records.entry(i);
        return readFrame(id, kind, LiveIndex.segmentOf(entry), records.offset(i), LiveIndex.frameBytesOf(entry));
    }

    private JournalRecord readFrame(long id, RecordKind kind, long segmentNumber, long offsetBytes, int frameBytes) {
        Segment segment = segments.get(segmentNumber);
        if (segment == null) {
            throw new IllegalStateException("journal index out of sync: " + kind + " of id " + id + " is indexed in "
                    + "segment " + segmentNumber + ", which does not exist");
        }
        ByteBuffer frame;
        if (frameBytes <= RECORD_READ_BUFFER_BYTES) {
            if (recordReadBuffer == null) {
                recordReadBuffer = ByteBuffer.allocate(RECORD_READ_BUFFER_BYTES);
            }
            frame = recordReadBuffer.clear().limit(frameBytes);
        } else {
            frame = ByteBuffer.allocate(frameBytes);
        }
        try {
            FileChannel channel = readChannel(segment);
            long position = offsetBytes;
            while (frame.hasRemaining()) {
                int read = channel.read(frame, position);
                if (read < 0) {
                    throw corrupt(id, kind, segment, offsetBytes, "the file ends inside the record");
                }
                position += read;
            }
        } catch (IOException e) {
            closeReadChannel(segment.number);
            throw DiskErrors.toJournalException("cannot read " + kind + " of id " + id + " from " + segment.path
                    + " at offset " + offsetBytes, e);
        }
        frame.flip();
        if (frame.get(0) != RecordFormat.MAGIC) {
            throw corrupt(id, kind, segment, offsetBytes, String.format("bad magic 0x%02x", frame.get(0) & 0xff));
        }
        if (frame.getInt(1) != frameBytes - RecordFormat.HEADER_BYTES) {
            throw corrupt(id, kind, segment, offsetBytes, "length " + frame.getInt(1) + " where the index says "
                    + (frameBytes - RecordFormat.HEADER_BYTES));
        }
        int crcEnd = frameBytes - RecordFormat.CRC_BYTES;
        frame.limit(crcEnd).position(RecordFormat.HEADER_BYTES);
        readCrc.reset();
        readCrc.update(frame);
        frame.limit(frameBytes).position(0);
        if ((int) readCrc.getValue() != frame.getInt(crcEnd)) {
            throw corrupt(id, kind, segment, offsetBytes, "CRC mismatch");
        }
        byte kindCode = frame.get(RecordFormat.HEADER_BYTES);
        long storedId = frame.getLong(RecordFormat.HEADER_BYTES + 2);
        if (kindCode != kind.code() || storedId != id) {
            throw corrupt(id, kind, segment, offsetBytes, "found kind " + kindCode + " of id " + storedId);
        }
        byte type = frame.get(RecordFormat.HEADER_BYTES + 1);
        int payloadStart = RecordFormat.HEADER_BYTES + RecordFormat.FIXED_BODY_BYTES;
        byte[] payload = new byte[crcEnd - payloadStart];
        frame.get(payloadStart, payload);
        return new JournalRecord(kind, id, type, payload);
    }

    private static JournalException corrupt(long id, RecordKind kind, Segment segment, long offsetBytes,
                                            String reason) {
        return new JournalException("the " + kind + " of id " + id + " in " + segment.path + " at offset "
                + offsetBytes + " failed verification: " + reason, null, false);
    }

    private FileChannel readChannel(Segment segment) throws IOException {
        FileChannel channel = readChannels.get(segment.number);
        if (channel != null) {
            return channel;
        }
        channel = FileChannel.open(segment.path, StandardOpenOption.READ);
        readChannels.put(segment.number, channel);
        if (readChannels.size() > MAX_READ_CHANNELS) {
            Iterator<Map.Entry<Long, FileChannel>> eldest = readChannels.entrySet().iterator();
            closeQuietly(eldest.next().getValue());
            eldest.remove();
        }
        return channel;
    }

    private void closeReadChannel(long segmentNumber) {
        FileChannel channel = readChannels.remove(segmentNumber);
        if (channel != null) {
            closeQuietly(channel);
        }
    }

    private void closeReadChannels() {
        for (FileChannel channel : readChannels.values()) {
            closeQuietly(channel);
        }
        readChannels.clear();
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            LOG.debug("Ignoring failure to close a read channel", e);
        }
    }

    /** Number of segments currently open for reading (for tests). */
    int openReadChannels() {
        return readChannels.size();
    }

    @Override
    public long appendedCount() {
        return appendedCount;
    }

    /** What replay found and did; available once {@link #replay} has returned. */
    public RecoveryReport recoveryReport() {
        if (recoveryReport == null) {
            throw new IllegalStateException("the recovery report is available after replay");
        }
        return recoveryReport;
    }

    public Path directory() {
        return directory;
    }

    /** Bytes in all segment files, as of the last sync. */
    public long storedBytes() {
        return segments.values().stream().mapToLong(s -> s.sizeBytes).sum();
    }

    /** Bytes of live records, as of the last sync: {@code storedBytes() - liveBytes()} is what compaction can free. */
    public long liveBytes() {
        return segments.values().stream().mapToLong(s -> s.liveBytes).sum();
    }

    /**
     * Closes the segment files. Records appended since the last sync are discarded (truncated away), as a crash
     * would lose them.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (failure == null && active != null && pendingCount > 0) {
                LOG.warn("Closing journal {} discards {} records appended since the last sync", directory,
                        pendingCount);
                discardUnsynced();
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("Could not discard the unsynced records of journal {}; recovery will", directory, e);
        } finally {
            compactor.close(failure != null);
            awaitObsoleteDeletion();
            closeActiveQuietly();
            closeReadChannels();
            onClose.run();
        }
    }

    /**
     * Forces the active segment before a compaction swap when syncs do not: compaction must never drop a record on
     * the strength of a DELETE that a crash could still lose.
     */
    private void forceBeforeCompactionSwap() {
        if (options.syncPolicy() == SyncPolicy.NONE) {
            try {
                active.force();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Waits (a bounded time) for the background deletion of replaced segments, so none outlives the journal. */
    private void awaitObsoleteDeletion() {
        Future<?> deletion = obsoleteDeletion;
        if (deletion == null) {
            return;
        }
        try {
            deletion.get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("Replaced segments of journal {} are still being deleted; the next open finishes", directory);
        }
    }

    /** Package-private test seam: the source bytes one automatic compaction step reads (0: none). */
    void compactionStepBytes(long bytes) {
        compactionStepBytes = bytes;
    }

    /** Package-private test seam: index entries settled per automatic compaction step after a swap. */
    void compactionSettleBatch(int survivors) {
        compactor.settleBatch(survivors);
    }

    /** Package-private test seam: a swapped group's index entries are still being settled. */
    boolean compactionSettling() {
        return compactor.settling();
    }

    /** Package-private test seam: called after each compaction step, to simulate a crash there. */
    void compactionHook(CompactionStep.Hook hook) {
        compactor.hook(Objects.requireNonNull(hook, "hook"));
    }

    /** Numbers of the segment files, oldest first (for tests). */
    List<Long> segmentNumbers() {
        return new ArrayList<>(segments.keySet());
    }

    /** Test seam: rolls to a new, empty active segment, so every synced record is in a sealed one. */
    void sealActiveSegment() {
        checkUsable();
        if (pendingCount > 0) {
            throw new IllegalStateException("sync before sealing the active segment");
        }
        try {
            roll();
        } catch (IOException e) {
            throw DiskErrors.toJournalException("cannot roll journal " + directory, e);
        }
    }

    /** Number of record ids the liveness index tracks (for tests and metrics). */
    int indexedIdCount() {
        return index.idCount();
    }

    /** Ends the batch, or starts a segment, with a batch marker of this type; see {@link RecordFormat#MARKER_ID}. */
    private void writeMarker(byte type) throws IOException {
        active.append(RecordKind.DELETE, RecordFormat.MARKER_ID, type, RecordFormat.NO_PAYLOAD, 0, 0);
    }

    private void roll() throws IOException {
        active.flush();
        active.force();
        activeSegment.sizeBytes = active.writtenBytes();
        active.close();
        active = null;
        long number = activeSegment.number + 1;
        Path path = SegmentFiles.segmentPath(directory, number);
        active = SegmentWriter.create(path, io, writeBuffer, crc);
        activeSegment = new Segment(number, path, 0);
        segments.put(number, activeSegment);
        index.sealedBelow(number);
        SegmentFiles.fsyncDirectory(directory);
        rolledSinceAutoCompaction = true;
    }

    /** Discards the failed batch (see the class comment) and returns the exception to throw. */
    private JournalException failBatch(String what, IOException cause) {
        JournalException thrown = DiskErrors.toJournalException(what, cause);
        if (thrown.diskFull()) {
            reserve.release(what + ": the disk is full");
        }
        try {
            discardUnsynced();
            LOG.warn("{}; discarded the records appended since the last sync: {}", what, cause.toString());
        } catch (IOException | RuntimeException rollbackFailure) {
            thrown.addSuppressed(rollbackFailure);
            failure = thrown;
            closeActiveQuietly();
            LOG.error("{}, and rolling back to the last synced position failed too; the journal must be reopened",
                    what, rollbackFailure);
        }
        return thrown;
    }

    /** Deletes segments created since the last sync and truncates the synced one back to its synced size. */
    private void discardUnsynced() throws IOException {
        pendingCount = 0;
        writeBuffer.clear();
        closeActiveQuietly();
        boolean deleted = false;
        while (segments.lastKey() > syncedSegment) {
            Segment newer = segments.pollLastEntry().getValue();
            closeReadChannel(newer.number);
            Files.deleteIfExists(newer.path);
            deleted = true;
        }
        if (deleted) {
            SegmentFiles.fsyncDirectory(directory);
        }
        Segment synced = segments.get(syncedSegment);
        active = SegmentWriter.openAt(synced.path, syncedSizeBytes, io, writeBuffer, crc);
        active.discardAndTruncate(syncedSizeBytes);
        activeSegment = synced;
        synced.sizeBytes = syncedSizeBytes;
        index.sealedBelow(synced.number);
    }

    private void closeActiveQuietly() {
        if (active == null) {
            return;
        }
        try {
            active.close();
        } catch (IOException e) {
            LOG.debug("Ignoring failure to close {}", active.path(), e);
        }
        active = null;
    }

    /** Reading needs an open journal whose replay has started; it does not need the append side to be healthy. */
    private void checkReadable() {
        if (closed) {
            throw new IllegalStateException("journal " + directory + " is closed");
        }
        if (!replayed) {
            throw new IllegalStateException("replay must be called before reading records");
        }
    }

    private void checkUsable() {
        if (closed) {
            throw new IllegalStateException("journal " + directory + " is closed");
        }
        if (failure != null) {
            throw new JournalException("journal " + directory + " failed earlier and must be reopened: "
                    + failure.getMessage(), failure, false);
        }
        if (!replayed) {
            throw new IllegalStateException("replay must be called once before the first append");
        }
    }

    @Override
    public String toString() {
        return "FileJournal[" + directory + ", " + segments.size() + " segments]";
    }
}
