package io.buslane.journal.memory;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalException;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import io.buslane.journal.ReplayHandler;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A journal that keeps its records in the heap. Records appended but not yet synced are lost by
 * {@link #crash()}, so tests can model a power cut; everything synced survives a close and re-open of the same
 * instance. Confined to one writer thread at a time (as every journal). {@link #read(long, RecordKind)} answers from
 * a map of the live ADD and UPDATE of each id among the synced records, built as they are synced or replayed.
 */
public final class InMemoryJournal implements Journal {

    private final List<JournalRecord> durable = new ArrayList<>();
    private final List<JournalRecord> pending = new ArrayList<>();
    /** The live ADD and UPDATE of each id among the durable records, for {@link #read(long, RecordKind)}. */
    private final Map<Long, JournalRecord> liveAdds = new HashMap<>();
    private final Map<Long, JournalRecord> liveUpdates = new HashMap<>();
    private long appended;
    private boolean compactOnReplay;
    private volatile boolean leaseLost;
    private volatile boolean unavailable;
    /** Whether the last sync failed while {@link #unavailable}: its batch is kept, as the PostgreSQL journal does. */
    private boolean keptFailedBatch;

    @Override
    public synchronized void replay(ReplayHandler handler) {
        pending.clear();
        if (compactOnReplay) {
            compact();
        }
        liveAdds.clear();
        liveUpdates.clear();
        for (JournalRecord record : new ArrayList<>(durable)) {
            handler.onRecord(record);
            index(record); // after the handler, as the file journal does: it may read what came before
        }
    }

    @Override
    public synchronized void append(JournalRecord record) {
        pending.add(record);
        appended++;
    }

    @Override
    public synchronized void sync() {
        if (unavailable && !pending.isEmpty()) {
            keptFailedBatch = true;
            throw new JournalException("the in-memory journal is unavailable (test); its batch of " + pending.size()
                    + " records is kept for the next sync", null, JournalException.Reason.UNAVAILABLE);
        }
        keptFailedBatch = false;
        durable.addAll(pending);
        for (JournalRecord record : pending) {
            index(record);
        }
        pending.clear();
    }

    @Override
    public synchronized JournalRecord read(long id, RecordKind kind) {
        switch (kind) {
            case ADD:
                return liveAdds.get(id);
            case UPDATE:
                return liveUpdates.get(id);
            default:
                throw new IllegalArgumentException("only ADD and UPDATE records can be read: " + kind);
        }
    }

    private void index(JournalRecord record) {
        switch (record.kind()) {
            case ADD:
                liveAdds.put(record.id(), record);
                break;
            case UPDATE:
                liveUpdates.put(record.id(), record);
                break;
            default:
                liveAdds.remove(record.id());
                liveUpdates.remove(record.id());
                break;
        }
    }

    @Override
    public synchronized long appendedCount() {
        return appended;
    }

    /**
     * For tests: this journal's lease may have run out ({@code true}) or is held again, as a leased journal's is
     * when its renewals stop getting through or a process pause ends ({@link #leaseHeld}).
     */
    public void leaseLost(boolean lost) {
        this.leaseLost = lost;
    }

    /**
     * For tests: while {@code true} every sync with records to write fails as a PostgreSQL journal's does when its
     * database does not answer: {@link JournalException.Reason#UNAVAILABLE}, the batch kept and written by the first
     * sync after this is set back to {@code false}.
     */
    public void unavailable(boolean value) {
        this.unavailable = value;
    }

    @Override
    public synchronized boolean needsSync() {
        return keptFailedBatch && !pending.isEmpty();
    }

    @Override
    public synchronized boolean keepsFailedBatch() {
        return keptFailedBatch && !pending.isEmpty();
    }

    @Override
    public boolean leaseHeld() {
        return !leaseLost;
    }

    /** Drops records not yet synced, as a crash would. */
    public synchronized void crash() {
        pending.clear();
        keptFailedBatch = false;
    }

    /** When set, each replay first drops dead records, exercising the engine against a compacted journal. */
    public synchronized InMemoryJournal compactOnReplay(boolean enabled) {
        this.compactOnReplay = enabled;
        return this;
    }

    /** Removes dead records: everything of deleted ids, DELETEs themselves, and superseded UPDATEs. */
    public synchronized void compact() {
        Set<Long> deleted = new HashSet<>();
        Set<Long> laterUpdate = new HashSet<>();
        List<JournalRecord> kept = new ArrayList<>();
        for (int i = durable.size() - 1; i >= 0; i--) {
            JournalRecord r = durable.get(i);
            if (r.kind() == RecordKind.DELETE) {
                deleted.add(r.id());
                continue;
            }
            if (deleted.contains(r.id())) {
                if (r.kind() == RecordKind.ADD) {
                    deleted.remove(r.id()); // an earlier incarnation of the id may be live again
                }
                continue;
            }
            if (r.kind() == RecordKind.UPDATE && !laterUpdate.add(r.id())) {
                continue;
            }
            if (r.kind() == RecordKind.ADD) {
                laterUpdate.remove(r.id());
            }
            kept.add(r);
        }
        durable.clear();
        for (int i = kept.size() - 1; i >= 0; i--) {
            durable.add(kept.get(i));
        }
    }

    /** Number of durable records currently stored. */
    public synchronized int storedCount() {
        return durable.size();
    }

    @Override
    public void close() {
        // records stay, so a test can re-open the same instance
    }
}
