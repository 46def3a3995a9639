//! The `server` block and `props`: connections per query, cache bounds, TLS paths and worker
//! threads.

use std::path::Path;

use super::{SAMPLE, load};

#[test]
fn connections_per_query_are_shardingspheres_prop() {
    let with = |n: &str| {
        SAMPLE.replacen(
            "  sql-show: true",
            &format!("  sql-show: true\n  max-connections-size-per-query: {n}"),
            1,
        )
    };
    let config = load(&with("4")).unwrap();
    assert_eq!(config.props.max_connections_per_query, 4);
    let error = load(&with("0")).unwrap_err().to_string();
    assert!(
        error.contains("props.max-connections-size-per-query"),
        "{error}"
    );
}

#[test]
fn cache_bounds_are_props() {
    let sized = SAMPLE.replacen(
        "  sql-show: true",
        "  sql-show: true\n  shape-cache-entries: 10\n  column-cache-bytes: 65536",
        1,
    );
    let props = load(&sized).unwrap().props;
    let defaults = crate::Props::default();
    assert_eq!(props.shape_cache.entries, 10);
    assert_eq!(props.shape_cache.bytes, defaults.shape_cache.bytes);
    assert_eq!(props.column_cache.bytes, 65536);
    assert_eq!(props.column_cache.entries, 1024);
}

#[test]
fn tls_paths_are_relative_to_the_file_and_plain_by_default() {
    let base = "databaseName: db\ndataSources:\n  ds:\n    url: \"sqlite::memory:\"\n";
    assert_eq!(load(base).unwrap().server.tls, None);
    let tls = "server:\n  mysql:\n    listen: 127.0.0.1:0\n  tls:\n    certificate: tls/cert.pem\n    \
               key: /etc/keyshard/key.pem\n";
    let config = load(&format!("{tls}{base}")).unwrap();
    let tls = config.server.tls.unwrap();
    assert_eq!(tls.certificate, Path::new("/srv/keyshard/tls/cert.pem"));
    assert_eq!(tls.key, Path::new("/etc/keyshard/key.pem"));
    assert!(!tls.required);
    let error = load(&format!(
        "server:\n  mysql:\n    listen: 127.0.0.1:0\n  tls:\n    certificate: c.pem\n{base}"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("server.tls") && error.contains("key"),
        "{error}"
    );
}

#[test]
fn worker_threads_default_to_one() {
    let base = "databaseName: db\ndataSources:\n  ds:\n    url: \"sqlite::memory:\"\n";
    assert_eq!(load(base).unwrap().server.worker_threads, 1);
    let server = |threads: &str| {
        format!("server:\n  mysql:\n    listen: 127.0.0.1:0\n  workerThreads: {threads}\n{base}")
    };
    assert_eq!(load(&server("1")).unwrap().server.worker_threads, 1);
    assert_eq!(load(&server("4")).unwrap().server.worker_threads, 4);
    assert_eq!(load(&server("0")).unwrap().server.worker_threads, 0);
    let error = load(&server("5000")).unwrap_err().to_string();
    assert!(
        error.contains("server.workerThreads") && error.contains("5000"),
        "{error}"
    );
    assert!(load(&server("-1")).is_err());
}
