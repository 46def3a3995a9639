//! The `--config` argument shared by the commands that need a configuration.

use std::path::{Path, PathBuf};

use anyhow::Context;
use keyshard_config::Config;

/// Where the default configuration lives, relative to the working directory.
pub const DEFAULT_CONFIG: &str = "config/keyshard.yaml";

#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConfigArg {
    /// The configuration file (ShardingSphere 5 YAML), or ShardingSphere-Proxy's configuration
    /// directory (global.yaml or server.yaml, and one database-*.yaml or config-*.yaml).
    /// Default: config/keyshard.yaml, or the embedded copy of it when that file does not exist.
    #[arg(long = "config", short = 'c', value_name = "FILE|DIR")]
    path: Option<PathBuf>,
}

impl ConfigArg {
    /// Loads and validates the configuration of one logical database.
    pub fn load(&self) -> anyhow::Result<Config> {
        match &self.path {
            Some(path) => keyshard_config::load(path)
                .with_context(|| format!("configuration {}", path.display())),
            None => self.load_databases()?.pop().context("no logical database"),
        }
    }

    /// Loads and validates every logical database of the configuration.
    pub fn load_databases(&self) -> anyhow::Result<Vec<Config>> {
        match &self.path {
            Some(path) => keyshard_config::load_databases(path)
                .with_context(|| format!("configuration {}", path.display())),
            None if Path::new(DEFAULT_CONFIG).exists() => {
                keyshard_config::load_databases(Path::new(DEFAULT_CONFIG))
                    .with_context(|| format!("configuration {DEFAULT_CONFIG}"))
            }
            None => {
                // The embedded default's SQLite paths are relative to config/: data/ lands in
                // the working directory.
                let base = std::path::absolute("config").context("current directory")?;
                keyshard_config::from_yaml_str(keyshard_config::embedded_default(), &base)
                    .map(|config| vec![config])
                    .context("embedded default configuration")
            }
        }
    }
}

/// A current-thread runtime for commands that talk to the data sources once.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}
