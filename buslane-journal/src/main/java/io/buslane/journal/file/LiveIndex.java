package io.buslane.journal.file;

import io.buslane.journal.RecordKind;

import java.util.Arrays;
import java.util.NavigableMap;

/**
 * Confined to its journal's writer thread. Which stored (synced) records are live, per record id, and the live
 * bytes of each segment, so compaction can pick segments by live fraction and decide record by record.
 *
 * <p>Liveness follows {@link RecordKind}:
 * <ul>
 *   <li>an ADD or UPDATE is dead once a later DELETE of the same id is stored;</li>
 *   <li>an UPDATE is also dead once a later UPDATE of the same id is stored;</li>
 *   <li>a DELETE is live while an ADD or UPDATE of its id is stored in an older segment (it must outlive what it
 *       deletes, or replay would resurrect them), or while an older segment is corrupt (it may have held some).</li>
 * </ul>
 * Whether a record is stored is what is on disk now: compaction that drops records updates the index.
 *
 * <p>The index also says where each record is (segment and offset), so {@link FileJournal#read} can read the live
 * ADD or UPDATE of an id back without a scan; compaction moves the positions with the records it copies.
 *
 * <p>An id whose records are all dead and all in one segment (an ADD and its DELETE in the same segment) is dropped at
 * its DELETE; the segment counts those records in {@link Segment#forgottenRecords}, which compaction checks.
 *
 * <p>Memory: per id that has stored records, one {@link IdRecords} (24 bytes), a slot in a primitive hash map (16
 * to 32 bytes at its load factors, see {@link LongHashMap}) and two {@code long}s per stored record, in an array
 * sized for two records from the start (48 bytes): about 105 bytes for a live queued message. An entry packs segment
 * number (high 32 bits), kind (2 bits), live flag (1 bit) and frame size (29 bits); the second {@code long} is the
 * record's byte offset in its segment.
 */
final class LiveIndex {

    private static final int SIZE_BITS = 29;
    private static final long SIZE_MASK = (1L << SIZE_BITS) - 1;
    private static final long LIVE_BIT = 1L << SIZE_BITS;
    private static final int KIND_SHIFT = SIZE_BITS + 1;

    private final LongHashMap<IdRecords> ids = new LongHashMap<>();
    private final NavigableMap<Long, Segment> segments;
    private long oldestCorruptSegment = Long.MAX_VALUE;
    /** Segments numbered below this one are sealed (the active segment's number). */
    private long sealedBelow = Long.MAX_VALUE;
    /** Bytes of records in sealed segments that a later DELETE or UPDATE made dead, since the journal opened. */
    private long sealedKilledBytes;

    /**
     * The stored records of one id, in append order (which is also segment order): two {@code long}s per record,
     * the packed entry and the record's offset in its segment. Sized for two records at first, since most ids (a
     * queued or scheduled message) have an ADD and then its DELETE: the DELETE of an id that has long been stored
     * then writes into an array the collector has already promoted, instead of storing a new array's reference into
     * an old object (with a million scheduled messages, those references were most of the cards each young
     * collection had to scan).
     */
    static final class IdRecords {
        long[] slots = new long[4];
        int count;
        /** Index of the one UPDATE that can be live (the latest, when no DELETE follows it), or -1. */
        int liveUpdate = -1;

        long entry(int index) {
            return slots[index << 1];
        }

        long offset(int index) {
            return slots[(index << 1) + 1];
        }

        int count() {
            return count;
        }

        private void setEntry(int index, long entry) {
            slots[index << 1] = entry;
        }

        private void push(long entry, long offset) {
            if (count << 1 == slots.length) {
                slots = Arrays.copyOf(slots, slots.length * 2);
            }
            slots[count << 1] = entry;
            slots[(count << 1) + 1] = offset;
            count++;
        }
    }

    LiveIndex(NavigableMap<Long, Segment> segments) {
        this.segments = segments;
    }

    static long pack(long segment, RecordKind kind, boolean live, int frameBytes) {
        if (segment <= 0 || segment > Integer.MAX_VALUE) {
            throw new IllegalStateException("segment number out of range: " + segment);
        }
        return (segment << 32) | ((long) kind.code() << KIND_SHIFT) | (live ? LIVE_BIT : 0) | frameBytes;
    }

    static long segmentOf(long entry) {
        return entry >>> 32;
    }

    static RecordKind kindOf(long entry) {
        return RecordKind.ofCode((byte) ((entry >>> KIND_SHIFT) & 3));
    }

    static boolean isLive(long entry) {
        return (entry & LIVE_BIT) != 0;
    }

    static int frameBytesOf(long entry) {
        return (int) (entry & SIZE_MASK);
    }

    private static long withLive(long entry, boolean live) {
        return live ? entry | LIVE_BIT : entry & ~LIVE_BIT;
    }

    /** The active segment is now {@code segment}: kills in the segments before it count as sealed kills. */
    void sealedBelow(long segment) {
        sealedBelow = segment;
    }

    /**
     * Bytes of sealed segments' records that later DELETEs and UPDATEs made dead since the journal opened: a
     * monotonic counter whose growth tells the journal that compaction has new space to reclaim, with or without a
     * segment roll.
     */
    long sealedKilledBytes() {
        return sealedKilledBytes;
    }

    /** Segments from this one on may follow records recovery could not read: their DELETEs stay live. */
    void markCorrupt(long segment) {
        oldestCorruptSegment = Math.min(oldestCorruptSegment, segment);
    }

    IdRecords records(long id) {
        return ids.get(id);
    }

    int idCount() {
        return ids.size();
    }

    /**
     * The index of the id's live record of {@code kind} (the latest live ADD, or the live UPDATE), or -1. DELETE
     * records are not looked up.
     */
    static int liveRecord(IdRecords records, RecordKind kind) {
        if (kind == RecordKind.UPDATE) {
            return records.liveUpdate;
        }
        for (int i = records.count - 1; i >= 0; i--) {
            long entry = records.entry(i);
            if (kindOf(entry) == RecordKind.ADD) {
                return isLive(entry) ? i : -1;
            }
        }
        return -1;
    }

    /**
     * Records a newly stored record (replayed, or synced) at the end of the append order.
     *
     * @param offsetBytes where the record starts in its segment
     */
    void add(long id, RecordKind kind, long segment, long offsetBytes, int frameBytes) {
        IdRecords records = ids.computeIfAbsent(id, k -> new IdRecords());
        boolean live = true;
        switch (kind) {
            case ADD:
                break;
            case UPDATE:
                if (records.liveUpdate >= 0) {
                    kill(records, records.liveUpdate);
                }
                records.liveUpdate = records.count;
                break;
            case DELETE:
                for (int i = records.count - 1; i >= 0 && kindOf(records.entry(i)) != RecordKind.DELETE; i--) {
                    if (isLive(records.entry(i))) {
                        kill(records, i);
                    }
                }
                records.liveUpdate = -1;
                live = deleteIsLive(records, segment);
                break;
            default:
                throw new IllegalStateException("unknown kind " + kind);
        }
        records.push(pack(segment, kind, live, frameBytes), offsetBytes);
        if (live) {
            addLiveBytes(segment, frameBytes);
        } else if (kind == RecordKind.DELETE && allDeadIn(records, segment)) {
            // nothing of the id is live and all of it is in this one segment (not yet in any compaction group, as the
            // DELETE was just written there or is being replayed): nothing left to decide, so the id is dropped now
            // instead of after compaction, and its entries die young (an end-to-end message's ADD and DELETE are
            // milliseconds apart); the segment counts the records it no longer indexes
            ids.remove(id);
            Segment s = segments.get(segment);
            if (s != null) {
                s.forgottenRecords += records.count;
            }
        }
    }

    private static boolean allDeadIn(IdRecords records, long segment) {
        for (int i = 0; i < records.count; i++) {
            long entry = records.entry(i);
            if (isLive(entry) || segmentOf(entry) != segment) {
                return false;
            }
        }
        return true;
    }

    /** Index of the first entry in segment {@code segment} or later, or {@code count} if none. */
    static int firstIndexAtOrAfter(IdRecords records, long segment) {
        int i = 0;
        while (i < records.count && segmentOf(records.entry(i)) < segment) {
            i++;
        }
        return i;
    }

    /**
     * Whether compaction of the segments starting at {@code groupStart} keeps this entry. ADD and UPDATE: their live
     * flag. DELETE: live only if a segment older than the whole group holds an ADD or UPDATE of the id, since every
     * older one inside the group is dropped with it.
     */
    boolean keptByCompaction(IdRecords records, long entry, long groupStart) {
        if (kindOf(entry) == RecordKind.DELETE) {
            return deleteIsLive(records, groupStart);
        }
        return isLive(entry);
    }

    /**
     * Stops counting an id's live bytes in the segments outside entries {@code [from, to)}, before compaction replaces
     * those entries (their segments are gone; the first one's number now names the compaction's output).
     */
    void unaccountOutside(IdRecords records, int from, int to) {
        for (int i = 0; i < records.count; i++) {
            long entry = records.entry(i);
            if ((i < from || i >= to) && isLive(entry)) {
                addLiveBytes(segmentOf(entry), -(long) frameBytesOf(entry));
            }
        }
    }

    /**
     * Replaces entries {@code [from, to)} of an id (those in the compacted segments) with the {@code kept} ones, then
     * recomputes the id's liveness and counts its live bytes again. Pair with {@link #unaccountOutside}.
     *
     * @param kept      the surviving records as slot pairs (packed entry, offset in the output segment)
     * @param keptCount the number of surviving records ({@code kept} holds twice as many longs)
     */
    void replace(long id, IdRecords records, int from, int to, long[] kept, int keptCount) {
        int tail = records.count - to;
        int count = from + keptCount + tail;
        if (keptCount <= to - from && records.slots.length <= 4 * Math.max(4, count << 1)) {
            // in place: the surviving entries and the tail move down (most ids lose records, none gains any);
            // an array four times too large is replaced instead, so that one busy past does not stay in the heap
            System.arraycopy(kept, 0, records.slots, from << 1, keptCount << 1);
            System.arraycopy(records.slots, to << 1, records.slots, (from + keptCount) << 1, tail << 1);
        } else {
            long[] slots = new long[Math.max(4, count << 1)];
            System.arraycopy(records.slots, 0, slots, 0, from << 1);
            System.arraycopy(kept, 0, slots, from << 1, keptCount << 1);
            System.arraycopy(records.slots, to << 1, slots, (from + keptCount) << 1, tail << 1);
            records.slots = slots;
        }
        records.count = count;
        if (records.count == 0) {
            ids.remove(id);
            return;
        }
        recompute(records);
        account(records, +1);
    }

    private void recompute(IdRecords records) {
        boolean laterDelete = false;
        boolean laterUpdate = false;
        records.liveUpdate = -1;
        for (int i = records.count - 1; i >= 0; i--) {
            long entry = records.entry(i);
            boolean live;
            switch (kindOf(entry)) {
                case DELETE:
                    live = deleteIsLive(records, segmentOf(entry));
                    laterDelete = true;
                    break;
                case UPDATE:
                    live = !laterDelete && !laterUpdate;
                    if (live) {
                        records.liveUpdate = i;
                    }
                    laterUpdate = true;
                    break;
                default:
                    live = !laterDelete;
                    break;
            }
            records.setEntry(i, withLive(entry, live));
        }
    }

    /** A DELETE is needed while a segment older than {@code segment} holds an ADD/UPDATE, or may (corruption). */
    private boolean deleteIsLive(IdRecords records, long segment) {
        if (oldestCorruptSegment < segment) {
            return true;
        }
        for (int i = 0; i < records.count; i++) {
            long entry = records.entry(i);
            if (segmentOf(entry) >= segment) {
                return false;
            }
            if (kindOf(entry) != RecordKind.DELETE) {
                return true;
            }
        }
        return false;
    }

    private void kill(IdRecords records, int index) {
        long entry = records.entry(index);
        records.setEntry(index, withLive(entry, false));
        addLiveBytes(segmentOf(entry), -frameBytesOf(entry));
        if (segmentOf(entry) < sealedBelow) {
            sealedKilledBytes += frameBytesOf(entry);
        }
    }

    private void account(IdRecords records, int sign) {
        for (int i = 0; i < records.count; i++) {
            long entry = records.entry(i);
            if (isLive(entry)) {
                addLiveBytes(segmentOf(entry), sign * (long) frameBytesOf(entry));
            }
        }
    }

    private void addLiveBytes(long segment, long deltaBytes) {
        Segment s = segments.get(segment);
        if (s != null) {
            s.liveBytes += deltaBytes;
        }
    }
}
