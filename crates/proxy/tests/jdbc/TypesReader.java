// pgjdbc's reader for postgres_types.py: runs each query of stdin (one a line: the SQL, then
// optionally a tab and one integer parameter) as a PreparedStatement and prints
// [[sql, column names, rows of [type, value]]] as JSON for differential.py to compare.
// args: JDBC URL, user, password (the URL's prepareThreshold chooses text or binary results).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.util.PGobject;

public class TypesReader {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        List<String> queries = new ArrayList<>();
        for (String line; (line = in.readLine()) != null; ) {
            if (!line.isEmpty()) queries.add(line);
        }
        StringBuilder out = new StringBuilder("[");
        try (Connection conn = DriverManager.getConnection(args[0], args[1], args[2])) {
            for (String query : queries) {
                String[] parts = query.split("\t", 2);
                if (out.length() > 1) out.append(',');
                read(conn, parts[0], parts.length > 1 ? parts[1] : null, out);
            }
        }
        System.out.print(out.append(']'));
    }

    static void read(Connection conn, String sql, String param, StringBuilder out) throws Exception {
        try (PreparedStatement st = conn.prepareStatement(sql)) {
            if (param != null) st.setInt(1, Integer.parseInt(param));
            try (ResultSet rs = st.executeQuery()) {
                ResultSetMetaData meta = rs.getMetaData();
                out.append('[').append(json(sql)).append(",[");
                for (int i = 1; i <= meta.getColumnCount(); i++) {
                    // The type name pgjdbc derives from RowDescription's OID and typmod; the
                    // table, base column and nullability it reads from the catalog by
                    // RowDescription's table OID and column number.
                    out.append(i > 1 ? "," : "")
                        .append(json(meta.getColumnLabel(i) + " " + meta.getColumnTypeName(i)
                            + "(" + meta.getPrecision(i) + "," + meta.getScale(i) + ") "
                            + meta.getTableName(i) + "." + meta.getColumnName(i)
                            + " nullable=" + meta.isNullable(i)));
                }
                out.append("],[");
                for (boolean first = true; rs.next(); first = false) {
                    out.append(first ? "[" : ",[");
                    for (int i = 1; i <= meta.getColumnCount(); i++) {
                        out.append(i > 1 ? "," : "").append(cellAt(rs, i));
                    }
                    out.append(']');
                }
                out.append("]]");
            }
        }
    }

    // pgjdbc has no Java value for some (numeric's NaN and infinities): its error and the text.
    static String cellAt(ResultSet rs, int i) throws Exception {
        try {
            return cell(rs.getObject(i));
        } catch (SQLException | RuntimeException e) {
            String text;
            try {
                text = rs.getString(i);
            } catch (SQLException | RuntimeException again) {
                text = again.getClass().getName();
            }
            return "[" + json(e.getClass().getName()) + "," + json(e.getMessage() + " | " + text) + "]";
        }
    }

    // A value as its Java class and an exact spelling of it.
    static String cell(Object value) throws Exception {
        if (value == null) return "[\"null\",\"null\"]";
        String spelling;
        if (value instanceof byte[]) {
            StringBuilder hex = new StringBuilder();
            for (byte b : (byte[]) value) hex.append(String.format("%02x", b));
            spelling = hex.toString();
        } else if (value instanceof Array) {
            Object[] items = (Object[]) ((Array) value).getArray();
            StringBuilder list = new StringBuilder("[");
            for (Object item : items) list.append(list.length() > 1 ? "," : "").append(cell(item));
            spelling = list.append(']').toString();
        } else if (value instanceof Object[]) {
            StringBuilder list = new StringBuilder("[");
            for (Object item : (Object[]) value) list.append(list.length() > 1 ? "," : "").append(cell(item));
            spelling = list.append(']').toString();
        } else if (value instanceof PGobject) {
            spelling = ((PGobject) value).getType() + " " + value;
        } else {
            spelling = value.toString();
        }
        return "[" + json(value.getClass().getName()) + "," + json(spelling) + "]";
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
