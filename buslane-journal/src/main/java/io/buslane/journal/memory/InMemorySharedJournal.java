package io.buslane.journal.memory;

import io.buslane.journal.JournalException;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import io.buslane.journal.ReplayHandler;
import io.buslane.journal.SharedJournal;

import java.util.ArrayList;
import java.util.List;

/**
 * One node's view of an {@link InMemoryJournal} that several nodes in one test share: appends are held by the view
 * until its sync, which stores them only when the journal did not change since the view last read or synced it.
 */
final class InMemorySharedJournal implements SharedJournal {

    private final InMemoryJournal journal;
    private final long[] version;
    private final List<JournalRecord> pending = new ArrayList<>();
    private long seen = -1;
    private long appended;

    /** @param version the shared journal's version (one element), guarded by {@code journal}'s lock */
    InMemorySharedJournal(InMemoryJournal journal, long[] version) {
        this.journal = journal;
        this.version = version;
    }

    @Override
    public void replay(ReplayHandler handler) {
        synchronized (journal) {
            pending.clear();
            List<JournalRecord> records = new ArrayList<>();
            journal.replay(records::add);
            seen = version[0];
            records.forEach(handler::onRecord);
        }
    }

    @Override
    public void append(JournalRecord record) {
        pending.add(record);
        appended++;
    }

    @Override
    public void sync() {
        synchronized (journal) {
            if (pending.isEmpty()) {
                return;
            }
            if (seen != version[0]) {
                pending.clear();
                throw new JournalException("another node changed the journal first", null,
                        JournalException.Reason.CONFLICT);
            }
            pending.forEach(journal::append);
            pending.clear();
            journal.sync();
            seen = ++version[0];
        }
    }

    @Override
    public boolean changedElsewhere() {
        synchronized (journal) {
            return seen != version[0];
        }
    }

    @Override
    public JournalRecord read(long id, RecordKind kind) {
        return journal.read(id, kind);
    }

    @Override
    public long appendedCount() {
        return appended;
    }

    @Override
    public void close() {
        // the shared journal stays for the other nodes
    }
}
