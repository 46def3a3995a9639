//! Data sources: strict session state, URL errors, and the JDBC URL alias with credentials and
//! environment placeholders.

use super::{SAMPLE, error_with, load};
use crate::DatabaseKind;

#[test]
fn a_data_source_may_refuse_pinned_session_state() {
    let strict = SAMPLE.replacen(
        "maxPoolSize: 16",
        "maxPoolSize: 16\n    sessionState: strict",
        1,
    );
    let config = load(&strict).unwrap();
    assert!(config.data_sources["ds_1"].pool.strict_session_state);
    let error = error_with("maxPoolSize: 16", "sessionState: loose");
    assert!(
        error.contains("dataSources.ds_1.sessionState") && error.contains("pin or strict"),
        "{error}"
    );
}

#[test]
fn data_source_errors_name_path() {
    let err = error_with(
        "url: mysql://root@127.0.0.1:3306/shop_1",
        "url: oracle://h/db",
    );
    assert!(
        err.starts_with("dataSources.ds_1.url: unsupported database URL 'oracle://h/db'"),
        "{err}"
    );
    assert_eq!(
        error_with(
            "url: mysql://root@127.0.0.1:3306/shop_1",
            "url: mysql://${KEYSHARD_TEST_SURELY_UNSET_9F2}/db"
        ),
        "dataSources.ds_1.url: environment variable 'KEYSHARD_TEST_SURELY_UNSET_9F2' is not set"
    );
}

#[test]
fn jdbc_url_alias_credentials_and_env_placeholders() {
    // SAFETY: the variable name is unique to this test and only this test reads it; no other
    // thread of the test binary touches it.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("KEYSHARD_CONFIG_TEST_PW_7C1", "p@ss word");
    }
    let text = SAMPLE.replacen(
        "url: mysql://root@127.0.0.1:3306/shop_1",
        "jdbcUrl: jdbc:mysql://127.0.0.1:3306/shop_1?serverTimezone=UTC\n    username: app\n    password: ${KEYSHARD_CONFIG_TEST_PW_7C1}",
        1,
    );
    let config = load(&text).unwrap();
    let ds = &config.data_sources["ds_1"];
    assert_eq!(ds.kind, DatabaseKind::MySql);
    assert_eq!(
        ds.url,
        "mysql://app:p%40ss%20word@127.0.0.1:3306/shop_1?serverTimezone=UTC"
    );
    assert_eq!(
        ds.redacted_url(),
        "mysql://app:***@127.0.0.1:3306/shop_1?serverTimezone=UTC"
    );
}
