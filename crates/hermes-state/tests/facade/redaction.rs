//! No password in anything printed about a store's location (issue 24): a
//! property test over generated locations and passwords — every form the
//! client accepts, valid and damaged — through the entry point every
//! caller uses (`StoreLocation::parse`), the redacted forms, `Debug`, and
//! the errors of a failing open. No server is needed: the generated
//! locations point at a closed port of 127.0.0.1.

use std::net::IpAddr;

use hermes_state::{StoreLocation, open_store};
use hermes_state_testkit::secrets::{self, Server};
use postgres::config::Host;
use proptest::test_runner::{Config, TestRunner};

/// Everything printed about `text`: its redacted forms, `Debug`, and the
/// errors (`Display`, `Debug`) of parsing it or of opening what it names.
fn printed_about(text: &str) -> Vec<String> {
    let mut printed = vec![StoreLocation::redact_text(text)];
    let location = match StoreLocation::parse(text) {
        Ok(location) => location,
        Err(error) => {
            printed.extend([error.to_string(), format!("{error:?}")]);
            return printed;
        }
    };
    printed.extend([location.redacted(), format!("{location:?}")]);
    let StoreLocation::Postgres(url) = &location else {
        return printed;
    };
    printed.extend([
        url.to_string(),
        format!("{url:?}"),
        format!("{:?}", url.store_url()),
        format!("{:?}", url.store_url().config()),
    ]);
    // Only addresses: a host name would be a DNS query.
    let addresses_only = url
        .store_url()
        .config()
        .get_hosts()
        .iter()
        .all(|host| matches!(host, Host::Tcp(name) if name.parse::<IpAddr>().is_ok()));
    if addresses_only {
        match open_store(&location, true) {
            Ok(_) => panic!("nothing listens on 127.0.0.1:1"),
            Err(error) => printed.extend([error.to_string(), format!("{error:?}")]),
        }
    }
    printed
}

#[test]
fn no_password_in_any_form_is_ever_printed() {
    let server = Server::closed_port();
    // `PROPTEST_CASES` runs more (the search that found the host rule ran 20 000).
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    let forms = secrets::forms("x", &server, "s").len();
    runner
        .run(
            &(secrets::password(), 0..forms, secrets::damage()),
            |(password, form, damage)| {
                let text = damage.apply(&secrets::forms(&password, &server, "s")[form]);
                for shown in printed_about(&text) {
                    secrets::assert_not_shown(&password, &shown, &text);
                }
                Ok(())
            },
        )
        .unwrap();
}

/// The three forms issue 24 found printed whole, written out.
#[test]
fn the_forms_issue_24_found_are_redacted() {
    for (text, secret) in [
        ("postgres://alice:pa/SS9w@127.0.0.1:1/db", "pa/SS9w"),
        ("postgres://alice:p?W9w@127.0.0.1:1/db", "p?W9w"),
        (
            "postgres://127.0.0.1:1/db?user=alice&password=SECRET9",
            "SECRET9",
        ),
        (
            "host=127.0.0.1 port=1 user=alice password='SE CRET9'",
            "SE CRET9",
        ),
    ] {
        let location = StoreLocation::parse(text).unwrap();
        assert!(
            location
                .redacted()
                .starts_with("postgresql://alice@127.0.0.1:1/"),
            "{}",
            location.redacted()
        );
        for shown in printed_about(text) {
            secrets::assert_not_shown(secret, &shown, text);
        }
    }
}
