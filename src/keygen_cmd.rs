//! `keyshard keygen`: print keys from a generator, or decode a SNOWFLAKE key (in any layout)
//! or a UUIDv7's time.

use std::io::{BufWriter, Write};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use keyshard_keygen::snowflake::Layout;
use keyshard_keygen::{Clock, Key, KeyGenError, KeyGenerator, Props, SystemClock};

use crate::config_arg::{ConfigArg, runtime};

#[derive(Debug, clap::Args)]
pub struct KeygenArgs {
    /// Generator type (SNOWFLAKE or UUID), with a fixed worker id: for keys that are not stored.
    #[arg(long = "type", value_name = "TYPE", default_value = "SNOWFLAKE")]
    type_name: String,
    /// A generator property, NAME=VALUE (repeatable), e.g. worker-id=3.
    #[arg(long = "prop", value_name = "NAME=VALUE", value_parser = parse_prop)]
    props: Vec<(String, String)>,
    /// How many keys to print.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    count: u32,
    /// Draw the keys from this configured key generator instead, through the configuration's
    /// coordination repository, exactly as a proxy does (worker id lease, segments).
    #[arg(long, value_name = "NAME", requires = "path", conflicts_with_all = ["type_name", "props"])]
    generator: Option<String>,
    #[command(flatten)]
    config: ConfigArg,
    /// Take this key apart instead: a SNOWFLAKE key's timestamp (UTC), worker id and sequence
    /// (in the layout `--prop epoch=…`, `worker-id-bits=…`, `sequence-bits=…` give, else
    /// ShardingSphere's), or a UUIDv7's timestamp.
    #[arg(long, value_name = "KEY", allow_hyphen_values = true, conflicts_with_all = ["type_name", "count", "generator"])]
    decode: Option<String>,
}

fn parse_prop(raw: &str) -> Result<(String, String), String> {
    match raw.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("expected NAME=VALUE, got '{raw}'")),
    }
}

pub fn run(args: &KeygenArgs, out: &mut impl Write) -> anyhow::Result<()> {
    // One write per buffer, not per key: printing is most of the cost of a large count.
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    if let Some(raw) = &args.decode {
        writeln!(
            out,
            "{}",
            decode(raw, &args.props.iter().cloned().collect())?
        )?;
        out.flush()?;
        return Ok(());
    }
    let mut left = args.count as usize;
    let mut blocks = Blocks::new();
    if let Some(name) = &args.generator {
        draw_configured(args, name, left, &mut blocks, &mut out)?;
    } else {
        let props: Props = args.props.iter().cloned().collect();
        let generator = keyshard_keygen::build(&args.type_name, &props, None)
            .with_context(|| format!("cannot build a {} generator", args.type_name))?
            .generator();
        while left > 0 {
            left -= blocks.write(generator.as_ref(), left, &mut out)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// What `raw` says: a SNOWFLAKE key in the layout `props` give, or a UUIDv7's time.
fn decode(raw: &str, props: &Props) -> anyhow::Result<String> {
    if let Ok(key) = raw.trim().parse::<i64>() {
        let layout = Layout::from_props(props, || SystemClock.now_millis())?;
        let decoded = layout.decode(key)?;
        return Ok(match layout.gene_bits {
            0 => decoded.to_string(),
            _ => format!("{decoded}\ngene: {}", decoded.gene),
        });
    }
    Ok(format!(
        "timestamp: {}\nversion: 7",
        keyshard_keygen::uuid_v7_timestamp(raw)?
    ))
}

/// Claims what the configured generator needs from the repository, prints the keys, and gives
/// the worker id back.
fn draw_configured(
    args: &KeygenArgs,
    name: &str,
    mut left: usize,
    blocks: &mut Blocks,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let config = args.config.load()?;
    let Some(generator) = config.key_generators.get(name) else {
        let names: Vec<&str> = config.key_generators.names().collect();
        bail!(
            "no key generator named '{name}' (configured: {})",
            names.join(", ")
        );
    };
    runtime()?.block_on(async {
        let address = format!("keyshard keygen (pid {})", std::process::id());
        let keeper = keyshard_proxy::start_coordination(&config, address).await?;
        let patience = config.mode.timing.operation_timeout * 4;
        let mut waiting_since: Option<Instant> = None;
        let mut written = Ok(());
        while left > 0 {
            match blocks.write(generator.as_ref(), left, out) {
                Ok(n) => {
                    left -= n;
                    waiting_since = None;
                }
                // Printing outruns the segment fetches: wait for the next segment, which the
                // keeper fetches on this runtime.
                Err(e)
                    if matches!(
                        e.downcast_ref::<KeyGenError>(),
                        Some(KeyGenError::SegmentExhausted { .. })
                    ) && waiting_since.get_or_insert_with(Instant::now).elapsed() < patience =>
                {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                Err(e) => {
                    written = Err(e);
                    break;
                }
            }
        }
        if let Some(keeper) = keeper {
            keeper.stop().await;
        }
        written
    })
}

/// Keys taken a block at a time: as many as one statement could take.
struct Blocks {
    size: usize,
    keys: Vec<Key>,
}

impl Blocks {
    fn new() -> Self {
        Self {
            size: keyshard_keygen::snowflake::MAX_BLOCK,
            keys: Vec::with_capacity(keyshard_keygen::snowflake::MAX_BLOCK),
        }
    }

    /// Takes up to `left` keys and writes them; returns how many.
    fn write(
        &mut self,
        generator: &dyn KeyGenerator,
        left: usize,
        out: &mut impl Write,
    ) -> anyhow::Result<usize> {
        self.keys.clear();
        self.size = self.size.min(generator.max_block()).max(1);
        match generator.next_keys(left.min(self.size), &mut self.keys) {
            Ok(()) => {}
            // Segments smaller than a block: take them a segment at a time.
            Err(KeyGenError::BlockLargerThanStep { step, .. })
                if usize::try_from(step).is_ok_and(|step| step < self.size) =>
            {
                self.size = usize::try_from(step).unwrap_or(1).max(1);
                return Ok(0);
            }
            Err(e) => return Err(e.into()),
        }
        for key in &self.keys {
            writeln!(out, "{key}")?;
        }
        Ok(self.keys.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Harness {
        #[command(flatten)]
        args: KeygenArgs,
    }

    fn run_args(argv: &[&str]) -> anyhow::Result<String> {
        let harness =
            Harness::try_parse_from(std::iter::once("keygen").chain(argv.iter().copied()))?;
        let mut out = Vec::new();
        run(&harness.args, &mut out)?;
        Ok(String::from_utf8(out)?)
    }

    #[test]
    fn prints_count_keys_with_the_worker_id() {
        let out = run_args(&[
            "--type",
            "SNOWFLAKE",
            "--prop",
            "worker-id=3",
            "--count",
            "5",
        ])
        .unwrap();
        let keys: Vec<i64> = out.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(keys.len(), 5);
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert!(
            keys.iter()
                .all(|k| keyshard_keygen::Snowflake::decode(*k).unwrap().worker_id == 3)
        );
    }

    #[test]
    fn prints_uuids() {
        let out = run_args(&["--type", "uuid", "--count", "2"]).unwrap();
        assert_eq!(out.lines().count(), 2);
        assert!(out.lines().all(|l| l.len() == 32));
    }

    #[test]
    fn decodes() {
        let out = run_args(&["--decode", &((1000_i64 << 22) | (3 << 12) | 9).to_string()]).unwrap();
        assert_eq!(
            out,
            "timestamp: 2016-11-01T00:00:01.000Z\nworker-id: 3\nsequence: 9\n"
        );
    }

    #[test]
    fn decodes_any_layout_and_uuid_v7_times() {
        let out = run_args(&[
            "--decode",
            &((1000_i64 << 12) | (3 << 7) | 9).to_string(),
            "--prop",
            "worker-id-bits=5",
            "--prop",
            "sequence-bits=7",
            "--prop",
            "epoch=2024-01-01T00:00:00Z",
        ])
        .unwrap();
        assert_eq!(
            out,
            "timestamp: 2024-01-01T00:00:01.000Z\nworker-id: 3\nsequence: 9\n"
        );
        // Gene keys: the gene is the lowest bits, under the sequence.
        let key = (1000_i64 << 22) | (3 << 12) | (9 << 4) | 13;
        let out = run_args(&["--decode", &key.to_string(), "--prop", "gene-bits=4"]).unwrap();
        assert_eq!(
            out,
            "timestamp: 2016-11-01T00:00:01.000Z\nworker-id: 3\nsequence: 9\ngene: 13\n"
        );
        let out = run_args(&["--decode", "01937a5d-fc00-7000-8000-000000000000"]).unwrap();
        assert_eq!(out, "timestamp: 2024-11-30T00:00:00.000Z\nversion: 7\n");
        assert!(run_args(&["--decode", "936da01f9abd4d9d80c702af85c822a8"]).is_err());
    }

    #[test]
    fn a_js_safe_layout_prints_keys_below_2_pow_53() {
        let out = run_args(&[
            "--prop",
            "worker-id-bits=5",
            "--prop",
            "sequence-bits=7",
            "--count",
            "300",
        ])
        .unwrap();
        let keys: Vec<i64> = out.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(keys.len(), 300);
        assert!(keys.iter().all(|k| *k < 1 << 53));
    }

    #[test]
    fn bad_arguments_are_errors() {
        for argv in [
            &["--type", "NOPE"][..],
            &["--prop", "worker-id=2000"],
            &["--prop", "worker-id"],
            &["--prop", "color=red"],
            &["--count", "0"],
            &["--decode", "abc"],
            &["--decode", "-5"],
            &["--decode", "5", "--count", "2"],
        ] {
            assert!(run_args(argv).is_err(), "{argv:?} was accepted");
        }
    }
}
