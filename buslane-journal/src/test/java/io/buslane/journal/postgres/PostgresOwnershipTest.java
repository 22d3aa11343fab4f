package io.buslane.journal.postgres;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalException;
import io.buslane.journal.JournalRecord;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Fenced ownership and failures of the PostgreSQL journal: two factories (two nodes) on one database, a takeover
 * after the lease, a refused commit of the old owner, a kept batch written once after its connection died, and a
 * schema newer than the broker knows.
 */
class PostgresOwnershipTest {

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> replay(Journal j) {
        List<String> out = new ArrayList<>();
        j.replay(r -> out.add(r.kind() + ":" + r.id() + ":" + new String(r.payload(), StandardCharsets.UTF_8)));
        return out;
    }

    /**
     * Under load a renewal waits behind the journal's own syncs (they update the same row); a sync that held the
     * fence extended the lease itself, so the node's leases count as secured by it: a busy journal whose renewals
     * do not run keeps the node from fencing itself, an idle one without renewals does not.
     */
    @Test
    void aJournalsOwnSyncsSecureItsLeaseWhenRenewalsDoNotRun() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory a = factory(url, "node-a", Duration.ofMillis(600))) {
            Journal busy = a.open("shard-0");
            replay(busy);
            a.pauseRenewalForTest(true);
            long pausedAt = System.nanoTime();
            for (int i = 0; System.nanoTime() - pausedAt < Duration.ofMillis(1_500).toNanos(); i++) {
                busy.append(JournalRecord.add(i + 1, (byte) 1, bytes("m" + i)));
                busy.sync();
                Thread.sleep(20);
            }
            assertThat(Duration.ofNanos(System.nanoTime() - a.leasesSecuredAtNanos()))
                    .as("secured by the syncs (paused renewals alone: 1.5 s)").isLessThan(Duration.ofMillis(1_000));

            Journal idle = a.open("shard-1");
            replay(idle);
            long openedAt = System.nanoTime();
            while (System.nanoTime() - openedAt < Duration.ofMillis(800).toNanos()) {
                busy.append(JournalRecord.add(System.nanoTime(), (byte) 1, bytes("more")));
                busy.sync();
                Thread.sleep(20);
            }
            assertThat(Duration.ofNanos(System.nanoTime() - a.leasesSecuredAtNanos()))
                    .as("the idle journal's lease was not renewed").isGreaterThan(Duration.ofMillis(700));
            a.pauseRenewalForTest(false);
            long resumedAt = System.nanoTime();
            while (System.nanoTime() - a.leasesSecuredAtNanos() > Duration.ofMillis(300).toNanos()
                    && System.nanoTime() - resumedAt < Duration.ofSeconds(5).toNanos()) {
                Thread.sleep(20);
            }
            assertThat(Duration.ofNanos(System.nanoTime() - a.leasesSecuredAtNanos()))
                    .as("renewed again").isLessThan(Duration.ofMillis(1_000));
            busy.close();
            idle.close();
        }
    }

    /**
     * A journal is served only while the statement that last extended its lease was sent less than
     * SAFE_LEASE_PERCENT of the lease ago (a paused process, a silent database): before any other node can take it.
     */
    @Test
    void aJournalsLeaseCountsAsHeldOnlyWhileItsLastExtensionIsRecentEnough() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        Duration lease = Duration.ofMillis(600);
        try (PostgresJournalFactory a = factory(url, "node-a", lease)) {
            Journal j = a.open("shard-0");
            replay(j);
            assertThat(j.leaseHeld()).isTrue();
            a.pauseRenewalForTest(true);
            long pausedAt = System.nanoTime();
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10)).until(() -> !j.leaseHeld());
            assertThat(Duration.ofNanos(System.nanoTime() - pausedAt)).as("given up before the lease ends")
                    .isLessThan(lease);
            a.pauseRenewalForTest(false);
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10)).until(j::leaseHeld);
            j.append(JournalRecord.add(1, (byte) 1, bytes("m")));
            a.pauseRenewalForTest(true);
            j.sync(); // a commit extends the lease as well
            assertThat(j.leaseHeld()).isTrue();
            j.close();
        }
    }

    /** Cluster mode: taking a journal another live node holds fails at once instead of waiting on its lease. */
    @Test
    void takingWithoutWaitingFailsAtOnceWhileAnotherNodesLeaseRuns() {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory a = factory(url, "node-a", Duration.ofSeconds(30));
             PostgresJournalFactory b = factory(url, "node-b", Duration.ofSeconds(30))) {
            Journal ja = a.open("shard-0");
            b.takeWithoutWaiting();
            long started = System.nanoTime();
            assertThatThrownBy(() -> b.open("shard-0")).isInstanceOf(JournalException.class)
                    .hasMessageContaining("node-a").hasMessageContaining("not taken now")
                    .satisfies(e -> assertThat(((JournalException) e).reason())
                            .isEqualTo(JournalException.Reason.LEASED));
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            ja.close();
            Journal jb = b.open("shard-0"); // given back: taken at once
            // still open here (this node gave the shard up and its last cycle has not ended): not taken now either,
            // with the same reason, so that the shard controller tries again next round instead of logging a failure
            assertThatThrownBy(() -> b.open("shard-0")).isInstanceOf(JournalException.class)
                    .hasMessageContaining("still open here").satisfies(e -> assertThat(((JournalException) e)
                            .reason()).isEqualTo(JournalException.Reason.LEASED));
            jb.close();
        }
    }

    /** No connection waits on a silent database for more than a share of the lease. */
    @Test
    void theDatabaseTimeoutsAreAShareOfTheLease() {
        assertThat(PostgresJournalFactory.timeoutSeconds(Duration.ofSeconds(5))).isEqualTo(2);
        assertThat(PostgresJournalFactory.timeoutSeconds(PostgresOptions.DEFAULT_LEASE)).isEqualTo(12);
        assertThat(PostgresJournalFactory.timeoutSeconds(Duration.ofMillis(600))).isEqualTo(1);
        assertThat(PostgresJournalFactory.timeoutSeconds(Duration.ofMinutes(5))).isEqualTo(15);
    }

    @Test
    void aTakeoverFencesTheOldOwnerWhoseLaterCommitsAreRefusedAndNeverVisible() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory a = factory(url, "node-a", Duration.ofMillis(600));
             PostgresJournalFactory b = factory(url, "node-b", Duration.ofMillis(600))) {
            Journal ja = a.open("shard-0");
            replay(ja);
            ja.append(JournalRecord.add(1, (byte) 1, bytes("acked-by-a")));
            ja.sync();

            // node A stops renewing (as a paused or partitioned process would) while still believing it owns it
            a.pauseRenewalForTest(true);
            long started = System.nanoTime();
            Journal jb = b.open("shard-0"); // waits for A's lease to expire, then bumps the epoch
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(Duration.ofMillis(100));
            assertThat(replay(jb)).containsExactly("ADD:1:acked-by-a");

            ja.append(JournalRecord.add(2, (byte) 1, bytes("never-acked")));
            assertThatThrownBy(ja::sync).isInstanceOf(JournalException.class)
                    .satisfies(e -> assertThat(((JournalException) e).reason())
                            .isEqualTo(JournalException.Reason.FENCED))
                    .hasMessageContaining("node-b");
            assertThat(a.healthProblems()).anySatisfy(p -> assertThat(p).contains("shard-0").contains("node-b"));
            ja.append(JournalRecord.add(3, (byte) 1, bytes("after-fence")));
            assertThatThrownBy(ja::sync).isInstanceOf(JournalException.class);

            jb.append(JournalRecord.add(4, (byte) 1, bytes("acked-by-b")));
            jb.sync();
            jb.close();
            ja.close();
            try (PostgresJournalFactory c = factory(url, "node-b", Duration.ofMillis(600))) {
                Journal jc = c.open("shard-0");
                assertThat(replay(jc)).containsExactly("ADD:1:acked-by-a", "ADD:4:acked-by-b");
                jc.close();
            }
        }
    }

    @Test
    void theOldOwnerCannotCommitOnceTheEpochMovedEvenBeforeItsLeaseRanOut() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory a = factory(url, "node-a", Duration.ofSeconds(30))) {
            Journal ja = a.open("shard-0");
            replay(ja);
            execute(url, "UPDATE buslane_journal SET epoch = epoch + 1, owner = 'intruder' WHERE name = 'shard-0'");
            ja.append(JournalRecord.add(1, (byte) 1, bytes("x")));
            assertThatThrownBy(ja::sync).isInstanceOf(JournalException.class).hasMessageContaining("intruder");
            assertThat(ja.keepsFailedBatch()).isFalse(); // fenced: the batch is dropped, its operations failed
            assertThat(count(url, "SELECT count(*) FROM buslane_record")).isZero();
        }
    }

    @Test
    void aBatchWhoseConnectionDiedIsWrittenOnceByTheNextSync() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory f = factory(url, "node-a", Duration.ofSeconds(30))) {
            Journal j = f.open("shard-0");
            replay(j);
            j.append(JournalRecord.add(1, (byte) 1, bytes("one")));
            j.sync();
            j.append(JournalRecord.add(2, (byte) 1, bytes("two")));
            j.append(JournalRecord.update(1, (byte) 2, bytes("one-updated")));
            execute(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
                    + "'buslane-shard-0'");
            assertThatThrownBy(j::sync).isInstanceOf(JournalException.class)
                    .satisfies(e -> assertThat(((JournalException) e).reason())
                            .isEqualTo(JournalException.Reason.UNAVAILABLE));
            assertThat(j.needsSync()).isTrue();
            assertThat(j.keepsFailedBatch()).isTrue(); // its owner holds the answers: the batch is still to be written
            assertThat(f.unavailableReason()).contains("unreachable");
            assertThat(f.healthProblems()).isNotEmpty();
            // clients and the unauthenticated /health learn nothing of where the database is
            String where = url.replaceAll("^jdbc:postgresql://([^/?]+).*$", "$1");
            assertThat(f.unavailableReason()).doesNotContain(where);
            assertThat(String.join("\n", f.healthProblems())).doesNotContain(where);
            Thread.sleep(PostgresJournalFactory.RECONNECT_BACKOFF_NS / 1_000_000 + 100);
            j.append(JournalRecord.delete(2));
            j.append(JournalRecord.add(3, (byte) 1, bytes("three")));
            j.sync(); // reconnects, writes the kept batch and the new records
            assertThat(j.needsSync()).isFalse();
            assertThat(j.keepsFailedBatch()).isFalse();
            assertThat(f.unavailableReason()).isNull();
            j.close();
            Journal again = f.open("shard-0");
            assertThat(replay(again)).containsExactly("ADD:1:one", "UPDATE:1:one-updated", "ADD:3:three");
            again.close();
        }
    }

    @Test
    void aCommitThatSucceededWithItsAnswerLostIsNotWrittenAgain() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory f = factory(url, "node-a", Duration.ofSeconds(30))) {
            Journal j = f.open("shard-0");
            replay(j);
            j.append(JournalRecord.add(1, (byte) 1, bytes("one")));
            j.append(JournalRecord.add(2, (byte) 1, bytes("two")));
            // the commit went through but the broker never heard back: the journal still holds the batch
            ((PostgresJournal) j).syncAndLoseTheAnswerForTest();
            assertThat(j.needsSync()).isTrue();
            Thread.sleep(PostgresJournalFactory.RECONNECT_BACKOFF_NS / 1_000_000 + 100);
            j.append(JournalRecord.delete(1));
            j.sync();
            j.close();
            Journal again = f.open("shard-0");
            assertThat(replay(again)).containsExactly("ADD:2:two");
            again.close();
        }
    }

    /**
     * A commit whose answer was lost is resolved by reading how far the journal's commits reached; when another node
     * took the journal over meanwhile, that position is the new owner's, and the old owner's kept batch (and what it
     * appended since) must not count as stored: the sync is refused as fenced.
     */
    @Test
    void aKeptBatchIsNotTakenForStoredWhenAnotherNodeTookTheJournalOverMeanwhile() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory a = factory(url, "node-a", Duration.ofMillis(600));
             PostgresJournalFactory b = factory(url, "node-b", Duration.ofMillis(600))) {
            Journal ja = a.open("shard-0");
            replay(ja);
            ja.append(JournalRecord.add(1, (byte) 1, bytes("one")));
            ((PostgresJournal) ja).syncAndLoseTheAnswerForTest();
            a.pauseRenewalForTest(true); // then paused past its lease
            Journal jb = b.open("shard-0");
            assertThat(replay(jb)).containsExactly("ADD:1:one");
            for (int i = 2; i < 6; i++) {
                jb.append(JournalRecord.add(i, (byte) 1, bytes("by-b-" + i)));
            }
            jb.sync();
            Thread.sleep(PostgresJournalFactory.RECONNECT_BACKOFF_NS / 1_000_000 + 100);
            ja.append(JournalRecord.add(9, (byte) 1, bytes("never-stored")));
            assertThatThrownBy(ja::sync).isInstanceOf(JournalException.class)
                    .satisfies(e -> assertThat(((JournalException) e).reason())
                            .isEqualTo(JournalException.Reason.FENCED));
            jb.close();
            ja.close();
        }
    }

    @Test
    void aSecondNodeWaitsWhileTheOwnersLeaseIsRenewed() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory a = factory(url, "node-a", Duration.ofMillis(600));
             PostgresJournalFactory b = factory(url, "node-b", Duration.ofMillis(600))) {
            Journal ja = a.open("meta");
            CompletableFuture<Journal> taking = CompletableFuture.supplyAsync(() -> b.open("meta"));
            Thread.sleep(2000); // more than three leases: A renews, B must still wait
            assertThat(taking).isNotDone();
            ja.close(); // a clean close gives the lease back: B takes it at once
            Journal jb = taking.get(10, TimeUnit.SECONDS);
            jb.close();
        }
    }

    @Test
    void aSchemaNewerThanTheBrokerKnowsIsRefusedUntouched() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        factory(url, "n", Duration.ofSeconds(30)).close();
        execute(url, "INSERT INTO buslane_schema (version) VALUES (" + (PostgresSchema.currentVersion() + 1) + ")");
        assertThatThrownBy(() -> factory(url, "n", Duration.ofSeconds(30)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("version " + (PostgresSchema.currentVersion() + 1))
                .hasMessageContaining("newer than this broker knows");
        assertThat(count(url, "SELECT count(*) FROM buslane_schema")).isEqualTo(PostgresSchema.currentVersion() + 1);
    }

    @Test
    void aVersionOneDatabaseGainsTheMembershipTableAndKeepsItsJournals() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory f = factory(url, "n", Duration.ofSeconds(30))) {
            Journal j = f.open("shard-0");
            replay(j);
            j.append(JournalRecord.add(1, (byte) 1, bytes("kept")));
            j.sync();
            j.close();
        }
        // as a database written by a broker that knew version 1 only
        execute(url, "DROP TABLE buslane_node");
        execute(url, "DELETE FROM buslane_schema WHERE version > 1");
        try (PostgresJournalFactory f = factory(url, "n", Duration.ofSeconds(30))) {
            assertThat(count(url, "SELECT max(version) FROM buslane_schema"))
                    .isEqualTo(PostgresSchema.currentVersion());
            assertThat(count(url, "SELECT count(*) FROM buslane_node")).isZero();
            Journal j = f.open("shard-0");
            assertThat(replay(j)).containsExactly("ADD:1:kept");
            j.close();
        }
    }

    @Test
    void aVersionTwoDatabaseGainsTheIncarnationColumnAndKeepsItsNodes() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory f = factory(url, "n", Duration.ofSeconds(30));
             PostgresMembership m = f.membership("127.0.0.1:1", Duration.ofSeconds(30))) {
            m.heartbeat();
        }
        // as a database written by a broker that knew version 2 only
        execute(url, "ALTER TABLE buslane_node DROP COLUMN incarnation");
        execute(url, "DELETE FROM buslane_schema WHERE version > 2");
        try (PostgresJournalFactory f = factory(url, "n", Duration.ofSeconds(30))) {
            assertThat(count(url, "SELECT max(version) FROM buslane_schema"))
                    .isEqualTo(PostgresSchema.currentVersion());
            assertThat(count(url, "SELECT count(*) FROM buslane_node WHERE incarnation IS NULL")).isEqualTo(1);
        }
    }

    @Test
    void anEmptyDatabaseIsMigratedOnceEvenByBrokersStartingTogether() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        List<CompletableFuture<PostgresJournalFactory>> starting = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String node = "n" + i;
            starting.add(CompletableFuture.supplyAsync(() -> factory(url, node, Duration.ofSeconds(30))));
        }
        for (CompletableFuture<PostgresJournalFactory> f : starting) {
            f.get(30, TimeUnit.SECONDS).close();
        }
        assertThat(count(url, "SELECT count(*) FROM buslane_schema")).isEqualTo(PostgresSchema.currentVersion());
    }

    static void execute(String url, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    static long count(String url, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** A journal factory of node {@code node} on the database at {@code url}, with that lease. */
    private static PostgresJournalFactory factory(String url, String node, Duration lease) {
        return new PostgresJournalFactory(PostgresTestDatabase.options(url, node, lease));
    }
}
