//! A PostgreSQL server of a test's own, for what the shared test server
//! cannot show: TLS with certificates made by the test (a CA of its own,
//! a server certificate for `127.0.0.1` and `localhost`), password
//! authentication. Started as `.ci/postgres.sh` starts the shared one —
//! `initdb` in a private folder, a free port on 127.0.0.1 only, run as the
//! `postgres` user when the test runs as root — and stopped and removed
//! when dropped.

// The skip line is printed on purpose: `cargo test` shows it.
#![allow(clippy::print_stdout)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

/// A certificate authority made for one test.
pub struct TestCa {
    /// Its certificate, PEM.
    pub cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    /// A new self-signed CA named `name`.
    pub fn new(name: &str) -> TestCa {
        let key = KeyPair::generate().expect("a CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).expect("the CA certificate");
        TestCa {
            cert_pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `names` (host names or IP addresses),
    /// signed by this CA: `(certificate PEM, key PEM)`.
    pub fn server_cert(&self, names: &[&str]) -> (String, String) {
        let key = KeyPair::generate().expect("a server key");
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).expect("server parameters");
        params
            .distinguished_name
            .push(DnType::CommonName, "hermes-state test server");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("the server certificate");
        (cert.pem(), key.serialize_pem())
    }

    /// Writes the CA certificate to `path`.
    pub fn write(&self, path: &Path) {
        std::fs::write(path, &self.cert_pem).expect("write the CA certificate");
    }
}

/// A running throwaway server.
pub struct Throwaway {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
}

/// The server's binaries (`pg_config --bindir`), when installed.
fn server_binaries() -> Option<PathBuf> {
    let output = Command::new("pg_config").arg("--bindir").output().ok()?;
    let bin = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    bin.join("initdb").is_file().then_some(bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// Runs a server tool, as `postgres` when we are root (`initdb` and
/// `postgres` refuse to run as root).
fn as_postgres(program: &Path, args: &[&str]) -> Output {
    let mut command = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    command.args(args).output().expect("run a PostgreSQL tool")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Throwaway {
    /// Starts a server, with TLS when `tls` gives a certificate and key
    /// (PEM). `hba` lines come first in `pg_hba.conf`; everything else on
    /// 127.0.0.1 is trusted (the server listens there only, its socket in
    /// a private folder). `None`, after printing `skipped: …` naming
    /// `case`, when the server's binaries are missing and no test server
    /// is configured either (a machine without PostgreSQL); where a test
    /// server is configured (CI) missing binaries fail the test.
    pub fn start(case: &str, tls: Option<(&str, &str)>, hba: &[&str]) -> Option<Throwaway> {
        let Some(bin) = server_binaries() else {
            assert!(
                std::env::var_os(crate::PG_URL_VAR).is_none(),
                "{case}: {} is set but PostgreSQL's server binaries (pg_config --bindir) are missing: apt-get install postgresql-15",
                crate::PG_URL_VAR
            );
            println!("skipped: no PostgreSQL server binaries ({case} starts a server of its own)");
            return None;
        };
        let dir = tempfile::Builder::new()
            .prefix("hermes-state-pg-tls.")
            .tempdir()
            .expect("a private folder")
            .keep();
        let data = dir.join("data");
        let root = is_root();
        if root {
            let chown = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(&dir)
                .status()
                .expect("chown");
            assert!(chown.success(), "chown the server's folder");
        }
        let data_text = data.to_str().expect("UTF-8 path");
        let init = as_postgres(
            &bin.join("initdb"),
            &[
                "-D",
                data_text,
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--auth=trust",
            ],
        );
        assert!(
            init.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        let mut conf = String::from("listen_addresses = '127.0.0.1'\n");
        if let Some((cert, key)) = tls {
            // Written as the server's user: the key must be its own, 0600.
            let write_private = |name: &str, text: &str| {
                let path = data.join(name);
                std::fs::write(&path, text).expect("write a server file");
                set_private(&path, root);
            };
            write_private("server.crt", cert);
            write_private("server.key", key);
            conf.push_str("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
        }
        append(&data.join("postgresql.conf"), &conf);
        let mut rules: Vec<String> = hba.iter().map(|l| (*l).to_owned()).collect();
        rules.push("local all all trust".to_owned());
        rules.push("host all all 127.0.0.1/32 trust".to_owned());
        std::fs::write(data.join("pg_hba.conf"), rules.join("\n") + "\n").expect("pg_hba.conf");
        set_private(&data.join("pg_hba.conf"), root);
        let port = free_port();
        let options = format!("-p {port} -k {}", dir.display());
        let log = dir.join("log");
        let started = as_postgres(
            &bin.join("pg_ctl"),
            &[
                "-D",
                data_text,
                "-l",
                log.to_str().expect("UTF-8 path"),
                "-w",
                "-o",
                &options,
                "start",
            ],
        );
        let server = Throwaway { dir, bin, port };
        assert!(
            started.status.success(),
            "the throwaway server did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Some(server)
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A client as the `postgres` user, without TLS (for set-up SQL).
    pub fn admin(&self) -> postgres::Client {
        postgres::Client::connect(
            &format!(
                "host=127.0.0.1 port={} user=postgres dbname=postgres sslmode=disable",
                self.port
            ),
            postgres::NoTls,
        )
        .expect("connect to the throwaway server")
    }

    /// A private folder for the test's own files (certificates, a
    /// password file), removed with the server.
    pub fn files(&self) -> PathBuf {
        let files = self.dir.join("files");
        std::fs::create_dir_all(&files).expect("the test's folder");
        files
    }
}

fn append(path: &Path, text: &str) {
    let mut all = std::fs::read_to_string(path).expect("read a server file");
    all.push_str(text);
    std::fs::write(path, all).expect("write a server file");
}

/// Mode 0600, and owned by `postgres` when we are root.
fn set_private(path: &Path, root: bool) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    if root {
        let chown = Command::new("chown")
            .arg("postgres:postgres")
            .arg(path)
            .status()
            .expect("chown");
        assert!(chown.success(), "chown {}", path.display());
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = as_postgres(
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                data.to_str().unwrap_or_default(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
