package io.buslane.journal.postgres;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalContractTest;

/** The journal contract against {@link PostgresJournal} on a throwaway PostgreSQL server. */
class PostgresJournalContractTest extends JournalContractTest {

    private final String name = PostgresTestDatabase.newName();

    @Override
    protected Journal openJournal() {
        return PostgresTestDatabase.factory().open(name);
    }
}
