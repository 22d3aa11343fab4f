package io.buslane.journal;

import io.buslane.journal.memory.InMemoryJournal;

/** The journal contract against {@link InMemoryJournal}; reopening hands back the same instance. */
class InMemoryJournalContractTest extends JournalContractTest {

    private final InMemoryJournal journal = new InMemoryJournal();

    @Override
    protected Journal openJournal() {
        return journal;
    }
}
