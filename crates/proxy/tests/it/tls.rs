//! TLS on both frontends, with real clients that verify the certificate against a CA made
//! here: the `mariadb` and `psql` command-line clients, MariaDB Connector/J and pgjdbc
//! (`.ci/run` installs them), over SQLite shards.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::common::java::{CONNECTOR_J, PGJDBC, Programs, succeeded};
use crate::common::postgres::{PgProxy, PgShards, yaml};

const CREATE: &str =
    "CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))";

/// A CA, and a certificate for `localhost` and 127.0.0.1 that it signed, made by `openssl`.
struct Certificates {
    dir: PathBuf,
}

impl Certificates {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(common::unique("keyshard_tls"));
        std::fs::create_dir_all(&dir).unwrap();
        let openssl = |args: &str| {
            let output = Command::new("openssl")
                .current_dir(&dir)
                .args(args.split_whitespace())
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(output.status.success(), "openssl {args}: {stderr}");
        };
        let ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1";
        for ca in ["ca", "other_ca"] {
            openssl(&format!(
                "req -x509 -nodes -days 2 {ec} -keyout {ca}.key -out {ca}.pem -subj /CN={ca}"
            ));
        }
        openssl(&format!(
            "req -new -nodes {ec} -keyout server.key -out server.csr -subj /CN=localhost"
        ));
        std::fs::write(
            dir.join("san.ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
        )
        .unwrap();
        openssl(
            "x509 -req -in server.csr -days 2 -CA ca.pem -CAkey ca.key -CAcreateserial \
             -extfile san.ext -out server.pem",
        );
        Self { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// The `server.tls` block of a configuration.
    fn yaml(&self, required: bool) -> String {
        format!(
            "  tls:\n    certificate: {}\n    key: {}\n    required: {required}\n",
            self.path("server.pem"),
            self.path("server.key"),
        )
    }
}

impl Drop for Certificates {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Both frontends on SQLite shards, with `server.tls`.
async fn start(certificates: &Certificates, required: bool) -> (PgShards, PgProxy) {
    let shards = PgShards::sqlite();
    let config = yaml(&shards.url(0), &shards.url(1), true).replacen(
        "server:\n",
        &format!("server:\n{}", certificates.yaml(required)),
        1,
    );
    let proxy = PgProxy::start(&config).await;
    (shards, proxy)
}

fn run(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"))
}

fn failed(command: &mut Command) -> String {
    let output = run(command);
    assert!(!output.status.success(), "{command:?} succeeded");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `mariadb` to `localhost` on the proxy's MySQL port, with `options`, running `sql`.
fn mariadb(proxy: &PgProxy, options: &[&str], sql: &str) -> Command {
    let port = proxy.mysql_address.unwrap().port().to_string();
    let mut command = Command::new("mariadb");
    command
        .args(["--protocol=tcp", "-h", "localhost", "-P", &port, "-N"])
        .args(options)
        .args(["sharding_db", "-e", sql]);
    command
}

/// `psql` to `localhost` on the proxy's PostgreSQL port, with `options` in its connection string.
fn psql(proxy: &PgProxy, options: &str, sql: &str) -> Command {
    let mut command = Command::new("psql");
    command
        .arg(format!(
            "host=localhost port={} user=root password=root dbname=sharding_db {options}",
            proxy.address.port()
        ))
        .args(["-Atc", sql]);
    command
}

fn keys(out: &str) -> Vec<i64> {
    out.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs openssl and the mariadb and psql clients"]
async fn command_line_clients_verify_the_certificate_and_insert() {
    let certificates = Certificates::new();
    let (shards, proxy) = start(&certificates, false).await;
    let ca = format!("--ssl-ca={}", certificates.path("ca.pem"));
    let verified = ["-uroot", "-proot", "--ssl", &ca, "--ssl-verify-server-cert"];
    succeeded(&mut mariadb(&proxy, &verified, CREATE));
    let out = succeeded(&mut mariadb(
        &proxy,
        &verified,
        "INSERT INTO t_order (user_id, status) VALUES (1, 'tls'); SELECT LAST_INSERT_ID()",
    ));
    let mut acknowledged = keys(&out);
    assert_eq!(acknowledged.len(), 1, "{out}");

    // caching_sha2_password's full authentication: the password in the clear, over TLS only.
    let sha2 = [&verified[..], &["--default-auth=caching_sha2_password"]].concat();
    let out = succeeded(&mut mariadb(
        &proxy,
        &sha2,
        "INSERT INTO t_order (user_id, status) VALUES (2, 'sha2'); SELECT LAST_INSERT_ID()",
    ));
    acknowledged.extend(keys(&out));
    let wrong = [&sha2[..], &["-pwrong"]].concat();
    let refused = failed(&mut mariadb(&proxy, &wrong, "SELECT 1"));
    assert!(refused.contains("1045"), "{refused}");

    let ca = certificates.path("ca.pem");
    let out = succeeded(&mut psql(
        &proxy,
        &format!("sslmode=verify-full sslrootcert={ca}"),
        "INSERT INTO t_order (user_id, status) VALUES (3, 'tls') RETURNING order_id",
    ));
    acknowledged.extend(keys(&out));
    assert_eq!(acknowledged.len(), 3, "{out}");

    // A CA that did not sign the certificate is refused by both clients: verification is real.
    let other = certificates.path("other_ca.pem");
    let other_ca = format!("--ssl-ca={other}");
    let untrusted = [
        "-uroot",
        "-proot",
        "--ssl",
        &other_ca,
        "--ssl-verify-server-cert",
    ];
    failed(&mut mariadb(&proxy, &untrusted, "SELECT 1"));
    failed(&mut psql(
        &proxy,
        &format!("sslmode=verify-full sslrootcert={other}"),
        "SELECT 1",
    ));
    // Plain clients still connect: TLS is not required here.
    succeeded(&mut mariadb(
        &proxy,
        &["-uroot", "-proot", "--skip-ssl"],
        "SELECT 1",
    ));
    succeeded(&mut psql(&proxy, "sslmode=disable", "SELECT 1"));

    let mut stored = shards.all_ids().await;
    stored.sort_unstable();
    acknowledged.sort_unstable();
    assert_eq!(stored, acknowledged);
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs openssl and the mariadb and psql clients"]
async fn required_tls_refuses_plain_clients_with_each_databases_error() {
    let certificates = Certificates::new();
    let (shards, proxy) = start(&certificates, true).await;
    let refused = failed(&mut mariadb(
        &proxy,
        &["-uroot", "-proot", "--skip-ssl"],
        "SELECT 1",
    ));
    assert!(refused.contains("3159"), "{refused}");
    let refused = failed(&mut psql(&proxy, "sslmode=disable", "SELECT 1"));
    assert!(refused.contains("no encryption"), "{refused}");
    let ca = format!("--ssl-ca={}", certificates.path("ca.pem"));
    let out = succeeded(&mut mariadb(
        &proxy,
        &["-uroot", "-proot", "--ssl", &ca, "--ssl-verify-server-cert"],
        "SELECT 1",
    ));
    assert_eq!(out.trim(), "1");
    let out = succeeded(&mut psql(&proxy, "sslmode=require", "SELECT 1"));
    assert_eq!(out.trim(), "1");
    proxy.stop().await;
    shards.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs openssl, a JDK, MariaDB Connector/J and pgjdbc"]
async fn jdbc_over_tls_gets_its_keys() {
    let certificates = Certificates::new();
    let (shards, proxy) = start(&certificates, true).await;
    let programs = Programs::compile(&["GeneratedKeys.java", "PgGeneratedKeys.java"]);
    let ca = certificates.path("ca.pem");
    succeeded(&mut psql(&proxy, "sslmode=require", CREATE));
    let mysql = format!(
        "jdbc:mariadb://localhost:{}/sharding_db?useSSL=true&serverSslCert={ca}",
        proxy.mysql_address.unwrap().port()
    );
    let pg = format!(
        "jdbc:postgresql://localhost:{}/sharding_db?sslmode=verify-full&sslrootcert={ca}",
        proxy.address.port()
    );
    let java = |class: &str, jar: &str, url: &str| programs.run(class, jar, &[url, "root", "root"]);
    // Each program prints the keys of four inserted rows.
    let out = java("GeneratedKeys", CONNECTOR_J, &mysql) + &java("PgGeneratedKeys", PGJDBC, &pg);
    let mut acknowledged: Vec<i64> = out
        .split_whitespace()
        .filter_map(|w| {
            w.trim_start_matches(|c: char| !c.is_ascii_digit())
                .parse()
                .ok()
        })
        .collect();
    assert_eq!(acknowledged.len(), 8, "{out}");
    acknowledged.sort_unstable();
    let mut stored = shards.all_ids().await;
    stored.sort_unstable();
    assert_eq!(stored, acknowledged);
    proxy.stop().await;
    shards.cleanup().await;
}
