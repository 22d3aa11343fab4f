package io.buslane.server.cluster;

import io.buslane.journal.JournalException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/** The controller's decisions against a fake database and a fake engine, on a manual nano clock. */
class ShardControllerTest {

    private static final Duration LEASE = Duration.ofSeconds(5);

    /** One shared "database": live nodes, leases, and what each node's journals still hold. */
    static final class Db {
        final List<String> live = new ArrayList<>();
        final Map<String, String> leases = new HashMap<>();
        boolean down;
    }

    static final class Node implements ShardController.Host, ShardController.Members {
        final String id;
        final Db db;
        final Set<Integer> served = new TreeSet<>();
        volatile long now;
        volatile long securedAt;
        /** When set, heartbeats wait on it: a database that has gone silent instead of refusing. */
        volatile CountDownLatch silent;
        /** When set, heartbeats say another process took this node's id over (PostgresMembership: FENCED). */
        volatile boolean idTakenOver;
        /** Shards whose next take fails (another node renewed its lease meanwhile, or the database failed). */
        final Set<Integer> failNextTake = new TreeSet<>();
        final ShardController controller;

        Node(String id, Db db) {
            this.id = id;
            this.db = db;
            this.controller = new ShardController(id, LEASE, this, this, () -> now);
        }

        @Override
        public int shardCount() {
            return 12;
        }

        @Override
        public synchronized boolean serves(int shard) {
            return served.contains(shard);
        }

        @Override
        public synchronized void serve(int shard) {
            if (failNextTake.remove(shard)) {
                throw new IllegalStateException("journal shard-" + shard + " is owned by node 'node-x': not taken now");
            }
            db.leases.put(ShardController.journalOf(shard), id);
            served.add(shard);
        }

        @Override
        public synchronized void stopServing(int shard, String why) {
            served.remove(shard);
            db.leases.remove(ShardController.journalOf(shard), id);
        }

        @Override
        public List<String> heartbeat() {
            CountDownLatch wait = silent;
            if (wait != null) {
                try {
                    wait.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            synchronized (this) {
                return heartbeatAnswered();
            }
        }

        private List<String> heartbeatAnswered() {
            if (db.down) {
                throw new IllegalStateException("database down");
            }
            if (idTakenOver) {
                throw new JournalException("Another process took node id '" + id + "' over", null,
                        JournalException.Reason.FENCED);
            }
            if (!db.live.contains(id)) {
                db.live.add(id);
            }
            securedAt = now; // the renewer succeeds while the database answers
            return List.copyOf(db.live);
        }

        @Override
        public synchronized Map<String, String> liveLeases() {
            return Map.copyOf(db.leases);
        }

        @Override
        public void leave() {
            db.live.remove(id);
        }

        @Override
        public long leasesSecuredAtNanos() {
            return securedAt;
        }

        @Override
        public synchronized Set<String> ownedJournals() {
            Set<String> out = new TreeSet<>();
            for (int k : served) {
                if (id.equals(db.leases.get(ShardController.journalOf(k)))) {
                    out.add(ShardController.journalOf(k));
                }
            }
            return out;
        }
    }

    @Test
    void aNodeWhoseIdAnotherProcessTookOverGivesEveryShardUpAndTakesNoneAgain() {
        Db db = new Db();
        Node a = new Node("node-a", db);
        a.controller.tick();
        assertThat(a.served).hasSize(12);
        assertThat(a.controller.displaced()).isNull();

        a.idTakenOver = true; // it was paused past its lease, and a second process started with its id
        a.controller.tick();
        assertThat(a.served).isEmpty();
        assertThat(a.controller.displaced()).contains("took node id 'node-a' over");
        a.idTakenOver = false;
        db.leases.clear();
        a.controller.tick(); // no more rounds: the other process is node-a now
        assertThat(a.served).isEmpty();
    }

    @Test
    void aLoneNodeServesEveryShardAndASecondNodeGetsItsShareHandedOver() {
        Db db = new Db();
        Node a = new Node("node-a", db);
        a.controller.tick();
        assertThat(a.served).hasSize(12);

        Node b = new Node("node-b", db);
        b.controller.tick(); // joins; its shards are still held by A's live leases: it waits
        assertThat(b.served).isEmpty();
        a.controller.tick(); // A sees B and gives B's shards up
        b.controller.tick(); // B takes them
        assertThat(a.served).isNotEmpty();
        assertThat(b.served).isNotEmpty();
        assertThat(a.served).doesNotContainAnyElementsOf(b.served);
        assertThat(a.served.size() + b.served.size()).isEqualTo(12);
    }

    @Test
    void aDeadNodesShardsAreTakenOnlyOnceItsLeasesRanOut() {
        Db db = new Db();
        Node a = new Node("node-a", db);
        Node b = new Node("node-b", db);
        a.controller.tick();
        b.controller.tick();
        a.controller.tick();
        b.controller.tick();
        Set<Integer> bHad = new TreeSet<>(b.served);
        // B dies: its membership row ages out, but its leases still run
        db.live.remove("node-b");
        a.controller.tick();
        assertThat(a.served).doesNotContainAnyElementsOf(bHad);
        // the leases run out (the database drops them from the live view)
        bHad.forEach(k -> db.leases.remove(ShardController.journalOf(k)));
        a.controller.tick();
        assertThat(a.served).hasSize(12);
    }

    @Test
    void aNodeCutOffFromTheDatabaseStopsServingBeforeItsLeasesCanRunOut() {
        Db db = new Db();
        Node a = new Node("node-a", db);
        a.controller.tick();
        assertThat(a.served).hasSize(12);
        db.down = true;
        a.now += LEASE.toNanos() / 2;
        a.controller.tick();
        assertThat(a.served).as("half a lease after the last renewal it still serves").hasSize(12);
        a.now += LEASE.toNanos() / 4;
        a.controller.tick();
        assertThat(a.served).as("75 % of a lease after the last renewal it serves nothing").isEmpty();
        // the database is back: A takes its shards again (nobody else took them)
        db.down = false;
        a.leave();
        db.live.clear();
        Node again = new Node("node-a", db);
        again.controller.tick();
        assertThat(again.served).hasSize(12);
    }

    @Test
    void theSelfFenceStopsEveryShardWhileARoundIsStuckOnASilentDatabase() throws Exception {
        Db db = new Db();
        Node a = new Node("node-a", db);
        a.controller.tick();
        assertThat(a.served).hasSize(12);
        a.silent = new CountDownLatch(1); // black-holed: the next heartbeat waits as long as its socket timeout
        Thread round = new Thread(a.controller::tick, "stuck-round");
        round.start();
        try {
            a.now += LEASE.toNanos() / 2;
            a.controller.fenceIfCutOff();
            assertThat(a.served).as("half a lease after the last renewal it still serves").hasSize(12);
            a.now += LEASE.toNanos() / 4;
            assertTimeoutPreemptively(Duration.ofSeconds(5), a.controller::fenceIfCutOff,
                    "the self-fence must not wait for the stuck round");
            assertThat(a.served).as("75 % of a lease after the last renewal it serves nothing").isEmpty();
        } finally {
            a.silent.countDown();
            round.join(5_000);
        }
    }

    @Test
    void aTakeThatCannotHappenNowIsTriedAgainNextRoundAndTheRoundGoesOn() {
        Db db = new Db();
        Node a = new Node("node-a", db);
        a.failNextTake.add(3);
        a.controller.tick();
        assertThat(a.served).as("every other shard is taken in the same round").hasSize(11).doesNotContain(3);
        a.controller.tick();
        assertThat(a.served).hasSize(12);
    }

    @Test
    void aShardAnotherNodeTookIsGivenUpAndACleanLeaveHandsEverythingOver() {
        Db db = new Db();
        Node a = new Node("node-a", db);
        Node b = new Node("node-b", db);
        a.controller.tick();
        db.leases.put(ShardController.journalOf(0), "node-x"); // fenced out of shard 0
        a.controller.tick();
        assertThat(a.served).doesNotContain(0);
        db.leases.remove(ShardController.journalOf(0));
        b.controller.tick();
        a.controller.tick();
        a.controller.leave();
        assertThat(a.served).isEmpty();
        b.controller.tick();
        assertThat(b.served).hasSize(12);
    }
}
