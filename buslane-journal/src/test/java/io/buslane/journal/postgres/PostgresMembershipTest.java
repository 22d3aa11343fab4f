package io.buslane.journal.postgres;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Cluster membership rows: heartbeats, the live set by the database's clock, leaving, and the leases' view. */
class PostgresMembershipTest {

    @Test
    void nodesAreLiveWhileTheyHeartbeatAndGoneWhenTheyStopOrLeave() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory a = new PostgresJournalFactory(
                PostgresTestDatabase.options(url, "node-a", Duration.ofSeconds(5)));
             PostgresJournalFactory b = new PostgresJournalFactory(
                     PostgresTestDatabase.options(url, "node-b", Duration.ofSeconds(5)));
             PostgresMembership ma = a.membership("127.0.0.1:1001", Duration.ofMillis(700));
             PostgresMembership mb = b.membership("127.0.0.1:1002", Duration.ofMillis(700))) {
            assertThat(ma.heartbeat()).extracting(PostgresMembership.Node::id).containsExactly("node-a");
            assertThat(mb.heartbeat()).containsExactly(new PostgresMembership.Node("node-a", "127.0.0.1:1001"),
                    new PostgresMembership.Node("node-b", "127.0.0.1:1002"));

            // node B stops heartbeating: after deadAfter it is no longer live for A
            Thread.sleep(900);
            assertThat(ma.heartbeat()).extracting(PostgresMembership.Node::id).containsExactly("node-a");

            // B comes back, then leaves cleanly: gone at once
            mb.heartbeat();
            assertThat(ma.heartbeat()).extracting(PostgresMembership.Node::id).containsExactly("node-a", "node-b");
            mb.leave();
            assertThat(ma.heartbeat()).extracting(PostgresMembership.Node::id).containsExactly("node-a");
        }
    }

    @Test
    void theLeasesViewSaysWhoOwnsWhichJournalAndWhetherTheLeaseRuns() {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory a = new PostgresJournalFactory(
                PostgresTestDatabase.options(url, "node-a", Duration.ofSeconds(5)));
             PostgresMembership ma = a.membership("a", Duration.ofSeconds(5))) {
            Journal j = a.open("shard-3");
            j.replay(r -> { });
            assertThat(ma.leases().get("shard-3")).isEqualTo(new PostgresMembership.Lease("shard-3", "node-a", true));
            assertThat(a.ownedJournals()).containsExactly("shard-3");
            j.close(); // a clean close gives the lease back
            assertThat(ma.leases().get("shard-3").live()).isFalse();
            assertThat(a.ownedJournals()).isEmpty();
        }
    }

    @Test
    void aSecondProcessWithALiveNodesIdIsRefusedAndTheFirstLearnsWhenItsIdWasTakenOver() throws Exception {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory f1 = new PostgresJournalFactory(
                PostgresTestDatabase.options(url, "node-a", Duration.ofSeconds(5)));
             PostgresJournalFactory f2 = new PostgresJournalFactory(
                     PostgresTestDatabase.options(url, "node-a", Duration.ofSeconds(5)));
             PostgresMembership first = f1.membership("127.0.0.1:1001", Duration.ofMillis(700));
             PostgresMembership second = f2.membership("127.0.0.1:2002", Duration.ofMillis(700))) {
            first.heartbeat();
            assertThatThrownBy(second::heartbeat).isInstanceOfSatisfying(JournalException.class,
                    e -> assertThat(e.reason()).isEqualTo(JournalException.Reason.LEASED))
                    .hasMessageContaining("'node-a' is in use by a live process")
                    .hasMessageContaining("127.0.0.1:1001");
            // refused, it changed nothing: the first still holds its row
            assertThat(first.heartbeat()).containsExactly(new PostgresMembership.Node("node-a", "127.0.0.1:1001"));

            // the first stops heartbeating (paused or killed): once its row is older than deadAfter, the second
            // process claims the node id
            Thread.sleep(900);
            assertThat(second.heartbeat()).containsExactly(new PostgresMembership.Node("node-a", "127.0.0.1:2002"));
            // the first resumes: its heartbeat says its id was taken over, and its leave leaves the new row alone
            assertThatThrownBy(first::heartbeat).isInstanceOfSatisfying(JournalException.class,
                    e -> assertThat(e.reason()).isEqualTo(JournalException.Reason.FENCED))
                    .hasMessageContaining("took node id 'node-a' over");
            first.leave();
            assertThat(second.heartbeat()).extracting(PostgresMembership.Node::id).containsExactly("node-a");
        }
    }

    @Test
    void aNodeThatLeftCleanlyIsFollowedAtOnceByTheNextProcessWithItsId() {
        String url = TestPostgres.sharedOrSkip().newDatabase();
        try (PostgresJournalFactory f1 = new PostgresJournalFactory(
                PostgresTestDatabase.options(url, "node-a", Duration.ofSeconds(5)));
             PostgresJournalFactory f2 = new PostgresJournalFactory(
                     PostgresTestDatabase.options(url, "node-a", Duration.ofSeconds(5)));
             PostgresMembership first = f1.membership("127.0.0.1:1001", Duration.ofSeconds(30));
             PostgresMembership second = f2.membership("127.0.0.1:2002", Duration.ofSeconds(30))) {
            first.heartbeat();
            first.leave();
            assertThat(second.heartbeat()).containsExactly(new PostgresMembership.Node("node-a", "127.0.0.1:2002"));
        }
    }
}
