package io.buslane.journal.postgres;

import io.buslane.journal.Journal;
import io.buslane.journal.JournalException;
import io.buslane.journal.JournalFactory;
import io.buslane.journal.SharedJournal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Opens journals kept in PostgreSQL (docs/postgresql.md): migrates the schema on start, takes each journal it
 * opens by bumping the journal's epoch (waiting while another live node holds its lease), and renews the leases of
 * its journals in the background. Each journal has its own connection, used by its writer thread only; the factory
 * keeps one more for ownership. Thread-safe.
 */
public final class PostgresJournalFactory implements JournalFactory {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresJournalFactory.class);
    /** How long a failed connection attempt keeps the next one from being tried. */
    static final long RECONNECT_BACKOFF_NS = 1_000_000_000L;

    private final PostgresOptions options;
    private final Map<String, PostgresJournal> open = new ConcurrentHashMap<>();
    private final Thread renewer;
    private final Object adminLock = new Object();
    private Connection admin;
    private volatile String unavailable;
    private volatile boolean closed;
    private volatile boolean renewalPaused;
    /** Whether {@link #open} waits for another node's live lease to run out (false: it fails at once). */
    private volatile boolean waitForLeases = true;
    private volatile long leasesSecuredAtNanos = System.nanoTime();

    /**
     * Connects, and creates or migrates the schema.
     *
     * @throws IllegalStateException when the database cannot be reached or its schema is newer than this broker's
     */
    public PostgresJournalFactory(PostgresOptions options) {
        this.options = options;
        try {
            admin = connect("buslane-owner"); // long timeouts while migrating: another node may migrate first
            int found = PostgresSchema.migrate(admin);
            closeQuietly(admin);
            admin = connectLeaseBound("buslane-owner");
            if (found < PostgresSchema.currentVersion()) {
                LOG.info("PostgreSQL storage {}: schema {} -> {}", options.describe(), found,
                        PostgresSchema.currentVersion());
            }
        } catch (SQLException e) {
            closeQuietly(admin);
            throw new IllegalStateException("Cannot use the PostgreSQL storage at " + options.describe() + ": "
                    + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(admin);
            throw e;
        }
        renewer = new Thread(this::renewLoop, "buslane-pg-lease");
        renewer.setDaemon(true);
        renewer.start();
    }

    /**
     * From now on {@link #open} does not wait while another node holds a live lease on the journal: it fails at once
     * (cluster mode: the shard controller tries again next round with fresh membership, instead of waiting on a
     * lease its owner keeps renewing).
     */
    public void takeWithoutWaiting() {
        this.waitForLeases = false;
    }

    /** How long after the statement that last extended a lease was sent the journal may still be served. */
    long safeLeaseNanos() {
        return options.lease().toNanos() * PostgresOptions.SAFE_LEASE_PERCENT / 100;
    }

    PostgresOptions options() {
        return options;
    }

    /**
     * Cluster membership on this database for this node (its id is the options' node id).
     *
     * @param address   where other nodes reach this one
     * @param deadAfter a node whose last heartbeat is older than this counts as gone
     */
    public PostgresMembership membership(String address, Duration deadAfter) {
        return new PostgresMembership(this, options.nodeId(), address, deadAfter);
    }

    /** This node's lease on its journals, as configured. */
    public Duration lease() {
        return options.lease();
    }

    /**
     * When ({@link System#nanoTime()}) the oldest of this node's leases was last extended (by a renewal, or by the
     * journal's own sync, which sets the lease in the same statement): until that time plus the lease, no other node
     * can have taken a journal from this one. A node cut off from the database stops
     * serving its shards before that moment passes (see the cluster's shard controller).
     */
    public long leasesSecuredAtNanos() {
        boolean any = false;
        long secured = 0;
        for (PostgresJournal j : open.values()) {
            if (j.fencedBy() == null && !j.shared() && (!any || j.leaseExtendedAtNanos() - secured < 0)) {
                secured = j.leaseExtendedAtNanos();
                any = true;
            }
        }
        return any ? secured : leasesSecuredAtNanos;
    }

    /** The names of the journals this node has open and still owns (not fenced). */
    public Set<String> ownedJournals() {
        Set<String> names = new TreeSet<>();
        for (PostgresJournal j : open.values()) {
            if (j.fencedBy() == null && !j.shared()) {
                names.add(j.name());
            }
        }
        return names;
    }

    /**
     * A new connection to the database (autocommit on) for a shard journal's commits, replay and reads, and for
     * migrating the schema: a silent database fails its calls after 15 s (connect 5 s, login 10 s). A commit that
     * waits that long delays only its own shard, which delivers nothing on a lease that may have passed meanwhile
     * ({@link PostgresJournal#leaseHeld}); a slow disk is not taken for an outage.
     */
    Connection connect(String applicationName) throws SQLException {
        return connect(applicationName, 5, 10, 15);
    }

    /**
     * A new connection for what keeps this node's standing: taking journals and renewing their leases, the
     * membership heartbeat, the shared namespace journal. Its connect, login and socket timeouts are all
     * {@link #timeoutSeconds} of the lease, so that a cut-off node's threads are not stuck for longer than a share
     * of the lease (the shards themselves stop serving at SAFE_LEASE_PERCENT of it, whatever these threads do).
     */
    Connection connectLeaseBound(String applicationName) throws SQLException {
        int timeout = timeoutSeconds(options.lease());
        return connect(applicationName, timeout, timeout, timeout);
    }

    private Connection connect(String applicationName, int connectSeconds, int loginSeconds, int socketSeconds)
            throws SQLException {
        Properties p = new Properties();
        if (options.user() != null) {
            p.setProperty("user", options.user());
        }
        if (options.password() != null) {
            p.setProperty("password", options.password());
        }
        p.setProperty("ApplicationName", applicationName);
        // a silent database fails a call after these (its callers get a retriable error)
        p.setProperty("connectTimeout", Integer.toString(connectSeconds));
        p.setProperty("loginTimeout", Integer.toString(loginSeconds));
        p.setProperty("socketTimeout", Integer.toString(socketSeconds));
        p.setProperty("tcpKeepAlive", "true");
        return DriverManager.getConnection(options.jdbcUrl(), p);
    }

    /**
     * The connect, login and socket timeout of the connections that keep a node's standing
     * ({@link #connectLeaseBound}), in whole seconds as pgjdbc takes them: 40 % of the lease, at least 1 s, at most
     * 15 s (the 30 s default lease of a single node: 12 s; a 5 s cluster lease: 2 s).
     */
    static int timeoutSeconds(Duration lease) {
        return (int) Math.max(1, Math.min(15, lease.toMillis() * 4 / 10 / 1000));
    }

    @Override
    public Journal open(String name) {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        if (open.containsKey(name)) {
            if (!waitForLeases) {
                // cluster mode: this node gave the shard up and its last cycle still runs (waiting on the database,
                // say); the take is tried again next round, as when another node holds the lease
                throw new JournalException("journal " + name + " is still open here: this node's earlier ownership "
                        + "of it has not finished stopping", null, JournalException.Reason.LEASED);
            }
            throw new IllegalStateException("journal " + name + " is already open");
        }
        long[] taken = takeOwnership(name);
        Connection writer;
        try {
            writer = connect("buslane-" + name);
        } catch (SQLException e) {
            throw new JournalException("cannot connect to PostgreSQL for journal " + name + ": " + e.getMessage(), e,
                    JournalException.Reason.UNAVAILABLE);
        }
        PostgresJournal journal = new PostgresJournal(this, name, (int) taken[0], taken[1], taken[2], writer);
        journal.leaseTakenAt(taken[3]);
        open.put(name, journal);
        return journal;
    }

    /**
     * Opens a journal that every node writes (the namespace metadata in cluster mode): no lease and no epoch; each
     * commit is conditional on the journal's position being the one this node last read or wrote.
     */
    @Override
    public SharedJournal openShared(String name) {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        if (open.containsKey(name)) {
            throw new IllegalStateException("journal " + name + " is already open");
        }
        int id;
        synchronized (adminLock) {
            try {
                ensureAdmin();
                try (PreparedStatement ins = admin.prepareStatement(
                        "INSERT INTO buslane_journal (name) VALUES (?) ON CONFLICT (name) DO NOTHING")) {
                    ins.setString(1, name);
                    ins.executeUpdate();
                }
                try (PreparedStatement sel = admin.prepareStatement(
                        "SELECT journal_id FROM buslane_journal WHERE name = ?")) {
                    sel.setString(1, name);
                    try (ResultSet rs = sel.executeQuery()) {
                        rs.next();
                        id = rs.getInt(1);
                    }
                }
            } catch (SQLException e) {
                closeQuietly(admin);
                admin = null;
                throw new JournalException("cannot open shared journal " + name + " in PostgreSQL: "
                        + e.getMessage(), e, JournalException.Reason.UNAVAILABLE);
            }
        }
        PostgresJournal journal = new PostgresJournal(this, name, id, 0, -1, null, true);
        open.put(name, journal);
        return journal;
    }

    /**
     * Takes a journal: creates its row if needed, waits while another node's lease on it is live, then bumps the
     * epoch. From then on a commit of any earlier owner is refused.
     */
    private long[] takeOwnership(String name) {
        long waitingSinceMs = -1;
        while (true) {
            if (closed) {
                throw new IllegalStateException("closed while waiting to take journal " + name);
            }
            synchronized (adminLock) {
                try {
                    ensureAdmin();
                    admin.setAutoCommit(false);
                    try {
                        long startedNs = System.nanoTime(); // the lease taken runs from no later than this
                        long[] taken = tryTake(name);
                        admin.commit();
                        if (taken.length == 3) {
                            return new long[] {taken[0], taken[1], taken[2], startedNs};
                        }
                        if (!waitForLeases) {
                            throw new JournalException("journal " + name + " is owned by node '" + ownerOf(name)
                                    + "' whose lease runs " + taken[0] + " ms more: not taken now", null,
                                    JournalException.Reason.LEASED);
                        }
                        if (waitingSinceMs < 0 || System.currentTimeMillis() - waitingSinceMs > 10_000) {
                            waitingSinceMs = waitingSinceMs < 0 ? System.currentTimeMillis() : waitingSinceMs;
                            LOG.warn("Journal {} is owned by node '{}' whose lease runs {} ms more: waiting for it to "
                                    + "expire (this node is '{}')", name, ownerOf(name), taken[0], options.nodeId());
                        }
                    } finally {
                        admin.setAutoCommit(true);
                    }
                } catch (SQLException e) {
                    closeQuietly(admin);
                    admin = null;
                    throw new JournalException("cannot take journal " + name + " in PostgreSQL: " + e.getMessage(), e,
                            JournalException.Reason.UNAVAILABLE);
                }
            }
            sleep(Math.min(500, options.lease().toMillis() / 4));
        }
    }

    /** Returns {journal id, epoch, synced position} when taken, or {ms left on another node's lease}. */
    private long[] tryTake(String name) throws SQLException {
        try (PreparedStatement ins = admin.prepareStatement(
                "INSERT INTO buslane_journal (name) VALUES (?) ON CONFLICT (name) DO NOTHING")) {
            ins.setString(1, name);
            ins.executeUpdate();
        }
        try (PreparedStatement sel = admin.prepareStatement("SELECT journal_id, owner,"
                + " GREATEST(0, EXTRACT(EPOCH FROM (lease_until - now())) * 1000)::bigint"
                + " FROM buslane_journal WHERE name = ? FOR UPDATE")) {
            sel.setString(1, name);
            try (ResultSet rs = sel.executeQuery()) {
                rs.next();
                int id = rs.getInt(1);
                String owner = rs.getString(2);
                long leftMs = rs.getLong(3);
                if (owner != null && !owner.equals(options.nodeId()) && leftMs > 0) {
                    return new long[] {leftMs};
                }
                try (PreparedStatement up = admin.prepareStatement("UPDATE buslane_journal SET epoch = epoch + 1,"
                        + " owner = ?, lease_until = now() + ? * interval '1 millisecond' WHERE journal_id = ?"
                        + " RETURNING epoch, synced_position")) {
                    up.setString(1, options.nodeId());
                    up.setLong(2, options.lease().toMillis());
                    up.setInt(3, id);
                    try (ResultSet e = up.executeQuery()) {
                        e.next();
                        return new long[] {id, e.getLong(1), e.getLong(2)};
                    }
                }
            }
        }
    }

    /** The owner and epoch of a journal, as a message says it (null when unknown). */
    String ownerOf(String name) {
        synchronized (adminLock) {
            try {
                ensureAdmin();
                try (PreparedStatement sel = admin.prepareStatement(
                        "SELECT owner, epoch FROM buslane_journal WHERE name = ?")) {
                    sel.setString(1, name);
                    try (ResultSet rs = sel.executeQuery()) {
                        return rs.next() ? rs.getString(1) + "' (epoch " + rs.getLong(2) + ")" : null;
                    }
                }
            } catch (SQLException e) {
                return null;
            }
        }
    }

    private void ensureAdmin() throws SQLException {
        if (admin == null || admin.isClosed()) {
            admin = connectLeaseBound("buslane-owner");
        }
    }

    private void renewLoop() {
        while (!closed) {
            long periodMs = unavailable != null ? 1000 : Math.max(100, options.lease().toMillis() / 3);
            sleep(periodMs);
            if (!closed && !renewalPaused) {
                renewLeases();
            }
        }
    }

    /** Renews the lease of every open journal; a journal whose epoch moved is fenced. */
    void renewLeases() {
        List<PostgresJournal> journals = new ArrayList<>(open.values());
        long startedNs = System.nanoTime();
        synchronized (adminLock) {
            try {
                ensureAdmin();
                try (PreparedStatement up = admin.prepareStatement("UPDATE buslane_journal SET lease_until = now() + ?"
                        + " * interval '1 millisecond' WHERE journal_id = ? AND epoch = ?")) {
                    long recentNs = options.lease().toNanos() / 6;
                    for (PostgresJournal j : journals) {
                        if (j.fencedBy() != null || j.shared() || startedNs - j.leaseExtendedAtNanos() < recentNs) {
                            // a journal whose own sync extended its lease a moment ago is left alone: renewing it
                            // would wait behind its syncs' row locks, which is what delays renewals under load
                            continue;
                        }
                        up.setLong(1, options.lease().toMillis());
                        up.setInt(2, j.journalId());
                        up.setLong(3, j.epoch());
                        if (up.executeUpdate() == 0) {
                            j.fence(ownerOf(j.name()));
                        } else {
                            j.leaseExtended(startedNs);
                        }
                    }
                }
                leasesSecuredAtNanos = startedNs;
                available();
            } catch (SQLException e) {
                closeQuietly(admin);
                admin = null;
                unavailable("the database does not answer (" + e.getMessage() + ")");
            }
        }
    }

    /** Gives a journal's lease back (on a clean close), so another node can take it at once. */
    void release(PostgresJournal journal) {
        open.remove(journal.name(), journal);
        if (journal.fencedBy() != null || journal.shared()) {
            return;
        }
        synchronized (adminLock) {
            try {
                ensureAdmin();
                try (PreparedStatement up = admin.prepareStatement("UPDATE buslane_journal SET lease_until = now()"
                        + " WHERE journal_id = ? AND epoch = ?")) {
                    up.setInt(1, journal.journalId());
                    up.setLong(2, journal.epoch());
                    up.executeUpdate();
                }
            } catch (SQLException e) {
                LOG.debug("could not release journal {}: {}", journal.name(), e.toString());
            }
        }
    }

    /** A journal or the renewer could not reach the database. */
    void unavailable(String why) {
        if (unavailable == null) {
            LOG.error("PostgreSQL storage {}: {}; sends are refused with a retriable error until it answers",
                    options.describe(), why);
        }
        unavailable = why;
    }

    /** The database answered again. */
    void available() {
        if (unavailable != null) {
            LOG.info("PostgreSQL storage {}: the database answers again", options.describe());
            unavailable = null;
        }
    }

    /** What clients are told (no database address or driver message: those are in the broker's log). */
    @Override
    public String unavailableReason() {
        return unavailable == null ? null : "The broker's database is unreachable.";
    }

    @Override
    public List<String> healthProblems() {
        List<String> problems = new ArrayList<>();
        String why = unavailable;
        if (why != null) {
            // /health is unauthenticated: it names no database address (the broker's log does)
            problems.add("PostgreSQL storage: the database does not answer; see the broker's log.");
        }
        for (PostgresJournal j : open.values()) {
            if (j.fencedBy() != null) {
                problems.add("Journal " + j.name() + " was taken over by node '" + j.fencedBy()
                        + ": this node no longer serves it.");
            }
        }
        return problems;
    }

    @Override
    public Path cacheDirectory() {
        return options.cacheDir();
    }

    @Override
    public void close() {
        closed = true;
        renewer.interrupt();
        synchronized (adminLock) {
            closeQuietly(admin);
            admin = null;
        }
    }

    static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // nothing more to do with it
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** For tests: stops (or resumes) renewing leases in the background, as a paused process would. */
    void pauseRenewalForTest(boolean paused) {
        renewalPaused = paused;
    }
}
