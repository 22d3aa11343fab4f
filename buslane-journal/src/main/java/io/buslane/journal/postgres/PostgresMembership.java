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

/**
 * Cluster membership in the database (table {@code buslane_node}, docs/cluster.md): a node heartbeats its row, and
 * the nodes whose heartbeat is younger than {@code deadAfter} (by the database's clock, so that nodes' clocks need
 * not agree) and that are not leaving are the live ones. Also reads who holds which journal's lease, which is what
 * a node looks at before taking a shard. Thread-safe (one connection, used under this object's lock).
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
     * @throws JournalException UNAVAILABLE when the database does not answer
     */
    public synchronized List<Node> heartbeat() {
        try {
            Connection c = connection();
            try (PreparedStatement up = c.prepareStatement("INSERT INTO buslane_node (node_id, address)"
                    + " VALUES (?, ?) ON CONFLICT (node_id) DO UPDATE SET address = EXCLUDED.address,"
                    + " heartbeat_at = now(), leaving = false")) {
                up.setString(1, nodeId);
                up.setString(2, address);
                up.executeUpdate();
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

    /** Marks this node as leaving (a clean shutdown): the others stop counting it at once. */
    public synchronized void leave() {
        try (PreparedStatement up = connection().prepareStatement(
                "UPDATE buslane_node SET leaving = true WHERE node_id = ?")) {
            up.setString(1, nodeId);
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
