package io.buslane.journal.postgres;

import io.buslane.journal.JournalException;
import io.buslane.journal.JournalRecord;
import io.buslane.journal.RecordKind;
import io.buslane.journal.ReplayHandler;
import io.buslane.journal.SharedJournal;
import org.postgresql.PGConnection;
import org.slf4j.LoggerFactory;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;

/**
 * A journal kept in PostgreSQL's {@code buslane_record} table (docs/postgresql.md). The table holds the live
 * records only: a sync deletes what its records made dead (everything of a deleted id, the UPDATE a new UPDATE
 * replaces) in the same statement that inserts them, so no compaction pass exists and autovacuum reclaims the
 * space. Records that die within one batch are never written.
 *
 * <p><b>One statement per group commit.</b> A sync is a single SQL statement (implicitly one transaction): a
 * data-modifying CTE renews the journal's lease only if the epoch is still the one this instance took (the fence),
 * and the deletes and the multi-row insert (arrays through {@code unnest}) are conditional on it. The fence's row
 * lock also orders a takeover after any commit in flight, so a commit is either seen by the next owner's replay or
 * refused. A refused commit fences the journal for good: it drops its records and fails every later sync.
 *
 * <p><b>Failures.</b> When the database cannot be reached the batch is kept, the sync fails with
 * {@link JournalException.Reason#UNAVAILABLE}, and the next sync writes it together with what came since (so the
 * owner holds the batch's answers until then: {@link #keepsFailedBatch}). Records
 * carry their position from the moment they are appended and every commit stores the last position it covers
 * ({@code synced_position}), so a retry first reads how far the failed attempt got (a commit can succeed with its
 * answer lost) and writes only the rest: never a record twice, never a delete again over a later record.
 *
 * <p>Confined to its writer thread, as every journal.
 */
final class PostgresJournal implements SharedJournal {

    /** Past this many payload bytes a batch is written by several statements in one transaction. */
    static final long MAX_STATEMENT_BYTES = 16L * 1024 * 1024;
    private static final int REPLAY_FETCH = 4096;

    private static final String SYNC_SQL = "WITH fence AS ("
            + " UPDATE buslane_journal SET lease_until = now() + ? * interval '1 millisecond', synced_position = ?"
            + " WHERE journal_id = ? AND epoch = ? RETURNING journal_id),"
            + " dead AS (DELETE FROM buslane_record r USING fence f WHERE r.journal_id = f.journal_id"
            + " AND r.record_id = ANY (?::bigint[]) RETURNING 1),"
            + " replaced AS (DELETE FROM buslane_record r USING fence f WHERE r.journal_id = f.journal_id"
            + " AND r.kind = 2 AND r.record_id = ANY (?::bigint[]) RETURNING 1),"
            + " added AS (INSERT INTO buslane_record (journal_id, position, record_id, kind, type, payload)"
            + " SELECT f.journal_id, t.position, t.record_id, t.kind, t.type, t.payload FROM fence f,"
            + " unnest(?::bigint[], ?::bigint[], ?::smallint[], ?::smallint[], ?::bytea[])"
            + " AS t(position, record_id, kind, type, payload) RETURNING 1)"
            + " SELECT (SELECT count(*) FROM fence), (SELECT count(*) FROM added)";
    /**
     * A shared journal's commit: the same statement, fenced by the position this node last read or wrote instead of
     * an owner's epoch (the first two parameters keep their places: the lease is not touched).
     */
    private static final String SHARED_SYNC_SQL = SYNC_SQL.replace("UPDATE buslane_journal SET lease_until = now()"
            + " + ? * interval '1 millisecond', synced_position = ? WHERE journal_id = ? AND epoch = ?",
            "UPDATE buslane_journal SET synced_position = ? + 0 * ? WHERE journal_id = ? AND synced_position = ?");

    static {
        if (SHARED_SYNC_SQL.equals(SYNC_SQL)) { // the fence above must have been replaced, or nothing is shared
            throw new ExceptionInInitializerError("the shared journal's commit statement lost its fence");
        }
    }
    private static final String INSERT_SQL = "INSERT INTO buslane_record (journal_id, position, record_id, kind, type,"
            + " payload) SELECT ?, * FROM unnest(?::bigint[], ?::bigint[], ?::smallint[], ?::smallint[], ?::bytea[])";

    private final PostgresJournalFactory factory;
    private final String name;
    private final int journalId;
    private final long epoch;
    private Connection writer;
    private Connection reader;
    private long connectFailedAtNs;
    private boolean connectFailed;
    /** Appended records not yet stored, each with its position (kept across a failed sync). */
    private final ArrayList<Positioned> pending = new ArrayList<>();
    private long nextPosition;
    /** After a failed sync, the last position it tried to store: whether it did is read before the next attempt. */
    private long uncertainUpTo = -1;
    private long appended;
    private volatile String fencedBy;
    /** A journal several nodes write (see {@link io.buslane.journal.SharedJournal}); no lease, no epoch. */
    private final boolean shared;
    /** Shared: the synced position this node last read or wrote (-2: unknown, read again before writing). */
    private long knownPosition = -2;

    private record Positioned(long position, JournalRecord record) {
    }

    /**
     * @param syncedPosition the last position a commit of this journal covered (-1 for none): positions continue
     *                       after it, since a batch's DELETEs take positions that no stored row keeps
     */
    PostgresJournal(PostgresJournalFactory factory, String name, int journalId, long epoch, long syncedPosition,
                    Connection writer) {
        this(factory, name, journalId, epoch, syncedPosition, writer, false);
    }

    PostgresJournal(PostgresJournalFactory factory, String name, int journalId, long epoch, long syncedPosition,
                    Connection writer, boolean shared) {
        this.shared = shared;
        this.factory = factory;
        this.name = name;
        this.journalId = journalId;
        this.epoch = epoch;
        this.nextPosition = syncedPosition + 1;
        this.writer = writer;
    }

    String name() {
        return name;
    }

    int journalId() {
        return journalId;
    }

    private volatile long leaseExtendedAtNanos = System.nanoTime();

    long epoch() {
        return epoch;
    }

    boolean shared() {
        return shared;
    }

    /** The node that took this journal over, or null while this instance owns it. */
    String fencedBy() {
        return fencedBy;
    }

    /** Another node took the journal over: nothing more is written, every sync fails. */
    void fence(String by) {
        if (fencedBy == null) {
            fencedBy = by == null ? "another node" : by;
            LoggerFactory.getLogger(PostgresJournal.class).error("Journal {} was taken over by node '{}; "
                    + "this node stops serving it (its epoch was {})", name, fencedBy, epoch);
        }
    }

    @Override
    public void replay(ReplayHandler handler) {
        try {
            Connection c = writer();
            c.setAutoCommit(false);
            if (shared) {
                // the rows and the position they are as of, in one snapshot
                c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                pending.clear();
                knownPosition = syncedPosition(c);
                nextPosition = knownPosition + 1;
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT position, record_id, kind, type, payload"
                    + " FROM buslane_record WHERE journal_id = ? ORDER BY position")) {
                ps.setFetchSize(REPLAY_FETCH);
                ps.setInt(1, journalId);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        nextPosition = Math.max(nextPosition, rs.getLong(1) + 1);
                        handler.onRecord(new JournalRecord(RecordKind.ofCode((byte) rs.getShort(3)), rs.getLong(2),
                                (byte) rs.getShort(4), rs.getBytes(5)));
                    }
                }
                c.commit();
            } finally {
                c.setAutoCommit(true);
                if (shared) {
                    c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                }
            }
        } catch (SQLException e) {
            dropConnections();
            throw new JournalException("cannot replay journal " + name + " from PostgreSQL: " + e.getMessage(), e,
                    JournalException.Reason.UNAVAILABLE);
        }
    }

    @Override
    public void append(JournalRecord record) {
        if (fencedBy != null) {
            return; // never written: the next sync fails
        }
        pending.add(new Positioned(nextPosition++, record));
        appended++;
    }

    @Override
    public boolean keepsFailedBatch() {
        // kept whatever the SQL state (a statement timeout too): a batch the next sync writes is never answered failed
        return !shared && fencedBy == null && !pending.isEmpty();
    }

    @Override
    public boolean needsSync() {
        return !pending.isEmpty() || fencedBy != null;
    }

    /**
     * When ({@link System#nanoTime()}) the last statement that extended this journal's lease was sent: a sync that
     * held the fence (it sets the lease too) or a renewal. Until then plus the lease no other node can take it.
     */
    long leaseExtendedAtNanos() {
        return leaseExtendedAtNanos;
    }

    /** Not fenced, and the lease (from when the last statement that extended it was sent) has its margin left. */
    @Override
    public boolean leaseHeld() {
        return fencedBy == null && (shared || System.nanoTime() - leaseExtendedAtNanos < factory.safeLeaseNanos());
    }

    /** The statement that took this journal (and set its lease) was sent at {@code startedNs}. */
    void leaseTakenAt(long startedNs) {
        leaseExtendedAtNanos = startedNs;
    }

    /** A renewal sent at {@code startedNs} extended the lease. */
    void leaseExtended(long startedNs) {
        if (startedNs - leaseExtendedAtNanos > 0) {
            leaseExtendedAtNanos = startedNs;
        }
    }

    @Override
    public void sync() {
        if (fencedBy != null) {
            pending.clear();
            throw fenced();
        }
        if (pending.isEmpty()) {
            return;
        }
        if (shared) {
            syncShared();
            return;
        }
        try {
            Connection c = writer();
            if (uncertainUpTo >= 0) {
                long stored = syncedPositionIfStillOwned(c);
                if (stored == FENCED) { // taken over meanwhile: its position says nothing about this node's batch
                    pending.clear();
                    fence(factory.ownerOf(name));
                    throw fenced();
                }
                pending.removeIf(p -> p.position() <= stored);
                uncertainUpTo = -1;
                if (pending.isEmpty()) {
                    factory.available();
                    return;
                }
            }
            Batch batch = Batch.of(pending);
            long startedNs = System.nanoTime();
            boolean fenceHeld = batch.statements() == 1 ? syncInOneStatement(c, batch) : syncInTransaction(c, batch);
            if (!fenceHeld) {
                pending.clear();
                fence(factory.ownerOf(name));
                throw fenced();
            }
            leaseExtended(startedNs);
            pending.clear();
            factory.available();
        } catch (SQLException e) {
            dropConnections();
            uncertainUpTo = pending.get(pending.size() - 1).position();
            boolean transientFailure = transientState(e.getSQLState());
            if (transientFailure) {
                factory.unavailable("the database does not answer (" + e.getMessage() + ")");
            }
            throw new JournalException("PostgreSQL did not store journal " + name + "'s batch of " + pending.size()
                    + " records (" + e.getMessage() + "); it is written with the next sync", e,
                    transientFailure ? JournalException.Reason.UNAVAILABLE : JournalException.Reason.FAILED);
        }
    }

    /**
     * A shared journal's sync: stored only if the journal is still at the position this node knows, else CONFLICT.
     * A failure drops the batch (the position is unknown then: the next write reads the journal again first), so
     * that a batch is never written after another node's records with positions that collide.
     */
    private void syncShared() {
        try {
            if (knownPosition < -1) {
                pending.clear();
                throw conflict("this node has not read the journal since its last failed write");
            }
            Batch batch = Batch.of(pending);
            long last = pending.get(pending.size() - 1).position();
            boolean stored = batch.statements() == 1 ? syncInOneStatement(writer(), batch)
                    : syncInTransaction(writer(), batch);
            pending.clear();
            if (!stored) {
                knownPosition = -2;
                throw conflict("another node changed it first");
            }
            knownPosition = last;
            factory.available();
        } catch (SQLException e) {
            dropConnections();
            pending.clear();
            knownPosition = -2;
            boolean transientFailure = transientState(e.getSQLState());
            if (transientFailure) {
                factory.unavailable("the database does not answer (" + e.getMessage() + ")");
            }
            throw new JournalException("PostgreSQL did not store journal " + name + "'s batch (" + e.getMessage()
                    + "); nothing of it is assumed stored", e,
                    transientFailure ? JournalException.Reason.UNAVAILABLE : JournalException.Reason.FAILED);
        }
    }

    private JournalException conflict(String why) {
        return new JournalException("journal " + name + " was not written: " + why + "; read it again and retry",
                null, JournalException.Reason.CONFLICT);
    }

    /** Whether the stored position moved since this node last read or wrote it (meant for shared journals). */
    @Override
    public boolean changedElsewhere() {
        try {
            return syncedPosition(writer()) != knownPosition;
        } catch (SQLException e) {
            dropConnections();
            throw new JournalException("cannot read journal " + name + "'s position from PostgreSQL: "
                    + e.getMessage(), e, JournalException.Reason.UNAVAILABLE);
        }
    }

    /** For tests: commits the pending batch, then behaves as if the answer was lost with the connection. */
    void syncAndLoseTheAnswerForTest() throws SQLException {
        syncInOneStatement(writer(), Batch.of(pending));
        uncertainUpTo = pending.get(pending.size() - 1).position();
        dropConnections();
        connectFailed = true;
        connectFailedAtNs = System.nanoTime();
    }

    private long syncedPosition(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT synced_position FROM buslane_journal WHERE journal_id = ?")) {
            ps.setInt(1, journalId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** What {@link #syncedPositionIfStillOwned} answers when another node took the journal over. */
    private static final long FENCED = Long.MIN_VALUE;

    /**
     * How far this journal's commits reached, read after a commit whose answer was lost; {@link #FENCED} when the
     * epoch moved since this node took it (another node's commits moved the position then, not this node's).
     */
    private long syncedPositionIfStillOwned(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT synced_position, epoch FROM buslane_journal WHERE journal_id = ?")) {
            ps.setInt(1, journalId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(2) == epoch ? rs.getLong(1) : FENCED;
            }
        }
    }

    private boolean syncInOneStatement(Connection c, Batch batch) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(shared ? SHARED_SYNC_SQL : SYNC_SQL)) {
            bindFence(c, ps, batch);
            bindRows(c, ps, 7, batch, 0, batch.rows());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) == 1;
            }
        }
    }

    private boolean syncInTransaction(Connection c, Batch batch) throws SQLException {
        c.setAutoCommit(false);
        try {
            int from = 0;
            int to = batch.chunkEnd(0);
            try (PreparedStatement ps = c.prepareStatement(shared ? SHARED_SYNC_SQL : SYNC_SQL)) {
                bindFence(c, ps, batch);
                bindRows(c, ps, 7, batch, from, to);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getLong(1) != 1) {
                        c.rollback();
                        return false;
                    }
                }
            }
            try (PreparedStatement ins = c.prepareStatement(INSERT_SQL)) {
                while (to < batch.rows()) {
                    from = to;
                    to = batch.chunkEnd(from);
                    ins.setInt(1, journalId);
                    bindRows(c, ins, 2, batch, from, to);
                    ins.executeUpdate();
                }
            }
            c.commit();
            return true;
        } catch (SQLException e) {
            try {
                c.rollback();
            } catch (SQLException ignored) {
                // the connection is dropped by the caller
            }
            throw e;
        } finally {
            if (!c.isClosed()) {
                c.setAutoCommit(true);
            }
        }
    }

    private void bindFence(Connection c, PreparedStatement ps, Batch batch) throws SQLException {
        if (shared) {
            ps.setLong(1, pending.get(pending.size() - 1).position());
            ps.setLong(2, 0);
            ps.setInt(3, journalId);
            ps.setLong(4, knownPosition);
        } else {
            ps.setLong(1, factory.options().lease().toMillis());
            ps.setLong(2, pending.get(pending.size() - 1).position());
            ps.setInt(3, journalId);
            ps.setLong(4, epoch);
        }
        ps.setArray(5, array(c, "int8", batch.deletedIds()));
        ps.setArray(6, array(c, "int8", batch.replacedIds()));
    }

    private static void bindRows(Connection c, PreparedStatement ps, int first, Batch b, int from, int to)
            throws SQLException {
        int n = to - from;
        long[] positions = new long[n];
        long[] ids = new long[n];
        short[] kinds = new short[n];
        short[] types = new short[n];
        byte[][] payloads = new byte[n][];
        for (int i = 0; i < n; i++) {
            Positioned p = b.row(from + i);
            positions[i] = p.position();
            ids[i] = p.record().id();
            kinds[i] = p.record().kind().code();
            types[i] = p.record().type();
            payloads[i] = p.record().payload();
        }
        Array[] arrays = {array(c, "int8", positions), array(c, "int8", ids),
            array(c, "int2", kinds), array(c, "int2", types), array(c, "bytea", payloads)};
        for (int i = 0; i < arrays.length; i++) {
            ps.setArray(first + i, arrays[i]);
        }
    }

    /**
     * What a batch writes: the rows still live at its end (in position order), the ids whose stored records it
     * deletes, and the ids whose stored UPDATE it replaces.
     */
    private record Batch(ArrayList<Positioned> live, long[] deletedIds, long[] replacedIds, long[] chunkEnds) {

        static Batch of(ArrayList<Positioned> pending) {
            Positioned[] rows = pending.toArray(new Positioned[0]);
            // Only ids that a later record of the batch updates or deletes need their rows tracked: usually few
            // (a completion deletes a message of an earlier batch), so most ADDs cost no map entry.
            HashSet<Long> touched = new HashSet<>();
            for (Positioned p : rows) {
                if (p.record().kind() != RecordKind.ADD) {
                    touched.add(p.record().id());
                }
            }
            Map<Long, ArrayList<Integer>> rowsOfId = new HashMap<>();
            LinkedHashSet<Long> deleted = new LinkedHashSet<>();
            LinkedHashSet<Long> replaced = new LinkedHashSet<>();
            for (int i = 0; i < rows.length; i++) {
                JournalRecord r = rows[i].record();
                if (r.kind() == RecordKind.ADD) {
                    if (!touched.isEmpty() && touched.contains(r.id())) {
                        rowsOfId.computeIfAbsent(r.id(), k -> new ArrayList<>(1)).add(i);
                    }
                } else if (r.kind() == RecordKind.UPDATE) {
                    ArrayList<Integer> earlier = rowsOfId.computeIfAbsent(r.id(), k -> new ArrayList<>(1));
                    earlier.removeIf(j -> {
                        boolean update = rows[j].record().kind() == RecordKind.UPDATE;
                        if (update) {
                            rows[j] = null;
                        }
                        return update;
                    });
                    earlier.add(i);
                    replaced.add(r.id());
                } else {
                    ArrayList<Integer> earlier = rowsOfId.remove(r.id());
                    if (earlier != null) {
                        for (int j : earlier) {
                            rows[j] = null;
                        }
                    }
                    rows[i] = null; // a DELETE is never stored: the rows it ends are deleted instead
                    deleted.add(r.id());
                }
            }
            ArrayList<Positioned> live = new ArrayList<>(rows.length);
            ArrayList<Long> ends = new ArrayList<>();
            long bytes = 0;
            int chunkStart = 0;
            for (Positioned p : rows) {
                if (p != null) {
                    long size = p.record().payload().length + 32L;
                    if (bytes + size > MAX_STATEMENT_BYTES && live.size() > chunkStart) {
                        ends.add((long) live.size());
                        chunkStart = live.size();
                        bytes = 0;
                    }
                    bytes += size;
                    live.add(p);
                }
            }
            ends.add((long) live.size());
            return new Batch(live, toArray(deleted), toArray(replaced),
                    ends.stream().mapToLong(Long::longValue).toArray());
        }

        private static long[] toArray(Collection<Long> ids) {
            long[] a = new long[ids.size()];
            int i = 0;
            for (long id : ids) {
                a[i++] = id;
            }
            return a;
        }

        int rows() {
            return live.size();
        }

        Positioned row(int i) {
            return live.get(i);
        }

        int statements() {
            return chunkEnds.length;
        }

        /** The end of the chunk that starts at row {@code from}. */
        int chunkEnd(int from) {
            for (long end : chunkEnds) {
                if (end > from) {
                    return (int) end;
                }
            }
            return live.size();
        }
    }

    /** An array parameter from a primitive array, which pgjdbc sends in its binary form. */
    private static Array array(Connection c, String type, Object elements) throws SQLException {
        return c.unwrap(PGConnection.class).createArrayOf(type, elements);
    }

    /** Connection-level and retriable failures (classes 08, 53, 57P, 40 and a lost socket) clear by themselves. */
    static boolean transientState(String state) {
        return state == null || state.startsWith("08") || state.startsWith("53") || state.startsWith("57P")
                || state.startsWith("40");
    }

    private JournalException fenced() {
        return new JournalException("this node no longer owns journal " + name + ": node '" + fencedBy
                + " took it over", null, JournalException.Reason.FENCED);
    }

    private Connection writer() throws SQLException {
        if (writer == null || writer.isClosed()) {
            writer = reconnect("buslane-" + name);
        }
        return writer;
    }

    private Connection reconnect(String applicationName) throws SQLException {
        if (connectFailed && System.nanoTime() - connectFailedAtNs < PostgresJournalFactory.RECONNECT_BACKOFF_NS) {
            throw new SQLException("not reconnecting yet: the last attempt failed less than a second ago", "08001");
        }
        try {
            Connection c = shared ? factory.connectLeaseBound(applicationName) : factory.connect(applicationName);
            connectFailed = false;
            return c;
        } catch (SQLException e) {
            connectFailed = true;
            connectFailedAtNs = System.nanoTime();
            throw e;
        }
    }

    private void dropConnections() {
        PostgresJournalFactory.closeQuietly(writer);
        PostgresJournalFactory.closeQuietly(reader);
        writer = null;
        reader = null;
    }

    @Override
    public JournalRecord read(long id, RecordKind kind) {
        if (kind == RecordKind.DELETE) {
            throw new IllegalArgumentException("only ADD and UPDATE records can be read: " + kind);
        }
        try {
            if (reader == null || reader.isClosed()) {
                reader = reconnect("buslane-" + name + "-read");
            }
            try (PreparedStatement ps = reader.prepareStatement("SELECT type, payload FROM buslane_record"
                    + " WHERE journal_id = ? AND record_id = ? AND kind = ? ORDER BY position DESC LIMIT 1")) {
                ps.setInt(1, journalId);
                ps.setLong(2, id);
                ps.setShort(3, kind.code());
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? new JournalRecord(kind, id, (byte) rs.getShort(1), rs.getBytes(2)) : null;
                }
            }
        } catch (SQLException e) {
            PostgresJournalFactory.closeQuietly(reader);
            reader = null;
            throw new JournalException("cannot read record " + id + " of journal " + name + " from PostgreSQL: "
                    + e.getMessage(), e, JournalException.Reason.UNAVAILABLE);
        }
    }

    @Override
    public long appendedCount() {
        return appended;
    }

    @Override
    public void close() {
        factory.release(this);
        dropConnections();
    }
}
