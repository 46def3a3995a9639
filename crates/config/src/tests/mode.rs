//! The `mode` block: the repository by default and by name, ShardingSphere's repository
//! properties, and its errors naming path and value.

use super::{SAMPLE, load};
use crate::DatabaseKind;

#[test]
fn without_mode_the_first_data_source_is_the_repository() {
    let config = load(SAMPLE).unwrap();
    assert_eq!(config.mode.kind, crate::ModeType::Standalone);
    match &config.mode.repository {
        crate::Repository::Jdbc { data_source } => assert_eq!(data_source.name, "ds_0"),
        other => panic!("{other:?}"),
    }
    assert_eq!(config.mode.timing, crate::Timing::default());
    // Chosen by sort order, which a new data source can change: said, with the fix.
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.starts_with("mode.repository: none is named")
                && w.ends_with("mode.repository.props.data-source: ds_0")),
        "{:?}",
        config.warnings
    );
}

#[test]
fn the_repository_can_be_a_data_source_by_name() {
    let named = |name: &str| {
        format!(
            "mode:\n  type: Cluster\n  repository:\n    type: JDBC\n    props:\n      \
             data-source: {name}\n{SAMPLE}"
        )
    };
    let config = load(&named("ds_1")).unwrap();
    match &config.mode.repository {
        crate::Repository::Jdbc { data_source } => assert_eq!(data_source.name, "ds_1"),
        other => panic!("{other:?}"),
    }
    assert!(
        config
            .warnings
            .iter()
            .all(|w| !w.starts_with("mode.repository"))
    );
    let unknown = load(&named("ds_9")).unwrap_err().to_string();
    assert_eq!(
        unknown,
        "mode.repository.props.data-source: expected the name of a data source under \
         dataSources, got 'ds_9'"
    );
}

#[test]
fn mode_takes_shardingsphere_properties() {
    let zookeeper = "mode:\n  type: Cluster\n  repository:\n    type: ZooKeeper\n    props:\n      \
                     namespace: fleet\n      server-lists: zk1:2181,zk2:2181\n      \
                     timeToLiveSeconds: 20\n      operationTimeoutMilliseconds: 800\n      \
                     retryIntervalMilliseconds: 100\n      maxRetries: 5\n      digest: u:p\n";
    let config = load(&format!("{zookeeper}{SAMPLE}")).unwrap();
    assert_eq!(config.mode.kind, crate::ModeType::Cluster);
    assert_eq!(
        config.mode.repository,
        crate::Repository::ZooKeeper {
            server_lists: "zk1:2181,zk2:2181".into(),
            namespace: "fleet".into(),
            digest: Some("u:p".into()),
        }
    );
    let timing = config.mode.timing;
    assert_eq!(timing.time_to_live, std::time::Duration::from_secs(20));
    assert_eq!(
        timing.operation_timeout,
        std::time::Duration::from_millis(800)
    );
    assert_eq!(timing.retry_interval, std::time::Duration::from_millis(100));
    assert_eq!(timing.max_retries, 5);

    let jdbc = "mode:\n  type: Standalone\n  repository:\n    type: JDBC\n    props:\n      \
                jdbc_url: jdbc:postgresql://db:5432/keyshard\n      username: ks\n      \
                password: pw\n      provider: MySQL\n";
    let config = load(&format!("{jdbc}{SAMPLE}")).unwrap();
    match &config.mode.repository {
        crate::Repository::Jdbc { data_source } => {
            assert_eq!(data_source.kind, DatabaseKind::Postgres);
            assert_eq!(data_source.url, "postgres://ks:pw@db:5432/keyshard");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn mode_errors_name_path_and_value() {
    let message = |mode: &str| match load(&format!("{mode}{SAMPLE}")) {
        Ok(_) => panic!("{mode} loaded"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        message("mode:\n  type: Fleet\n"),
        "mode.type: expected Standalone or Cluster, got 'Fleet'"
    );
    assert_eq!(
        message("mode:\n  type: Cluster\n  repository:\n    type: Etcd\n"),
        "mode.repository.type: expected JDBC or ZooKeeper, got 'Etcd'"
    );
    assert_eq!(
        message("mode:\n  type: Cluster\n  repository:\n    type: ZooKeeper\n"),
        "mode.repository.props: missing property 'server-lists'"
    );
    assert!(
        message(
            "mode:\n  type: Cluster\n  repository:\n    type: ZooKeeper\n    props:\n      \
             server-lists: zk:2181\n      jdbc_url: x\n"
        )
        .starts_with("mode.repository.props.jdbc_url: ")
    );
    assert_eq!(
        message(
            "mode:\n  type: Cluster\n  repository:\n    type: JDBC\n    props:\n      \
             timeToLiveSeconds: 1\n"
        ),
        "mode.repository.props.timeToLiveSeconds: expected a positive integer, got '1'"
    );
}
