//! A database server of the test's own, to kill with SIGKILL.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sqlx::{Connection, MySqlConnection, PgConnection};

use crate::common::free_port;
use crate::xa::shards::Db;

/// A database server of the test's own, to kill: MariaDB, or PostgreSQL run as user postgres
/// (it refuses root).
pub struct Throwaway {
    db: Db,
    dir: PathBuf,
    port: u16,
    server: Option<Child>,
}

pub fn run(command: &mut Command) {
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(status.success(), "{command:?} failed");
}

/// `program args…`, as user postgres when the test runs as root.
pub fn as_postgres(program: &str) -> Command {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if is_root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--", program]);
        command
    } else {
        Command::new(program)
    }
}

pub fn postgres_binary(name: &str) -> String {
    let versions = std::fs::read_dir("/usr/lib/postgresql").expect("PostgreSQL server binaries");
    let mut bins: Vec<_> = versions
        .flatten()
        .map(|v| v.path().join("bin").join(name))
        .filter(|p| p.exists())
        .collect();
    bins.sort();
    bins.pop().expect("initdb").display().to_string()
}

impl Throwaway {
    pub fn install(db: Db, dir: &Path) -> Self {
        let dir = dir.join("server");
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("data");
        match db {
            Db::MariaDb => run(Command::new("mariadb-install-db").args([
                "--no-defaults",
                &format!("--datadir={}", data.display()),
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--user=root",
            ])),
            Db::Postgres => {
                run(Command::new("chown").args(["-R", "postgres"]).arg(&dir));
                run(as_postgres(&postgres_binary("initdb"))
                    .args(["-A", "trust", "-U", "postgres", "-D"])
                    .arg(&data));
            }
        }
        Self {
            db,
            dir,
            port: free_port(),
            server: None,
        }
    }

    pub fn server_url(&self) -> String {
        match self.db {
            Db::MariaDb => format!("mysql://root@127.0.0.1:{}", self.port),
            Db::Postgres => format!("postgres://postgres@127.0.0.1:{}", self.port),
        }
    }

    pub async fn start(&mut self) {
        let data = self.dir.join("data");
        let mut command = match self.db {
            Db::MariaDb => {
                let mut command = Command::new("mariadbd");
                command.args([
                    "--no-defaults".to_owned(),
                    format!("--datadir={}", data.display()),
                    format!("--socket={}", self.dir.join("sock").display()),
                    format!("--pid-file={}", self.dir.join("pid").display()),
                    format!("--port={}", self.port),
                    "--bind-address=127.0.0.1".to_owned(),
                    "--user=root".to_owned(),
                    "--innodb-buffer-pool-size=32M".to_owned(),
                ]);
                command
            }
            Db::Postgres => {
                let mut command = as_postgres(&postgres_binary("postgres"));
                command.arg("-D").arg(&data).args([
                    "-p".to_owned(),
                    self.port.to_string(),
                    "-k".to_owned(),
                    self.dir.display().to_string(),
                    "-c".to_owned(),
                    "listen_addresses=127.0.0.1".to_owned(),
                    "-c".to_owned(),
                    "max_prepared_transactions=32".to_owned(),
                ]);
                command
            }
        };
        let log = std::fs::File::create(self.dir.join("server.log")).unwrap();
        let server = command
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("database server");
        self.server = Some(server);
        let admin = match self.db {
            Db::MariaDb => format!("{}/mysql", self.server_url()),
            Db::Postgres => format!("{}/postgres", self.server_url()),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let up = match self.db {
                Db::MariaDb => MySqlConnection::connect(&admin).await.is_ok(),
                Db::Postgres => PgConnection::connect(&admin).await.is_ok(),
            };
            if up {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the throwaway server did not come up: {}",
                std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGKILL: no shutdown, no flush. PostgreSQL's postmaster (a child of `runuser`) and its
    /// backends die together, as in a crash of the machine.
    pub fn kill(&mut self) {
        let Some(mut server) = self.server.take() else {
            return;
        };
        if self.db == Db::Postgres
            && let Ok(pid) = std::fs::read_to_string(self.dir.join("data/postmaster.pid"))
            && let Some(pid) = pid.lines().next()
        {
            let _ = Command::new("pkill").args(["-KILL", "-P", pid]).status();
            let _ = Command::new("kill").args(["-KILL", pid]).status();
            // runuser reaps the postmaster and exits: were runuser killed first, the
            // postmaster would linger as a zombie that the restart takes for a live server.
            let _ = server.wait();
            return;
        }
        let _ = server.kill();
        let _ = server.wait();
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        self.kill();
    }
}
