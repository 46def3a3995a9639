//! `keyshard check`: validate the configuration and connect to every data source.

use std::io::Write;

use anyhow::bail;
use keyshard_backend::Backend;
use keyshard_config::{Config, Repository};

use crate::config_arg::{ConfigArg, runtime};

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    config: ConfigArg,
}

pub fn run(args: &CheckArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let databases = args.config.load_databases()?;
    let several = databases.len() > 1;
    let mut failed = 0;
    let mut sources = 0;
    for config in &databases {
        if several {
            writeln!(out, "database '{}':", config.database_name)?;
        }
        let (bad, all) = check(config, out)?;
        failed += bad;
        sources += all;
    }
    if failed > 0 {
        bail!("{failed} of {sources} data sources failed");
    }
    Ok(())
}

/// Checks one logical database: its warnings, coordination and data sources; returns how many
/// data sources failed, of how many.
fn check(config: &Config, out: &mut impl Write) -> anyhow::Result<(usize, usize)> {
    for warning in &config.warnings {
        writeln!(out, "warning: {warning}")?;
    }
    let results = runtime()?.block_on(async {
        let backend = Backend::new(config)?;
        let results: Vec<(String, Result<(), String>)> = backend
            .check()
            .await
            .into_iter()
            .map(|(name, result)| (name.to_owned(), result.map_err(|e| e.to_string())))
            .collect();
        backend.close().await;
        anyhow::Ok(results)
    })?;
    writeln!(out, "{}", coordination(config))?;
    let mut failed = 0;
    for (name, result) in &results {
        let replica = config
            .read_write
            .groups
            .values()
            .flat_map(|g| &g.replicas)
            .find(|r| r.source.name == *name)
            .map(|r| &r.source);
        let url = (config.data_sources.get(name).or(replica))
            .map(|d| d.redacted_url())
            .unwrap_or_default();
        match result {
            Ok(()) => writeln!(out, "{name}: ok ({url})")?,
            Err(e) => {
                failed += 1;
                writeln!(out, "{name}: error: {e}")?;
            }
        }
    }
    Ok((failed, results.len()))
}

/// Where instances coordinate, and which data sources remember the fleet: what an operator
/// must keep the same on every instance.
fn coordination(config: &Config) -> String {
    let repository = match &config.mode.repository {
        Repository::Jdbc { data_source } if config.data_sources.contains_key(&data_source.name) => {
            format!("JDBC on data source '{}'", data_source.name)
        }
        Repository::Jdbc { data_source } => format!("JDBC {}", data_source.redacted_url()),
        Repository::ZooKeeper {
            server_lists,
            namespace,
            ..
        } => format!("ZooKeeper {server_lists} (namespace {namespace})"),
    };
    let keyed: Vec<String> = keyshard_proxy::keyed_data_sources(config)
        .into_iter()
        .map(|d| d.name)
        .collect();
    if keyed.is_empty() {
        format!("repository: {repository}")
    } else {
        format!(
            "repository: {repository}; fleet records on {}",
            keyed.join(", ")
        )
    }
}
