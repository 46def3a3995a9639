//! The run-time parameters of a PostgreSQL session: what the client set, and the defaults
//! `SHOW` answers for the rest. The session holds them and the session statements change them,
//! so they depend on neither.

use std::collections::BTreeMap;

/// The settings a session starts with, beside the client's startup parameters. Names are
/// lower case; `SHOW` answers them.
pub(super) const DEFAULTS: &[(&str, &str)] = &[
    ("application_name", ""),
    ("client_encoding", "UTF8"),
    ("datestyle", "ISO, MDY"),
    ("default_transaction_isolation", "read committed"),
    ("default_transaction_read_only", "off"),
    ("extra_float_digits", "1"),
    ("integer_datetimes", "on"),
    ("intervalstyle", "postgres"),
    ("is_superuser", "off"),
    ("lc_collate", "C.UTF-8"),
    ("lc_ctype", "C.UTF-8"),
    ("lc_messages", "C.UTF-8"),
    ("max_identifier_length", "63"),
    ("search_path", "\"$user\", public"),
    ("server_encoding", "UTF8"),
    // The shards' (`Identity`), which `setting` answers.
    ("server_version", ""),
    ("server_version_num", ""),
    ("standard_conforming_strings", "on"),
    ("statement_timeout", "0"),
    ("timezone", "UTC"),
    ("transaction_isolation", "read committed"),
    ("transaction_read_only", "off"),
];

/// The run-time parameters a client set: in its startup message, then with `SET`. The rest are
/// [`DEFAULTS`], and the transaction settings are the session's (`SHOW transaction_isolation`
/// inside a transaction shows that transaction's).
#[derive(Debug, Clone, Default)]
pub(crate) struct Parameters {
    pub(super) startup: BTreeMap<String, String>,
    pub(super) set: BTreeMap<String, String>,
}

impl Parameters {
    /// The client's startup parameters, but those that name who and where it is.
    pub(crate) fn from_startup(startup: &BTreeMap<String, String>) -> Self {
        let startup = startup
            .iter()
            .filter(|(name, _)| {
                !matches!(
                    name.as_str(),
                    "user" | "database" | "options" | "replication"
                )
            })
            .map(|(name, value)| (name.to_ascii_lowercase(), value.clone()))
            .collect();
        Self {
            startup,
            set: BTreeMap::new(),
        }
    }

    /// Whether the client set any parameter since startup.
    pub(crate) fn any_set(&self) -> bool {
        !self.set.is_empty()
    }

    /// `RESET ALL`: back to the startup parameters.
    pub(crate) fn reset_all(&mut self) {
        self.set.clear();
    }

    /// What the client gave `name`, at startup or with `SET`.
    pub(super) fn given(&self, name: &str) -> Option<&str> {
        self.set
            .get(name)
            .or_else(|| self.startup.get(name))
            .map(String::as_str)
    }
}

pub(super) fn default(name: &str) -> Option<&'static str> {
    DEFAULTS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}
