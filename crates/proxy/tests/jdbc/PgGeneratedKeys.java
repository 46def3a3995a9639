// pgjdbc check: getGeneratedKeys() through Keyshard's PostgreSQL frontend (the driver appends
// RETURNING * to the INSERT). Prints "one: <key>" and "three: <k1> <k2> <k3>"; the Rust test
// compares them with the keys stored in the shards.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

public class PgGeneratedKeys {
    public static void main(String[] args) throws Exception {
        try (Connection conn = DriverManager.getConnection(args[0], args[1], args[2]);
             Statement st = conn.createStatement()) {
            st.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (21, 'jdbc-1')",
                Statement.RETURN_GENERATED_KEYS);
            System.out.println("one:" + keys(st.getGeneratedKeys()));
            try (PreparedStatement ps = conn.prepareStatement(
                    "INSERT INTO t_order (user_id, status) VALUES (?, ?), (?, ?), (?, ?)",
                    Statement.RETURN_GENERATED_KEYS)) {
                String[] statuses = {"jdbc-a", "jdbc-b", "jdbc-c"};
                for (int i = 0; i < 3; i++) {
                    ps.setInt(2 * i + 1, 22 + i);
                    ps.setString(2 * i + 2, statuses[i]);
                }
                ps.executeUpdate();
                System.out.println("three:" + keys(ps.getGeneratedKeys()));
            }
        }
    }

    private static String keys(ResultSet rs) throws Exception {
        StringBuilder out = new StringBuilder();
        try (rs) {
            while (rs.next()) {
                out.append(' ').append(rs.getLong("order_id"));
            }
        }
        return out.toString();
    }
}
