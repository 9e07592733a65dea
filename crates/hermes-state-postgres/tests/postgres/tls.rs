//! TLS by libpq's `sslmode` table (docs/POSTGRES.md, "TLS"), against a
//! throwaway server of the test's own started with TLS on, its
//! certificate (for `127.0.0.1` and `localhost`) signed by a CA the test
//! makes; and against the shared test server, which has no TLS. How each
//! connection was secured is read from the server (`pg_stat_ssl`), not
//! assumed. The password's other sources (`PGPASSWORD`, the password file)
//! are shown to authenticate against the same kind of server with
//! password authentication.

use hermes_state_core::prelude::*;
use std::path::Path;

use hermes_state_postgres::{
    ConnectionSecurity, PgStore, StoreUrl, Verification, probe_connection,
};
use hermes_state_testkit::throwaway::{TestCa, Throwaway};
use hermes_state_types::{ErrorKind, NewSession};

use crate::common::TestSchema;

/// What a connection should do: connect, encrypted or not, with this
/// verification; or be refused with this kind.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Connects {
        encrypted: bool,
        verified: Verification,
    },
    Refused(ErrorKind),
}

use Expect::{Connects, Refused};

fn outcome(url: &str) -> (Expect, String) {
    let parsed = StoreUrl::parse(url).expect("the test's URL parses");
    match probe_connection(&parsed) {
        Ok(ConnectionSecurity {
            encrypted,
            verification,
            ..
        }) => (
            Connects {
                encrypted,
                verified: verification,
            },
            String::new(),
        ),
        Err(error) => (Refused(error.kind()), error.to_string()),
    }
}

fn check(url: &str, expected: Expect) {
    let (got, error) = outcome(url);
    assert_eq!(got, expected, "{url}: {error}");
}

fn no_default_root_file() -> bool {
    let default = hermes_state_postgres::tls::default_root_file();
    let absent = default.as_deref().is_none_or(|file| !file.exists());
    if !absent {
        println!("note: ~/.postgresql/root.crt exists; the cases without sslrootcert are not run");
    }
    absent
}

fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).expect("write a test file");
    path.display().to_string()
}

#[test]
fn each_sslmode_connects_or_refuses_as_libpq_says_against_a_tls_server() {
    let ca = TestCa::new("hermes-state test CA");
    let other_ca = TestCa::new("another CA");
    let (cert, key) = ca.server_cert(&["127.0.0.1", "localhost"]);
    let Some(server) = Throwaway::start("tls modes", Some((&cert, &key)), &[]) else {
        return;
    };
    let files = server.files();
    let right = write(&files.join("ca.pem"), &ca.cert_pem);
    let wrong = write(&files.join("other-ca.pem"), &other_ca.cert_pem);
    let port = server.port();
    let at = |host: &str, query: &str| {
        format!("postgres://postgres@{host}:{port}/postgres?schema=tls_probe&{query}")
    };
    let url = |query: &str| at("127.0.0.1", query);
    let enc = |verified| Connects {
        encrypted: true,
        verified,
    };
    use Verification::{Chain, ChainAndHostName, None as Unverified};
    let mut cases = vec![
        (
            url("sslmode=disable"),
            Connects {
                encrypted: false,
                verified: Unverified,
            },
        ),
        // `prefer` (the default) really asks for TLS, and gets it.
        (url(""), enc(Unverified)),
        (url("sslmode=prefer"), enc(Unverified)),
        // With root certificates libpq checks the chain in every mode.
        (
            url(&format!("sslmode=prefer&sslrootcert={right}")),
            enc(Chain),
        ),
        (
            url(&format!("sslmode=prefer&sslrootcert={wrong}")),
            Refused(ErrorKind::Unavailable),
        ),
        // `require`: encrypted, the certificate not checked...
        (url("sslmode=require"), enc(Unverified)),
        // ... unless there are root certificates: then it is `verify-ca`.
        (
            url(&format!("sslmode=require&sslrootcert={right}")),
            enc(Chain),
        ),
        (
            url(&format!("sslmode=require&sslrootcert={wrong}")),
            Refused(ErrorKind::Unavailable),
        ),
        (
            url(&format!("sslmode=verify-ca&sslrootcert={right}")),
            enc(Chain),
        ),
        (
            url(&format!("sslmode=verify-ca&sslrootcert={wrong}")),
            Refused(ErrorKind::Unavailable),
        ),
        (
            url(&format!("sslmode=verify-full&sslrootcert={right}")),
            enc(ChainAndHostName),
        ),
        (
            at(
                "localhost",
                &format!("sslmode=verify-full&sslrootcert={right}"),
            ),
            enc(ChainAndHostName),
        ),
        (
            url(&format!("sslmode=verify-full&sslrootcert={wrong}")),
            Refused(ErrorKind::Unavailable),
        ),
        // A host name the certificate does not name (reached at the right
        // address): verify-full refuses, verify-ca does not check names.
        (
            at(
                "wrong.invalid",
                &format!("hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert={right}"),
            ),
            Refused(ErrorKind::Unavailable),
        ),
        (
            at(
                "wrong.invalid",
                &format!("hostaddr=127.0.0.1&sslmode=verify-ca&sslrootcert={right}"),
            ),
            enc(Chain),
        ),
        // The system's roots do not hold the test's CA (sslmode defaults
        // to verify-full with them, as in libpq 16).
        (url("sslrootcert=system"), Refused(ErrorKind::Unavailable)),
        // A root file named but missing is an error in every mode.
        (
            url("sslmode=require&sslrootcert=/nonexistent/ca.pem"),
            Refused(ErrorKind::InvalidInput),
        ),
        (
            url(&format!(
                "sslmode=require&sslrootcert={right}&sslrootcert=system"
            )),
            Refused(ErrorKind::InvalidInput),
        ),
    ];
    if no_default_root_file() {
        cases.extend([
            (url("sslmode=verify-ca"), Refused(ErrorKind::InvalidInput)),
            (url("sslmode=verify-full"), Refused(ErrorKind::InvalidInput)),
        ]);
    }
    for (url, expected) in cases {
        check(&url, expected);
    }
    // The refusals say why.
    let (_, wrong_name) = outcome(&at(
        "wrong.invalid",
        &format!("hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert={right}"),
    ));
    assert!(
        wrong_name.contains("sslmode=verify-full") && wrong_name.contains("certificate"),
        "{wrong_name}"
    );

    // A whole store over verify-full: written, read, and the doctor says
    // the connection is encrypted and verified.
    let url =
        StoreUrl::parse(&url(&format!("sslmode=verify-full&sslrootcert={right}"))).expect("parses");
    let store = PgStore::open(&url).expect("opens over TLS");
    store
        .create_session(&NewSession::new("s1", "cli"))
        .expect("a write over TLS");
    let reader = PgStore::open_read_only(&url).expect("a reader over TLS");
    assert!(reader.get_session("s1").expect("a read").is_some());
    let report = reader.doctor().expect("the doctor");
    assert!(report.is_healthy());
    assert!(report.connection.encrypted, "{:?}", report.connection);
    assert_eq!(report.connection.verification, ChainAndHostName);
    assert!(
        report
            .connection
            .describe()
            .contains("certificate chain and host name verified"),
        "{}",
        report.connection.describe()
    );
    assert!(store.connection_security().unwrap().encrypted);
}

#[test]
fn a_server_without_tls_gets_cleartext_only_where_the_mode_allows_it() {
    let Some(schema) = TestSchema::new("a server without TLS") else {
        return;
    };
    let ca = TestCa::new("hermes-state test CA");
    let dir = tempfile::tempdir().unwrap();
    let right = write(&dir.path().join("ca.pem"), &ca.cert_pem);
    let url = |query: &str| format!("{}&{query}", schema.text());
    let cleartext = Connects {
        encrypted: false,
        verified: Verification::None,
    };
    check(&url("sslmode=disable"), cleartext);
    // `prefer` asked for TLS, the server said no: cleartext.
    check(schema.text(), cleartext);
    check(&url("sslmode=prefer"), cleartext);
    for mode in ["require", "verify-ca", "verify-full"] {
        let (got, error) = outcome(&url(&format!("sslmode={mode}&sslrootcert={right}")));
        assert_eq!(got, Refused(ErrorKind::Unavailable), "{mode}: {error}");
        assert!(error.contains("TLS"), "{mode}: {error}");
    }
    let (_, error) = outcome(&url("sslmode=require"));
    assert!(error.contains("server does not support TLS"), "{error}");
}

#[test]
fn passwords_from_the_password_file_and_pgpassword_authenticate() {
    let ca = TestCa::new("hermes-state test CA");
    let (cert, key) = ca.server_cert(&["127.0.0.1", "localhost"]);
    let Some(server) = Throwaway::start(
        "password sources",
        Some((&cert, &key)),
        &["host all alice 127.0.0.1/32 scram-sha-256"],
    ) else {
        return;
    };
    let password = "Pa:ss w0rd\\x";
    server
        .admin()
        .batch_execute(&format!(
            "CREATE ROLE alice LOGIN PASSWORD '{}'",
            password.replace('\'', "''")
        ))
        .unwrap();
    let port = server.port();
    let files = server.files();
    let base = format!("postgres://alice@127.0.0.1:{port}/postgres?schema=pw");
    let encoded: String = hermes_state_testkit::secrets::percent_encoded(password);
    // The password in the URL authenticates; a wrong one does not.
    check(
        &format!("postgres://alice:{encoded}@127.0.0.1:{port}/postgres?schema=pw"),
        Connects {
            encrypted: true,
            verified: Verification::None,
        },
    );
    let (got, error) = outcome(&format!(
        "postgres://alice:nope@127.0.0.1:{port}/postgres?schema=pw"
    ));
    assert_eq!(got, Refused(ErrorKind::AccessDenied), "{error}");
    assert!(error.contains("password authentication failed"), "{error}");
    // None in the URL: the password file's matching line (`\:` and `\\`
    // escaped), found through `passfile=`; a line for another port first.
    let passfile = files.join("pgpass");
    std::fs::write(
        &passfile,
        format!(
            "127.0.0.1:{}:*:alice:wrong\n127.0.0.1:{port}:postgres:alice:{}\n",
            port + 1,
            password.replace('\\', "\\\\").replace(':', "\\:")
        ),
    )
    .unwrap();
    set_mode(&passfile, 0o600);
    let with_file = format!("{base}&passfile={}", passfile.display());
    check(
        &with_file,
        Connects {
            encrypted: true,
            verified: Verification::None,
        },
    );
    // A password file others may read is ignored, as libpq ignores it.
    set_mode(&passfile, 0o644);
    let (got, error) = outcome(&with_file);
    assert_ne!(
        got,
        Connects {
            encrypted: true,
            verified: Verification::None
        },
        "{error}"
    );
    // PGPASSWORD, in a process of its own (the environment is the process's).
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tls::child_connects_with_pgpassword",
            "--include-ignored",
            "--nocapture",
        ])
        .env("PGPASSWORD", password)
        .env("HERMES_STATE_TLS_CHILD_URL", &base)
        .env("PGPASSFILE", "/nonexistent")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&child.stderr)
    );
}

/// The child of the test above: `PGPASSWORD` is set, the URL has no password.
#[test]
#[ignore = "run by passwords_from_the_password_file_and_pgpassword_authenticate"]
fn child_connects_with_pgpassword() {
    let url = std::env::var("HERMES_STATE_TLS_CHILD_URL").expect("run by the parent test");
    check(
        &url,
        Connects {
            encrypted: true,
            verified: Verification::None,
        },
    );
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
