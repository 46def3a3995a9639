// pgjdbc check: executeBatch in autocommit sends every entry before one Sync, which
// PostgreSQL runs as one implicit transaction: an entry that fails rolls back the ones before
// it. Prints what the batches answered and what was stored; the Rust test runs it through
// Keyshard and against one plain PostgreSQL and compares the two.
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

public class PgBatch {
    public static void main(String[] args) throws Exception {
        try (Connection conn = DriverManager.getConnection(args[0], args[1], args[2])) {
            // Rows on both data sources and both tables, then a key taken on its node.
            batch(conn, "duplicate last", new long[][] {{1, 0}, {2, 1}, {3, 2}, {1, 2}});
            batch(conn, "all new", new long[][] {{4, 0}, {5, 1}, {6, 2}, {7, 3}});
            batch(conn, "duplicate first", new long[][] {{4, 0}, {8, 1}});
            try (Statement st = conn.createStatement();
                 ResultSet rs = st.executeQuery("SELECT order_id FROM t_order ORDER BY order_id")) {
                StringBuilder stored = new StringBuilder("stored:");
                while (rs.next()) {
                    stored.append(' ').append(rs.getLong(1));
                }
                System.out.println(stored);
            }
        }
    }

    static void batch(Connection conn, String label, long[][] rows) throws Exception {
        try (PreparedStatement ps = conn.prepareStatement(
                "INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'batch')")) {
            for (long[] row : rows) {
                ps.setLong(1, row[0]);
                ps.setInt(2, (int) row[1]);
                ps.addBatch();
            }
            ps.executeBatch();
            System.out.println(label + ": ok");
        } catch (BatchUpdateException e) {
            System.out.println(label + ": " + e.getSQLState());
        }
    }
}
