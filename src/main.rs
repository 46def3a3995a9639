//! The `keyshard` command line: parses arguments and calls into the crates.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod check_cmd;
mod config_arg;
mod keygen_cmd;
mod preview_cmd;
mod serve_cmd;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Keyshard: a sharding proxy that generates distributed primary keys.
#[derive(Debug, Parser)]
#[command(name = "keyshard", version, about)]
struct Cli {
    /// What to do; without one, serve the default configuration.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the proxy (the default when no command is given).
    Serve(serve_cmd::ServeArgs),
    /// Generate keys with a configured generator type, or take a SNOWFLAKE key apart.
    Keygen(keygen_cmd::KeygenArgs),
    /// Show how an INSERT is rewritten and routed, and the keys it gets, without executing it.
    Preview(preview_cmd::PreviewArgs),
    /// Validate the configuration and connect to every data source.
    Check(check_cmd::CheckArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli
        .command
        .unwrap_or_else(|| Command::Serve(serve_cmd::ServeArgs::default()))
    {
        Command::Serve(args) => serve_cmd::run(&args),
        Command::Keygen(args) => keygen_cmd::run(&args, &mut std::io::stdout().lock()),
        Command::Preview(args) => preview_cmd::run(&args, &mut std::io::stdout().lock()),
        Command::Check(args) => check_cmd::run(&args, &mut std::io::stdout().lock()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
