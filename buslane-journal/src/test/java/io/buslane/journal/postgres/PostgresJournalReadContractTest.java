package io.buslane.journal.postgres;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalReadContractTest;

/** The read contract against {@link PostgresJournal}: it stores live records only, so it is always compacted. */
class PostgresJournalReadContractTest extends JournalReadContractTest {

    private final String name = PostgresTestDatabase.newName();

    @Override
    protected Journal openJournal() {
        return PostgresTestDatabase.factory().open(name);
    }

    @Override
    protected void compactFully(Journal journal) {
        // nothing to do: superseded records were deleted by the sync that superseded them
    }
}
