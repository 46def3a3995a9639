//! Random SELECTs over the queries tests' schema, for differential testing: each runs through
//! the proxy and against one plain database holding the same rows, and the two must answer
//! alike. `t_order o` is sharded, `t_order_item i` bound to it (when `items`), `t_user u`
//! unsharded and `t_dict d` broadcast or unsharded; the statements mix what the proxy merges
//! from the shards' results with what it can only gather (DISTINCT aggregates, subqueries,
//! UNION, window functions, joins with unsharded tables or of a table with itself).
//!
//! Seeded: `KEYSHARD_QUERY_SEED` picks another seed, and a failure names its statement. Rows
//! are compared as sets, but in order where the statement fixes it ([`fixes_its_order`]).

/// `t_event`, sharded by `user_id` alone (one table per data source): dates, decimals, JSON,
/// UUIDs and NULLs for the random statements, in the database's types for the last three
/// (`DATETIME`, `JSON`, `CHAR(36)` on MySQL; `TIMESTAMP`, `JSONB`, `UUID` on PostgreSQL).
pub fn event_table(timestamp: &str, json: &str, uuid: &str) -> String {
    format!(
        "CREATE TABLE t_event (event_id INT PRIMARY KEY, user_id INT NOT NULL, kind VARCHAR(10), \
         price DECIMAL(10,2), at {timestamp}, note VARCHAR(20), doc {json}, ref {uuid})"
    )
}

/// The rows of `t_event`, as one INSERT.
pub fn event_rows() -> String {
    let kinds = ["'click'", "'view'", "'buy'", "NULL"];
    let notes = ["'alpha'", "'beta'", "NULL", "'gamma'", "'delta'"];
    let rows: Vec<String> = (0..36)
        .map(|i: usize| {
            let price = match i % 6 {
                0 => "NULL".to_owned(),
                n => format!("{}.{:02}", (i * 7) % 40, (n * 13) % 100),
            };
            let at = match i % 7 {
                0 => "NULL".to_owned(),
                n => format!(
                    "'2026-01-{:02} {:02}:{:02}:00'",
                    1 + i % 9,
                    (n * 5) % 24,
                    (i * 11) % 60
                ),
            };
            let doc = match i % 4 {
                0 => "NULL".to_owned(),
                n => format!("'{{\"k\": {n}, \"tags\": [\"é\", {}]}}'", i % 2),
            };
            let uuid = match i % 5 {
                0 => "NULL".to_owned(),
                n => format!("'00000000-0000-4000-8000-{:012}'", n * 7 + i % 3),
            };
            format!(
                "({i}, {}, {}, {price}, {at}, {}, {doc}, {uuid})",
                i % 5 + 1,
                kinds[i % 4],
                notes[i % 5]
            )
        })
        .collect();
    format!("INSERT INTO t_event VALUES {}", rows.join(", "))
}

/// Whether a statement of [`RandomSelects::select`] fixes the order of its rows: its `ORDER BY
/// … LIMIT` sorts by the whole select list or ends with a unique key, so that rows tied in
/// it are the same rows; its rows are then compared in order, not as sets.
pub fn fixes_its_order(sql: &str) -> bool {
    sql.contains(" ORDER BY ") && sql.contains(" LIMIT ")
}

/// xorshift64*: deterministic, so a seed reproduces its statements.
pub struct RandomSelects {
    state: u64,
    /// Whether `t_order_item` exists.
    items: bool,
    /// PostgreSQL's spelling of the string aggregate (`string_agg`), else MySQL's and
    /// SQLite's (`GROUP_CONCAT`).
    postgres: bool,
}

/// The seed of this run: `KEYSHARD_QUERY_SEED`, else a fixed one.
pub fn seed() -> u64 {
    let seed = std::env::var("KEYSHARD_QUERY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_2026_1203);
    println!("random SELECT seed {seed} (KEYSHARD_QUERY_SEED)");
    seed
}

/// Which way the proxy answered a statement, from its PREVIEW rows' SQL.
#[derive(Debug, Default)]
pub struct Paths {
    pub one_node: usize,
    pub merged: usize,
    pub gathered: usize,
}

/// Whether a PREVIEW's rows (data source, SQL) show a read merged over several nodes.
pub fn is_merged(preview: Vec<Vec<Option<String>>>) -> bool {
    let mut paths = Paths::default();
    let sql: Vec<String> = preview.into_iter().filter_map(|r| r[1].clone()).collect();
    paths.count(&sql);
    paths.merged == 1
}

impl Paths {
    pub fn count(&mut self, preview: &[String]) {
        if preview.iter().any(|sql| sql.contains("-- gathered:")) {
            self.gathered += 1;
        } else if preview.len() > 1 {
            self.merged += 1;
        } else {
            self.one_node += 1;
        }
    }
}

impl std::fmt::Display for Paths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total = (self.one_node + self.merged + self.gathered).max(1) as f64;
        let share = |n: usize| 100.0 * n as f64 / total;
        write!(
            f,
            "{} statements: one node {} ({:.0}%), merged {} ({:.0}%), gathered {} ({:.0}%)",
            self.one_node + self.merged + self.gathered,
            self.one_node,
            share(self.one_node),
            self.merged,
            share(self.merged),
            self.gathered,
            share(self.gathered)
        )
    }
}

impl RandomSelects {
    pub fn new(seed: u64, items: bool) -> Self {
        Self {
            state: seed | 1,
            items,
            postgres: false,
        }
    }

    /// Statements in PostgreSQL's spelling.
    pub fn for_postgres(mut self) -> Self {
        self.postgres = true;
        self
    }

    /// A string aggregate of `value` (text) in a total order: `keys`, then the unique `last`.
    fn joined(&mut self, value: &str, keys: &[&str], last: &str) -> String {
        let key = self.pick(keys);
        let order = if self.chance(50) { " DESC" } else { "" };
        if self.chance(25) {
            // DISTINCT: ordered by the value itself, so the order is total.
            return match self.postgres {
                true => format!("string_agg(DISTINCT {value}, ',' ORDER BY {value}{order})"),
                false => format!("GROUP_CONCAT(DISTINCT {value} ORDER BY {value}{order})"),
            };
        }
        match self.postgres {
            true => format!("string_agg({value}, ',' ORDER BY {key}{order}, {last})"),
            false => format!("GROUP_CONCAT({value} ORDER BY {key}{order}, {last})"),
        }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, choices: &[&'a str]) -> &'a str {
        choices[self.below(choices.len())]
    }

    /// A HAVING clause over `table`'s decimal `amount` and integer `id` columns: comparisons
    /// with numbers the merge tests itself, and an expression it leaves to a database.
    fn having(&mut self, table: &str, amount: &str, id: &str) -> String {
        let (t, a, i) = (table, amount, id);
        let n = self.below(40);
        match self.below(6) {
            0 => format!(" HAVING COUNT(*) > {}", n % 6),
            1 => format!(" HAVING SUM({t}.{a}) >= {n}.5"),
            2 => format!(" HAVING MAX({t}.{a}) < {n} OR COUNT(*) = 1"),
            3 => format!(" HAVING MIN({t}.{i}) BETWEEN {} AND {}", n / 2, n / 2 + 15),
            4 => format!(" HAVING SUM({t}.{a}) IS NULL OR MAX({t}.{a}) > {n}.25"),
            _ => format!(
                " HAVING COUNT(*) > 1 AND MAX({t}.{a}) - MIN({t}.{a}) > {}",
                n % 10
            ),
        }
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// A condition on `o` (and what it may read of other tables).
    fn condition(&mut self) -> String {
        let user = 1 + self.below(5);
        let other = 1 + self.below(5);
        let amount = self.below(100);
        let status = self.pick(&["new", "paid", "shipped"]);
        // Subqueries one time in five: the others leave reads the shards' results merge.
        let kind = match self.chance(20) {
            true => 7 + self.below(if self.items { 4 } else { 2 }),
            false => self.below(7),
        };
        match kind {
            0 => format!("o.user_id = {user}"),
            1 => format!("o.user_id IN ({user}, {other})"),
            2 => format!("o.amount > {amount}"),
            3 => "o.amount IS NULL".to_owned(),
            4 => format!("o.status = '{status}'"),
            5 => format!("o.status <> '{status}'"),
            6 => format!("o.amount BETWEEN {} AND {}", amount / 2, amount),
            7 => "EXISTS (SELECT 1 FROM t_user u2 WHERE u2.id = o.user_id)".to_owned(),
            8 => format!(
                "o.amount > (SELECT AVG(o3.amount) FROM t_order o3 WHERE o3.user_id = {user})"
            ),
            9 => format!(
                "o.order_id IN (SELECT i2.order_id FROM t_order_item i2 WHERE i2.qty > {})",
                self.below(4)
            ),
            _ => "NOT EXISTS (SELECT 1 FROM t_order_item i3 WHERE i3.order_id = o.order_id)"
                .to_owned(),
        }
    }

    fn conditions(&mut self) -> String {
        let n = self.below(3);
        let parts: Vec<String> = (0..n).map(|_| self.condition()).collect();
        if parts.is_empty() {
            String::new()
        } else {
            let joiner = if self.chance(80) { " AND " } else { " OR " };
            format!(" WHERE {}", parts.join(joiner))
        }
    }

    /// A FROM clause and the columns it adds to `o`'s.
    fn from(&mut self) -> (&'static str, &'static [&'static str]) {
        let choices: &[(&str, &[&str])] = &[
            ("t_order o", &[]),
            ("t_order o", &[]),
            ("t_order o", &[]),
            ("t_order o", &[]),
            ("t_order o JOIN t_user u ON u.id = o.user_id", &["u.name"]),
            (
                "t_order o LEFT JOIN t_user u ON u.id = o.user_id",
                &["u.name"],
            ),
            ("t_order o JOIN t_dict d ON d.code = o.status", &["d.label"]),
            (
                "t_order o JOIN t_order o2 ON o2.user_id = o.user_id AND o2.order_id < o.order_id",
                &["o2.amount"],
            ),
            (
                "t_order o JOIN t_order_item i ON i.order_id = o.order_id AND i.user_id = o.user_id",
                &["i.qty"],
            ),
            (
                "t_order o LEFT JOIN t_order_item i ON i.order_id = o.order_id",
                &["i.qty"],
            ),
        ];
        let usable = if self.items {
            choices.len()
        } else {
            choices.len() - 2
        };
        choices[self.below(usable)]
    }

    /// A condition on `e`.
    fn event_condition(&mut self) -> String {
        let user = 1 + self.below(5);
        let price = self.below(40);
        let day = 1 + self.below(9);
        match self.below(11) {
            0 => format!("e.user_id = {user}"),
            1 => format!("e.price > {price}.5"),
            2 => "e.price IS NULL".to_owned(),
            3 => format!("e.at >= '2026-01-{day:02}'"),
            4 => "e.at IS NULL".to_owned(),
            5 => format!("e.kind = '{}'", self.pick(&["click", "view", "buy"])),
            6 => format!("e.price BETWEEN {} AND {price}", price / 3),
            7 => "e.note IS NOT NULL".to_owned(),
            8 => "e.ref IS NULL".to_owned(),
            9 => format!(
                "e.ref = '00000000-0000-4000-8000-{:012}'",
                7 + self.below(3)
            ),
            _ => "e.doc IS NOT NULL".to_owned(),
        }
    }

    /// A random SELECT over `t_event` (dates, decimals, NULLs), alone or joined with `t_order`.
    pub fn typed_select(&mut self) -> String {
        let wh = match self.below(3) {
            0 => String::new(),
            1 => format!(" WHERE {}", self.event_condition()),
            _ => format!(
                " WHERE {} AND {}",
                self.event_condition(),
                self.event_condition()
            ),
        };
        match self.below(7) {
            0 => {
                let columns = self.pick(&[
                    "e.kind",
                    "e.note",
                    "e.kind, e.note",
                    "e.at",
                    "e.price",
                    "e.doc",
                    "e.ref",
                    "e.ref, e.doc, e.at",
                ]);
                let distinct = if self.chance(50) { "DISTINCT " } else { "" };
                format!("SELECT {distinct}{columns} FROM t_event e{wh}")
            }
            1 => {
                let key = self.pick(&["e.kind", "e.user_id", "e.note"]);
                let value = self.pick(&["e.kind", "e.note"]);
                let joined = self.joined(value, &["e.at", "e.price", "e.kind"], "e.event_id");
                let aggregate = self.pick(&[
                    &joined,
                    "SUM(e.price)",
                    "MAX(e.at)",
                    "MIN(e.price)",
                    "COUNT(e.at)",
                    "AVG(e.price)",
                    "SUM(e.price) * 2 - COUNT(*)",
                    "COUNT(DISTINCT e.kind)",
                    "COUNT(DISTINCT e.at)",
                    "COUNT(DISTINCT e.ref)",
                    "SUM(DISTINCT e.price)",
                    "AVG(DISTINCT e.price)",
                ]);
                let having = if self.chance(40) {
                    self.having("e", "price", "event_id")
                } else {
                    String::new()
                };
                format!(
                    "SELECT {key} AS k, {aggregate} AS a FROM t_event e{wh} GROUP BY {key}{having}"
                )
            }
            2 => format!(
                "SELECT e.event_id, e.price, e.at FROM t_event e{wh} ORDER BY e.at, e.price, e.event_id LIMIT {}",
                1 + self.below(8)
            ),
            3 => {
                let window = self.pick(&[
                    "SUM(e.price) OVER (PARTITION BY e.user_id ORDER BY e.event_id)",
                    "RANK() OVER (ORDER BY e.at, e.event_id)",
                    "MAX(e.at) OVER (PARTITION BY e.kind)",
                ]);
                format!("SELECT e.event_id, {window} AS w FROM t_event e{wh}")
            }
            4 => format!(
                "SELECT o.status, e.kind, COUNT(*) AS n, SUM(e.price) AS p FROM t_order o JOIN t_event e ON e.user_id = o.user_id{wh} GROUP BY o.status, e.kind"
            ),
            5 => format!("SELECT e.note FROM t_event e{wh} UNION SELECT o.status FROM t_order o"),
            _ => format!(
                "SELECT COUNT(*) AS n FROM (SELECT DISTINCT e.user_id, e.kind FROM t_event e{wh}) AS w"
            ),
        }
    }

    /// One random SELECT.
    pub fn select(&mut self) -> String {
        if self.chance(30) {
            return self.typed_select();
        }
        let (from, extra) = self.from();
        let mut columns: Vec<&str> = vec!["o.order_id", "o.user_id", "o.status", "o.amount"];
        columns.extend_from_slice(extra);
        let wh = self.conditions();
        match self.below(10) {
            // Plain or DISTINCT columns, maybe sorted and cut.
            0..=3 => {
                let n = 1 + self.below(3);
                let chosen: Vec<&str> = (0..n).map(|_| self.pick(&columns)).collect();
                let distinct = if self.chance(30) { "DISTINCT " } else { "" };
                let list = chosen.join(", ");
                let tail = if self.chance(40) {
                    format!(" ORDER BY {list} LIMIT {}", 1 + self.below(6))
                } else {
                    String::new()
                };
                format!("SELECT {distinct}{list} FROM {from}{wh}{tail}")
            }
            // Groups, with HAVING, DISTINCT aggregates and aggregates inside expressions.
            4 | 5 => {
                let key = self.pick(&["o.user_id", "o.status", "o.amount IS NULL"]);
                let joined = self.joined("o.status", &["o.amount", "o.status"], "o.order_id");
                let aggregate = self.pick(&[
                    &joined,
                    "COUNT(*)",
                    "SUM(o.amount)",
                    "MAX(o.amount)",
                    "MIN(o.order_id)",
                    "COUNT(DISTINCT o.status)",
                    "COUNT(DISTINCT o.user_id)",
                    "SUM(DISTINCT o.amount)",
                    "AVG(DISTINCT o.user_id)",
                    "SUM(o.amount) * 2 + COUNT(*)",
                    "MAX(o.amount) - MIN(o.amount)",
                    "AVG(o.amount)",
                ]);
                let having = if self.chance(40) {
                    self.having("o", "amount", "order_id")
                } else {
                    String::new()
                };
                if self.chance(25) {
                    // One group of every row, or none.
                    format!("SELECT {aggregate} AS a FROM {from}{wh}{having}")
                } else {
                    format!(
                        "SELECT {key} AS k, {aggregate} AS a FROM {from}{wh} GROUP BY {key}{having}"
                    )
                }
            }
            // A subquery in FROM, as peewee's count() writes it, and EXISTS as its exists().
            6 => {
                let distinct = if self.chance(50) { "DISTINCT " } else { "" };
                let column = self.pick(&["o.status", "o.user_id", "1"]);
                if self.chance(70) {
                    format!(
                        "SELECT COUNT(1) AS n FROM (SELECT {distinct}{column} FROM {from}{wh}) AS w"
                    )
                } else {
                    format!("SELECT EXISTS (SELECT 1 FROM {from}{wh}) AS e")
                }
            }
            // UNION, with or without ALL, INTERSECT and EXCEPT.
            7 => {
                let operator = self.pick(&["UNION", "UNION ALL", "INTERSECT", "EXCEPT"]);
                let other = self.conditions();
                let right = self.pick(if self.items {
                    &[
                        "SELECT d.code FROM t_dict d",
                        "SELECT u.name FROM t_user u",
                        "SELECT o.status FROM t_order o",
                        "SELECT o.status FROM t_order o",
                        "SELECT o2.status FROM t_order o2 JOIN t_order_item i ON i.order_id = o2.order_id AND i.user_id = o2.user_id",
                    ]
                } else {
                    &[
                        "SELECT d.code FROM t_dict d",
                        "SELECT u.name FROM t_user u",
                        "SELECT o.status FROM t_order o",
                    ]
                });
                let other = if right.ends_with("t_order o") {
                    other
                } else {
                    String::new()
                };
                let tail = match self.below(3) {
                    0 => String::new(),
                    1 => format!(" ORDER BY 1 LIMIT {}", 1 + self.below(8)),
                    _ => format!(" ORDER BY s DESC LIMIT 4 OFFSET {}", self.below(5)),
                };
                format!("SELECT o.status AS s FROM {from}{wh} {operator} {right}{other}{tail}")
            }
            // Window functions.
            8 => {
                let window = self.pick(&[
                    "ROW_NUMBER() OVER (PARTITION BY o.user_id ORDER BY o.order_id)",
                    "RANK() OVER (ORDER BY o.amount, o.order_id)",
                    "COUNT(*) OVER (PARTITION BY o.status)",
                    "SUM(o.amount) OVER (PARTITION BY o.user_id)",
                ]);
                format!("SELECT o.order_id, {window} AS w FROM {from}{wh}")
            }
            // A correlated scalar subquery in the select list.
            _ => format!(
                "SELECT o.order_id, (SELECT COUNT(*) FROM t_order o4 WHERE o4.user_id = o.user_id AND o4.order_id <= o.order_id) AS n FROM {from}{wh}"
            ),
        }
    }
}

/// Random range conditions for the range-routing comparisons (`t_timed` by month of
/// `created_at`, `t_volume` by tens of `id`): comparisons and BETWEEN at partition boundaries,
/// inside them and outside the configured span, alone or joined by AND and OR.
pub struct RandomRanges(RandomSelects);

impl RandomRanges {
    pub fn new(seed: u64) -> Self {
        Self(RandomSelects::new(seed, false))
    }

    fn instant(&mut self) -> String {
        let r = &mut self.0;
        match r.below(4) {
            0 => format!("'2026-{:02}-01'", 1 + r.below(12)),
            1 => format!(
                "'2026-{:02}-{:02} {:02}:{:02}:00'",
                1 + r.below(12),
                1 + r.below(28),
                r.below(24),
                r.below(60)
            ),
            2 => format!("'2026-{:02}-28 23:59:59'", 1 + r.below(12)),
            _ => [
                "'2025-12-31 23:59:59'",
                "'2027-01-01'",
                "'2026-01-01 00:00:00'",
            ][r.below(3)]
            .to_owned(),
        }
    }

    fn number(&mut self) -> String {
        let r = &mut self.0;
        // Around the boundaries 10, 20, 30, 40 and 45, and beyond both ends.
        [
            -5, 0, 9, 10, 11, 19, 20, 29, 30, 38, 39, 40, 44, 45, 46, 90, 100,
        ][r.below(17)]
        .to_string()
    }

    fn comparison(&mut self, column: &str, value: fn(&mut Self) -> String) -> String {
        match self.0.below(6) {
            0 => format!("{column} BETWEEN {} AND {}", value(self), value(self)),
            1 => format!("{column} > {}", value(self)),
            2 => format!("{column} >= {}", value(self)),
            3 => format!("{column} < {}", value(self)),
            4 => format!("{column} <= {}", value(self)),
            _ => format!("{} < {column}", value(self)),
        }
    }

    fn condition(&mut self, column: &str, value: fn(&mut Self) -> String) -> String {
        match self.0.below(4) {
            0 => format!(
                "{} AND {}",
                self.comparison(column, value),
                self.comparison(column, value)
            ),
            1 => format!(
                "({} OR {})",
                self.comparison(column, value),
                self.comparison(column, value)
            ),
            _ => self.comparison(column, value),
        }
    }

    /// A read of `t_timed` under a random range condition, ordered by `id`.
    pub fn timed(&mut self) -> String {
        let condition = self.condition("created_at", Self::instant);
        format!("SELECT id, price FROM t_timed WHERE {condition} ORDER BY id")
    }

    /// A read of `t_timed` or `t_volume` under a random range condition, ordered by `id`.
    pub fn select(&mut self) -> String {
        if self.0.chance(60) {
            return self.timed();
        }
        let condition = self.condition("id", Self::number);
        format!("SELECT id, label FROM t_volume WHERE {condition} ORDER BY id")
    }
}
