//! The command line over TLS: a throwaway server of the test's own with a
//! certificate from the test's CA; `doctor` says whether the connection is
//! encrypted and what was verified; a certificate that does not verify is
//! an error saying so.

use crate::common::Env;
use hermes_state_testkit::throwaway::{TestCa, Throwaway};

#[test]
fn doctor_says_whether_the_connection_is_encrypted_and_verified() {
    let ca = TestCa::new("hermes-state test CA");
    let other = TestCa::new("another CA");
    let (cert, key) = ca.server_cert(&["127.0.0.1", "localhost"]);
    let Some(server) = Throwaway::start("doctor over TLS", Some((&cert, &key)), &[]) else {
        return;
    };
    let files = server.files();
    let right = files.join("ca.pem");
    let wrong = files.join("other.pem");
    ca.write(&right);
    other.write(&wrong);
    let port = server.port();
    let url = |query: &str| {
        format!("postgres://postgres@localhost:{port}/postgres?schema=tls_cli&{query}")
    };
    let env = Env::new();
    let pg = |url: &str, args: &[&str]| {
        let mut all = vec!["--database-url", url];
        all.extend_from_slice(args);
        env.raw(&all, None)
    };
    let verified = url(&format!(
        "sslmode=verify-full&sslrootcert={}",
        right.display()
    ));
    pg(&verified, &["demo"]).ok();
    let doctor = pg(&verified, &["doctor"]).ok();
    let line = doctor
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("connection: "))
        .unwrap_or_else(|| panic!("a connection line: {}", doctor.stdout));
    assert!(
        line.contains("connection: encrypted (TLSv1.")
            && line.contains("certificate chain and host name verified; sslmode=verify-full"),
        "{line}"
    );
    let json = pg(&verified, &["--json", "doctor"]).ok().json();
    assert_eq!(json["connection"]["encrypted"], true, "{json}");
    assert_eq!(json["connection"]["verification"], "chain_and_host_name");
    assert_eq!(json["connection"]["sslmode"], "verify-full");

    let cleartext = pg(&url("sslmode=disable"), &["doctor"]).ok();
    assert!(
        cleartext
            .stdout
            .contains("connection: not encrypted (sslmode=disable)"),
        "{}",
        cleartext.stdout
    );
    let refused = pg(
        &url(&format!("sslmode=require&sslrootcert={}", wrong.display())),
        &["sessions", "list"],
    )
    .fails(1);
    assert!(
        refused.stderr.contains("sslmode=require") && refused.stderr.contains("certificate"),
        "{}",
        refused.stderr
    );
}
