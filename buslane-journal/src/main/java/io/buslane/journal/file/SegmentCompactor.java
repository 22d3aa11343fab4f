package io.buslane.journal.file;

import io.buslane.journal.RecordKind;
import io.buslane.journal.file.RecoveryReport.InterruptedCompaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;

/**
 * Confined to its journal's writer thread. Rewrites sealed segments whose live fraction is below a threshold, and
 * finishes or undoes a compaction that a crash interrupted.
 *
 * <p><b>Choosing groups.</b> Segments are walked oldest first; the active (last) segment and corrupt segments are
 * never touched. A candidate has live bytes below {@code threshold × size} (or is empty). A run of adjacent
 * segments that are candidates or smaller than half a segment becomes one group while its live bytes fit in one
 * segment (and its bytes in {@link #MAX_GROUP_SEGMENTS} segments), and is rewritten if it holds a candidate or more
 * than one segment: so the small outputs of earlier compactions merge instead of piling up. Each decision is taken
 * after the previous group is done, because dropping old ADDs can make a later DELETE dead. Oldest first is also
 * what keeps every intermediate state correct: a DELETE is only dropped once no older segment still holds what it
 * deletes. A group's output (at most its segments' live bytes) must also fit in the space the journal's
 * {@link OutputSpace} allows, which is the disk's free space with the disk reserve (see {@link DiskReserve}): a
 * group stops growing where it would not fit, and a first segment that does not fit on its own is passed over, so
 * that wholly dead segments, whose output is nothing, are reclaimed on a full disk too.
 *
 * <p><b>Steps.</b> A pass is requested ({@link #requestPass}) and carried out by {@link #step}s of bounded size, so
 * that the owner thread appends and syncs between them; the copy of one group may span many steps (the group's
 * sources are sealed and change only in their liveness flags meanwhile), its swap (2 to 5 below) never does.
 * After a swap, the index entries of the ids the group held are brought up to date (settled) in batches of
 * {@link #SETTLE_BATCH} per step, and the journal settles an id on the spot before it reads or indexes anything of
 * it ({@link #settle(long)}); the next group starts once all are settled.
 *
 * <p><b>Compacting one group</b> {@code a..b} (the output takes number {@code a}, so append order is preserved):
 * <ol>
 *   <li>copy the group's live records, in order, to {@code a.seg.compacted} and force it (no file if none is
 *       live: then the group is removed as described below, without steps 2 to 5) —
 *       {@link CompactionStep#OUTPUT_WRITTEN}; a record live when copied and deleted before the swap is kept (dead
 *       in the index from the swap on, dropped by a later pass);</li>
 *   <li>write {@code compaction.manifest} ({@link CompactionManifest}: target {@code a}, sources {@code a..b},
 *       output size), force it, fsync the directory — {@link CompactionStep#MANIFEST_WRITTEN};</li>
 *   <li>delete sources {@code b..a+1} — {@link CompactionStep#SOURCE_DELETED} after each; then move {@code a} out
 *       of the way. A source is deleted by renaming it to {@code n.seg.obsolete}: the journal frees its blocks
 *       later, on a background thread (explicit {@link FileJournal#compact} at once), so that the writer thread
 *       never waits for the file system to release tens of megabytes;</li>
 *   <li>rename {@code a.seg.compacted} over {@code a.seg} (an atomic {@code rename(2)} that replaces the target),
 *       fsync the directory — {@link CompactionStep#OUTPUT_RENAMED};</li>
 *   <li>delete the manifest, fsync the directory — {@link CompactionStep#MANIFEST_DELETED}.</li>
 * </ol>
 *
 * <p><b>Recovery at open</b> ({@link #recoverInterrupted}):
 * <ol>
 *   <li>A manifest that is torn (short, bad CRC) was never durable, so nothing was deleted: delete it. Rolled
 *       back.</li>
 *   <li>A valid manifest: roll forward. Check the output file (if still there) has the recorded size, delete the
 *       sources other than the target that remain, rename the output over the target if the rename has not
 *       happened (the output file only disappears by that rename), fsync, delete the manifest, fsync. (A manifest
 *       without output, written for all-dead groups before they were removed without one, deletes every
 *       source.)</li>
 *   <li>Any {@code *.seg.compacted} left without a manifest is a step 1 that never finished: delete it. Rolled
 *       back.</li>
 *   <li>Any {@code *.seg.obsolete} is a source a swap already replaced (see step 3): delete it.</li>
 * </ol>
 *
 * <p><b>A group with nothing live</b> (every record dead: a drained queue) is removed without writing anything, so
 * that it can be reclaimed on a disk too full for a manifest: its sources are deleted (renamed to
 * {@code *.seg.obsolete}) <em>oldest first</em>, with a directory fsync after each, and no manifest. A crash in between
 * leaves a suffix of the group, which is a valid journal: every record in it is dead, and the ADDs and UPDATEs that
 * its DELETEs delete were either older than the group (then the DELETE was live, and the group was not all dead) or
 * in the deleted prefix; the reopened journal compacts the rest again.
 *
 * <p>A failure before the manifest is durable deletes the partial output and leaves the journal as it was (the pass
 * goes on with the next group, so a group that does not fit on a full disk does not hold up those after it); a failure
 * after it disables compaction until the journal is reopened, which rolls the step forward.
 */
final class SegmentCompactor {

    private static final Logger LOG = LoggerFactory.getLogger(SegmentCompactor.class);
    private static final int READ_BUFFER_BYTES = 64 * 1024;
    /**
     * A group's sources hold at most this many segments' worth of bytes: the swap updates the index entry of every
     * record they hold at once, so its pause grows with them (not with the live bytes).
     */
    private static final int MAX_GROUP_SEGMENTS = 2;
    /** An output at least this large is forced on the background thread (see {@link BackgroundIo}). */
    private static final long BACKGROUND_FORCE_BYTES = 256 * 1024;

    private final Path directory;
    private final NavigableMap<Long, Segment> segments;
    private final LiveIndex index;
    private final SegmentIo io;
    private final long segmentSizeBytes;
    private final ByteBuffer writeBuffer;
    private final CRC32C crc;
    private final ByteBuffer readBuffer = ByteBuffer.allocate(READ_BUFFER_BYTES);
    private final Runnable beforeSwap;
    private final OutputSpace outputSpace;
    private CompactionStep.Hook hook = CompactionStep.Hook.NONE;
    private String disabledReason;
    /** Replaced segments renamed out of the way by finished swaps, for the journal to delete. */
    private final List<Path> obsoleteFiles = new ArrayList<>();
    /** The group being copied, or null. */
    private Job job;
    /** A swapped group whose survivors the index does not all reflect yet (see {@link #settle}), or null. */
    private Job settling;
    private int settleBatch = SETTLE_BATCH;
    /** A pass is under way: groups are picked from {@link #cursor} on with {@link #passThreshold}. */
    private boolean passRequested;
    private Long cursor;
    private double passThreshold;

    private static final long[] NOTHING_KEPT = new long[0];
    /**
     * Survivors brought up to date in the index per {@link #step} after a swap: at about 0.3 µs each (cache misses
     * on the ids' entries), a group of 30,000 ids updated at once held the writer thread for 5 to 17 ms.
     */
    static final int SETTLE_BATCH = 2048;

    /** Where compaction output goes: how much a group's output may take, and room made before it is copied. */
    interface OutputSpace {

        /** Bytes the output of the next group may take, counting what {@link #makeRoom} can free. */
        long allowance();

        /** Called before a group whose output takes at most {@code bytes} is copied. */
        void makeRoom(long bytes);
    }

    /** The surviving index entries of one id while its records in a group are copied. */
    private static final class Survivors {
        final long id;
        final LiveIndex.IdRecords records;
        final int from;
        int next;
        /** Slot pairs as in {@link LiveIndex.IdRecords}: packed entry, offset in the output segment. */
        long[] kept = NOTHING_KEPT;
        int keptCount;
        /** The index holds this id's new entries (see {@link #settle}). */
        boolean settled;

        Survivors(long id, LiveIndex.IdRecords records, int from) {
            this.id = id;
            this.records = records;
            this.from = from;
            this.next = from;
        }

        void keep(long entry, long offsetBytes) {
            if (keptCount << 1 == kept.length) {
                kept = Arrays.copyOf(kept, Math.max(4, kept.length * 2));
            }
            kept[keptCount << 1] = entry;
            kept[(keptCount << 1) + 1] = offsetBytes;
            keptCount++;
        }
    }

    /**
     * @param directory        the journal directory
     * @param segments         the journal's segments, updated in place when a group is swapped
     * @param index            the journal's live index, updated in place
     * @param io               the write/force seam
     * @param segmentSizeBytes the most live bytes one group may have
     * @param writeBuffer      a write buffer of the compactor's own (appends go on between steps)
     * @param crc              a checksum instance of the compactor's own
     * @param beforeSwap       run before a group's manifest is written (the journal forces its active segment)
     * @param outputSpace      how much output a group may write
     */
    SegmentCompactor(Path directory, NavigableMap<Long, Segment> segments, LiveIndex index, SegmentIo io,
                     long segmentSizeBytes, ByteBuffer writeBuffer, CRC32C crc, Runnable beforeSwap,
                     OutputSpace outputSpace) {
        this.directory = directory;
        this.segments = segments;
        this.index = index;
        this.io = io;
        this.segmentSizeBytes = segmentSizeBytes;
        this.writeBuffer = writeBuffer;
        this.crc = crc;
        this.beforeSwap = beforeSwap;
        this.outputSpace = outputSpace;
    }

    void hook(CompactionStep.Hook newHook) {
        this.hook = newHook;
    }

    /** Test seam: survivors settled per step after a swap (default {@link #SETTLE_BATCH}). */
    void settleBatch(int batch) {
        this.settleBatch = batch;
    }

    /** Whether a swapped group's survivors are still being settled (test seam). */
    boolean settling() {
        return settling != null;
    }

    /** Why compaction is off until the journal is reopened, or null. */
    String disabledReason() {
        return disabledReason;
    }

    /**
     * Compacts sealed segments before {@code activeSegment} whose live fraction is below {@code threshold}, all of
     * them now: a group that {@link #step} left half-copied is finished first, then a whole pass runs.
     */
    CompactionResult compact(double threshold, long activeSegment) throws IOException {
        requestPass(threshold);
        return step(activeSegment, Long.MAX_VALUE);
    }

    /**
     * Asks for a pass over the sealed segments with {@code threshold}, carried out by later {@link #step}s; a pass
     * already under way starts again from the oldest segment once its current group is done (a roll may have made
     * older segments worth rewriting).
     */
    void requestPass(double threshold) {
        passThreshold = threshold;
        cursor = segments.isEmpty() ? null : segments.firstKey();
        passRequested = true;
    }

    /** Whether a pass or a group is unfinished: {@link #step} has work to do. */
    boolean hasWork() {
        return settling != null || (disabledReason == null && (job != null || passRequested));
    }

    /** Whether the next step can only wait: the group's output is being forced on the background thread. */
    boolean awaitingForce() {
        Job j = job;
        return settling == null && j != null && j.forcing != null && !j.forcing.isDone();
    }

    /**
     * Brings the index entries of {@code id} up to date if the last swapped group held records of it and its
     * update is still pending (see {@link #step}). The journal calls this before it reads or indexes anything of
     * {@code id}: until then, the id's entries may name a replaced segment, or the target's number with an offset
     * in the file it replaced.
     */
    void settle(long id) {
        Job s = settling;
        if (s != null) {
            Survivors survivors = s.survivorsById.get(id);
            if (survivors != null && !survivors.settled) {
                settle(survivors);
            }
        }
    }

    /** Settles up to {@code max} survivors of the swapped group, in the order met; done when none remain. */
    private void settleSome(long max) {
        Job s = settling;
        List<Survivors> all = s.survivors;
        long done = 0;
        while (s.settleCursor < all.size() && done < max) {
            Survivors survivors = all.get(s.settleCursor++);
            if (!survivors.settled) {
                settle(survivors);
                done++;
            }
        }
        if (s.settleCursor == all.size()) {
            settling = null;
        }
    }

    private void settle(Survivors survivors) {
        survivors.settled = true;
        index.unaccountOutside(survivors.records, survivors.from, survivors.next);
        index.replace(survivors.id, survivors.records, survivors.from, survivors.next, survivors.kept,
                survivors.keptCount);
    }

    /**
     * Does at most about {@code budgetBytes} of the requested pass (source bytes read; a group's swap, a few
     * directory syncs, is never split), so the owner thread is never held for a whole segment. Between steps the
     * journal appends, syncs and reads as usual: a record copied while live and deleted later stays in the output
     * until the next pass, and {@link LiveIndex#replace} recomputes every survivor's liveness when it is settled.
     * A step that settles survivors of the last swap does only that.
     *
     * @return what the groups finished in this step did
     */
    CompactionResult step(long activeSegment, long budgetBytes) throws IOException {
        CompactionResult total = CompactionResult.NONE;
        long budget = budgetBytes;
        boolean all = budgetBytes == Long.MAX_VALUE;
        if (settling != null) {
            settleSome(all ? Long.MAX_VALUE : settleBatch);
            if (settling != null) {
                return total;
            }
        }
        while (disabledReason == null) {
            if (job == null) {
                job = nextGroup(activeSegment);
                if (job == null) {
                    passRequested = false;
                    return total;
                }
            }
            long used = job.copy(budget, budgetBytes == Long.MAX_VALUE);
            if (job == null) {
                return total; // abandoned: the source failed verification
            }
            budget -= used;
            if (!job.copied) {
                return total;
            }
            Job done = job;
            job = null;
            total = total.plus(done.swap());
            settling = done;
            settleSome(all ? Long.MAX_VALUE : settleBatch);
            if (settling != null || budget <= 0) {
                return total;
            }
        }
        return total;
    }

    /** Takes the replaced segment files that finished swaps left to delete. */
    List<Path> takeObsoleteFiles() {
        if (obsoleteFiles.isEmpty()) {
            return List.of();
        }
        List<Path> taken = new ArrayList<>(obsoleteFiles);
        obsoleteFiles.clear();
        return taken;
    }

    /** Abandons a group being copied: its partial output is deleted (no manifest exists for it yet). */
    void abandon() {
        drop(true);
    }

    /**
     * The journal is closing: abandons a group being copied, deleting its partial output unless the journal failed
     * (then only the file handles are released, and the next open cleans up, as after a crash).
     */
    void close(boolean failed) {
        drop(!failed);
    }

    private void drop(boolean deleteOutput) {
        Job j = job;
        job = null;
        passRequested = false;
        if (j == null) {
            return;
        }
        j.awaitForceQuietly();
        j.closeReader();
        if (deleteOutput) {
            abandonOutput(j.writer, j.output);
        } else if (j.writer != null) {
            try {
                j.writer.close();
            } catch (IOException e) {
                LOG.debug("Ignoring failure to close {}", j.output, e);
            }
        }
    }

    /** The next group of the pass, from {@link #cursor} on, or null when the pass is done. */
    private Job nextGroup(long activeSegment) {
        double threshold = passThreshold;
        long allowance = -1; // read from the disk once a group is in sight
        Long key = cursor == null ? null : segments.ceilingKey(cursor);
        while (key != null && key < activeSegment) {
            Segment first = segments.get(key);
            Long next = segments.higherKey(key);
            if (!isMergeable(first, threshold)) {
                key = next;
                continue;
            }
            if (allowance < 0) {
                allowance = Math.max(0, outputSpace.allowance());
            }
            if (first.liveBytes > allowance) {
                LOG.debug("Passing over {} of {}: its {} live bytes do not fit in the {} bytes of disk compaction may "
                        + "use now", first, directory, first.liveBytes, allowance);
                key = next;
                continue;
            }
            long maxLiveBytes = Math.min(segmentSizeBytes, allowance);
            List<Segment> group = new ArrayList<>();
            group.add(first);
            boolean hasCandidate = isCandidate(first, threshold);
            long groupLiveBytes = first.liveBytes;
            long groupBytes = first.sizeBytes;
            while (next != null && next < activeSegment) {
                Segment following = segments.get(next);
                if (!isMergeable(following, threshold)
                        || groupLiveBytes + following.liveBytes > maxLiveBytes
                        || groupBytes + following.sizeBytes > MAX_GROUP_SEGMENTS * segmentSizeBytes) {
                    break;
                }
                group.add(following);
                hasCandidate |= isCandidate(following, threshold);
                groupLiveBytes += following.liveBytes;
                groupBytes += following.sizeBytes;
                next = segments.higherKey(next);
            }
            cursor = next;
            if (hasCandidate || group.size() > 1) {
                outputSpace.makeRoom(groupLiveBytes);
                return new Job(group);
            }
            key = next;
        }
        cursor = null;
        return null;
    }

    /** Worth rewriting on its own: live bytes below {@code threshold} of its size, or empty. */
    private static boolean isCandidate(Segment segment, double threshold) {
        if (segment.corrupt || threshold <= 0) {
            return false;
        }
        return segment.sizeBytes == 0 || segment.liveBytes < threshold * segment.sizeBytes;
    }

    /** A candidate, or under half a segment: small segments left by earlier compactions merge with neighbours. */
    private boolean isMergeable(Segment segment, double threshold) {
        return isCandidate(segment, threshold)
                || (!segment.corrupt && threshold > 0 && segment.sizeBytes < segmentSizeBytes / 2);
    }

    /** One group {@code a..b} being rewritten: copied over any number of steps, then swapped in at once. */
    private final class Job {
        final List<Segment> group;
        final long target;
        final long last;
        final Path output;
        /** Per id met in the group: looked up by id for every record read, walked in first-met order at the swap. */
        final LongHashMap<Survivors> survivorsById = new LongHashMap<>();
        final List<Survivors> survivors = new ArrayList<>();
        SegmentWriter writer;
        SegmentReader reader;
        int sourceIndex;
        /** Records read from the group whose ids the index had dropped (see {@link Segment#forgottenRecords}). */
        long forgottenMet;
        /** After the swap: the next of {@link #survivors} to settle. */
        int settleCursor;
        long bytesBefore;
        /** The background force of the finished output, or null. */
        Future<?> forcing;
        boolean copied;

        Job(List<Segment> group) {
            this.group = group;
            this.target = group.get(0).number;
            this.last = group.get(group.size() - 1).number;
            this.output = SegmentFiles.compactedPath(directory, target);
        }

        /**
         * 1. Copies live records, in order, to {@code <target>.seg.compacted} until about {@code budget} source bytes
         * were read or the group is done; then forces the output (a large one on the background thread, unless
         * {@code wait}: a later call finds the force done) and sets {@link #copied}.
         *
         * @return the source bytes read
         */
        long copy(long budget, boolean wait) throws IOException {
            long used = 0;
            try {
                if (forcing != null) {
                    if (!forcing.isDone() && !wait) {
                        return 0;
                    }
                    awaitForce();
                    copied = true;
                    return 0;
                }
                while (sourceIndex < group.size()) {
                    Segment source = group.get(sourceIndex);
                    if (reader == null) {
                        bytesBefore += source.sizeBytes;
                        reader = new SegmentReader(source.path, readBuffer);
                    }
                    long startPosition = reader.position();
                    while (used + (reader.position() - startPosition) < budget && reader.nextFrame()) {
                        if (reader.lastIsMarker()) {
                            continue; // batch markers matter only until their batch is synced; outputs need none
                        }
                        long outputOffset = writer == null ? 0 : writer.logicalSizeBytes();
                        int verdict = keep(reader.lastKind(), reader.lastId(), reader.lastFrameBytes(), source.number,
                                reader.position() - reader.lastFrameBytes(), target, outputOffset, survivorsById,
                                survivors);
                        if (verdict == FORGOTTEN) {
                            forgottenMet++;
                        } else if (verdict == KEEP) {
                            if (writer == null) {
                                writer = SegmentWriter.create(output, io, writeBuffer, crc);
                            }
                            reader.copyLastFrameTo(writer);
                        }
                    }
                    used += reader.position() - startPosition;
                    if (reader.failure() != null) {
                        source.corrupt = true;
                        disable("segment " + source.path + " failed verification at offset " + reader.position()
                                + " (" + reader.failure() + ") after the journal was opened");
                        abandon();
                        return used;
                    }
                    if (reader.position() < reader.fileSizeBytes()) {
                        return used; // budget spent inside this source
                    }
                    closeReader();
                    sourceIndex++;
                }
                checkAllEntriesVisited(survivors, last);
                long forgotten = 0;
                for (Segment g : group) {
                    forgotten += g.forgottenRecords;
                }
                if (forgottenMet != forgotten) {
                    throw new IllegalStateException("journal index out of sync: segments " + target + " to " + last
                            + " hold " + forgottenMet + " records of ids the index does not know, " + forgotten
                            + " expected");
                }
                if (writer != null) {
                    writer.flush();
                    if (!wait && writer.writtenBytes() >= BACKGROUND_FORCE_BYTES) {
                        // megabytes of writeback: forced on the background thread, the swap waits for it
                        SegmentWriter w = writer;
                        forcing = BackgroundIo.submit(() -> {
                            w.force();
                            return null;
                        });
                        return used;
                    }
                    writer.force();
                }
                copied = true;
                return used;
            } catch (IOException e) {
                // this group is given up (its partial output deleted); the pass goes on with the next one
                job = null;
                awaitForceQuietly();
                closeReader();
                abandonOutput(writer, output);
                writer = null;
                throw e;
            }
        }

        /** Waits for the background force of the output; its failure is this job's. */
        private void awaitForce() throws IOException {
            Future<?> f = forcing;
            forcing = null;
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while forcing " + output);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof IOException io) {
                    throw io;
                }
                if (cause instanceof RuntimeException re) {
                    throw re;
                }
                throw new IOException("cannot force " + output, cause);
            }
        }

        void awaitForceQuietly() {
            if (forcing != null) {
                try {
                    awaitForce();
                } catch (IOException | RuntimeException e) {
                    LOG.debug("Ignoring the failed force of abandoned output {}", output, e);
                }
            }
        }

        void closeReader() {
            if (reader != null) {
                try {
                    reader.close();
                } catch (IOException e) {
                    LOG.debug("Ignoring failure to close {}", group.get(sourceIndex).path, e);
                }
                reader = null;
            }
        }

        /** 2 to 5: manifest, delete the sources, rename the output over the target, delete the manifest. */
        CompactionResult swap() throws IOException {
            long outputBytes = -1;
            if (writer != null) {
                outputBytes = writer.writtenBytes();
                writer.close();
                writer = null;
                hook.afterStep(CompactionStep.OUTPUT_WRITTEN, target);
            }
            beforeSwap.run();
            if (outputBytes < 0) {
                removeDeadGroup();
                return finishSwap(outputBytes);
            }

            // 2. make the manifest durable: from here on, recovery rolls forward
            long[] sources = group.stream().mapToLong(s -> s.number).toArray();
            Path manifestPath = directory.resolve(SegmentFiles.MANIFEST_NAME);
            try {
                new CompactionManifest(target, sources, outputBytes).write(directory);
                SegmentFiles.fsyncDirectory(directory);
            } catch (IOException e) {
                try {
                    Files.deleteIfExists(manifestPath);
                    SegmentFiles.fsyncDirectory(directory);
                    Files.deleteIfExists(output); // only once the manifest is gone, or recovery would see "renamed"
                } catch (IOException cleanupFailure) {
                    e.addSuppressed(cleanupFailure);
                    disable("could not undo the compaction of segments " + target + ".." + last + " ("
                            + cleanupFailure + "); reopening the journal finishes it");
                }
                throw e;
            }
            hook.afterStep(CompactionStep.MANIFEST_WRITTEN, target);

            // 3-5. delete the sources, swap the output in, delete the manifest; a source is "deleted" by renaming it
            // to <n>.seg.obsolete (metadata only), its blocks are freed later off this thread
            try {
                for (int i = group.size() - 1; i >= 0; i--) {
                    Path source = group.get(i).path;
                    Path obsolete = SegmentFiles.obsoletePath(source);
                    Files.move(source, obsolete, StandardCopyOption.ATOMIC_MOVE);
                    obsoleteFiles.add(obsolete);
                    if (i > 0) {
                        hook.afterStep(CompactionStep.SOURCE_DELETED, target);
                    }
                }
                Files.move(output, group.get(0).path, StandardCopyOption.ATOMIC_MOVE);
                SegmentFiles.fsyncDirectory(directory);
                hook.afterStep(CompactionStep.OUTPUT_RENAMED, target);
                Files.delete(manifestPath);
                SegmentFiles.fsyncDirectory(directory);
            } catch (IOException e) {
                disable("the compaction of segments " + target + ".." + last + " stopped half-way (" + e
                        + "); reopening the journal finishes it");
                throw e;
            }
            hook.afterStep(CompactionStep.MANIFEST_DELETED, target);
            return finishSwap(outputBytes);
        }

        /**
         * Removes a group that holds nothing live without writing a byte (see the class comment): the sources are
         * renamed out of the way oldest first, each rename made durable before the next, so a crash leaves a suffix.
         */
        private void removeDeadGroup() throws IOException {
            try {
                for (Segment source : group) {
                    Path obsolete = SegmentFiles.obsoletePath(source.path);
                    Files.move(source.path, obsolete, StandardCopyOption.ATOMIC_MOVE);
                    obsoleteFiles.add(obsolete);
                    SegmentFiles.fsyncDirectory(directory);
                    hook.afterStep(CompactionStep.SOURCE_DELETED, target);
                }
            } catch (IOException e) {
                disable("the removal of dead segments " + target + ".." + last + " stopped half-way (" + e
                        + "); reopening the journal finishes it");
                throw e;
            }
        }

        /** The disk is done: the segment table follows; the survivors' index entries follow in later steps. */
        private CompactionResult finishSwap(long outputBytes) {
            // the index entries (liveness and record positions) of the survivors follow in batches (see settle),
            // each id's at the latest when it is used
            for (Segment source : group) {
                segments.remove(source.number);
            }
            if (outputBytes >= 0) {
                segments.put(target, new Segment(target, group.get(0).path, outputBytes));
            }
            LOG.debug("Compacted segments {}..{} of {}: {} -> {} bytes", target, last, directory, bytesBefore,
                    Math.max(outputBytes, 0));
            return new CompactionResult(group.size(), outputBytes >= 0 ? 1 : 0, bytesBefore,
                    Math.max(outputBytes, 0));
        }
    }

    /**
     * Matches a record read from a source to its index entry and decides what to do with it: {@link #KEEP} it (copied
     * to the output), {@link #DROP} it (dead), or drop it as {@link #FORGOTTEN}: a record of an id the index dropped
     * (see {@link Segment#forgottenRecords}), recognised because the index holds nothing of the id here: no records
     * at all, or (the id used again later) its next indexed record lies further on in the files. Anything else that
     * does not match the index is an error.
     */
    private int keep(RecordKind kind, long id, int frameBytes, long sourceSegment, long sourceOffset, long target,
                     long outputOffset, LongHashMap<Survivors> survivorsById, List<Survivors> inOrder) {
        // an id's IdRecords stays the same object while its group is copied: only a swap removes ids from the index,
        // and an id dropped at its DELETE had all its records in the active segment, which no group includes
        Survivors survivors = survivorsById.get(id);
        if (survivors == null) {
            LiveIndex.IdRecords found = index.records(id);
            if (found == null) {
                return FORGOTTEN;
            }
            survivors = new Survivors(id, found, LiveIndex.firstIndexAtOrAfter(found, target));
            survivorsById.put(id, survivors);
            inOrder.add(survivors);
        }
        LiveIndex.IdRecords records = survivors.records;
        if (survivors.next >= records.count()) {
            throw outOfSync(kind, id, sourceSegment);
        }
        long entry = records.entry(survivors.next);
        long entrySegment = LiveIndex.segmentOf(entry);
        long entryOffset = records.offset(survivors.next);
        if (entrySegment > sourceSegment || (entrySegment == sourceSegment && entryOffset > sourceOffset)) {
            return FORGOTTEN; // forgotten records precede every later record of their id
        }
        survivors.next++;
        if (entrySegment != sourceSegment || entryOffset != sourceOffset
                || LiveIndex.kindOf(entry) != kind || LiveIndex.frameBytesOf(entry) != frameBytes) {
            throw outOfSync(kind, id, sourceSegment);
        }
        if (!index.keptByCompaction(records, entry, target)) {
            return DROP;
        }
        survivors.keep(LiveIndex.pack(target, kind, false, frameBytes), outputOffset);
        return KEEP;
    }

    private static final int KEEP = 0;
    private static final int DROP = 1;
    private static final int FORGOTTEN = 2;

    /** Every index entry inside the group must have matched a record read from it. */
    private static void checkAllEntriesVisited(List<Survivors> survivors, long lastSegment) {
        for (Survivors s : survivors) {
            if (s.next < s.records.count() && LiveIndex.segmentOf(s.records.entry(s.next)) <= lastSegment) {
                throw new IllegalStateException("journal index out of sync: id " + s.id + " has more records in "
                        + "segments up to " + lastSegment + " than the files hold");
            }
        }
    }

    private static IllegalStateException outOfSync(RecordKind kind, long id, long segment) {
        return new IllegalStateException("journal index out of sync with segment " + segment + " at "
                + kind + " of id " + id);
    }

    private void abandonOutput(SegmentWriter writer, Path output) {
        writeBuffer.clear();
        try {
            if (writer != null) {
                writer.close();
            }
            Files.deleteIfExists(output);
        } catch (IOException e) {
            LOG.warn("Could not delete abandoned compaction output {}; the next open deletes it", output, e);
        }
    }

    private void disable(String reason) {
        disabledReason = reason;
        LOG.error("Compaction of {} disabled until the journal is reopened: {}", directory, reason);
    }

    /**
     * Finishes or undoes a compaction interrupted by a crash; see the class comment. Runs before the segments are
     * listed.
     */
    static InterruptedCompaction recoverInterrupted(Path directory) throws IOException {
        InterruptedCompaction outcome = InterruptedCompaction.NONE;
        Path manifestPath = directory.resolve(SegmentFiles.MANIFEST_NAME);
        if (Files.exists(manifestPath)) {
            Optional<CompactionManifest> manifest = CompactionManifest.read(directory);
            if (manifest.isPresent()) {
                rollForward(directory, manifest.get());
                outcome = InterruptedCompaction.ROLLED_FORWARD;
            } else {
                LOG.warn("Compaction manifest in {} is torn: the compaction never started its swap, rolling back",
                        directory);
                Files.delete(manifestPath);
                SegmentFiles.fsyncDirectory(directory);
                outcome = InterruptedCompaction.ROLLED_BACK;
            }
        }
        for (Path obsolete : SegmentFiles.listObsolete(directory)) {
            Files.deleteIfExists(obsolete); // replaced by a finished compaction: never needed again
        }
        List<Path> strays = SegmentFiles.listCompacted(directory);
        for (Path stray : strays) {
            LOG.warn("Deleting {}: output of a compaction interrupted before its manifest was written", stray);
            Files.delete(stray);
            outcome = outcome == InterruptedCompaction.NONE ? InterruptedCompaction.ROLLED_BACK : outcome;
        }
        if (!strays.isEmpty()) {
            SegmentFiles.fsyncDirectory(directory);
        }
        return outcome;
    }

    private static void rollForward(Path directory, CompactionManifest manifest) throws IOException {
        long target = manifest.target();
        Path output = SegmentFiles.compactedPath(directory, target);
        Path targetPath = SegmentFiles.segmentPath(directory, target);
        boolean outputPending = manifest.hasOutput() && Files.exists(output);
        if (outputPending && Files.size(output) != manifest.outputBytes()) {
            throw new IOException("compaction output " + output + " has " + Files.size(output)
                    + " bytes but the manifest says " + manifest.outputBytes()
                    + "; refusing to guess, inspect the directory");
        }
        if (manifest.hasOutput() && !outputPending && !Files.exists(targetPath)) {
            throw new IOException("compaction manifest in " + directory + " names output segment " + targetPath
                    + " but neither it nor " + output + " exists; refusing to guess, inspect the directory");
        }
        for (long source : manifest.sources()) {
            if (source != target || !manifest.hasOutput()) {
                Files.deleteIfExists(SegmentFiles.segmentPath(directory, source));
            }
        }
        if (outputPending) {
            Files.move(output, targetPath, StandardCopyOption.ATOMIC_MOVE);
        }
        SegmentFiles.fsyncDirectory(directory);
        Files.delete(directory.resolve(SegmentFiles.MANIFEST_NAME));
        SegmentFiles.fsyncDirectory(directory);
        LOG.warn("Finished the compaction of segments {} in {} that a crash interrupted",
                Arrays.toString(manifest.sources()), directory);
    }
}
