//! `keyshard serve` (and `keyshard` alone): run the proxy until Ctrl-C or SIGTERM.

use anyhow::Context;
use keyshard_proxy::Server;

use crate::config_arg::ConfigArg;

#[derive(Debug, Default, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    config: ConfigArg,
}

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let databases = args.config.load_databases()?;
    let config = databases.first().context("no logical database")?;
    let sql_show = config.props.sql_show;
    let users: Vec<String> = config.users.iter().map(|u| u.name.clone()).collect();
    tracing_subscriber::fmt()
        .with_max_level(if sql_show {
            tracing::Level::INFO
        } else {
            tracing::Level::WARN
        })
        .with_target(false)
        // Escape codes only where someone reads them: a log file or journal gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    for warning in databases.iter().flat_map(|d| &d.warnings) {
        tracing::warn!("configuration: {warning}");
    }
    // One thread by default: a statement's work then never wakes another thread, which cost
    // ~10 % more CPU per statement on the multi-threaded runtime (docs/src/benchmark-log.md).
    let mut builder = match config.server.worker_threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        threads => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            if threads > 1 {
                builder.worker_threads(threads);
            }
            // The stack the one-thread runtime has on the main thread (see .cargo/config.toml).
            builder.thread_stack_size(8 << 20);
            builder
        }
    };
    let runtime = builder
        .enable_all()
        .build()
        .context("starting the runtime")?;
    runtime.block_on(async {
        let names: Vec<String> = databases.iter().map(|d| format!("'{}'", d.database_name)).collect();
        let database = names.join(", ");
        let server = Server::bind_databases(databases).await?;
        if let Some(address) = server.mysql_address() {
            println!(
                "Keyshard is serving database {database} to MySQL clients on {address} (users: {}). Ctrl-C stops it.",
                users.join(", ")
            );
        }
        if let Some(address) = server.postgres_address() {
            println!(
                "Keyshard is serving database {database} to PostgreSQL clients on {address} (users: {}). Ctrl-C stops it.",
                users.join(", ")
            );
        }
        if let Some(worker) = server.worker_id().await {
            println!(
                "Worker id {} (epoch {}): {}.",
                worker.worker_id, worker.epoch, worker.source
            );
        }
        server.run(shutdown_signal()).await;
        println!("Keyshard stopped.");
        anyhow::Ok(())
    })
}

/// Completes on Ctrl-C or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
