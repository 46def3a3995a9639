<?php
// PHP's PDO (Debian's php-mysql and php-pgsql) through Keyshard, on "mysql" (ARGV[3]) or
// "pgsql": rows inserted with keys Keyshard generates, each read back by lastInsertId() (on
// PostgreSQL PDO asks `SELECT lastval()`), prepared and emulated statements, a DECIMAL price, a
// timestamp, updates, deletes, and transactions committed and rolled back. Prints the keys of
// the rows it expects stored, as JSON.
[, $host, $port, $driver] = $argv;
$dsn = "$driver:host=$host;port=$port;dbname=sharding_db";
$db = new PDO($dsn, "root", "root", [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$mysql = $driver === "mysql";

function check(string $what, $got, $want): void
{
    if ($got !== $want) {
        fwrite(STDERR, "$what: got " . var_export($got, true) . ", want " . var_export($want, true) . "\n");
        exit(1);
    }
}

$keys = [];
// exec(), then lastInsertId() for the key Keyshard generated.
$db->exec("INSERT INTO t_order (user_id, status, price, created_at) VALUES (1, 'pdo', 12.34, '2026-01-02 03:04:05')");
$first = $db->lastInsertId();
check("lastInsertId after exec", ctype_digit($first) && $first !== "0", true);
$keys[] = $first;

// Server-side prepared statements, then emulated ones, each row's key read back.
foreach ([false, true] as $emulated) {
    $db->setAttribute(PDO::ATTR_EMULATE_PREPARES, $emulated);
    $insert = $db->prepare("INSERT INTO t_order (user_id, status, price) VALUES (?, ?, ?)");
    foreach ([2, 3] as $user) {
        $insert->execute([$user, "pdo", "5.50"]);
        $key = $db->lastInsertId();
        check("lastInsertId, emulated " . var_export($emulated, true), ctype_digit($key), true);
        $keys[] = $key;
    }
}
check("distinct keys", count(array_unique($keys)), 5);

// Read back by key with a bound parameter, and across the shards.
$db->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
$one = $db->prepare("SELECT user_id, status, price, created_at FROM t_order WHERE order_id = ?");
$one->execute([$first]);
$row = $one->fetch(PDO::FETCH_ASSOC);
check("status", $row["status"], "pdo");
check("price", $row["price"], "12.34");
check("created_at", substr((string) $row["created_at"], 0, 19), "2026-01-02 03:04:05");
$all = $db->query("SELECT order_id FROM t_order WHERE status = 'pdo' ORDER BY order_id")
    ->fetchAll(PDO::FETCH_COLUMN);
$sorted = $keys;
sort($sorted);
check("all rows", array_map("strval", $all), $sorted);
check("sum", (string) $db->query("SELECT SUM(price) FROM t_order WHERE status = 'pdo'")->fetchColumn(), "34.34");

// An update and a delete by key, with their counts.
$update = $db->prepare("UPDATE t_order SET status = ? WHERE order_id = ?");
$update->execute(["pdo-paid", $first]);
check("updated", $update->rowCount(), 1);
$delete = $db->prepare("DELETE FROM t_order WHERE order_id = ?");
$delete->execute([array_pop($keys)]);
check("deleted", $delete->rowCount(), 1);

// A transaction rolled back leaves nothing; one committed keeps its row.
$db->beginTransaction();
$db->exec("INSERT INTO t_order (user_id, status) VALUES (4, 'pdo-undone')");
$db->rollBack();
check("rolled back", (int) $db->query("SELECT COUNT(*) FROM t_order WHERE status = 'pdo-undone'")->fetchColumn(), 0);
$db->beginTransaction();
$db->exec("INSERT INTO t_order (user_id, status) VALUES (5, 'pdo-kept')");
$keys[] = $db->lastInsertId();
$db->commit();
check("committed", (int) $db->query("SELECT COUNT(*) FROM t_order WHERE status = 'pdo-kept'")->fetchColumn(), 1);

// An error leaves the connection usable.
try {
    $db->exec("INSERT INTO t_order (order_id, user_id) VALUES (" . $keys[0] . ", 1)");
    check("duplicate refused", false, true);
} catch (PDOException $e) {
    check("duplicate SQLSTATE", $e->getCode(), $mysql ? "23000" : "23505");
}
check("usable", (int) $db->query("SELECT 1")->fetchColumn(), 1);

echo json_encode(["keys" => array_map("strval", $keys)]), "\n";
