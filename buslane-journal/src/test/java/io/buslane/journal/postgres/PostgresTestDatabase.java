package io.buslane.journal.postgres;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/** One database of the shared test server for the journal tests of this package, and unique journal names in it. */
final class PostgresTestDatabase {

    private static final AtomicInteger NAMES = new AtomicInteger();
    private static PostgresJournalFactory factory;

    private PostgresTestDatabase() {
    }

    /** The shared factory (skips the test when PostgreSQL is not installed, fails it in CI). */
    static synchronized PostgresJournalFactory factory() {
        if (factory == null) {
            String url = TestPostgres.sharedOrSkip().newDatabase();
            factory = new PostgresJournalFactory(options(url, "test-node", Duration.ofSeconds(30)));
        } else {
            TestPostgres.assumeAvailable();
        }
        return factory;
    }

    static PostgresOptions options(String jdbcUrl, String node, Duration lease) {
        return new PostgresOptions(jdbcUrl, null, null, node, lease, null);
    }

    static String newName() {
        return "journal-" + NAMES.incrementAndGet();
    }
}
