//! A MariaDB server of a test's own, to kill: a fresh data directory on a free port. Killed (if
//! still running) and removed when dropped. The machine's shared servers are never touched.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use sqlx::Connection;

pub struct ThrowawayMariaDb {
    pub dir: PathBuf,
    pub port: u16,
    /// Options beyond the data directory, port and socket.
    args: Vec<String>,
    server: Option<std::process::Child>,
}

impl ThrowawayMariaDb {
    /// Installs a fresh data directory and starts the server on it with `args`.
    pub async fn start(args: &[String]) -> Self {
        let dir = std::env::temp_dir().join(super::unique("ks_mariadb"));
        let install = std::process::Command::new("mariadb-install-db")
            .args([
                "--no-defaults",
                "--user=root",
                "--auth-root-authentication-method=normal",
            ])
            .arg(format!("--datadir={}", dir.join("data").display()))
            .output()
            .expect("mariadb-install-db");
        assert!(install.status.success(), "{install:?}");
        let port = super::ports::free_port();
        let mut server = Self {
            dir,
            port,
            args: args.to_vec(),
            server: None,
        };
        server.run().await;
        server
    }

    /// Starts the server on its data directory and waits until it answers.
    pub async fn run(&mut self) {
        // A temporary directory of its own: a starting server deletes every `#sql…` file in
        // its tmpdir, which under the default /tmp were the shared server's temporary tables
        // in use (a statement of another test then failed with "Error on delete of
        // '/tmp/#sql-temptable-…'").
        let tmp = self.dir.join("tmp");
        std::fs::create_dir_all(&tmp).expect("the throwaway's tmpdir");
        let server = std::process::Command::new("/usr/sbin/mariadbd")
            .args(["--no-defaults", "--user=root", "--bind-address=127.0.0.1"])
            .arg(format!("--datadir={}", self.dir.join("data").display()))
            .arg(format!("--tmpdir={}", tmp.display()))
            .arg(format!("--port={}", self.port))
            .arg(format!(
                "--socket={}",
                self.dir.join("mysqld.sock").display()
            ))
            .arg("--skip-name-resolve")
            .args(&self.args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("mariadbd");
        self.server = Some(server);
        let deadline = Instant::now() + Duration::from_secs(30);
        while sqlx::MySqlConnection::connect(&self.url("mysql"))
            .await
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "the throwaway MariaDB did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub fn url(&self, database: &str) -> String {
        format!("mysql://root@127.0.0.1:{}/{database}", self.port)
    }

    /// kill -9, and waits for it to be gone.
    pub fn kill(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}

impl Drop for ThrowawayMariaDb {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
