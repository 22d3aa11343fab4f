package io.buslane.journal.postgres;

import io.buslane.journal.JournalException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Cluster membership in the database (table {@code buslane_node}, docs/cluster.md): a node heartbeats its row, and
 * the nodes whose heartbeat is younger than {@code deadAfter} (by the database's clock, so that nodes' clocks need
 * not agree) and that are not leaving are the live ones. Also reads who holds which journal's lease, which is what
 * a node looks at before taking a shard. Thread-safe (one connection, used under this object's lock).
 *
 * <p>A node id is held by one process at a time, its <em>incarnation</em> (a random id made when the process makes
 * its membership): the first heartbeat claims the row, which succeeds only while no other incarnation holds it live
 * (its heartbeat younger than {@code deadAfter} and not leaving); every later heartbeat renews the row only for this
 * incarnation. So a second process started with a live node's id is refused ({@link JournalException.Reason#LEASED})
 * instead of taking that node's shards as if it were the same node, and a process whose id was taken over while it
 * was presumed dead (paused past {@code deadAfter}, then resumed) learns it at its next heartbeat
 * ({@link JournalException.Reason#FENCED}).
 */
public final class PostgresMembership implements AutoCloseable {

    /** A live node: its id and the address other nodes reach it at. */
    public record Node(String id, String address) {
    }

    /**
     * A journal's ownership row as of the read.
     *
     * @param owner the node that took it last (null: never taken)
     * @param live  whether that node's lease still runs
     */
    public record Lease(String journal, String owner, boolean live) {
    }

    private final PostgresJournalFactory factory;
    private final String nodeId;
    private final String address;
    private final Duration deadAfter;
    private final String incarnation = UUID.randomUUID().toString();
    /** Whether this incarnation has claimed the node id. */
    private boolean claimed;
    private Connection connection;

    PostgresMembership(PostgresJournalFactory factory, String nodeId, String address, Duration deadAfter) {
        this.factory = factory;
        this.nodeId = nodeId;
        this.address = address;
        this.deadAfter = deadAfter;
    }

    public String nodeId() {
        return nodeId;
    }

    /**
     * Records this node's heartbeat (joining, or back after leaving) and returns the live nodes, ordered by id.
     *
     * @throws JournalException UNAVAILABLE when the database does not answer; LEASED when another process holds
     *                          this node id live (nothing changed); FENCED when another process took the node id
     *                          over after this one had held it
     */
    public synchronized List<Node> heartbeat() {
        try {
            Connection c = connection();
            if (!renew(c)) {
                if (claimed) {
                    throw new JournalException("Another process took node id '" + nodeId + "' over (this one was "
                            + "presumed dead: no heartbeat for " + deadAfter.toMillis() + " ms): " + holder(c),
                            null, JournalException.Reason.FENCED);
                }
                if (!claim(c)) {
                    throw new JournalException("Node id '" + nodeId + "' is in use by a live process: " + holder(c)
                            + ". Every node needs its own --node-id.", null, JournalException.Reason.LEASED);
                }
                claimed = true;
            }
            List<Node> live = new ArrayList<>();
            try (PreparedStatement sel = c.prepareStatement("SELECT node_id, address FROM buslane_node"
                    + " WHERE NOT leaving AND heartbeat_at > now() - ? * interval '1 millisecond' ORDER BY node_id")) {
                sel.setLong(1, deadAfter.toMillis());
                try (ResultSet rs = sel.executeQuery()) {
                    while (rs.next()) {
                        live.add(new Node(rs.getString(1), rs.getString(2)));
                    }
                }
            }
            return live;
        } catch (SQLException e) {
            throw unavailable("record the heartbeat of node " + nodeId, e);
        }
    }

    /** Renews this incarnation's row; false when the row is not this incarnation's (or there is none). */
    private boolean renew(Connection c) throws SQLException {
        try (PreparedStatement up = c.prepareStatement("UPDATE buslane_node SET address = ?, heartbeat_at = now(),"
                + " leaving = false WHERE node_id = ? AND incarnation = ?")) {
            up.setString(1, address);
            up.setString(2, nodeId);
            up.setString(3, incarnation);
            return up.executeUpdate() == 1;
        }
    }

    /** Claims the node id for this incarnation unless another holds it live; true when claimed. */
    private boolean claim(Connection c) throws SQLException {
        try (PreparedStatement up = c.prepareStatement("INSERT INTO buslane_node (node_id, address, incarnation)"
                + " VALUES (?, ?, ?) ON CONFLICT (node_id) DO UPDATE SET address = EXCLUDED.address,"
                + " incarnation = EXCLUDED.incarnation, started_at = now(), heartbeat_at = now(), leaving = false"
                + " WHERE buslane_node.leaving OR buslane_node.heartbeat_at <= now() - ? * interval '1 millisecond'")) {
            up.setString(1, nodeId);
            up.setString(2, address);
            up.setString(3, incarnation);
            up.setLong(4, deadAfter.toMillis());
            return up.executeUpdate() == 1;
        }
    }

    /** Who holds this node id's row, for a refusal's message. */
    private String holder(Connection c) throws SQLException {
        try (PreparedStatement sel = c.prepareStatement("SELECT address, (extract(epoch FROM now() - heartbeat_at)"
                + " * 1000)::bigint, leaving FROM buslane_node WHERE node_id = ?")) {
            sel.setString(1, nodeId);
            try (ResultSet rs = sel.executeQuery()) {
                return rs.next() ? "the process at " + rs.getString(1) + ", last heartbeat " + rs.getLong(2)
                        + " ms ago" + (rs.getBoolean(3) ? " (leaving)" : "") : "no row";
            }
        }
    }

    /** Every journal's ownership, by journal name. */
    public synchronized Map<String, Lease> leases() {
        try (PreparedStatement sel = connection().prepareStatement("SELECT name, owner,"
                + " coalesce(lease_until > now(), false) FROM buslane_journal")) {
            Map<String, Lease> out = new HashMap<>();
            try (ResultSet rs = sel.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), new Lease(rs.getString(1), rs.getString(2), rs.getBoolean(3)));
                }
            }
            return out;
        } catch (SQLException e) {
            throw unavailable("read the journals' leases", e);
        }
    }

    /**
     * Marks this node as leaving (a clean shutdown): the others stop counting it at once. Only this incarnation's
     * row: a process whose node id was taken over leaves the new holder's row alone.
     */
    public synchronized void leave() {
        try (PreparedStatement up = connection().prepareStatement(
                "UPDATE buslane_node SET leaving = true WHERE node_id = ? AND incarnation = ?")) {
            up.setString(1, nodeId);
            up.setString(2, incarnation);
            up.executeUpdate();
        } catch (SQLException e) {
            throw unavailable("mark node " + nodeId + " as leaving", e);
        }
    }

    private Connection connection() throws SQLException {
        if (connection == null || connection.isClosed()) {
            connection = factory.connectLeaseBound("buslane-membership");
        }
        return connection;
    }

    private JournalException unavailable(String what, SQLException e) {
        PostgresJournalFactory.closeQuietly(connection);
        connection = null;
        return new JournalException("cannot " + what + " in PostgreSQL: " + e.getMessage(), e,
                JournalException.Reason.UNAVAILABLE);
    }

    @Override
    public synchronized void close() {
        PostgresJournalFactory.closeQuietly(connection);
        connection = null;
    }
}
