//! The JDBC programs under `tests/jdbc`, compiled for a test and run against a proxy or a
//! database, and the commands the tests run beside them.

use std::path::PathBuf;
use std::process::Command;

pub const CONNECTOR_J: &str = "/usr/share/java/mariadb-java-client.jar";
pub const PGJDBC: &str = "/usr/share/java/postgresql.jar";

/// Runs `command`: its standard output, or a panic with its standard error.
pub fn succeeded(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Classes compiled from `tests/jdbc` sources into a directory of their own, removed on drop.
pub struct Programs {
    classes: PathBuf,
}

impl Programs {
    /// Compiles `sources` (file names under `tests/jdbc`).
    pub fn compile(sources: &[&str]) -> Self {
        let classes = std::env::temp_dir().join(super::unique("keyshard_jdbc"));
        std::fs::create_dir_all(&classes).unwrap();
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/jdbc");
        succeeded(
            Command::new("javac")
                .arg("-d")
                .arg(&classes)
                .args(sources.iter().map(|source| dir.join(source))),
        );
        Self { classes }
    }

    /// Runs `class` with the driver `jar` and `args`: its standard output.
    pub fn run(&self, class: &str, jar: &str, args: &[&str]) -> String {
        succeeded(
            Command::new("java")
                .arg("-cp")
                .arg(format!("{}:{jar}", self.classes.display()))
                .arg(class)
                .args(args),
        )
    }
}

impl Drop for Programs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.classes);
    }
}

/// The keys a program printed after `label` (`one: 1 2 3`).
pub fn keys(out: &str, label: &str) -> Vec<i64> {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label} in {out}"));
    line.split_whitespace()
        .map(|k| k.parse().unwrap())
        .collect()
}
