//! XA recovery: finds Keyshard's prepared branches on every data source and finishes those
//! whose coordinator is gone.
//!
//! A branch is left alone while its transaction is in flight here, or while its coordinator's
//! worker-id lease (worker id and epoch, from the transaction id) is live. Otherwise recovery
//! records an abort unless a decision exists — the repository keeps the first decision, so a
//! coordinator that is slow rather than gone can no longer commit — and finishes the branch as
//! the standing decision says. Abort decisions are kept for good (they stop a late commit);
//! commit decisions are dropped once a pass that reached every data source finished all their
//! branches.

use std::collections::{BTreeMap, HashSet};

use keyshard_coordination::CoordinationError;
use keyshard_types::Value;

use crate::xa::{BranchNaming, PREFIX, parse_gtrid};
use crate::{Backend, BackendError, Pool};

/// What one recovery pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Branches committed.
    pub committed: usize,
    /// Branches rolled back.
    pub rolled_back: usize,
    /// Branches of live coordinators, left alone.
    pub in_flight: usize,
    /// Branches gone by the time recovery finished them: finished by another instance.
    pub finished_meanwhile: usize,
    /// Data sources that could not be scanned or finished, with why.
    pub unreachable: Vec<String>,
}

/// Whether a server's answer allows XA, or why not.
type Check = fn(&str) -> Result<(), String>;

/// A prepared branch found on a data source.
struct Prepared {
    gtrid: String,
    /// The branch as XA commands name it.
    xid: String,
}

impl Backend {
    /// Refuses XA where a data source cannot do it: MySQL before 5.7.7 and MariaDB before 10.5
    /// (prepared branches do not survive a disconnect), PostgreSQL with
    /// `max_prepared_transactions = 0`. A data source that cannot be reached is logged and
    /// checked again by recovery's scans.
    pub async fn check_xa(&self) -> Result<(), BackendError> {
        for (name, pool) in &self.pools {
            let (sql, check): (&str, Check) = match &**pool {
                Pool::MySql(_) => ("SELECT VERSION()", check_mysql_version),
                Pool::Postgres(_) => ("SHOW max_prepared_transactions", check_prepared_slots),
                Pool::Sqlite(_) => continue,
            };
            let answer = match self.execute_on(name, sql).await {
                Ok(outcome) => outcome
                    .rows
                    .into_iter()
                    .next()
                    .and_then(|r| text(r.first())),
                Err(e) => {
                    tracing::warn!("XA check of data source '{name}' skipped: {e}");
                    continue;
                }
            };
            check(answer.as_deref().unwrap_or_default()).map_err(|message| {
                BackendError::XaUnsupported {
                    data_source: name.clone(),
                    message,
                }
            })?;
        }
        Ok(())
    }

    /// One recovery pass over every data source. Fails only when the coordination repository
    /// cannot say which coordinators are live; a data source that cannot be scanned is
    /// reported in [`Recovered::unreachable`] and tried again on the next pass.
    pub async fn recover(&self) -> Result<Recovered, BackendError> {
        let mut report = Recovered::default();
        let Some(xa) = &self.xa else {
            return Ok(report);
        };
        let live: HashSet<(u16, u64)> =
            tokio::time::timeout(xa.operation_timeout, xa.repository.compute_nodes())
                .await
                .map_err(|_| CoordinationError::Timeout(xa.operation_timeout))??
                .into_iter()
                .map(|node| (node.worker_id, node.epoch))
                .collect();
        let watch = xa.watch();
        let me = xa.identity();
        // Per commit decision applied: whether every branch of it was committed.
        let mut committed: BTreeMap<String, bool> = BTreeMap::new();
        for name in self.pools.keys() {
            let Some(naming) = xa.naming(name) else {
                continue;
            };
            let prepared = match self.prepared_branches(name, naming).await {
                Ok(prepared) => prepared,
                Err(e) => {
                    report.unreachable.push(format!("{name}: {e}"));
                    continue;
                }
            };
            for branch in prepared {
                let Some((owner, _)) = parse_gtrid(&branch.gtrid) else {
                    continue;
                };
                // This instance's own transaction is gone once it is not in flight, unless it
                // was in flight during the pass: then it may have finished after the scan
                // (the next pass sees whether it left the branch behind).
                let gone =
                    !watch.saw(&branch.gtrid) && (Some(owner) == me || !live.contains(&owner));
                if !gone {
                    report.in_flight += 1;
                    continue;
                }
                let commit = xa.decide(&branch.gtrid, false).await?;
                let done = self.finish_branch(name, naming, &branch, commit).await;
                if commit {
                    *committed.entry(branch.gtrid.clone()).or_insert(true) &= done.is_ok();
                }
                let verb = if commit { "committed" } else { "rolled back" };
                match done {
                    Ok(false) => {
                        report.finished_meanwhile += 1;
                        continue;
                    }
                    Ok(true) if commit => report.committed += 1,
                    Ok(true) => report.rolled_back += 1,
                    Err(e) => {
                        report.unreachable.push(format!("{name}: {e}"));
                        continue;
                    }
                }
                tracing::warn!(
                    "XA recovery: {verb} branch {} of {} on data source '{name}'",
                    branch.xid,
                    branch.gtrid
                );
            }
        }
        if report.unreachable.is_empty() {
            for (gtrid, all_done) in committed {
                if all_done {
                    xa.forget(gtrid);
                }
            }
        }
        Ok(report)
    }

    /// This data source's prepared branches that are Keyshard's.
    async fn prepared_branches(
        &self,
        data_source: &str,
        naming: &BranchNaming,
    ) -> Result<Vec<Prepared>, BackendError> {
        Ok(match naming {
            BranchNaming::MySql { database } => {
                // formatID, gtrid_length, bqual_length, data (gtrid then bqual).
                let rows = self.execute_on(data_source, "XA RECOVER").await?.rows;
                rows.into_iter()
                    .filter_map(|row| {
                        let gtrid_length = usize::try_from(int(row.get(1))?).ok()?;
                        let data = bytes(row.get(3))?;
                        let (gtrid, bqual) = data.split_at_checked(gtrid_length)?;
                        let gtrid = std::str::from_utf8(gtrid).ok()?;
                        (gtrid.starts_with(PREFIX) && bqual == database.as_bytes()).then(|| {
                            Prepared {
                                gtrid: gtrid.to_owned(),
                                xid: naming.xid(gtrid),
                            }
                        })
                    })
                    .collect()
            }
            BranchNaming::Postgres {
                data_source: name,
                database,
            } => {
                let branch = format!("{name}.{database}");
                let sql = format!(
                    "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() \
                     AND gid LIKE '{PREFIX}%'"
                );
                let rows = self.execute_on(data_source, &sql).await?.rows;
                rows.into_iter()
                    .filter_map(|row| {
                        let gid = text(row.first())?;
                        let (gtrid, branch_of) = gid.split_once('.')?;
                        // Before the database was part of it, a branch was named by the data
                        // source alone: those are this data source's too.
                        (branch_of == branch || branch_of == name).then(|| Prepared {
                            gtrid: gtrid.to_owned(),
                            xid: format!("'{}'", gid.replace('\'', "''")),
                        })
                    })
                    .collect()
            }
        })
    }

    /// Commits or rolls back `branch`: `false` when it was gone already.
    async fn finish_branch(
        &self,
        data_source: &str,
        naming: &BranchNaming,
        branch: &Prepared,
        commit: bool,
    ) -> Result<bool, BackendError> {
        let sql = match (naming, commit) {
            (BranchNaming::MySql { .. }, true) => format!("XA COMMIT {}", branch.xid),
            (BranchNaming::MySql { .. }, false) => format!("XA ROLLBACK {}", branch.xid),
            (BranchNaming::Postgres { .. }, true) => format!("COMMIT PREPARED {}", branch.xid),
            (BranchNaming::Postgres { .. }, false) => {
                format!("ROLLBACK PREPARED {}", branch.xid)
            }
        };
        match self.execute_on(data_source, &sql).await {
            Ok(_) => Ok(true),
            // Finished meanwhile by another instance's recovery.
            Err(BackendError::Database {
                mysql_errno: Some(1397),
                ..
            }) => Ok(false),
            Err(BackendError::Database {
                sqlstate: Some(code),
                ..
            }) if code == "42704" => Ok(false),
            Err(e) => Err(e),
        }
    }
}

fn int(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Int(v) => Some(*v),
        Value::UInt(v) => i64::try_from(*v).ok(),
        Value::Text(s) => s.parse().ok(),
        _ => None,
    }
}

fn bytes(value: Option<&Value>) -> Option<Vec<u8>> {
    match value? {
        Value::Text(s) => Some(s.clone().into_bytes()),
        Value::Bytes(b) => Some(b.clone()),
        _ => None,
    }
}

fn text(value: Option<&Value>) -> Option<String> {
    bytes(value).and_then(|b| String::from_utf8(b).ok())
}

/// MariaDB keeps prepared branches across disconnects from 10.5, MySQL from 5.7.7.
fn check_mysql_version(version: &str) -> Result<(), String> {
    let numbers: Vec<u32> = version
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    let at_least = |min: &[u32]| numbers.as_slice() >= min;
    let (ok, needed) = if version.contains("MariaDB") {
        (at_least(&[10, 5]), "MariaDB 10.5")
    } else {
        (at_least(&[5, 7, 7]), "MySQL 5.7.7")
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "server version {version}: XA needs {needed} or later (earlier versions lose \
             prepared transactions when the connection closes)"
        ))
    }
}

fn check_prepared_slots(setting: &str) -> Result<(), String> {
    match setting.trim().parse::<u32>() {
        Ok(n) if n > 0 => Ok(()),
        _ => Err(format!(
            "max_prepared_transactions is {setting}: set it in postgresql.conf to at least \
             max_connections and restart PostgreSQL"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_settings_are_checked() {
        assert!(check_mysql_version("10.11.19-MariaDB-0+deb12u1").is_ok());
        assert!(check_mysql_version("10.5.0-MariaDB").is_ok());
        assert!(check_mysql_version("10.4.30-MariaDB").is_err());
        assert!(check_mysql_version("5.7.7").is_ok());
        assert!(check_mysql_version("8.0.36").is_ok());
        assert!(check_mysql_version("5.7.6-log").is_err());
        assert!(check_prepared_slots("64").is_ok());
        let zero = check_prepared_slots("0").unwrap_err();
        assert!(zero.contains("max_prepared_transactions is 0"), "{zero}");
    }
}
