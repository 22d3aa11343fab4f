package io.buslane.engine.partition;

import io.buslane.engine.message.Message;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Confined to its shard thread. Which messages of one shard are held in the heap, and the way to every message
 * whatever its state: partition code reads a message only through {@link #of(Entry)}, {@link #of(ScheduledEntry)}
 * and {@link #of(TopicBody)}.
 *
 * <p><b>Holders.</b> A message lives in one of three holders: a queue's {@link Entry} (or a subscription's copy
 * whose properties were modified), a {@link TopicBody} shared by a topic message's subscription copies, or a
 * {@link ScheduledEntry}. A holder is <em>resident</em> while its {@code message} field is set, <em>evicted</em>
 * when it is null; an evicted message is read back by record id from the shard's journal ({@link Reader}): the ADD
 * record the message arrived in, or, for a message whose properties were modified, the entry's latest UPDATE (which
 * carries the whole modified message). An unmodified subscription copy never holds the message itself: it reads its
 * body's.
 *
 * <p><b>Budget.</b> New holders are resident. Their encoded sizes add up to {@link #residentBytes()}. After each
 * successful sync ({@link #afterSync(boolean)}), once the records the holders were written in are durable, holders
 * become evictable, and while the resident bytes exceed the budget the <em>newest</em> evictable holders are evicted
 * first: consumers take messages oldest first, so the oldest are the ones worth keeping. An evicted holder stays
 * evicted (reads go through the cache below) until it is modified, which makes it resident (and newest) again.
 * Holders admitted in a cycle whose sync failed are pinned: their records may not be on disk, so they are never
 * evicted. At start-up the same rule applied record by record during replay keeps the oldest messages that fit in
 * the budget resident and never holds more. A scheduled message due more than
 * {@link #SCHEDULED_RESIDENT_HORIZON_MS} ahead is evicted as soon as it is durable, whatever the budget: waiting
 * messages would otherwise keep the budget from the active ones, and its activation reads it back once.
 *
 * <p><b>Cache.</b> Messages read back are kept in a small LRU cache (bounded in bytes and entries), so that peeking
 * and then receiving a message, or browsing the same page twice, reads the disk once. It is not counted in the
 * resident bytes.
 *
 * <p><b>Memory.</b> The evictable holders are kept in an array deque in arrival order (4 bytes per resident holder;
 * an evicted holder costs nothing here). Holders that leave while resident leave a stale slot behind, dropped from
 * the ends as they are reached and by a sweep when stale slots outnumber live ones.
 */
public final class MessageBodies {

    /** Default resident budget of one shard. */
    public static final long DEFAULT_BUDGET_BYTES = 64L * 1024 * 1024;
    /** Scheduled messages due later than this after they are written are not kept resident (see {@link #admit}). */
    static final long SCHEDULED_RESIDENT_HORIZON_MS = 10_000;
    /** Most messages the read cache holds, whatever their size. */
    static final int MAX_CACHE_ENTRIES = 4096;
    private static final int MIN_SWEEP_SIZE = 1024;

    /** Reads messages back from the shard's storage. Implemented where the journal is known (engine.persist). */
    @FunctionalInterface
    public interface Reader {

        /**
         * The message stored in record {@code recordId}.
         *
         * @param modified false: the message of the record's ADD (a queue message, topic body or scheduled message);
         *                 true: the modified message in the entry's latest UPDATE
         * @throws RuntimeException when the record cannot be read (never null)
         */
        Message read(long recordId, boolean modified);
    }

    private final long budgetBytes;
    private final long cacheBudgetBytes;
    private final Reader reader;
    /** Holders made resident (new, or modified) in the current cycle, in order; evictable after the sync. */
    private final ArrayList<Object> admitted = new ArrayList<>();
    /** Scheduled messages admitted in the current cycle that are evicted as soon as they are durable. */
    private final ArrayList<ScheduledEntry> admittedCold = new ArrayList<>();
    /** Resident entries modified in the current cycle: pinned if the cycle's sync fails. */
    private final ArrayList<Entry> touched = new ArrayList<>();
    /** Resident holders that may be evicted, oldest first; may hold stale slots (holders no longer resident). */
    private final ArrayDeque<Object> evictable = new ArrayDeque<>();
    private final LinkedHashMap<Long, Message> cache = new LinkedHashMap<>(64, 0.75f, true);
    private int sweepAt = MIN_SWEEP_SIZE;
    private long residentBytes;
    private long cacheBytes;
    private long reads;
    private long cacheHits;
    private long evictions;
    private volatile long publishedResidentBytes;

    /**
     * @param budgetBytes      resident message bytes above which the newest are evicted (0 evicts every durable one)
     * @param cacheBudgetBytes bytes of messages the read cache may hold (0 disables it)
     * @param reader           reads an evicted message back
     */
    public MessageBodies(long budgetBytes, long cacheBudgetBytes, Reader reader) {
        if (budgetBytes < 0 || cacheBudgetBytes < 0) {
            throw new IllegalArgumentException("budgets must not be negative: " + budgetBytes + ", "
                    + cacheBudgetBytes);
        }
        this.budgetBytes = budgetBytes;
        this.cacheBudgetBytes = cacheBudgetBytes;
        this.reader = reader;
    }

    /** The read cache's default size for a resident budget: an eighth of it, between 256 KiB and 16 MiB. */
    public static long defaultCacheBytes(long budgetBytes) {
        return Math.max(256L * 1024, Math.min(16L * 1024 * 1024, budgetBytes / 8));
    }

    // ------------------------------------------------------------------------------------------------ reading

    /** The entry's message, read back if it was evicted. */
    public Message of(Entry e) {
        Message m = e.message;
        if (m != null) {
            return m;
        }
        if (e.body != null && !e.messageModified) {
            return of(e.body);
        }
        return load(e.messageModified ? -e.recordId : e.recordId, e.recordId, e.messageModified, e.sizeBytes);
    }

    /** The scheduled message, read back if it was evicted. */
    public Message of(ScheduledEntry s) {
        Message m = s.message;
        return m != null ? m : load(s.recordId, s.recordId, false, s.sizeBytes);
    }

    /** The topic message, read back if it was evicted. */
    public Message of(TopicBody b) {
        Message m = b.message;
        return m != null ? m : load(b.recordId, b.recordId, false, b.sizeBytes);
    }

    /** Cache keys: the record id for an ADD's message, its negation for an entry's modified message. */
    private Message load(long key, long recordId, boolean modified, int sizeBytes) {
        Message m = cache.get(key);
        if (m != null) {
            cacheHits++;
            return m;
        }
        reads++;
        m = reader.read(recordId, modified);
        if (sizeBytes <= cacheBudgetBytes / 4) {
            cache.put(key, m);
            cacheBytes += sizeBytes;
            Iterator<Map.Entry<Long, Message>> eldest = cache.entrySet().iterator();
            while (cacheBytes > cacheBudgetBytes || cache.size() > MAX_CACHE_ENTRIES) {
                cacheBytes -= eldest.next().getValue().encodedSize();
                eldest.remove();
            }
        }
        return m;
    }

    private void uncache(long key) {
        Message m = cache.remove(key);
        if (m != null) {
            cacheBytes -= m.encodedSize();
        }
    }

    // ------------------------------------------------------------------------------------------------ residency

    /** A new entry holding its message (a queue message, or a restored one): resident from now on. */
    void admit(Entry e) {
        admitHolder(e, e.message, e.sizeBytes);
    }

    /**
     * A new (or replayed) scheduled message: resident until its record is durable, and then only if it is due within
     * {@link #SCHEDULED_RESIDENT_HORIZON_MS}; one due later is evicted then (its activation reads it back), so that
     * messages waiting for their time never crowd the active ones out of the budget.
     */
    void admit(ScheduledEntry s, long nowMs) {
        if (s.scheduledTimeMs - nowMs <= SCHEDULED_RESIDENT_HORIZON_MS) {
            admitHolder(s, s.message, s.sizeBytes);
        } else if (s.message != null) {
            residentBytes += s.sizeBytes;
            admittedCold.add(s);
        }
    }

    /** A new topic body: resident from now on. */
    void admit(TopicBody b) {
        admitHolder(b, b.message, b.sizeBytes);
    }

    private void admitHolder(Object holder, Message message, int sizeBytes) {
        if (message == null) {
            return;
        }
        residentBytes += sizeBytes;
        admitted.add(holder);
    }

    /**
     * Gives the entry a modified message (properties changed by abandon, defer, dead-lettering): it becomes resident
     * and newest, and becomes evictable again once the UPDATE carrying it is durable.
     */
    void modified(Entry e, Message message) {
        uncache(-e.recordId);
        boolean wasResident = e.message != null;
        e.message = message;
        e.messageModified = true;
        if (wasResident) {
            touched.add(e); // already admitted or evictable; pinned only if this cycle's sync fails
        } else {
            residentBytes += e.sizeBytes;
            admitted.add(e);
        }
    }

    /** The entry left for good: its message (if resident) stops counting and is dropped. */
    void release(Entry e) {
        if (e.message != null) {
            residentBytes -= e.sizeBytes;
            e.message = null;
        }
        uncache(e.recordId);
        uncache(-e.recordId);
    }

    void release(ScheduledEntry s) {
        if (s.message != null) {
            residentBytes -= s.sizeBytes;
            s.message = null;
        }
        uncache(s.recordId);
    }

    void release(TopicBody b) {
        if (b.message != null) {
            residentBytes -= b.sizeBytes;
            b.message = null;
        }
        uncache(b.recordId);
    }

    /**
     * Called once the cycle's records are durable ({@code durable}), or failed to be: the holders admitted in the
     * cycle become evictable (or, after a failure, pinned), and the newest resident holders are evicted while the
     * budget is exceeded. Replay calls it after each record, all replayed records being durable.
     */
    public void afterSync(boolean durable) {
        if (!admitted.isEmpty()) {
            for (Object holder : admitted) {
                if (durable) {
                    if (message(holder) != null && !pinned(holder)) { // else it left in the same cycle
                        evictable.addLast(holder);
                    }
                } else {
                    pin(holder);
                }
            }
            admitted.clear();
        }
        if (!admittedCold.isEmpty()) {
            for (ScheduledEntry cold : admittedCold) {
                if (!durable) {
                    cold.pinned = true;
                } else if (cold.message != null && !cold.pinned) { // else it left in the same cycle
                    evict(cold);
                }
            }
            admittedCold.clear();
        }
        if (!touched.isEmpty()) {
            if (!durable) {
                touched.forEach(e -> e.pinned = true);
            }
            touched.clear();
        }
        if (residentBytes > budgetBytes) {
            evictNewest();
        }
        dropStaleHead();
        if (evictable.size() > sweepAt) {
            evictable.removeIf(h -> message(h) == null || pinned(h));
            sweepAt = Math.max(MIN_SWEEP_SIZE, evictable.size() * 2);
        }
        publishedResidentBytes = residentBytes;
    }

    private void evictNewest() {
        Object holder;
        while (residentBytes > budgetBytes && (holder = evictable.pollLast()) != null) {
            if (message(holder) == null || pinned(holder)) {
                continue; // stale: the holder left while resident
            }
            evict(holder);
        }
    }

    private void dropStaleHead() {
        Object head;
        while ((head = evictable.peekFirst()) != null && (message(head) == null || pinned(head))) {
            evictable.pollFirst();
        }
    }

    private void evict(Object holder) {
        if (holder instanceof Entry e) {
            residentBytes -= e.sizeBytes;
            e.message = null;
        } else if (holder instanceof TopicBody b) {
            residentBytes -= b.sizeBytes;
            b.message = null;
        } else {
            ScheduledEntry s = (ScheduledEntry) holder;
            residentBytes -= s.sizeBytes;
            s.message = null;
        }
        evictions++;
    }

    private static Message message(Object holder) {
        if (holder instanceof Entry e) {
            return e.message;
        }
        if (holder instanceof TopicBody b) {
            return b.message;
        }
        return ((ScheduledEntry) holder).message;
    }

    private static boolean pinned(Object holder) {
        if (holder instanceof Entry e) {
            return e.pinned;
        }
        if (holder instanceof TopicBody b) {
            return b.pinned;
        }
        return ((ScheduledEntry) holder).pinned;
    }

    private static void pin(Object holder) {
        if (holder instanceof Entry e) {
            e.pinned = true;
        } else if (holder instanceof TopicBody b) {
            b.pinned = true;
        } else {
            ((ScheduledEntry) holder).pinned = true;
        }
    }

    // ------------------------------------------------------------------------------------------------ metrics

    /** Encoded bytes of the messages held in the heap by this shard's holders (not counting the read cache). */
    public long residentBytes() {
        return residentBytes;
    }

    /** {@link #residentBytes()} as of the end of the last cycle; readable from any thread. */
    public long publishedResidentBytes() {
        return publishedResidentBytes;
    }

    public long budgetBytes() {
        return budgetBytes;
    }

    /** Encoded bytes of the messages in the read cache. */
    public long cacheBytes() {
        return cacheBytes;
    }

    /** Messages read back from storage so far (cache misses). */
    public long reads() {
        return reads;
    }

    /** Messages served from the read cache so far. */
    public long cacheHits() {
        return cacheHits;
    }

    /** Holders evicted so far. */
    public long evictions() {
        return evictions;
    }

    /** Slots in the deque of evictable holders, stale ones included (for tests). */
    int evictableSlots() {
        return evictable.size();
    }
}
