//! ShardingSphere-Proxy's configuration directory (`conf/`): `global.yaml` (5.4+) or
//! `server.yaml` (earlier 5.x) for what the proxy as a whole has (`mode`, `authority`, `props`,
//! global rules, and Keyshard's own `server`), and one `database-*.yaml` (5.4+) or
//! `config-*.yaml` file per logical database. SS ships the latter commented out; a file
//! without content is skipped. Keyshard serves one logical database per process, so exactly one
//! database file may have content.

use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};

use crate::error::{ConfigError, Problem};

/// The directory's files merged into one configuration document: the proxy file's keys, the
/// database file's, and the rules of both (the proxy's global rules first).
pub(crate) fn merged(dir: &Path) -> Result<Value, ConfigError> {
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
    let name = |path: &PathBuf| {
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned()
    };
    let proxy_file = ["global.yaml", "server.yaml"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file());
    let mut merged = match &proxy_file {
        Some(path) => mapping(read(path)?, path)?,
        None => Mapping::new(),
    };
    let mut databases = Vec::new();
    for path in &files {
        let file = name(path);
        let is_database = (file.starts_with("database-") || file.starts_with("config-"))
            && file.ends_with(".yaml");
        if !is_database {
            continue;
        }
        let document = read(path)?;
        if !document.is_null() {
            databases.push((file, mapping(document, path)?));
        }
    }
    let database = match databases.len() {
        1 => databases.pop().map(|(_, d)| d).unwrap_or_default(),
        0 => {
            return Err(ConfigError::at(
                dir.display().to_string(),
                Problem::InvalidValue {
                    value: "no database file".into(),
                    expected: "a configuration file, or a directory with one database-*.yaml \
                               or config-*.yaml that is not all comments",
                },
            ));
        }
        _ => {
            let names: Vec<&str> = databases.iter().map(|(n, _)| n.as_str()).collect();
            return Err(ConfigError::at(
                dir.display().to_string(),
                Problem::SeveralDatabases(names.join(", ")),
            ));
        }
    };
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
                    key.as_str().unwrap_or("?").to_owned(),
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
