//! `keyshard preview`: what ShardingSphere's PREVIEW shows — the generated keys and, per data
//! source, the actual SQL with its parameters — without executing anything.

use std::io::Write;

use anyhow::{Context, bail};
use keyshard_backend::Backend;
use keyshard_keygen::{Grant, Key};
use keyshard_router::{NoMetadata, Plan, Prepared, RouteError, Router};
use keyshard_types::{Dialect, Value};
use serde_json::{Value as Json, json};

use crate::config_arg::{ConfigArg, runtime};

#[derive(Debug, clap::Args)]
pub struct PreviewArgs {
    #[command(flatten)]
    config: ConfigArg,
    /// A parameter for the next placeholder, as a JSON scalar: 1000, "OK", null (repeatable).
    #[arg(long = "param", value_name = "JSON", value_parser = parse_param, allow_hyphen_values = true)]
    params: Vec<Value>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The SQL dialect of the statement.
    #[arg(long, value_enum, default_value_t = DialectArg::Mysql)]
    dialect: DialectArg,
    /// The statement.
    sql: String,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum DialectArg {
    Mysql,
    Postgres,
}

fn parse_param(raw: &str) -> Result<Value, String> {
    let json: Json = serde_json::from_str(raw).map_err(|_| {
        format!("'{raw}' is not a JSON scalar (write strings with quotes: '\"{raw}\"')")
    })?;
    match json {
        Json::Null => Ok(Value::Null),
        Json::Bool(b) => Ok(Value::Int(b.into())),
        Json::Number(n) => n
            .as_i64()
            .map(Value::Int)
            .or_else(|| n.as_u64().map(Value::UInt))
            .or_else(|| n.as_f64().map(Value::Double))
            .ok_or_else(|| format!("'{raw}' is not a number Keyshard can carry")),
        Json::String(s) => Ok(Value::Text(s)),
        Json::Array(_) | Json::Object(_) => Err(format!("'{raw}' is not a JSON scalar")),
    }
}

pub fn run(args: &PreviewArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let config = args.config.load()?;
    // Previewed keys are never stored, so no repository needs to stand behind the worker id.
    config.key_generators.lease().grant(Grant::unchecked(0));
    let dialect = match args.dialect {
        DialectArg::Mysql => Dialect::MySql,
        DialectArg::Postgres => Dialect::Postgres,
    };
    let router = Router::new(&config.sharding, dialect);
    let prepared = match router.prepare(&args.sql, &NoMetadata) {
        // Only a column-less INSERT needs the table's columns: read them from its shard.
        Err(RouteError::UnknownColumns { table }) => {
            let rule = config.sharding.table(&table).context("table rule")?;
            let metadata = runtime()?.block_on(async {
                let backend = Backend::new(&config)?;
                let loaded = backend.refresh_metadata(rule).await;
                backend.close().await;
                loaded.map(|()| backend)
            })?;
            router.prepare(&args.sql, metadata.metadata())?
        }
        other => other?,
    };
    let Prepared::Insert(insert) = prepared else {
        bail!("preview shows INSERTs into sharded tables; this statement is not one");
    };
    let plan = insert.bind(&args.params)?;
    match args.format {
        Format::Json => writeln!(out, "{}", plan_json(&plan))?,
        Format::Text => write_text(&plan, out)?,
    }
    Ok(())
}

fn plan_json(plan: &Plan) -> Json {
    json!({
        "generated_keys": plan.generated_keys.iter().map(key_json).collect::<Vec<_>>(),
        "units": plan.units.iter().map(|u| json!({
            "data_source": u.data_source,
            "sql": u.sql,
            "params": u.params.iter().map(value_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn key_json(key: &Key) -> Json {
    match key {
        Key::Int(v) => json!(v),
        Key::Text(s) => json!(s),
    }
}

fn value_json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Int(v) => json!(v),
        Value::UInt(v) => json!(v),
        Value::Double(v) => json!(v),
        Value::Bool(b) => json!(b),
        Value::Text(s) => json!(s),
        Value::Bytes(b) => json!(b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
        Value::Array(a) => Json::Array(a.elements.iter().map(value_json).collect()),
        Value::Wire(w) => json!(String::from_utf8_lossy(&w.bytes)),
    }
}

fn write_text(plan: &Plan, out: &mut impl Write) -> anyhow::Result<()> {
    let keys: Vec<String> = plan.generated_keys.iter().map(Key::to_string).collect();
    writeln!(
        out,
        "generated keys: {}",
        if keys.is_empty() {
            "(none)".to_owned()
        } else {
            keys.join(", ")
        }
    )?;
    for unit in &plan.units {
        let params: Vec<String> = unit
            .params
            .iter()
            .map(|p| value_json(p).to_string())
            .collect();
        writeln!(
            out,
            "{} ::: {} ::: [{}]",
            unit.data_source,
            unit.sql,
            params.join(", ")
        )?;
    }
    Ok(())
}
