//! `keyshard keygen`: print keys from a generator, or decode a SNOWFLAKE key.

use std::io::Write;

use anyhow::{Context, bail};
use keyshard_keygen::{Key, Props, Snowflake};

#[derive(Debug, clap::Args)]
pub struct KeygenArgs {
    /// Generator type (SNOWFLAKE or UUID).
    #[arg(long = "type", value_name = "TYPE", default_value = "SNOWFLAKE")]
    type_name: String,
    /// A generator property, NAME=VALUE (repeatable), e.g. worker-id=3.
    #[arg(long = "prop", value_name = "NAME=VALUE", value_parser = parse_prop)]
    props: Vec<(String, String)>,
    /// How many keys to print.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    count: u32,
    /// Take this SNOWFLAKE key apart instead: timestamp (UTC), worker id and sequence.
    #[arg(long, value_name = "KEY", allow_hyphen_values = true, conflicts_with_all = ["type_name", "props", "count"])]
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
    if let Some(raw) = &args.decode {
        let Ok(key) = raw.trim().parse::<i64>() else {
            bail!("'{raw}' is not a SNOWFLAKE key: expected a 64-bit integer");
        };
        writeln!(out, "{}", Snowflake::decode(key)?)?;
        return Ok(());
    }
    let props: Props = args.props.iter().cloned().collect();
    let generator = keyshard_keygen::build(&args.type_name, &props)
        .with_context(|| format!("cannot build a {} generator", args.type_name))?;
    // Keys are printed as they are generated, in blocks, so a large count needs little memory.
    let mut left = args.count as usize;
    let mut keys: Vec<Key> = Vec::new();
    while left > 0 {
        let block = left.min(keyshard_keygen::snowflake::MAX_BLOCK);
        keys.clear();
        generator.next_keys(block, &mut keys)?;
        for key in &keys {
            writeln!(out, "{key}")?;
        }
        left -= block;
    }
    Ok(())
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
                .all(|k| Snowflake::decode(*k).unwrap().worker_id == 3)
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
