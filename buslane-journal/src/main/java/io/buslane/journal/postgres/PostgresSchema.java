package io.buslane.journal.postgres;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The broker's tables in PostgreSQL and their migrations: the one place that creates or changes them (documented in
 * docs/postgresql.md). Version {@code n} of the schema is the state after the first {@code n} entries of
 * {@link #MIGRATIONS}; the version reached is kept in {@code buslane_schema}. Migrations run at start-up inside one
 * transaction that holds an advisory lock, so that brokers starting together migrate once; a database whose
 * version is newer than this broker knows is refused, never touched.
 */
public final class PostgresSchema {

    /** Key of the advisory lock held while migrating ("buslane" in ASCII). */
    static final long MIGRATION_LOCK = 0x6275736c616e65L;

    /** Each entry is one migration: the statements that take the schema from version {@code i} to {@code i + 1}. */
    static final List<List<String>> MIGRATIONS = List.of(
            List.of(
                    // one row per journal: its name, and who owns it (fenced ownership, docs/postgresql.md)
                    "CREATE TABLE buslane_journal ("
                            + " journal_id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                            + " name text NOT NULL UNIQUE,"
                            + " epoch bigint NOT NULL DEFAULT 0,"
                            + " synced_position bigint NOT NULL DEFAULT -1,"
                            + " owner text,"
                            + " lease_until timestamptz)",
                    // the live records of every journal; superseded and deleted records are deleted as they die
                    "CREATE TABLE buslane_record ("
                            + " journal_id integer NOT NULL REFERENCES buslane_journal,"
                            + " position bigint NOT NULL,"
                            + " record_id bigint NOT NULL,"
                            + " kind smallint NOT NULL,"
                            + " type smallint NOT NULL,"
                            + " payload bytea NOT NULL,"
                            + " PRIMARY KEY (journal_id, position))"
                            + " WITH (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 5000,"
                            + " autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_vacuum_cost_delay = 0,"
                            + " fillfactor = 90)",
                    "CREATE INDEX buslane_record_by_id ON buslane_record (journal_id, record_id)",
                    // message bodies are rarely compressible: store large ones out of line without compressing
                    "ALTER TABLE buslane_record ALTER COLUMN payload SET STORAGE EXTERNAL"),
            List.of(
                    // cluster membership: every node heartbeats its row; a clean shutdown marks it leaving
                    "CREATE TABLE buslane_node ("
                            + " node_id text PRIMARY KEY,"
                            + " address text,"
                            + " started_at timestamptz NOT NULL DEFAULT now(),"
                            + " heartbeat_at timestamptz NOT NULL DEFAULT now(),"
                            + " leaving boolean NOT NULL DEFAULT false)"),
            List.of(
                    // the process that holds a node id: a second process started with a live node's id is refused
                    "ALTER TABLE buslane_node ADD COLUMN incarnation text"));

    private PostgresSchema() {
    }

    /** The schema version this broker writes. */
    public static int currentVersion() {
        return MIGRATIONS.size();
    }

    /**
     * Brings the database's schema to {@link #currentVersion()}.
     *
     * @return the version found before migrating (0 for an empty database)
     * @throws IllegalStateException when the database's schema is newer than this broker knows
     */
    static int migrate(Connection c) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_xact_lock(" + MIGRATION_LOCK + ")");
            s.execute("CREATE TABLE IF NOT EXISTS buslane_schema (version integer NOT NULL,"
                    + " migrated_at timestamptz NOT NULL DEFAULT now(), broker text)");
            int found = 0;
            try (ResultSet rs = s.executeQuery("SELECT max(version) FROM buslane_schema")) {
                if (rs.next()) {
                    found = rs.getInt(1);
                }
            }
            if (found > currentVersion()) {
                c.rollback();
                throw new IllegalStateException("The database's Buslane schema is version " + found + ", newer than "
                        + "this broker knows (" + currentVersion() + "): it was written by a later Buslane. Run that "
                        + "version (or later), or point this one at another database; nothing was changed.");
            }
            for (int v = found; v < currentVersion(); v++) {
                for (String sql : MIGRATIONS.get(v)) {
                    s.execute(sql);
                }
                s.execute("INSERT INTO buslane_schema (version, broker) VALUES (" + (v + 1) + ", 'Buslane')");
            }
            c.commit();
            return found;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }
}
