//! Fault injection for tests: `KEYSHARD_FAILPOINT=<name>` makes the process fail at that point
//! of the commit protocol, so tests can check what a crash there leaves behind. Read once, and
//! only in builds with debug assertions (the tests'): a release build ignores the variable, so
//! no environment can make a production proxy abort.

#[cfg(debug_assertions)]
use std::sync::OnceLock;

/// The variable that arms a failpoint.
pub const VARIABLE: &str = "KEYSHARD_FAILPOINT";

/// Whether failpoint `name` is armed.
#[cfg(debug_assertions)]
pub(crate) fn armed(name: &str) -> bool {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    ARMED
        .get_or_init(|| std::env::var(VARIABLE).ok())
        .as_deref()
        == Some(name)
}

/// Never: release builds have no failpoints.
#[cfg(not(debug_assertions))]
pub(crate) fn armed(_name: &str) -> bool {
    false
}

/// Aborts the process, as a crash or `kill -9` would, when failpoint `name` is armed.
pub(crate) fn crash_at(name: &str) {
    if armed(name) {
        eprintln!("failpoint {name}: aborting");
        std::process::abort();
    }
}
