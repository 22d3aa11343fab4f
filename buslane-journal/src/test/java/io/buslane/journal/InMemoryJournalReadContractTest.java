package io.buslane.journal;

import io.buslane.journal.memory.InMemoryJournal;

/** The read contract against {@link InMemoryJournal}, compacting on every replay. */
class InMemoryJournalReadContractTest extends JournalReadContractTest {

    private final InMemoryJournal journal = new InMemoryJournal().compactOnReplay(true);

    @Override
    protected Journal openJournal() {
        return journal;
    }

    @Override
    protected void compactFully(Journal j) {
        ((InMemoryJournal) j).compact();
    }
}
