//! ShardingSphere-Proxy's configuration directory (`conf/`): `global.yaml` (5.4+) or
//! `server.yaml` (earlier 5.x) for what the proxy as a whole has (`mode`, `authority`, `props`,
//! global rules, and Keyshard's own `server`), and one `database-*.yaml` (5.4+) or
//! `config-*.yaml` file per logical database. SS ships the latter commented out; a file
//! without content is skipped. Each database file with content is one logical database, which
//! the proxy serves beside the others.

use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};

use crate::error::{ConfigError, Problem};

/// One configuration document per logical database, in file name order: the proxy file's
/// keys, the database file's, and the rules of both (the proxy's global rules first).
pub(crate) fn databases(dir: &Path) -> Result<Vec<Value>, ConfigError> {
    let read = |path: &Path| -> Result<Value, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.to_owned(),
            error,
        })?;
        Ok(serde_yaml_ng::from_str(&text)?)
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|error| ConfigError::Read {
            path: dir.to_owned(),
            error,
        })?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let proxy_file = ["global.yaml", "server.yaml"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file());
    let proxy = match &proxy_file {
        Some(path) => mapping(read(path)?, path)?,
        None => Mapping::new(),
    };
    let mut documents = Vec::new();
    for path in &files {
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let is_database = (file.starts_with("database-") || file.starts_with("config-"))
            && file.ends_with(".yaml");
        if !is_database {
            continue;
        }
        let document = read(path)?;
        if !document.is_null() {
            documents.push(merged(proxy.clone(), mapping(document, path)?, file)?);
        }
    }
    if documents.is_empty() {
        return Err(ConfigError::at(
            dir.display().to_string(),
            Problem::InvalidValue {
                value: "no database file".into(),
                expected: "a configuration file, or a directory with a database-*.yaml or \
                           config-*.yaml that is not all comments",
            },
        ));
    }
    Ok(documents)
}

/// The proxy file's settings with the database file's (`file`) added.
fn merged(mut merged: Mapping, database: Mapping, file: &str) -> Result<Value, ConfigError> {
    for (key, value) in database {
        match merged.get_mut(&key) {
            None => {
                merged.insert(key, value);
            }
            Some(Value::Sequence(global)) if key.as_str() == Some("rules") => {
                if let Value::Sequence(rules) = value {
                    global.extend(rules);
                }
            }
            Some(_) => {
                return Err(ConfigError::at(
                    format!("{file}: {}", key.as_str().unwrap_or("?")),
                    Problem::InvalidValue {
                        value: "set in the database file and the proxy's".into(),
                        expected: "each setting in one file",
                    },
                ));
            }
        }
    }
    Ok(Value::Mapping(merged))
}

fn mapping(document: Value, path: &Path) -> Result<Mapping, ConfigError> {
    match document {
        Value::Mapping(mapping) => Ok(mapping),
        Value::Null => Ok(Mapping::new()),
        _ => Err(ConfigError::at(
            path.display().to_string(),
            Problem::InvalidValue {
                value: "not a mapping".into(),
                expected: "a YAML mapping of settings",
            },
        )),
    }
}
