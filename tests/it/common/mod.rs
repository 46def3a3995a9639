//! What the process-level tests share: scratch directories, free ports, `keyshard serve`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub mod ports;
pub use ports::free_port;

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("keyshard_{name}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `keyshard` with `args` to its end.
pub fn keyshard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_keyshard"))
        .args(args)
        .output()
        .unwrap()
}

/// A `keyshard serve` process, killed (SIGKILL) when dropped: a failing test leaves no proxy
/// behind holding database connections.
pub struct Serving(pub Child);

impl std::ops::Deref for Serving {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Serving {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `keyshard serve --config <config>`, with `env` set.
pub fn serve_with(config: &Path, env: &[(&str, &str)]) -> Serving {
    let child = Command::new(env!("CARGO_BIN_EXE_keyshard"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Serving(child)
}

pub fn serve(config: &Path) -> Serving {
    serve_with(config, &[])
}

/// The default configuration without its `mode:` section, for tests that bring their own.
pub fn default_without_mode() -> String {
    let yaml = keyshard_config::embedded_default();
    match (yaml.find("\nmode:\n"), yaml.find("\nserver:\n")) {
        (Some(start), Some(end)) if start < end => format!("{}{}", &yaml[..start], &yaml[end..]),
        _ => yaml.to_owned(),
    }
}
