//! The `!TRANSACTION` rule's default type and the authority's `DATABASE_PERMITTED` privilege.

use super::{SAMPLE, error_with, load};
use crate::TransactionType;

#[test]
fn transaction_rule_sets_the_default_type() {
    assert_eq!(
        load(SAMPLE).unwrap().transaction_type,
        TransactionType::Local
    );
    let xa = SAMPLE.replacen(
        "- !BROADCAST",
        "- !TRANSACTION\n  defaultType: XA\n  providerType: Atomikos\n  props:\n    a: 1\n- !BROADCAST",
        1,
    );
    assert_eq!(load(&xa).unwrap().transaction_type, TransactionType::Xa);
    assert_eq!(
        error_with(
            "- !BROADCAST",
            "- !TRANSACTION\n  defaultType: BASE\n- !BROADCAST"
        ),
        "rules[1].defaultType: expected LOCAL or XA (BASE is not supported), got 'BASE'"
    );
}

/// SS's `DATABASE_PERMITTED`: each user the databases its `user-database-mappings` list (host
/// parts aside, as Keyshard does not match hosts), `*` for all.
#[test]
fn database_permitted_maps_users_to_their_databases() {
    let privilege = "authority:\n  privilege:\n    type: DATABASE_PERMITTED\n    props:\n      \
                     user-database-mappings: root@%=*, app@127.0.0.1=sharding_db, app@%=logs_db\n";
    let text = SAMPLE.replace("authority:\n", privilege);
    let config = load(&text).unwrap();
    let user = |name: &str| config.users.iter().find(|u| u.name == name).unwrap();
    assert_eq!(user("root").databases, None);
    assert_eq!(
        user("app").databases.as_deref(),
        Some(&["sharding_db".to_owned(), "logs_db".to_owned()][..])
    );
    assert!(user("app").may_use("LOGS_DB") && !user("app").may_use("orders_db"));

    let bad = SAMPLE.replace(
        "authority:\n",
        "authority:\n  privilege:\n    type: DATABASE_PERMITTED\n    props:\n      \
         user-database-mappings: root@%\n",
    );
    let error = load(&bad).unwrap_err().to_string();
    assert!(
        error.contains("authority.privilege.props.user-database-mappings")
            && error.contains("root@%"),
        "{error}"
    );
    let other = SAMPLE.replace(
        "authority:\n",
        "authority:\n  privilege:\n    type: SOMETHING_ELSE\n",
    );
    let error = load(&other).unwrap_err().to_string();
    assert!(error.contains("DATABASE_PERMITTED"), "{error}");
}
