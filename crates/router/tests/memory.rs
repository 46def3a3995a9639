//! Memory a multi-row INSERT takes while it is planned, against the size of its SQL: a
//! counting allocator records the peak of live bytes above where planning started.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use keyshard_router::{Prepared, Router, Shape};
use keyshard_types::Dialect;

#[path = "it/common/mod.rs"]
mod common;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counts are kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: ptr came from alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
        PEAK.fetch_max(live, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as for alloc and dealloc.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns the peak of bytes it held at once (what it returns included).
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.load(Ordering::Relaxed);
    PEAK.store(start, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - start)
}

const ROWS: usize = 4000;

fn bulk() -> String {
    let rows: Vec<String> = (1..=ROWS).map(|i| format!("({i}, 'status1')")).collect();
    format!(
        "INSERT INTO t_order (user_id, status) VALUES {}",
        rows.join(", ")
    )
}

/// One test only: the counters are the whole process's, and tests run on parallel threads.
#[test]
fn bulk_insert_memory_is_a_small_multiple_of_its_sql() {
    let rule = common::rule(&common::T_ORDER);
    let metadata = common::metadata();
    let sql = bulk();
    for dialect in [Dialect::MySql, Dialect::Postgres] {
        let router = Router::new(&rule, dialect);
        // A statement of a shape not seen before, as the proxy learns it: its rows fold into
        // the first, so the statement with its first row only is planned, the shape prepared
        // and checked against it, and the statement bound.
        let prepared = |sql: &str| match router.prepare(sql, &metadata).unwrap() {
            Prepared::Insert(insert) => insert,
            _ => panic!("an INSERT into a sharded table"),
        };
        let (plan, first) = peak_of(|| {
            let shape = Shape::of(&sql, dialect).unwrap();
            let first_row = shape.first_row_only(&sql).unwrap();
            let original = prepared(&first_row);
            let insert = prepared(shape.text());
            let first_shape = Shape::of(&first_row, dialect).unwrap();
            assert_eq!(insert.stands_for(&original, &first_shape), Some(true));
            insert.bind_shape(&sql, &shape).unwrap()
        });
        assert_eq!(plan.generated_keys.len(), ROWS);
        drop(plan);
        // The same shape again: the prepared shape is kept, only the statement is bound.
        let shape = Shape::of(&sql, dialect).unwrap();
        let insert = prepared(shape.text());
        drop(shape);
        let (plan, again) = peak_of(|| {
            let shape = Shape::of(&sql, dialect).unwrap();
            insert.bind_shape(&sql, &shape).unwrap()
        });
        let plan_sql: usize = plan.units.iter().map(|u| u.sql.len()).sum();
        drop(plan);
        let (plan, unprepared) = peak_of(|| router.plan(&sql, &[], &metadata).unwrap());
        drop(plan);
        eprintln!(
            "{dialect:?}: {ROWS} rows, {} bytes of SQL ({plan_sql} rendered): new shape {} B/row ({:.0}× the SQL), known shape {} B/row ({:.1}×), unprepared {} B/row ({:.0}×)",
            sql.len(),
            first / ROWS,
            first as f64 / sql.len() as f64,
            again / ROWS,
            again as f64 / sql.len() as f64,
            unprepared / ROWS,
            unprepared as f64 / sql.len() as f64,
        );
        // The literals' values and ranges, the rendered units (twice the SQL: each row gains
        // its 19-digit key) and the plan's per-row bookkeeping; a new shape adds one row
        // parsed. Parsing the statement whole takes far more (sqlparser's tokens and tree for
        // every value); see docs/src/benchmark-log.md.
        for (what, bytes) in [("a new shape's", first), ("a known shape's", again)] {
            assert!(
                bytes <= 24 * sql.len(),
                "{what} statement took {bytes} bytes for {} bytes of SQL",
                sql.len()
            );
        }
    }
    bounds_hold_for_every_layout(&rule, &metadata);
}

/// An INSERT's column list and the text of its row `i`.
type RowLayout = (&'static str, fn(usize) -> String);

/// What a proxy reserves before finding a statement's shape and before binding it by the
/// shape ([`Shape::memory_bound`], [`keyshard_router::PreparedInsert::binding_bytes`]) covers
/// what each takes, whatever its rows look like, and is not far above it.
fn bounds_hold_for_every_layout(
    rule: &keyshard_config::ShardingRule,
    metadata: &std::collections::HashMap<String, Vec<String>>,
) {
    let layouts: [RowLayout; 5] = [
        ("(user_id, status)", |i| format!("({i}, 'status1')")),
        ("(user_id, status)", |i| format!("({i},7)")),
        ("(user_id, status)", |i| format!("({i},-{i})")),
        ("(user_id, status)", |i| {
            format!("({i}, '{}')", "x".repeat(200))
        }),
        ("(order_id, user_id, status)", |i| format!("({i},{i},'s')")),
    ];
    for dialect in [Dialect::MySql, Dialect::Postgres] {
        let router = Router::new(rule, dialect);
        for (columns, row) in &layouts {
            let rows: Vec<String> = (1..=ROWS).map(*row).collect();
            let sql = format!("INSERT INTO t_order {columns} VALUES {}", rows.join(","));
            let (shape, scanned) = peak_of(|| Shape::of(&sql, dialect).unwrap());
            assert_eq!(shape.folded_rows(), Some(ROWS), "{sql:.80}");
            let insert = match router.prepare(shape.text(), metadata).unwrap() {
                Prepared::Insert(insert) => insert,
                _ => panic!("an INSERT into a sharded table"),
            };
            let (plan, bound) = peak_of(|| insert.bind_shape(&sql, &shape).unwrap());
            let rendered: usize = plan.units.iter().map(|u| u.sql.len()).sum();
            drop(plan);
            let scan_bound = Shape::memory_bound(sql.len(), shape.values().len());
            let bind_bound = insert.binding_bytes(&sql, &shape);
            eprintln!(
                "{dialect:?} {:.50}…: {} bytes, {rendered} rendered; scan {scanned} ≤ {scan_bound}, bind {bound} ≤ {bind_bound} ({:.1}× the SQL in all)",
                sql,
                sql.len(),
                (scan_bound + bind_bound) as f64 / sql.len() as f64,
            );
            assert!(
                scanned <= scan_bound,
                "scan {scanned} > {scan_bound}: {sql:.80}"
            );
            // Plus a copy of the units for running them, which the bound also holds.
            assert!(
                bound + rendered <= bind_bound,
                "bind {bound} > {bind_bound}: {sql:.80}"
            );
            // Not so loose as to refuse what would fit: within 3× of what each took.
            assert!(
                scan_bound <= 3 * scanned,
                "scan {scanned} ≪ {scan_bound}: {sql:.80}"
            );
            assert!(
                bind_bound <= 3 * (bound + rendered),
                "bind {bound} ≪ {bind_bound}: {sql:.80}"
            );
        }
    }
}
