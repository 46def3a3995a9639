// JDBC check: getGeneratedKeys() through Keyshard. Prints "one: <key>" and "three: <k1> <k2> <k3>";
// the Rust test compares them with the keys stored in the shards.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

public class GeneratedKeys {
    public static void main(String[] args) throws Exception {
        try (Connection conn = DriverManager.getConnection(args[0], args[1], args[2]);
             Statement st = conn.createStatement()) {
            st.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (21, 'jdbc-1')",
                Statement.RETURN_GENERATED_KEYS);
            System.out.println("one:" + keys(st));
            st.executeUpdate("INSERT INTO t_order (user_id, status) VALUES (22, 'jdbc-a'), (23, 'jdbc-b'), (24, 'jdbc-c')",
                Statement.RETURN_GENERATED_KEYS);
            System.out.println("three:" + keys(st));
        }
    }

    private static String keys(Statement st) throws Exception {
        StringBuilder out = new StringBuilder();
        try (ResultSet rs = st.getGeneratedKeys()) {
            while (rs.next()) {
                out.append(' ').append(rs.getLong(1));
            }
        }
        return out.toString();
    }
}
