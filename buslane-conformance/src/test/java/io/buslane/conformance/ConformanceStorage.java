package io.buslane.conformance;

import io.buslane.journal.postgres.TestPostgres;

/**
 * The storage the conformance suite's brokers keep their journals in, chosen by the system property
 * {@value #PROPERTY}: {@code files} (the default: journal files in the broker's data directory) or {@code postgresql}
 * (a fresh database of the throwaway {@link TestPostgres} server per broker, passed as {@code --storage}; restarts
 * keep the arguments, hence the database). The module's second surefire execution, {@code postgresql}, sets it for
 * the classes it runs.
 *
 * <p>On PostgreSQL a test is skipped when PostgreSQL is not installed, and fails instead when
 * {@code BUSLANE_REQUIRE_POSTGRES=1} (as {@code .ci/run} sets it).
 */
final class ConformanceStorage {

    /** The system property naming the storage: {@code files} or {@code postgresql}. */
    static final String PROPERTY = "buslane.conformance.storage";

    private ConformanceStorage() {
    }

    /** The storage the brokers run on: {@code files} or {@code postgresql}. */
    static String name() {
        String storage = System.getProperty(PROPERTY, "");
        return storage.isBlank() ? "files" : storage.trim();
    }

    /** Whether the brokers run on PostgreSQL. */
    static boolean postgresql() {
        return "postgresql".equals(name());
    }

    /**
     * The broker arguments for the chosen storage: none for files, {@code --storage <a fresh database>} for
     * PostgreSQL (skips, or fails, the calling test when PostgreSQL is absent).
     */
    static String[] brokerArgs() {
        switch (name()) {
            case "files":
                return new String[0];
            case "postgresql":
                String jdbcUrl = TestPostgres.sharedOrSkip().newDatabase();
                return new String[] {"--storage", TestPostgres.storageUrl(jdbcUrl)};
            default:
                throw new IllegalArgumentException(PROPERTY + " must be files or postgresql, not " + name());
        }
    }
}
